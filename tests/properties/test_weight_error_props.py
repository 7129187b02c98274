"""Property tests of the weight_error family (spec seeds-002-003 §7.1, items 1-9 and 21-25).

Item 10 (simulated W <= bound, per-round envelope, bias floor) and the Alg. 2 / Theorem 1
invariants (items 11-20, 26) concern simulations and algorithms: item 10 is checked by Monte
Carlo in ``tests/derivations/test_weight_error.py``; items 11-20 and 26 belong to the tests of
``toys`` (participation processes, FedAU's estimator, the aggregation objective).
Strict inequalities are checked in exact rational arithmetic where floats would tie.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import boundlab
from boundlab.symbols import sym

bp, bK, bT = sym("p"), sym("K"), sym("T")
FAST = settings(max_examples=40, deadline=None)
EXACT = settings(max_examples=25, deadline=None)

p_float = st.floats(min_value=1e-3, max_value=1.0, allow_nan=False)
p_open = st.floats(min_value=1e-3, max_value=0.999, allow_nan=False)
p_frac = st.fractions(min_value=Fraction(1, 200), max_value=1, max_denominator=200).filter(
    lambda x: x > 0
)
p_frac_open = p_frac.filter(lambda x: x < 1)
K_int = st.integers(min_value=1, max_value=60)
T_int = st.integers(min_value=2, max_value=10**6)


def get(name):
    return boundlab.get(f"weight_error.{name}")


def ex(name, p, K):
    """Exact value of a (p, K) bound at rational p."""
    return get(name).expr.xreplace({bp: sp.Rational(p.numerator, p.denominator), bK: K})


# ----------------------------------------------------------------------------- items 1-6
@FAST
@given(p=p_float, K=st.integers(min_value=1, max_value=400))
def test_p1_p2_pmf_sums_to_one_and_mean_bounds(p, K):
    k = np.arange(1, K + 1)
    pmf = np.where(k < K, p * (1 - p) ** (k - 1), (1 - p) ** (K - 1))
    assert abs(pmf.sum() - 1) <= 1e-12
    m = get("interval_mean").evaluate(p=p, K=K)
    assert abs(m - (k * pmf).sum()) <= 1e-9 * m
    assert abs(m - ((1 - p) ** np.arange(K)).sum()) <= 1e-9 * m
    assert 1 - 1e-12 <= m <= min(K, 1 / p) * (1 + 1e-12)


@EXACT
@given(p=p_frac, K=K_int)
def test_p3_mean_increasing_in_K_decreasing_in_p(p, K):
    m0, m1 = ex("interval_mean", p, K), ex("interval_mean", p, K + 1)
    assert (m1 > m0) if p < 1 else (m1 == m0)
    p2 = p * Fraction(9, 10)
    m_low = ex("interval_mean", p2, K)
    assert (m_low > m0) if K >= 2 else (m_low == m0)


@settings(max_examples=4, deadline=None)
@given(p=p_frac_open)
def test_p4_mean_limit_is_one_over_p(p):
    r = sp.Rational(p.numerator, p.denominator)
    assert sp.limit(get("interval_mean").expr.subs(bp, r), bK, sp.oo) == 1 / r
    assert sp.limit(get("interval_var").expr.subs(bp, r), bK, sp.oo) == (1 - r) / r**2


@EXACT
@given(p=p_frac, K=K_int)
def test_p5_p6_variance_bounds_zero_set_and_monotone_in_K(p, K):
    v, v1 = ex("interval_var", p, K), ex("interval_var", p, K + 1)
    r = sp.Rational(p.numerator, p.denominator)
    assert 0 <= v <= (1 - r) / r**2
    assert (v == 0) == (K == 1 or p == 1)
    assert v1 >= v


def test_p6_variance_not_monotone_in_p():
    v2 = get("interval_var").expr.subs(bK, 2)
    assert sp.simplify(v2 - bp * (1 - bp)) == 0
    vals = [get("interval_var").evaluate(p=x, K=2) for x in (0.2, 0.5, 0.8)]
    assert vals[0] < vals[1] > vals[2]


# ----------------------------------------------------------------------------- items 7-9
@EXACT
@given(p=p_frac, K=K_int)
def test_p7_bias_decreasing_in_K_and_equals_squared_relative_bias(p, K):
    b0, b1 = ex("interval_bias", p, K), ex("interval_bias", p, K + 1)
    assert (b1 < b0) if p < 1 else (b0 == 0 == b1)
    r = sp.Rational(p.numerator, p.denominator)
    assert b0 == (r * ex("interval_mean", p, K) - 1) ** 2
    if p < 1:
        assert sp.limit(get("interval_bias").expr.subs(bp, r), bK, sp.oo) == 0


def test_p8_variance_term_derivative_and_limit():
    v = get("average").terms["variance"]
    assert sp.simplify(sp.diff(v, bT) + bK * (1 + 2 * sp.log(bT)) / bT**2) == 0
    assert sp.simplify(sp.diff(v, bK, 2)) == 0 and sp.simplify(sp.diff(v, bK)) != 0
    assert sp.limit(v, bT, sp.oo) == 0


@FAST
@given(p=p_float, K=K_int, T=st.integers(min_value=1, max_value=10**6))
def test_p8_variance_term_linear_in_K_decreasing_in_T(p, K, T):
    t = get("average")
    v = t.evaluate_terms(p=p, K=K, T=T)["variance"]
    v2 = t.evaluate_terms(p=p, K=2 * K, T=T)["variance"]
    assert v2 == np.float64(2 * v) or abs(v2 - 2 * v) <= 1e-12 * v2
    assert t.evaluate_terms(p=p, K=K, T=T + 1)["variance"] < v


_lam = -2 * sp.log(1 - bp)
_Kr = sp.Symbol("Kr", positive=True)
_B_real = sp.lambdify([bp, _Kr, bT], get("average").expr.subs(bK, _Kr), "numpy")


@FAST
@given(p=p_open, T=T_int, K=st.floats(min_value=1.0, max_value=500.0))
def test_p9_bound_minimized_at_cutoff_opt(p, T, K):
    kstar = get("cutoff_opt").evaluate(p=p, T=T)
    assert kstar >= 1
    assert _B_real(p, kstar, T) <= _B_real(p, K, T) * (1 + 1e-12)
    lam = -2 * math.log(1 - p)
    if lam < 3 + 2 * math.log(T):
        assert kstar < get("cutoff_cor4").evaluate(p=p, T=T) or kstar == 1


def test_p9_bound_convex_in_K():
    d2 = sp.diff(get("average").expr.subs(bK, _Kr), _Kr, 2)
    assert sp.simplify(d2 - _lam**2 * (1 - bp) ** (2 * _Kr)) == 0  # > 0 for p in (0, 1)


# ----------------------------------------------------------------------------- items 21-25
@FAST
@given(p=p_open, T=T_int)
def test_p21_bias_at_log_c_T_is_one_over_T(p, T):
    K = get("cutoff_cor4").evaluate(p=p, T=T)
    assert abs((1 - p) ** (2 * K) * T - 1) <= 1e-9


@FAST
@given(p=p_open, T=T_int)
def test_p22_cutoff_increasing_in_T_decreasing_in_p(p, T):
    k = get("cutoff_cor4")
    assert k.evaluate(p=p, T=T + 1) > k.evaluate(p=p, T=T)
    assume(p < 0.99)
    assert k.evaluate(p=p + 0.005, T=T) < k.evaluate(p=p, T=T)


@FAST
@given(p=p_open)
def test_p23_R_decreasing_and_above_one_below_threshold(p):
    from boundlab.weight_error import R_OF_P

    R = sp.lambdify(bp, R_OF_P)
    assume(p < 0.99)
    assert R(p + 0.005) < R(p)
    thr = 1 - math.exp(-0.5)
    assume(abs(p - thr) > 1e-9)
    assert (R(p) >= 1) == (p <= thr)


@FAST
@given(L=st.floats(0.01, 100), I=st.integers(1, 50), T=st.integers(1, 10**5))
def test_p24_corollary4_gamma_branch(L, I, T):
    first, second = 1 / (L * I * math.sqrt(T)), 1 / (4 * math.sqrt(15) * L * I)
    assert (first <= second * (1 + 1e-12)) == (T >= 240)


_T2 = {
    "F": st.floats(0, 10),
    "gamma": st.floats(1e-4, 1),
    "eta": st.floats(1e-3, 10),
    "I": st.integers(1, 20),
    "T": st.integers(1, 10**5),
    "W": st.floats(0, 2),
    "PsiG": st.floats(0, 10),
    "delta": st.floats(0, 5),
    "L": st.floats(0.01, 10),
    "sigma": st.floats(0, 5),
    "Q": st.floats(0.01, 50),
    "N": st.integers(1, 500),
}


@FAST
@given(
    v=st.fixed_dictionaries(_T2),
    bump=st.floats(0.01, 5),
    name=st.sampled_from(["W", "PsiG", "delta", "sigma", "Q", "F", "N"]),
)
def test_p25_theorem2_monotone(v, bump, name):
    for bid in ("theorem2_explicit", "theorem2", "theorem2_opt2"):
        b = get(bid)
        vals = dict(v)
        if bid == "theorem2_opt2":
            vals["G"] = math.sqrt(vals.pop("PsiG")) + 0.1
            if name == "PsiG":
                continue
        base = b.evaluate(**vals)
        up = dict(vals)
        up[name] = vals[name] + (math.ceil(bump) if name == "N" else bump)
        moved = b.evaluate(**up)
        if name == "N":
            assert moved <= base * (1 + 1e-12), (bid, name)
        else:
            assert moved >= base * (1 - 1e-12), (bid, name)
