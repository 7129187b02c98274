"""The fused, cache-blocked local GD of binary logistic problems (toys.problems._logistic_math):
sigmoid accuracy, gradients against a per-client reference, block-size independence (bits),
and bit-equality with the generic step-by-step path of toys.algorithms.client.local_update."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import expit

import toys
import toys.algorithms.client as local
from toys.problems._logistic_math import binary_grads, binary_local_gd, residual_offset


def _problem(seed=0, N=7, f=3, offsets=True, l2=0.05):
    """Binary logistic problem with unequal client sizes (padding) and optional offsets."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 12, size=N)
    Xs = [rng.standard_normal((m, f)) for m in sizes]
    ys = [(rng.random(m) < 0.5).astype(float) for m in sizes]
    off = [rng.standard_normal(m) for m in sizes] if offsets else None
    return toys.logistic(Xs, ys, l2=l2, offsets=off)


def _reference_grads(prob, W):
    """Per-client gradient with scipy's expit: mean_k (s_k - y_k) x_k + l2 w."""
    out = np.empty_like(W)
    for i in range(prob.n_clients):
        rows = prob.mask[i]
        Xi, yi = prob.X[i, rows], prob.y[i, rows]
        z = Xi @ W[i] + prob.offset[i, rows]
        out[i] = Xi.T @ ((expit(z) - yi) / rows.sum()) + prob.l2 * W[i]
    return out


def test_sigmoid_term_is_accurate_and_silent():
    """X = I, row_w = 1, l2 = 0: the gradient is sigmoid(w) - y elementwise."""
    z = np.concatenate([np.linspace(-800, 800, 4001), [0.0, -0.0, 1e-300, -1e-300, -708.3,
                                                        -709.8, -745.2, 36.0, 37.0, 710.0]])
    m = z.size
    X = np.eye(m)[None]
    ones = np.ones((1, m))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning leaks out
        s = binary_grads(X, residual_offset(X, np.zeros((1, m)), ones), ones, None, 0.0,
                         z[None])[0]
        s1 = binary_grads(X, residual_offset(X, ones, ones), ones, None, 0.0, z[None])[0]
    ref = np.array([1.0 / (1.0 + math.exp(-v)) if v >= 0 else
                    math.exp(v) / (1.0 + math.exp(v)) for v in z])
    normal = z >= -708.0  # sigmoid(z) >= 2.2e-308 (normal numbers)
    np.testing.assert_allclose(s[normal], ref[normal], rtol=1e-15, atol=0)
    assert np.all(np.abs(s[~normal] - ref[~normal]) <= 2.3e-308)
    ref1 = np.array([-1.0 / (1.0 + math.exp(v)) if v <= 0 else
                     -math.exp(-v) / (1.0 + math.exp(-v)) for v in z])  # sigmoid(z) - 1
    np.testing.assert_allclose(s1, ref1, rtol=0, atol=2.3e-16)  # ~1 ulp of 1


@pytest.mark.parametrize("offsets", [True, False])
def test_grads_match_per_client_reference(offsets):
    prob = _problem(seed=1, offsets=offsets)
    rng = np.random.default_rng(2)
    for scale in (0.0, 0.3, 3.0, 30.0):
        W = scale * rng.standard_normal((prob.n_clients, prob.dim))
        np.testing.assert_allclose(prob.grads(W), _reference_grads(prob, W), rtol=1e-12,
                                   atol=1e-14)
    w = rng.standard_normal(prob.dim)  # one point, broadcast to every client
    np.testing.assert_array_equal(prob.grads(w), prob.grads(np.tile(w, (prob.n_clients, 1))))


def _generic_steps(prob, W, x, lrs, prox):
    """tau steps with prob.grads, written like the generic loop of
    toys.algorithms.client.local_update."""
    Ws, Gs = [], []
    for lr in lrs:
        G = prob.grads(W)
        step = G if prox == 0.0 else G + prox * (W - x)
        W = W - float(lr) * step
        Ws.append(W)
        Gs.append(G)
    return W, np.stack(Ws), np.stack(Gs)


@pytest.mark.parametrize("prox", [0.0, 0.7])
def test_blocked_steps_are_bit_identical_to_generic_steps(prox):
    prob = _problem(seed=3, N=11)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(prob.dim)
    W0 = np.tile(x, (prob.n_clients, 1))
    lrs = [0.3, 0.2, 0.25, 0.1]
    W_ref, Ws_ref, Gs_ref = _generic_steps(prob, W0, x, lrs, prox)
    per_client = prob.X[0].nbytes
    args = (prob.X, prob._c, prob.row_w, prob._off, prob.l2)
    for block_bytes in (1, 3 * per_client, 4 * per_client, 10**9):  # 1, 3, 4, all clients
        Ws, Gs = np.empty((4, *W0.shape)), np.empty((4, *W0.shape))
        W = binary_local_gd(*args, W0.copy(), x, lrs, prox, None, Ws, Gs,
                            block_bytes=block_bytes)
        np.testing.assert_array_equal(W, W_ref)
        np.testing.assert_array_equal(Ws, Ws_ref)
        np.testing.assert_array_equal(Gs, Gs_ref)
    # a given first gradient (the engine passes the one of its metrics) is used as is
    G0 = prob.grads(x)
    W = binary_local_gd(*args, W0.copy(), x, lrs, prox, G0, block_bytes=2 * per_client)
    np.testing.assert_array_equal(W, W_ref)


class _Generic:
    """The same oracle without the fused kernel: local_update takes its generic loop."""

    def __init__(self, prob):
        self.prob, self.n_clients = prob, prob.n_clients

    def minibatch_grads(self, W, rng, batch_size):
        return self.prob.minibatch_grads(W, rng, batch_size)


@pytest.mark.parametrize("record_bytes", [None, 0])
def test_local_update_fused_equals_generic(monkeypatch, record_bytes):
    if record_bytes is not None:  # stacks too large: the fused path declines, generic runs
        monkeypatch.setattr(local, "_FUSED_RECORD_BYTES", record_bytes)
    prob = _problem(seed=5, N=6)
    x = np.random.default_rng(6).standard_normal(prob.dim)
    lrs = [0.2, 0.2, 0.1]
    seen = {}

    def observer(tag):
        def obs(k, W, G, lr):
            seen.setdefault(tag, []).append((k, W.copy(), G.copy(), lr))
        return obs

    W0 = np.tile(x, (prob.n_clients, 1))
    a = local.local_update(prob, x, lrs, None, prox=0.3, observer=observer("f"), W0=W0)
    b = local.local_update(_Generic(prob), x, lrs, None, prox=0.3,
                           observer=observer("g"))
    np.testing.assert_array_equal(W0, np.tile(x, (prob.n_clients, 1)))  # W0 not modified
    np.testing.assert_array_equal(a, b)
    for (k, W, G, lr), (k2, W2, G2, lr2) in zip(seen["f"], seen["g"], strict=True):
        assert (k, lr) == (k2, lr2)
        np.testing.assert_array_equal(W, W2)
        np.testing.assert_array_equal(G, G2)


def test_engine_modes_agree_and_fallbacks():
    prob = _problem(seed=7, N=5)
    kw = {"rounds": 4, "seed": 3, "lr": 0.2, "local_steps": 3, "participation": "bernoulli:p=0.6"}
    runs = {rec: toys.run(prob, "fedprox", prox=0.5, record=rec, **kw)
            for rec in ("none", "sync", "round", "step")}
    for tr in runs.values():
        np.testing.assert_array_equal(tr.final_model, runs["step"].final_model)
    # the fused kernel is not used for minibatches; multinomial problems fall back to grads
    mb = toys.run(prob, "fedavg", batch_size=2, record="none", **kw)
    assert np.all(np.isfinite(mb.final_model))
    multi = toys.logistic([np.eye(3), np.ones((2, 3))], [np.array([0, 1, 2]), np.array([1, 2])],
                          l2=0.1)
    assert multi.local_gd(np.zeros((2, multi.dim)), np.zeros(multi.dim), [0.1]) is None
    tr = toys.run(multi, "fedavg", rounds=2, seed=0, lr=0.1, record="none")
    assert np.all(np.isfinite(tr.final_model))


def test_softplus_matches_logaddexp():
    from toys.problems._logistic_math import softplus

    z = np.concatenate([np.linspace(-800, 800, 20001), [0.0, -0.0, np.inf, -np.inf, 1e-300]])
    ref = np.logaddexp(0.0, z)
    got = softplus(z)
    tiny = ref < 1e-300
    np.testing.assert_allclose(got[~tiny], ref[~tiny], rtol=1e-15, atol=0)
    assert np.all(np.abs(got[tiny] - ref[tiny]) <= 1e-300)
    prob = _problem(seed=8)
    W = np.random.default_rng(9).standard_normal((prob.n_clients, prob.dim))
    ref_losses = [np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * prob.l2 * W[i] @ W[i]
                  for i in range(prob.n_clients)
                  for rows in [prob.mask[i]]
                  for z, y in [(prob.X[i, rows] @ W[i] + prob.offset[i, rows], prob.y[i, rows])]]
    np.testing.assert_allclose(prob.losses(W), ref_losses, rtol=1e-14)
