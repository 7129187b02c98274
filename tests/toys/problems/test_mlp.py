"""Seed 003's MLP: gradients, the torch oracle, minibatches, non-convexity, runs."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.problems.mlp import MLPProblem, mlp_problem

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _prob(seed=0, N=3, n=6, f=4, C=3, h=5, l2=1e-3):
    rng = np.random.default_rng(seed)
    mask = np.ones((N, n), bool)
    mask[0, 4:] = False  # a client with fewer rows (padding)
    return MLPProblem(rng.normal(size=(N, n, f)), rng.integers(0, C, (N, n)), mask, classes=C,
                      hidden=h, l2=l2, seed=seed)


def _loss_by_hand(prob, w, i):
    """Client i's loss written out directly (no batching): mean CE + l2/2 ||w||^2."""
    f, h, C = prob.n_features, prob.hidden, prob.classes
    W1 = w[:f * h].reshape(f, h)
    b1 = w[f * h:f * h + h]
    W2 = w[f * h + h:f * h + h + h * C].reshape(h, C)
    b2 = w[-C:]
    tot = 0.0
    rows = np.flatnonzero(prob.mask[i])
    for s in rows:
        z = np.maximum(prob.X[i, s] @ W1 + b1, 0) @ W2 + b2
        tot += np.log(np.sum(np.exp(z - z.max()))) + z.max() - z[prob.y[i, s]]
    return tot / len(rows) + 0.5 * prob.l2 * w @ w


def test_losses_match_a_direct_computation():
    prob = _prob()
    W = prob.x0[None, :] + 0.3 * np.random.default_rng(1).normal(size=(3, prob.dim))
    L = prob.losses(W)
    assert np.allclose(L, [_loss_by_hand(prob, W[i], i) for i in range(3)], rtol=1e-12)


def test_gradients_match_central_differences():
    prob = _prob()
    W = prob.x0[None, :] + 0.3 * np.random.default_rng(2).normal(size=(3, prob.dim))
    G = prob.grads(W)
    eps = 1e-6
    for j in (0, 7, prob.dim - 1, prob.dim // 2):
        E = np.zeros_like(W)
        E[:, j] = eps
        fd = (prob.losses(W + E) - prob.losses(W - E)) / (2 * eps)
        assert np.allclose(G[:, j], fd, rtol=1e-6, atol=1e-8)


def test_non_convex_hidden_unit_permutation():
    """Permuting hidden units leaves the loss unchanged; the midpoint is worse: not convex."""
    prob = _prob(l2=0.0)
    f, h, C = prob.n_features, prob.hidden, prob.classes
    w = prob.x0.copy()
    for _ in range(300):  # fit client 1: a low-loss point
        w = w - 0.5 * prob.grads(np.stack([w] * 3))[1]
    perm = np.roll(np.arange(h), 1)
    W1 = w[:f * h].reshape(f, h)[:, perm]
    b1 = w[f * h:f * h + h][perm]
    W2 = w[f * h + h:f * h + h + h * C].reshape(h, C)[perm]
    v = np.concatenate([W1.ravel(), b1, W2.ravel(), w[-C:]])
    Fw, Fv = prob.losses(w)[1], prob.losses(v)[1]
    assert Fw == pytest.approx(Fv, rel=1e-12)
    assert prob.losses((w + v) / 2)[1] > Fw


def test_minibatch_of_everything_is_the_full_gradient_and_draws_are_rows():
    prob = _prob()
    W = np.stack([prob.x0] * 3)
    assert np.array_equal(prob.minibatch_grads(W, np.random.default_rng(0), 100), prob.grads(W))
    g = prob.minibatch_grads(W, np.random.default_rng(0), 2)
    # the average of the batch gradients over many draws approaches the full gradient
    rng = np.random.default_rng(1)
    avg = np.mean([prob.minibatch_grads(W, rng, 2) for _ in range(400)], axis=0)
    assert g.shape == W.shape
    assert np.abs(avg - prob.grads(W)).max() < 0.1 * np.abs(prob.grads(W)).max() + 1e-3


def test_minibatch_is_the_full_gradient_of_the_drawn_rows():
    """Client i's minibatch: its real rows of the b smallest keys of one rng.random((N, n_max))
    draw, weighted 1/min(b, n_i); the reference is the full-batch gradient (checked against
    central differences above) of a one-client problem holding only those rows."""
    prob = _prob(n=8, f=5, h=6)  # client 0 has 4 real rows (< b: all of them)
    W = prob.x0[None, :] + 0.3 * np.random.default_rng(4).normal(size=(3, prob.dim))
    b = 5
    rng = np.random.default_rng(7)
    G = prob.minibatch_grads(W, rng, b)
    ref_rng = np.random.default_rng(7)
    keys = np.where(prob.mask, ref_rng.random(prob.mask.shape), np.inf)
    assert rng.random() == ref_rng.random()  # the draw used exactly one (N, n_max) block
    for i in range(prob.n_clients):
        rows = np.sort(np.argsort(keys[i])[:min(b, prob.counts[i])])
        one = MLPProblem(prob.X[i:i + 1, rows], prob.y[i:i + 1, rows],
                         np.ones((1, len(rows)), bool), classes=prob.classes,
                         hidden=prob.hidden, l2=prob.l2)
        np.testing.assert_allclose(G[i], one.grads(W[i:i + 1])[0], rtol=1e-12, atol=1e-15)


def test_test_metrics_is_accuracy_and_pooled_loss_in_one_pass():
    prob = _prob()
    X = np.random.default_rng(5).normal(size=(7, prob.n_features))
    y = np.array([0, 1, 2, 0, 1, 2, 0])
    w = prob.x0 + 0.2
    Z = np.maximum(X @ w[:20].reshape(4, 5) + w[20:25], 0) @ w[25:40].reshape(5, 3) + w[40:]
    lse = np.log(np.exp(Z - Z.max(1, keepdims=True)).sum(1)) + Z.max(1)
    acc, loss = prob.test_metrics(w, X, y)
    assert acc == np.mean(Z.argmax(1) == y)
    assert loss == pytest.approx(np.mean(lse - Z[np.arange(7), y]), rel=1e-12)
    assert (acc, loss) == (prob.accuracy(w, X, y), prob.pooled_loss(w, X, y))


def test_torch_oracle_agrees_with_numpy():
    pytest.importorskip("torch")
    from toys.engine.backends.torch import TorchOps

    prob = _prob()
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    W = prob.x0[None, :] + 0.1 * np.random.default_rng(3).normal(size=(3, prob.dim))
    assert np.allclose(orc.losses(ops.asarray(W)).numpy(), prob.losses(W), rtol=1e-12)
    assert np.allclose(orc.grads(ops.asarray(W)).numpy(), prob.grads(W), rtol=1e-10,
                       atol=1e-14)


def test_runs_on_both_backends_and_learns():
    from toys.engine import TestMetrics

    src = toys.from_dataset("digits", n_clients=4, seed=0, test_fraction=0.2, max_samples=400)
    prob = mlp_problem(src, hidden=16)
    for backend in ("numpy", "torch"):
        if backend == "torch":
            pytest.importorskip("torch")
        tr = toys.run(prob, "fedavg", rounds=10, seed=0, lr=0.1, local_steps=5, batch_size=16,
                      record="none", backend=backend, callbacks=[TestMetrics(prob)])
        acc = tr.metrics["test_accuracy"]
        assert acc[-1] > 0.4  # chance is 0.1
        assert tr.metrics["test_loss"][-1] < tr.metrics["test_loss"][0]


@pytest.mark.parametrize("weights, match", [
    ([1.0, -1.0, 2.0], "positive finite"),      # a negative weight was divided through before
    ([1.0, 2.0], r"shape \(3,\)"),              # one weight per client
    (["1", "2", "3"], "not an array of numbers"),
    ([True, True, False], "bools are not weights"),
])
def test_bad_client_weights_are_refused_by_name(weights, match):
    rng = np.random.default_rng(0)
    with pytest.raises(DomainError, match=match) as err:
        MLPProblem(rng.normal(size=(3, 4, 2)), rng.integers(0, 2, (3, 4)), np.ones((3, 4), bool),
                   classes=2, hidden=3, weights=weights)
    assert "weights" in str(err.value)


def test_client_weights_are_normalised():
    rng = np.random.default_rng(0)
    prob = MLPProblem(rng.normal(size=(3, 4, 2)), rng.integers(0, 2, (3, 4)),
                      np.ones((3, 4), bool), classes=2, hidden=3, weights=[1, 1, 2])
    assert prob.p.tolist() == [0.25, 0.25, 0.5]
