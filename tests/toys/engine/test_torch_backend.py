"""The torch backend: same algorithms, numpy/torch agreement (float64, full batch), float32,
minibatch sampling on torch, the CNN batched with torch.func, and CUDA (skipped without GPU)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toys
from boundlab.errors import DomainError
from toys.participation import make as make_process

AGREE = 1e-10
EXTRA = {"fedprox": {"prox": 0.2}, "fedprox-bc": {"prox": 0.2}, "fedmax-k": {"k": 2},
         "fedbetter-k": {"k": 2}, "beta": {"beta": 0.4}, "fedau": {"K": 4},
         "hybrid": {"switch_round": 2}, "anneal": {"schedule": "mix", "rule": "fedmax-k",
                                                   "k": 2, "mix_rounds": 3},
         "poc": {"k": 2, "candidates": 3}, "fednova": {"min_steps": 1, "straggler_prob": 0.5},
         "scaffold": {"straggler_prob": 0.5}, "fedavg-hetero": {"min_steps": 1}}


def _problems():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(n, 3)) + 0.3 * i for i, n in enumerate((9, 14, 6, 11))]
    multi = toys.logistic(Xs, [rng.integers(0, 3, size=len(x)) for x in Xs], l2=0.05)
    return {"binary": toys.logistic_synthetic(n_clients=4, dim=3, seed=0),
            "multinomial": multi,
            "seed004": toys.seed004_toy(seed=0, n_clients=5),
            "quadratic": toys.quadratic(n_clients=4, dim=3, seed=0)}


PROBLEMS = _problems()


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _agree(a, b, tol=AGREE):
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=tol, atol=tol)
    np.testing.assert_array_equal(a.participation, b.participation)
    fa, fb = a.to_frame().to_numpy(), b.to_frame().to_numpy()
    np.testing.assert_array_equal(np.isnan(fa), np.isnan(fb))
    np.testing.assert_allclose(fb, fa, rtol=tol, atol=tol)
    np.testing.assert_allclose(b.alpha, a.alpha, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(toys.ALGORITHMS))
def test_numpy_torch_agree_on_logistic(name):
    prob = PROBLEMS["binary"]
    kw = {"rounds": 5, "seed": 1, "participation": make_process("bernoulli", 4, p=0.6),
          "lr": 0.4, "local_steps": 3, "record": "step", **EXTRA.get(name, {})}
    _agree(toys.run(prob, name, **kw), toys.run(prob, name, backend="torch", device="cpu", **kw))


@pytest.mark.parametrize("pname", ["multinomial", "seed004", "quadratic"])
@pytest.mark.parametrize("name", ["fedavg", "fedsoftmax", "fedau", "fedvarp", "beta"])
def test_numpy_torch_agree_other_problems(pname, name):
    prob = PROBLEMS[pname]
    kw = {"rounds": 4, "seed": 2, "participation": "uniform:m=2", "lr": 0.1, "local_steps": 2,
          **EXTRA.get(name, {})}
    _agree(toys.run(prob, name, **kw), toys.run(prob, name, backend="torch", device="cpu", **kw))


def test_torch_oracle_matches_problem_methods():
    from toys.engine.backends.torch import setup

    rng = np.random.default_rng(3)
    for prob in PROBLEMS.values():
        ops, orc, _ = setup(prob, "cpu", None, 0)
        W = rng.normal(size=(prob.n_clients, prob.dim))
        np.testing.assert_allclose(ops.to_numpy(orc.losses(ops.asarray(W))), prob.losses(W),
                                   rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(ops.to_numpy(orc.grads(ops.asarray(W))), prob.grads(W),
                                   rtol=1e-12, atol=1e-13)


def test_torch_minibatch_is_reproducible_and_unbiased():
    prob = PROBLEMS["binary"]
    kw = {"rounds": 4, "seed": 5, "lr": 0.3, "local_steps": 2, "batch_size": 4,
          "backend": "torch", "device": "cpu"}
    a, b = toys.run(prob, "fedavg", **kw), toys.run(prob, "fedavg", **kw)
    np.testing.assert_array_equal(a.final_model, b.final_model)
    c = toys.run(prob, "fedavg", **{**kw, "seed": 6})
    assert not np.array_equal(a.final_model, c.final_model)
    # unbiased: the mean of many minibatch gradients tends to the full gradient
    from toys.engine.backends.torch import setup

    ops, orc, gen = setup(prob, "cpu", None, 0)
    W = ops.asarray(np.full((prob.n_clients, prob.dim), 0.2))
    G = torch.stack([orc.minibatch_grads(W, gen, 4) for _ in range(1500)]).mean(0)
    np.testing.assert_allclose(ops.to_numpy(G), prob.grads(np.full(prob.dim, 0.2)), atol=0.03)


def test_float32_option():
    prob = PROBLEMS["binary"]
    kw = {"rounds": 5, "seed": 0, "lr": 0.3, "local_steps": 2}
    a = toys.run(prob, "fedsoftmax", **kw)
    b = toys.run(prob, "fedsoftmax", backend="torch", device="cpu", dtype="float32", **kw)
    assert b.info["dtype"] == "float32"
    np.testing.assert_allclose(b.final_model, a.final_model, atol=1e-5)
    with pytest.raises(DomainError, match="dtype"):
        toys.run(prob, "fedavg", backend="torch", dtype="float16", **kw)


# ----------------------------------------------------------------------------- CNN
@pytest.fixture(scope="module")
def cnn():
    from toys.problems.cnn import CNNProblem

    rng = np.random.default_rng(0)
    mask = np.ones((3, 5), bool)
    mask[0, 3:] = False  # ragged clients
    return CNNProblem(rng.normal(size=(3, 5, 8, 8)), rng.integers(0, 10, size=(3, 5)), mask,
                      seed=0)


def test_cnn_batched_gradients_match_per_client_autograd(cnn):
    from toys.problems.cnn import make_cnn

    W = cnn.x0[None] + 0.01 * np.random.default_rng(1).normal(size=(3, cnn.dim))
    G = cnn.grads(W)
    L = cnn.losses(W)
    for i in range(3):  # reference: an ordinary nn.Module per client, loss.backward()
        net = make_cnn().double()
        torch.nn.utils.vector_to_parameters(torch.as_tensor(W[i]), net.parameters())
        rows = cnn.mask[i]
        x = torch.as_tensor(cnn.images[i][rows][:, None])
        y = torch.as_tensor(cnn.labels[i][rows])
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        g = torch.cat([p.grad.reshape(-1) for p in net.parameters()]).numpy()
        np.testing.assert_allclose(G[i], g, rtol=1e-10, atol=1e-12)
        assert L[i] == pytest.approx(loss.item(), rel=1e-12)


def test_cnn_runs_on_both_backends_and_agrees(cnn):
    kw = {"rounds": 2, "seed": 0, "lr": 0.05, "local_steps": 2, "record": "sync"}
    a = toys.run(cnn, "fedsoftmax", **kw)
    b = toys.run(cnn, "fedsoftmax", backend="torch", device="cpu", **kw)
    assert a.info["loss_offset"] == "zero" and np.all(np.isnan(a.gap))
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=AGREE, atol=AGREE)
    np.testing.assert_allclose(b.loss, a.loss, rtol=AGREE)
    assert a.loss[-1] < a.loss[0]
    with pytest.raises(DomainError, match="loss_offset"):
        toys.run(cnn, "fedmax", rounds=1, seed=0, lr=0.1, loss_offset="exact")


def test_cnn_from_digits_shape_and_minibatch(cnn):
    from toys.problems.cnn import cnn_problem

    rng = np.random.default_rng(0)
    src = toys.logistic([rng.normal(size=(7, 65)) for _ in range(2)],
                        [np.arange(7) % 3 for _ in range(2)], l2=0.1)  # 8x8 + intercept
    prob = cnn_problem(src)
    assert (prob.side, prob.classes, prob.n_clients) == (8, 3, 2)
    tr = toys.run(cnn, "fedavg", rounds=1, seed=0, lr=0.05, batch_size=2, backend="torch",
                  device="cpu", record="none")
    assert np.all(np.isfinite(tr.final_model))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available on this machine")
def test_cuda_agrees_with_cpu():
    prob = PROBLEMS["binary"]
    kw = {"rounds": 4, "seed": 0, "lr": 0.3, "local_steps": 2, "participation": "bernoulli:p=0.5"}
    a = toys.run(prob, "fedau", backend="torch", device="cpu", **kw)
    b = toys.run(prob, "fedau", backend="torch", device="cuda", **kw)
    assert b.info["device"].startswith("cuda")
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)
    c = toys.run(prob, "fedau", backend="torch", device="cuda", dtype="float32", **kw)
    np.testing.assert_allclose(c.final_model, a.final_model, atol=1e-4)


@pytest.mark.parametrize("pname", ["binary", "multinomial"])
def test_logistic_oracle_of_no_clients_gives_empty_gradients(pname):
    # a participants-only round where nobody takes part, or a bucket without selected
    # clients: (0, d) gradients (reshape(n_clients, -1) cannot infer d from 0 elements)
    from toys.engine.backends.torch import setup

    prob = PROBLEMS[pname]
    ops, orc, gen = setup(prob, "cpu", None, 0)
    sub = orc.subset(torch.zeros(0, dtype=torch.long))
    assert sub.n_clients == 0 and orc.counts_max > 2
    W0, w = ops.zeros((0, prob.dim)), ops.asarray(np.full(prob.dim, 0.2))
    ref = torch.Generator().manual_seed(7)
    gen.manual_seed(7)
    outs = [sub.grads(W0), sub.grads(w), sub.minibatch_grads(W0, gen, 2),
            sub.minibatch_grads(w, gen, None)]
    for G in outs:
        assert tuple(G.shape) == (0, prob.dim) and G.dtype == torch.float64
    orc.minibatch_grads(ops.asarray(np.zeros((prob.n_clients, prob.dim))), ref, 2)
    assert torch.equal(gen.get_state(), ref.get_state())  # the draw advanced as for all clients
