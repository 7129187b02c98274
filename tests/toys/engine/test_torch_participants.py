"""Participants-only compute on the torch backend: every torch oracle (logistic binary,
multinomial and with offsets, quadratic with gradient noise, MLP, CNN) has ``subset`` taking
the round loop's device tensor of client indices; the subset is gathered on the device (no
host round trip: no ``.numpy()`` / ``__array__`` / ``.tolist()`` while building or using
it); its rows are bit-identical to the full computation's, and the generator advances as for
all N clients. Whole runs with partial participation are bit-identical with and without
participants-only compute."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toys  # noqa: E402
from toys.engine.backends import torch as tb  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402
from toys.problems.mlp import MLPProblem  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _problems():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(n, 3)) + 0.3 * i for i, n in enumerate((9, 14, 6, 11, 4))]
    mask = np.ones((5, 6), bool)
    mask[0, 4:] = False
    mask[3, 1:] = False
    return {
        "binary": toys.logistic_synthetic(n_clients=5, dim=3, seed=0),
        "multinomial": toys.logistic(Xs, [rng.integers(0, 3, size=len(x)) for x in Xs],
                                     l2=0.05),
        "seed004": toys.seed004_toy(seed=0, n_clients=5),
        "quadratic": toys.quadratic(n_clients=5, dim=3, seed=0, noise_std=0.3),
        "mlp": MLPProblem(rng.normal(size=(5, 6, 4)), rng.integers(0, 3, (5, 6)), mask,
                          classes=3, hidden=5, l2=1e-2),
        "cnn": CNNProblem(rng.normal(size=(5, 6, 4, 4)), rng.integers(0, 3, (5, 6)), mask,
                          classes=3, seed=0),
    }


PROBLEMS = _problems()


@pytest.fixture
def no_host_copies(monkeypatch):
    """Make any device -> host conversion of a tensor raise while the fixture is active."""

    def refuse(*a, **k):
        raise AssertionError("host round trip")

    def activate():
        for name in ("numpy", "__array__", "tolist"):
            monkeypatch.setattr(torch.Tensor, name, refuse)

    return activate


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_subset_on_device_is_bit_identical(name, no_host_copies):
    prob = PROBLEMS[name]
    ops, orc, _ = tb.setup(prob, "cpu", None, 0)
    rng = np.random.default_rng(1)
    x0 = np.zeros(prob.dim) if getattr(prob, "x0", None) is None else prob.x0
    W = ops.asarray(x0[None, :] + 0.1 * rng.normal(size=(prob.n_clients, prob.dim)))
    mask = ops.asbool(np.array([True, False, True, True, False]))
    full_g = orc.grads(W)
    full_mb = orc.minibatch_grads(W, torch.Generator().manual_seed(4), 2)
    no_host_copies()
    idx = mask.nonzero()[:, 0]  # what the round loop passes (a device tensor)
    sub = orc.subset(idx)
    assert sub.n_clients == 3
    Ws = W.index_select(0, idx)
    gen = torch.Generator().manual_seed(4)
    sub_g, sub_mb = sub.grads(Ws), sub.minibatch_grads(Ws, gen, 2)
    assert torch.equal(sub_g, full_g[idx])
    # the same rows are drawn; the minibatch products of 3 and of 5 clients may take kernels
    # of other blockings on some CPUs (seen: 2.2e-16 apart on one machine): round-off
    torch.testing.assert_close(sub_mb, full_mb[idx], rtol=1e-14, atol=1e-15)
    assert not torch.equal(sub_mb, sub_g)  # a real draw
    # a subset of a subset keeps the rows of the full draw
    sub2 = sub.subset(torch.tensor([2]))
    mb2 = sub2.minibatch_grads(Ws[2:], torch.Generator().manual_seed(4), 2)
    assert torch.equal(mb2, full_mb[3:4])
    ref = torch.Generator().manual_seed(4)
    orc.minibatch_grads(W, ref, 2)
    assert torch.equal(gen.get_state(), ref.get_state())


@pytest.mark.parametrize("name,algo,extra", [
    ("binary", "fedau", {"K": 3}), ("binary", "fedavg", {"batch_size": 3}),
    ("multinomial", "fedprox", {"prox": 0.1}), ("quadratic", "fedavg", {"batch_size": 1}),
    ("mlp", "fedavg", {"batch_size": 2}), ("cnn", "fedau", {"batch_size": 2}),
])
def test_runs_bit_identical_with_and_without_participants_only(name, algo, extra,
                                                               monkeypatch):
    prob = PROBLEMS[name]
    kw = {"rounds": 4, "seed": 3, "lr": 0.05, "local_steps": 2, "backend": "torch",
          "device": "cpu", "participation": "bernoulli:p=0.5", "record": "round", **extra}
    a = toys.run(prob, algo, **kw)
    assert 0 < a.participation.sum() < a.participation.size  # really partial
    calls = []
    real = tb.ClientSubset.subset
    monkeypatch.setattr(tb.ClientSubset, "subset",
                        lambda self, c: calls.append(1) or real(self, c))
    b = toys.run(prob, algo, **kw)
    assert calls  # the participants-only path was taken
    monkeypatch.setattr(tb.ClientSubset, "subset", None)  # every client computed
    c = toys.run(prob, algo, **kw)
    for x in (b, c):
        np.testing.assert_array_equal(x.final_model, a.final_model)
        np.testing.assert_array_equal(x.alpha, a.alpha)
        np.testing.assert_array_equal(x.to_frame().to_numpy(), a.to_frame().to_numpy())
