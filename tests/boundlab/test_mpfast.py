"""The fast exact fallback (mpmath at two precisions) gives the bits of the sympy ``evalf`` path.

Reference 1 is :meth:`ExactEvaluator._exact_evalf` (the slower, independent path: sympy's
adaptive ``evalf`` at 25 digits). Reference 2 is the published expression lambdified for mpmath
here, at 200 digits plus the inputs' span. Points are where the closed forms cancel:
``weight_error.round_var_form`` and the interval moments as ``p -> 0`` and ``p -> 1``, ``K`` in
1..50, (1-p)^K and log(1-p) terms, and hypothesis draws.
"""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundlab
from boundlab._exact import ExactEvaluator
from boundlab._mpfast import NearInteger, guarded_ceil, guarded_floor, two_precision_value

CANCEL = ["weight_error.round_var_form", "weight_error.interval_mean",
          "weight_error.interval_var", "weight_error.interval_factorial_moment",
          "weight_error.interval_second_moment", "weight_error.interval_bias",
          "weight_error.round", "weight_error.lemma_b71", "weight_error.lemma_b71_ceil"]


def _ref200(bound, point):
    """The published expression at the exact float inputs, 200 digits (+ the inputs' span)."""
    syms = [prm.symbol for prm in bound.params.values()]
    fn = sp.lambdify(syms, bound.expr, modules="mpmath")
    span = max(abs(math.frexp(v)[1]) for v in point if v)
    with mpmath.workdps(200 + span):
        return +fn(*[mpmath.mpf(v) for v in point])


def _ulp_distance(x: float, ref) -> float:
    return float(abs(mpmath.mpf(x) - ref) / mpmath.mpf(math.ulp(x)))


def _point(bound, p, K, extra):
    vals = {"p": p, "K": float(K), "t": float(K + extra), "T": float(2 + extra)}
    return [vals[n] for n in bound.params]


def _check(bound, point) -> bool:
    """Fast value == evalf's bits, within half an ulp of the 200-digit value; False where the
    fast path left the point to evalf (an exact 0, a rounding tie, a subnormal value)."""
    ev = bound.evaluator
    fast = two_precision_value(ev._mp_fast, point)
    if fast is None:
        return False
    assert fast == ev._exact_evalf(point), (bound.id, point)  # the same bits as evalf
    assert _ulp_distance(fast, _ref200(bound, point)) <= 0.5 + 1e-9, (bound.id, point, fast)
    return True


@pytest.mark.parametrize("bound_id", CANCEL)
def test_grid_near_both_ends(bound_id):
    bound = boundlab.get(bound_id)
    fast = [_check(bound, _point(bound, p, K, extra))
            for p in (1e-30, 3e-17, 1e-6, 0.3, 1 - 2**-20, 1 - 2**-52)
            for K, extra in ((1, 0), (2, 3), (50, 17))]
    assert sum(fast) >= 0.6 * len(fast), (bound_id, fast)


def test_drawn_points():
    hits = []

    @settings(max_examples=25, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(CANCEL), st.one_of(st.floats(-40, -0.3).map(lambda e: 10.0**e),
                                              st.floats(-16, -0.3).map(lambda e: 1 - 10.0**e)),
           st.integers(1, 50), st.integers(0, 200))
    def prop(bound_id, p, K, extra):
        bound = boundlab.get(bound_id)
        hits.append(_check(bound, _point(bound, p, K, extra)))

    prop()
    assert sum(hits) >= len(hits) // 2, hits  # the fast path was really exercised


def test_fast_path_is_used_on_the_slow_grid():
    """The grid of tests/derivations' round_var_form check: every point the float path flags
    is settled by the fast path (none needs evalf)."""
    ev = boundlab.get("weight_error.round_var_form").evaluator
    for p in np.linspace(0.001, 1.0, 9)[:-1]:
        for K, t in ((1, 5), (2, 8), (50, 150)):
            assert two_precision_value(ev._mp_fast, [float(p), float(K), float(t)]) is not None


def test_cancelling_closed_form_through_evaluate():
    """The closed form alone gives 0.0; the evaluator's fallback the correct bits."""
    p, K = sp.symbols("p K", positive=True)
    ev = ExactEvaluator(1 / p - (1 - p) ** K / p, [p, K])
    for pt in ([1e-17, 50.0], [1e-12, 3.0], [2.0**-40, 1e6]):
        got = float(ev([np.float64(pt[0]), np.float64(pt[1])]))
        assert got == ev._exact_evalf(pt)
        with mpmath.workdps(300):
            ref = (1 - (1 - mpmath.mpf(pt[0])) ** pt[1]) / pt[0]
        assert _ulp_distance(got, ref) <= 0.5 + 1e-9


@pytest.mark.parametrize("expr, point, want", [
    ("zero", [1.0, 3.0], 0.0),  # an exact 0: left to evalf
    ("log", [-1.0, 3.0], math.nan),  # not real
    ("big", [1e300, 3.0], math.inf),  # overflows float64
    ("tiny", [1e-300, 3.0], 1e-300**3 / 3),  # subnormal (0.0): left to evalf
])
def test_fallback_cases_keep_their_semantics(expr, point, want):
    p, K = sp.symbols("p K", real=True)
    form = {"zero": (1 - p) * K, "log": sp.log(p) * K, "big": p**2 * K,
            "tiny": p**K / 3}[expr]
    ev = ExactEvaluator(form, [p, K])
    assert two_precision_value(ev._mp, point) is None
    got, old = ev.exact(point), ev._exact_evalf(point)
    assert np.array_equal([got, old, want], [want, want, want], equal_nan=True), (got, old)


def test_discontinuous_forms_go_to_evalf():
    t, K = sp.symbols("t K", positive=True)
    assert ExactEvaluator(sp.Piecewise((1, t < K), (0, True)) + t, [t, K])._mp_fast is None
    assert ExactEvaluator(sp.floor(t / K) + t, [t, K])._mp_fast is not None


def test_guarded_rounding():
    with mpmath.workdps(40):
        with pytest.raises(NearInteger):
            guarded_floor(1 - mpmath.mpf(10) ** -30)
        with pytest.raises(NearInteger):
            guarded_ceil(5 + mpmath.mpf(10) ** -25)
        assert int(guarded_floor(mpmath.mpf(5))) == 5 and int(guarded_ceil(mpmath.mpf(-5))) == -5
        assert int(guarded_floor(mpmath.mpf("2.5"))) == 2
        assert int(guarded_ceil(mpmath.mpf("-2.5"))) == -2


def test_ceiling_of_an_exact_integer_ratio():
    """ceil(-log T/(2 log(1-p))) = ceil(2) at p = 1/2, T = 16 (an integer ratio): the value is
    (3 K + 2 K ln T)/T + 1/T with K = 2, whichever path gives it."""
    ev = boundlab.get("weight_error.lemma_b71_ceil").evaluator
    point = [0.5, 16.0]
    with mpmath.workdps(50):
        want = float((6 + 4 * mpmath.log(16) + 1) / 16)
    assert ev.exact(point) == ev._exact_evalf(point) == want
