"""Property tests of the general skew bounds and lemmas (spec §7.4, §7.5).

The catalogue's (17)/(19)/(15) choose the step-size shift gamma from Pi (or its bound (18)), so a
change of Pi or p_min also changes gamma, i.e. the run the bound speaks about. The spec's
monotonicity claims hold at a common gamma (tested below on the sub-domain where the gamma's
Pi-branch is inactive); where the branch is active they fail: findings BM-P2, BM-P3, BM-P4, whose
tests assert the counterexamples with formulas typed here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import boundlab

SET = settings(max_examples=100, deadline=None)
B17, B19, BUNI = (
    boundlab.get(i) for i in ("skew.pi_bound", "skew.pi_bound_pmin", "skew.pi_bound_uniform")
)


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def nonneg(hi):
    """0 exactly, or a moderate positive value (no subnormals: they only test float underflow)."""
    return st.one_of(st.just(0.0), fl(1e-3, hi))


@st.composite
def gen(draw):
    m = draw(fl(0.1, 3.0))
    n = draw(st.integers(2, 50))
    p_min = draw(fl(0.05, 1.0)) / n
    pi = draw(fl(0.01, 0.99))
    pi_up = (1 - (n - 1) * pi * p_min) / p_min
    Pi = 1 + (pi_up - 1) * draw(nonneg(1.0))
    base = {
        "T": draw(st.integers(1, 100_000)),
        "L": m * draw(fl(1.0, 30.0)),
        "mu": m,
        "E": draw(st.integers(1, 10)),
        "G": draw(fl(0.01, 10.0)),
        "sigma": draw(nonneg(10.0)),
        "Gamma": draw(nonneg(10.0)),
        "D0": draw(nonneg(10.0)),
        "pi": pi,
    }
    return base, {"Pi": Pi, "p_min": p_min, "N": n, "pi_up": pi_up}


def _typed(base, kappa_err, g):
    """(C0 + lambda1/pi)/(T + g) + lambda2 * kappa_err with the spec's constants."""
    L, mu, E, G, s, Gam, D0 = (base[k] for k in ("L", "mu", "E", "G", "sigma", "Gamma", "D0"))
    C0 = 8 * L**2 * Gam / mu**2 + L * g * D0**2 / 2
    lam1 = 4 * L * (32 * E**2 * G**2 + s**2) / (3 * mu**2)
    lam2 = 8 * L * Gam / (3 * mu)
    return (C0 + lam1 / base["pi"]) / (base["T"] + g) + lam2 * kappa_err


def _g(base, kappa_max):
    return max(4 * base["L"] / base["mu"], 1 + 3 * kappa_max / 8, base["E"] - 1)


def _fixed(base, kappa_max):
    """True when gamma does not depend on kappa_max (its 4L/mu or E - 1 branch is active)."""
    return 1 + 3 * kappa_max / 8 <= max(4 * base["L"] / base["mu"], base["E"] - 1)


@SET
@given(gen(), fl(1.001, 1.5))
def test_pi_bound_17(x, h):
    """7.4.1: decreasing in pi; increasing in Pi at a fixed gamma; error = 0 iff Pi = pi."""
    base, o = x
    v = B17.evaluate(Pi=o["Pi"], **base)
    assert v == pytest.approx(
        _typed(base, (o["Pi"] - base["pi"]) / base["pi"], _g(base, o["Pi"])), rel=1e-10
    )
    pi2 = min(base["pi"] * h, o["Pi"], 1.0)
    assert B17.evaluate(Pi=o["Pi"], **{**base, "pi": pi2}) <= v * (1 + 1e-12)
    err = B17.evaluate_terms(Pi=o["Pi"], **base)["error"]
    assert err >= 0 and (err > 0 or base["Gamma"] == 0 or o["Pi"] == base["pi"])
    assert B17.evaluate_terms(Pi=1.0, **{**base, "pi": 1.0})["error"] == 0
    assume(_fixed(base, o["Pi"] * h))
    assert B17.evaluate(Pi=o["Pi"] * h, **base) >= v * (1 - 1e-12)


# the counterexample constants shared by the findings BM-P2, BM-P3 (and BM-P4)
_FINDING_BASE = {"T": 1, "L": 1.0, "mu": 1.0, "E": 1, "G": 1.0, "sigma": 0.0, "Gamma": 1e-3,
                 "D0": 1.0, "pi": 0.5}


def test_finding_bm_p2_pi_bound_not_increasing_in_Pi():
    """BM-P2: L = mu = 1, E = 1, G = 1, sigma = 0, Gamma = 1e-3, D0 = 1, pi = 1/2, T = 1."""
    base = dict(_FINDING_BASE)
    lo, hi = (_typed(base, (P - 0.5) / 0.5, 1 + 3 * P / 8) for P in (100.0, 200.0))
    assert B17.evaluate(Pi=100.0, **base) == pytest.approx(lo)
    assert B17.evaluate(Pi=200.0, **base) == pytest.approx(hi)
    assert hi < lo  # RHS decreases although Pi grows (and Gamma > 0)
    # at the common gamma of the larger Pi the property holds
    g = 1 + 3 * 200.0 / 8
    assert _typed(base, (100.0 - 0.5) / 0.5, g) < hi


@SET
@given(gen(), fl(1.001, 1.5))
def test_pi_bound_19(x, h):
    """7.4.2: (19) decreasing in pi (and in p_min at fixed gamma); (19) >= (17) at a common
    gamma; error term >= 0, = 0 iff pi = 1 and p_min = 1/N."""
    base, o = x
    kw = {"p_min": o["p_min"], "N": o["N"]}
    v = B19.evaluate(**kw, **base)
    assert v == pytest.approx(
        _typed(base, 1 / (base["pi"] * o["p_min"]) - o["N"], _g(base, o["pi_up"])), rel=1e-10
    )
    err = B19.evaluate_terms(**kw, **base)["error"]
    assert err >= -1e-12 * v
    assert B19.evaluate_terms(p_min=1 / o["N"], N=o["N"], **{**base, "pi": 1.0})[
        "error"
    ] == pytest.approx(0.0, abs=1e-12 * v)
    # decreasing in pi at a common gamma: (19)'s gamma uses (18)'s bound on Pi, which falls as
    # pi grows, so across a gamma change the bound can rise (pi 0.75 -> 1, N = 21,
    # p_min = 1/28, L = mu = 1: 8.27 -> 8.53), as for BM-P1 / BM-P2
    pi2 = min(base["pi"] * h, 1.0)
    up2 = (1 - (o["N"] - 1) * pi2 * o["p_min"]) / o["p_min"]
    assume(_g(base, o["pi_up"]) == _g(base, up2))
    assert B19.evaluate(**kw, **{**base, "pi": pi2}) <= v * (1 + 1e-12)
    if _fixed(base, o["pi_up"]):  # then both shifts are max(4L/mu, E - 1)
        assert v >= B17.evaluate(Pi=o["Pi"], **base) * (1 - 1e-12)
    p2 = min(o["p_min"] * h, 1 / o["N"])
    pi_up2 = (1 - (o["N"] - 1) * base["pi"] * p2) / p2
    if _fixed(base, o["pi_up"]) and _fixed(base, pi_up2):
        assert B19.evaluate(p_min=p2, N=o["N"], **base) <= v * (1 + 1e-12)


def test_finding_bm_p3_pi_bound_pmin_not_decreasing_in_p_min():
    """BM-P3: same constants as BM-P2, N = 2: p_min 0.01 -> 0.02 raises the RHS."""
    base = dict(_FINDING_BASE)
    vals = []
    for pm in (0.01, 0.02):
        pi_up = (1 - (2 - 1) * 0.5 * pm) / pm
        typed = _typed(base, 1 / (0.5 * pm) - 2, 1 + 3 * pi_up / 8)
        assert B19.evaluate(p_min=pm, N=2, **base) == pytest.approx(typed)
        vals.append(typed)
    assert vals[1] > vals[0]


def test_finding_bm_p4_pi_bound_pmin_below_pi_bound():
    """BM-P4: with Pi = 1 <= Pi_up = 99.5, the catalogue's (19) is below its (17)."""
    base = dict(_FINDING_BASE)
    v17 = _typed(base, (1.0 - 0.5) / 0.5, 4.0)
    v19 = _typed(base, 1 / (0.5 * 0.01) - 2, 1 + 3 * 99.5 / 8)
    assert B17.evaluate(Pi=1.0, **base) == pytest.approx(v17)
    assert B19.evaluate(p_min=0.01, N=2, **base) == pytest.approx(v19)
    assert v19 < v17
    # at the common gamma = 4 the spec's inequality holds
    assert _typed(base, 1 / (0.5 * 0.01) - 2, 4.0) >= v17


@SET
@given(gen())
def test_uniform_is_pmin_at_one_over_n(x):
    """7.4.3: (19) at p_min = 1/N equals B(15)."""
    base, o = x
    assert B19.evaluate(p_min=1 / o["N"], N=o["N"], **base) == pytest.approx(
        BUNI.evaluate(N=o["N"], **base), rel=1e-12
    )


# ----------------------------------------------------------------- 7.5 lemmas
@SET
@given(fl(-50.0, 50.0), fl(0.1, 10.0), fl(-5.0, 5.0))
def test_lemma1_on_test_functions(x, a, c):
    """7.5.1: ||grad f||^2 <= 2L(f - f*) for a quadratic and the non-convex x^2 + 2 sin^2 x."""
    lemma = boundlab.get("skew.lemma1")
    f, fp = a / 2 * (x - c) ** 2, a * (x - c)
    assert fp**2 <= lemma.evaluate(L=a, f_w=f, f_star=0.0) * (1 + 1e-12) + 1e-12
    f2, fp2 = x**2 + 2 * np.sin(x) ** 2, 2 * x + 2 * np.sin(2 * x)
    assert fp2**2 <= lemma.evaluate(L=6.0, f_w=f2, f_star=0.0) * (1 + 1e-12) + 1e-12
    assert lemma.violated_preconditions(L=6.0, f_w=f2, f_star=0.0) == []
