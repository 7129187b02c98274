"""``toys.constants`` of a size-bucketed problem (``max_padding``) equals that of the equivalent
padded problem, field by field: the same values, the same ``how`` (exact / bound / estimate)
and notes, the same region -- and it never builds the padded block.

Tolerances. ``RTOL`` = 1e-12 for everything computed from the data alone (L, L_F, mu, mu_F, the
zeta bound or the 1-D suprema, sigma^2 / G^2 / zeta at trajectory points): a bucket stores a
client padded to its bucket's largest client, so sums over the row axis may accumulate in
another order (measured: <= 4e-16 relative; 1e-12 leaves a margin of ~1e3). Figures that
involve the solved optima (D, F*, Gamma, and the estimates taken at x*, x_i*) inherit the
Newton solves' tolerance: each side's optimum is within 1e-12 / l2 of the true one (gradient
norm <= 1e-12, strong convexity l2 = 0.1), and Gamma is a difference of two O(1) numbers, so
``RTOL_OPT`` = 1e-9 (as in tests/toys/problems/test_bucketed.py; measured <= 8e-15).
"""

from __future__ import annotations

import numpy as np
import pytest

import toys
from toys.problems.bucketed import Bucketed
from toys.problems.logistic import Logistic
from toys.problems.partitions import lognormal_sizes

RTOL = 1e-12
RTOL_OPT = 1e-9
#: the figures computed from the data alone (the rest involve the solved optima)
DATA_ONLY = {"L", "L_F", "mu", "mu_F", "zeta", "zeta_traj"}


def _data(seed=0, N=14, f=3, mean=15, multi=False, offsets=False):
    """Log-normal client sizes (spread 1.5: n_max / n_min ~ 100): several size buckets. With
    f = 1 the feature is kept in [0.5, 1.5] so that the 1-D search range stays short."""
    rng = np.random.default_rng(seed)
    n = lognormal_sizes(N * mean, N, 1.5, rng)
    if f == 1:
        Xs = [0.5 + rng.random((k, 1)) for k in n]
    else:
        Xs = [rng.normal(size=(k, f)) + 0.5 * i / N for i, k in enumerate(n)]
    ys = ([rng.integers(0, 3, size=k) for k in n] if multi
          else [(rng.random(k) < 0.4 + 0.2 * i / N).astype(float) for i, k in enumerate(n)])
    off = [0.3 * rng.normal(size=k) for k in n] if offsets else None
    return Xs, ys, off


def _pair(l2=0.1, **kw):
    Xs, ys, off = _data(**kw)
    opts = dict(l2=l2, offsets=off, multiclass=True if kw.get("multi") else None)
    pad = toys.logistic(Xs, ys, **opts)
    bk = toys.logistic(Xs, ys, max_padding=2.0, **opts)
    assert isinstance(pad, Logistic) and isinstance(bk, Bucketed) and len(bk.parts) > 2
    return pad, bk


def _no_padded_block(monkeypatch):
    def refuse(self):
        raise AssertionError("the constants built the padded block (Bucketed.arrays)")

    monkeypatch.setattr(Bucketed, "arrays", refuse)


def _assert_same(c_pad, c_bk, rtol_opt=RTOL_OPT):
    vp, vb = c_pad.values(), c_bk.values()
    assert list(vb) == list(vp)
    for k, a in vp.items():
        b = vb[k]
        assert (b.how, b.kind, b.note) == (a.how, a.kind, a.note), k
        rtol = RTOL if k in DATA_ONLY else rtol_opt
        np.testing.assert_allclose(b.value, a.value, rtol=rtol, atol=0.0, err_msg=k)
    assert repr(c_bk.region) == repr(c_pad.region)
    assert c_bk.problem == c_pad.problem and c_bk.batch_size == c_pad.batch_size


CASES = {
    "binary": {},
    "binary, offsets": {"offsets": True},
    "multinomial": {"multi": True},
}


@pytest.mark.parametrize("kw", list(CASES.values()), ids=list(CASES))
def test_constants_equal_the_padded_problem(kw, monkeypatch):
    pad, bk = _pair(**kw)
    c_pad = toys.constants(pad)
    _no_padded_block(monkeypatch)
    _assert_same(c_pad, toys.constants(bk))
    expected = "exact" if kw == {} else "bound"  # exact at theta = 0 only without offsets
    assert c_pad.L.how == c_pad.L_F.how == expected and c_pad.zeta.how == "bound"


@pytest.mark.parametrize("kw", [{"offsets": True}, {"multi": True}], ids=["binary", "multi"])
def test_constants_along_a_trajectory_with_minibatches(kw, monkeypatch):
    # sigma^2 and G^2 at x_ref and the trajectory (no optimum involved): the data tolerance
    pad, bk = _pair(**kw)
    traj = np.random.default_rng(9).normal(size=(3, pad.dim))
    c_pad = toys.constants(pad, trajectory=traj, batch_size=3)
    _no_padded_block(monkeypatch)
    c_bk = toys.constants(bk, trajectory=traj, batch_size=3)
    _assert_same(c_pad, c_bk)
    for k in ("sigma2", "G2"):
        np.testing.assert_allclose(c_bk[k].value, c_pad[k].value, rtol=RTOL, err_msg=k)
    assert c_bk.sigma2.value > 0


@pytest.mark.parametrize("offsets", [False, True])
def test_one_parameter_constants_equal_the_padded_problem(offsets, monkeypatch):
    pad, bk = _pair(f=1, offsets=offsets)
    assert pad.dim == 1
    traj = np.array([[-2.0], [0.5], [3.0]])
    c_pad = toys.constants(pad, trajectory=traj)
    _no_padded_block(monkeypatch)
    c_bk = toys.constants(bk, trajectory=traj)
    _assert_same(c_pad, c_bk)
    # the 1-D path (exact global suprema over R), not the d >= 2 bound
    assert c_bk.zeta.how == c_bk.L.how == "exact" and c_bk.region["kind"] == "R^d"
    assert "global sup over theta" in c_bk.zeta.note


def test_unavailable_optima_are_reported_alike():
    # l2 = 0: clients with fewer rows than features are rank-deficient, x_i* and Gamma are
    # unavailable on both sides with the same reason; L, zeta stay exact / bounds
    pad, bk = _pair(l2=0.0, mean=6)
    c_pad, c_bk = toys.constants(pad), toys.constants(bk)
    assert c_pad.Gamma.how == "unavailable" and "rank-deficient" in c_pad.Gamma.note
    # D, F* at the pooled optimum: l2 = 0 makes the solves less tight (within 1e-9, see
    # test_bucketed.py); Gamma is NaN on both sides
    _assert_same(c_pad, c_bk, rtol_opt=1e-7)
    assert "Gamma" not in c_bk.as_params() and "Gamma" not in c_pad.as_params()
