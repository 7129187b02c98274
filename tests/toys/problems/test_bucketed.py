"""Size-bucketed logistic problems (``max_padding``): agreement with the padded problem, the
engine (numpy and torch), the memory bound, the knob's validation.

Tolerances. A bucket stores a client padded to its bucket's largest client instead of the
problem's: the padding rows are zero (they add exact zeros) but the reductions over the row
axis (einsum, BLAS) may accumulate in another order over the other length, so values agree to a
few ulps, not bit for bit: ``RTOL`` = 1e-12 leaves a margin of ~1e3 over the measured 1e-16.
Optima are Newton solutions to a gradient norm <= 1e-12 on both sides; with strong convexity
mu >= l2 the solutions are within 2e-12 / l2 of each other (``_x_atol``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toys
from boundlab.errors import DomainError
from toys.problems.base import OptimumUnavailable
from toys.problems.bucketed import Bucketed, bucket_plan
from toys.problems.logistic import Logistic
from toys.problems.partitions import lognormal_sizes

RTOL = 1e-12
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _data(seed=0, N=30, f=3, sigma=1.5, mean=25, multi=False, offsets=False):
    rng = np.random.default_rng(seed)
    n = lognormal_sizes(N * mean, N, sigma, rng)
    Xs = [rng.normal(size=(k, f)) + 0.5 * i / N for i, k in enumerate(n)]
    ys = ([rng.integers(0, 3, size=k) for k in n] if multi
          else [(rng.random(k) < 0.4 + 0.2 * i / N).astype(float) for i, k in enumerate(n)])
    off = [0.3 * rng.normal(size=k) for k in n] if offsets else None
    return Xs, ys, off


def _pair(max_padding=2.0, l2=0.1, **kw):
    Xs, ys, off = _data(**kw)
    multi = kw.get("multi", False)
    opts = dict(l2=l2, offsets=off, multiclass=True if multi else None)
    pad = toys.logistic(Xs, ys, **opts)
    bk = toys.logistic(Xs, ys, max_padding=max_padding, **opts)
    assert isinstance(pad, Logistic) and isinstance(bk, Bucketed) and len(bk.parts) > 1
    return pad, bk


def _close(a, b, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _x_atol(l2):
    return 2e-12 / l2


# ----------------------------------------------------------------------------- the problem
@pytest.mark.parametrize("kw", [{}, {"offsets": True}, {"multi": True}])
def test_every_method_agrees_with_the_padded_problem(kw):
    pad, bk = _pair(**kw)
    N, d = pad.n_clients, pad.dim
    for name in ("n_clients", "dim", "kind", "classes", "l2", "n_features", "name", "test"):
        assert getattr(bk, name) == getattr(pad, name), name
    assert np.array_equal(bk.counts, pad.counts) and np.array_equal(bk.p, pad.p)
    assert np.array_equal(bk.x0, pad.x0)
    rng = np.random.default_rng(1)
    W, V, w = rng.normal(size=(N, d)), rng.normal(size=(N, d)), rng.normal(size=d)
    P = rng.normal(size=(4, d))
    for args in ((W,), (w,)):
        _close(bk.losses(*args), pad.losses(*args))
        _close(bk.grads(*args), pad.grads(*args), atol=1e-15)
        _close(bk.hessians(*args), pad.hessians(*args), atol=1e-15)
        _close(bk.sample_grad_variance(*args), pad.sample_grad_variance(*args), atol=1e-15)
        _close(bk.minibatch_variance(*args, 3), pad.minibatch_variance(*args, 3), atol=1e-15)
    _close(bk.hvps(W, V), pad.hvps(W, V), atol=1e-15)
    assert np.array_equal(bk.minibatch_variance(W, None), pad.minibatch_variance(W, None))
    _close(bk.Fs(P), pad.Fs(P))
    _close(bk.F(w), pad.F(w))
    _close(bk.grad_F(w), pad.grad_F(w), atol=1e-15)
    if pad.kind == "logistic":
        _close(bk.losses_at(P), pad.losses_at(P))
    else:
        assert bk.losses_at(P) is None and pad.losses_at(P) is None
    a, b = bk.arrays(), pad.arrays()
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_weights_and_intercept_pass_through():
    Xs, ys, _ = _data()
    w = np.arange(1, len(Xs) + 1.0)
    pad = toys.logistic(Xs, ys, l2=0.1, weights=w, fit_intercept=True, name="x")
    bk = toys.logistic(Xs, ys, l2=0.1, weights=w, fit_intercept=True, name="x", max_padding=3)
    assert isinstance(bk, Bucketed) and bk.name == "x" and bk.dim == pad.dim == 4
    assert np.array_equal(bk.p, pad.p)
    _close(bk.x_star, pad.x_star, rtol=0.0, atol=_x_atol(0.1))


@pytest.mark.parametrize("kw", [{}, {"offsets": True}, {"multi": True}])
def test_optima_agree_with_the_padded_problem(kw):
    pad, bk = _pair(**kw)
    _close(bk.x_star_i, pad.x_star_i, rtol=0.0, atol=_x_atol(pad.l2))
    _close(bk.F_star_i, pad.F_star_i, rtol=1e-13)
    _close(bk.x_star, pad.x_star, rtol=0.0, atol=_x_atol(pad.l2))
    _close(bk.F_star, pad.F_star, rtol=1e-13)
    _close(bk.Gamma, pad.Gamma, rtol=1e-9)  # a difference of two O(1) numbers
    assert np.linalg.norm(bk.grad_F(bk.x_star)) <= 1e-10
    assert np.linalg.norm(bk.grads(bk.x_star_i), axis=1).max() <= 1e-10


def test_unavailable_client_optima_give_the_padded_reason():
    # l2 = 0 and log-normal sizes: the clients with fewer rows than features have a
    # rank-deficient design; the reason names the same clients as the padded problem's
    pad, bk = _pair(l2=0.0, sigma=2.0, mean=6)
    with pytest.raises(OptimumUnavailable) as e_pad:
        _ = pad.x_star_i
    with pytest.raises(OptimumUnavailable) as e_bk:
        _ = bk.x_star_i
    assert e_bk.value.reason == e_pad.value.reason
    assert "rank-deficient" in e_bk.value.reason
    _close(bk.x_star, pad.x_star, rtol=0.0, atol=1e-9)  # pooled data: a finite optimum


def test_pooled_evaluation_agrees():
    kw = dict(partition="iid", size_sigma=1.5, n_clients=12, seed=0, test_fraction=0.2)
    pad = toys.from_dataset("breast_cancer", **kw)
    bk = toys.from_dataset("breast_cancer", max_padding=2, **kw)
    assert isinstance(bk, Bucketed) and bk.options["max_padding"] == 2.0
    assert np.array_equal(bk.test["X"], pad.test["X"])
    w = pad.x_star
    assert bk.accuracy(w, bk.test["X"], bk.test["y"]) == pad.accuracy(w, pad.test["X"],
                                                                      pad.test["y"])
    assert bk.test_loss(w) == pad.test_loss(w)
    _close(bk.losses(w), pad.losses(w))


# ----------------------------------------------------------------------------- minibatches, subsets
def test_minibatch_grads_are_deterministic_and_use_real_rows():
    pad, bk = _pair()
    W = np.random.default_rng(2).normal(size=(bk.n_clients, bk.dim))
    g1 = bk.minibatch_grads(W, np.random.default_rng(7), 4)
    g2 = bk.minibatch_grads(W, np.random.default_rng(7), 4)
    assert np.array_equal(g1, g2)
    small = bk.counts <= 4  # every row drawn: the full gradient
    assert small.any() and (~small).any()
    _close(g1[small], bk.grads(W)[small], atol=1e-15)
    assert not np.allclose(g1[~small], bk.grads(W)[~small])
    assert np.array_equal(bk.minibatch_grads(W, None, None), bk.grads(W))


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(0, 29), min_size=1, max_size=12, unique=True),
       st.sampled_from([None, 1, 3, 10]))
def test_subset_rows_equal_the_full_rows_bit_for_bit(clients, b):
    _, bk = _pair()
    idx = np.array(clients)
    W = np.random.default_rng(3).normal(size=(bk.n_clients, bk.dim))
    sub = bk.subset(idx)
    assert sub.n_clients == len(idx)
    r_sub, r_full = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(sub.minibatch_grads(W[idx], r_sub, b),
                          bk.minibatch_grads(W, r_full, b)[idx])
    assert r_sub.random() == r_full.random()  # the stream advanced as for all clients
    assert np.array_equal(sub.grads(W[idx]), bk.grads(W)[idx])
    assert np.array_equal(sub.losses(W[idx]), bk.losses(W)[idx])
    W2 = np.array(W[idx])
    assert sub.local_gd(W2, bk.x0, [0.1, 0.2]) is W2
    W3 = np.array(W)
    assert np.array_equal(W2, bk.local_gd(W3, bk.x0, [0.1, 0.2])[idx])
    nested = sub.subset(np.arange(len(idx))[::-1])
    assert np.array_equal(nested.grads(W[idx][::-1]), bk.grads(W)[idx][::-1])
    with pytest.raises(DomainError):
        _ = sub.x_star


# ----------------------------------------------------------------------------- local_gd
@pytest.mark.parametrize("with_G0", [False, True])
def test_local_gd_agrees_and_writes_back(with_G0):
    pad, bk = _pair()
    N, d, tau = bk.n_clients, bk.dim, 3
    x = np.random.default_rng(4).normal(size=d)
    lrs = [0.3, 0.2, 0.1]
    out = {}
    for prob in (pad, bk):
        W = np.tile(x, (N, 1))
        Ws, Gs = np.full((tau, N, d), np.nan), np.full((tau, N, d), np.nan)
        G0 = prob.grads(x) if with_G0 else None
        r = prob.local_gd(W, x, lrs, 0.5, G0, Ws, Gs)
        assert r is W
        out[prob is bk] = (W, Ws, Gs)
    for a, b in zip(out[True], out[False]):
        _close(a, b, atol=1e-15)


def test_local_gd_other_keywords(monkeypatch):
    _, bk = _pair()
    seen = []

    def local_gd(self, W, x, lrs, *args, flag=None, **kw):
        seen.append(flag)
        return W

    monkeypatch.setattr(Logistic, "local_gd", local_gd)
    N, d = bk.n_clients, bk.dim
    bk.local_gd(np.zeros((N, d)), np.zeros(d), [0.1], flag="on")
    assert seen == ["on"] * len(bk.parts)  # passed through unchanged to every bucket
    with pytest.raises(DomainError, match="flag"):
        bk.local_gd(np.zeros((N, d)), np.zeros(d), [0.1], flag=np.zeros(N))


def test_multinomial_has_no_fused_kernel():
    _, bk = _pair(multi=True)
    assert bk.local_gd(np.zeros((bk.n_clients, bk.dim)), bk.x0, [0.1]) is None


# ----------------------------------------------------------------------------- the engine
RUNS = [("fedavg", {}), ("fedprox", {"prox": 0.5}),
        ("fedau", {"participation": "bernoulli:p=0.3"})]


def _run(prob, algo, kw, **extra):
    return toys.run(prob, algo, rounds=6, local_steps=3, lr=0.3, seed=2, record="round",
                    **kw, **extra)


def _same_bits(a, b):
    for k in ("gap", "loss"):
        assert np.array_equal(a.state[k], b.state[k], equal_nan=True), k
    assert np.array_equal(a.per_round["shadow_gap"], b.per_round["shadow_gap"], equal_nan=True)
    assert np.array_equal(a.final_model, b.final_model)
    assert np.array_equal(a.alpha, b.alpha, equal_nan=True)


@pytest.mark.parametrize("algo,kw", RUNS)
def test_run_agrees_with_the_padded_problem(algo, kw):
    pad, bk = _pair()
    t_bk, t_pad = _run(bk, algo, kw), _run(pad, algo, kw)
    for k in ("gap", "loss"):
        _close(t_bk.state[k], t_pad.state[k], rtol=1e-10, atol=1e-14)
    _close(t_bk.per_round["shadow_gap"], t_pad.per_round["shadow_gap"], rtol=1e-10,
           atol=1e-14)
    _close(t_bk.final_model, t_pad.final_model, rtol=1e-10, atol=1e-14)
    _close(t_bk.alpha, t_pad.alpha, rtol=1e-10, atol=1e-14)
    assert np.array_equal(t_bk.participation, t_pad.participation)
    assert np.isfinite(t_bk.state["gap"]).all() and np.isfinite(t_bk.per_round["shadow_gap"]).all()
    _same_bits(t_bk, _run(bk, algo, kw))


def test_minibatch_run_is_reproducible():
    _, bk = _pair()
    kw = {"participation": "bernoulli:p=0.3", "batch_size": 4}
    _same_bits(_run(bk, "fedavg", kw), _run(bk, "fedavg", kw))


def test_torch_backend_agrees_with_numpy():
    torch = pytest.importorskip("torch")
    from toys.engine.backends.torch import setup

    pad, bk = _pair()
    for algo, kw in RUNS:
        t_np = _run(bk, algo, kw)
        t_th = _run(bk, algo, kw, backend="torch", device="cpu")
        for k in ("gap", "loss"):  # the torch backend's documented float64 agreement
            _close(t_th.state[k], t_np.state[k], rtol=1e-10, atol=1e-10)
        _close(t_th.per_round["shadow_gap"], t_np.per_round["shadow_gap"], rtol=1e-10,
               atol=1e-10)
        _close(t_th.final_model, t_np.final_model, rtol=1e-10, atol=1e-10)
    kw = {"participation": "bernoulli:p=0.3", "batch_size": 4}
    _same_bits(_run(bk, "fedavg", kw, backend="torch", device="cpu"),
               _run(bk, "fedavg", kw, backend="torch", device="cpu"))
    # participants only: the subset's rows and the generator's advance are the full oracle's
    ops, orc, _ = setup(bk, "cpu", None, 0)
    W = ops.asarray(np.random.default_rng(8).normal(size=(bk.n_clients, bk.dim)))
    idx = torch.tensor([3, 0, 17, 5])
    g_sub, g_full = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    sub = orc.subset(idx)
    assert torch.equal(sub.minibatch_grads(W[idx], g_sub, 4),
                       orc.minibatch_grads(W, g_full, 4)[idx])
    assert torch.equal(torch.rand(3, generator=g_sub), torch.rand(3, generator=g_full))
    assert torch.equal(sub.grads(W[idx]), orc.grads(W)[idx])
    # nobody takes part: every bucket is empty, still draws, and the result is (0, d)
    none = orc.subset(torch.zeros(0, dtype=torch.long))
    g_none, g_full = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert tuple(none.minibatch_grads(W[:0], g_none, 4).shape) == (0, bk.dim)
    orc.minibatch_grads(W, g_full, 4)
    assert torch.equal(g_none.get_state(), g_full.get_state())
    _close(ops.to_numpy(orc.losses(W)), bk.losses(ops.to_numpy(W)), rtol=1e-13)


# ----------------------------------------------------------------------------- memory, the knob
@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.floats(1.0, 4.0), st.floats(0.0, 2.5))
def test_bucket_plan_bounds_the_padding(seed, max_padding, sigma):
    sizes = lognormal_sizes(40 * 20, 40, sigma, np.random.default_rng(seed))
    plan = bucket_plan(sizes, max_padding)
    assert np.array_equal(np.sort(np.concatenate(plan)), np.arange(40))
    for b in plan:
        assert sizes[b].max() <= max_padding * sizes[b].min()
    assert sum(len(b) * sizes[b].max() for b in plan) <= max_padding * sizes.sum()
    if max_padding > 1.0 and sizes.min() > 0:
        bound = 1 + math.log(sizes.max() / sizes.min()) / math.log(max_padding)
        assert len(plan) <= math.floor(bound + 1e-12)


@pytest.mark.parametrize("max_padding", [1.0, 1.5, 2.0, 4.0])
def test_stored_bytes_within_max_padding_of_the_real_rows(max_padding):
    # every client's padded length is <= max_padding x n_i by construction: no slack needed
    Xs, ys, _ = _data(N=60, f=4, sigma=1.5, mean=30)
    real_rows = sum(len(x) for x in Xs)
    prob = toys.logistic(Xs, ys, l2=0.1, max_padding=max_padding)
    assert isinstance(prob, Bucketed)
    stored = sum(sub.X.nbytes for _, sub in prob.parts)
    assert stored <= max_padding * real_rows * 4 * 8
    assert prob.stored_rows * 4 * 8 == stored
    per_row = sum(a.nbytes for _, s in prob.parts for a in (s.X, s.y, s.mask, s.row_w, s.offset))
    assert per_row <= max_padding * real_rows * (4 * 8 + 8 + 1 + 8 + 8)
    pad = toys.logistic(Xs, ys, l2=0.1)
    assert stored < pad.X.nbytes


def test_no_gain_gives_the_padded_problem():
    Xs, ys, _ = _data(sigma=0.0)  # equal sizes (up to one): one bucket
    ref = toys.logistic(Xs, ys, l2=0.1)
    for mp in (2.0, 1e6):
        prob = toys.logistic(Xs, ys, l2=0.1, max_padding=mp)
        assert type(prob) is Logistic
        assert np.array_equal(prob.X, ref.X) and np.array_equal(prob.p, ref.p)


@pytest.mark.parametrize("bad", [0.5, 0.0, -2.0, math.nan, math.inf, "2", True, [2.0]])
def test_bad_max_padding(bad):
    Xs, ys, _ = _data()
    with pytest.raises(DomainError, match="max_padding") as e:
        toys.logistic(Xs, ys, l2=0.1, max_padding=bad)
    assert "None or a real number >= 1" in str(e.value)
    with pytest.raises(DomainError, match="max_padding"):
        toys.from_dataset("breast_cancer", n_clients=4, max_padding=bad)


def test_from_dataset_passes_max_padding_through():
    kw = dict(partition="dirichlet", alpha=0.3, n_clients=15, seed=1)
    pad = toys.from_dataset("digits", max_samples=600, **kw)
    bk = toys.from_dataset("digits", max_samples=600, max_padding=1.5, **kw)
    assert isinstance(bk, Bucketed) and bk.kind == "multinomial" == pad.kind
    assert np.array_equal(bk.counts, pad.counts)
    assert bk.stored_rows <= 1.5 * bk.counts.sum() and bk.stored_rows < pad.mask.size
    _close(bk.losses(np.ones(bk.dim) * 0.01), pad.losses(np.ones(pad.dim) * 0.01))
    assert "max_padding" not in pad.options
