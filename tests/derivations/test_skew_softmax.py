"""Derivation tests of FedSoftMax's pi >= exp(-x_range/T) (spec ``seeds-000-001-004.md`` §3.10,
derived; catalogue ``skew.softmax_kappa_min``, written 1/pi <= exp(x_range/T)).

The statement is proved symbolically for three clients (its ratio is a p-weighted mean of
exp((x_j - max x)/T) <= 1), checked against the spec's sympy line, and the engine's FedSoftMax
weights (``toys.algorithms.weights.alpha_of``) are compared with mpmath at 50 digits at
temperatures where exp underflows in float64.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

import boundlab
from boundlab.symbols import sym
from toys.algorithms.weights import alpha_of

B = boundlab.get("skew.softmax_kappa_min")
x_range, Temp = sym("x_range"), sym("Temp")


def test_expression_is_the_reciprocal_of_the_spec_line():
    spec = parse_expr("exp(-x_range/Temp)", local_dict={"x_range": x_range, "Temp": Temp})
    assert sp.simplify(B.expr * spec - 1) == 0
    assert (B.kind, B.lhs) == ("upper", "inv_pi")
    assert "derived" in B.source and "§3.10" in B.source


def test_pi_times_exp_range_is_a_mean_of_numbers_at_most_one():
    """kappa_i = e^{x_i/T}/sum_j p_j e^{x_j/T}; with x_1 the smallest and x_3 the largest score,
    exp(-range/T)/kappa_1 = sum_j p_j e^{(x_j - x_3)/T} <= sum_j p_j = 1, termwise."""
    x1, x2, x3 = sp.symbols("x1:4", real=True)
    p1, p2 = sp.symbols("p1:3", positive=True)
    T = sp.Symbol("T", positive=True)
    p = (p1, p2, 1 - p1 - p2)
    xs = (x1, x2, x3)
    denom = sum(pj * sp.exp(xj / T) for pj, xj in zip(p, xs))
    kappa1 = sp.exp(x1 / T) / denom
    ratio = B.expr.subs({x_range: x3 - x1, Temp: T}) ** -1 / kappa1  # lower bound / pi
    want = sum(pj * sp.exp((xj - x3) / T) for pj, xj in zip(p, xs))
    assert sp.simplify(sp.expand(ratio - want)) == 0
    # 1 - ratio = sum_j p_j (1 - e^{(x_j - x3)/T}), each term >= 0 when x_j <= x3
    assert sp.simplify(sp.expand(1 - ratio - sum(pj * (1 - sp.exp((xj - x3) / T))
                                                 for pj, xj in zip(p, xs)))) == 0
    # equality when all weight sits on the largest score (p1 = p2 -> 0)
    assert sp.simplify(ratio.subs({p1: 0, p2: 0})) == 1


def test_error_term_of_eq17_is_at_most_exp_two_range_over_T_minus_one():
    """The spec's corollary: with Pi <= e^{x_range/T} as well, (Pi - pi)/pi <= e^{2 x_range/T} - 1
    (the error term of skew.pi_bound over lambda2), which tends to 0 as T -> infinity."""
    r = sp.Symbol("r", nonnegative=True)
    worst = (sp.exp(r / Temp) - sp.exp(-r / Temp)) / sp.exp(-r / Temp)
    assert sp.simplify(worst - (sp.exp(2 * r / Temp) - 1)) == 0
    assert sp.limit(worst, Temp, sp.oo) == 0


def _mp_kappa_min(x, p, mask, T):
    with mpmath.workdps(50):
        e = [mpmath.mpf(pi) * mpmath.exp(mpmath.mpf(xi) / mpmath.mpf(T))
             for xi, pi, m in zip(x, p, mask) if m]
        s = mpmath.fsum(e)
        kap = [ei / s / mpmath.mpf(pi) for ei, pi in zip(e, [q for q, m in zip(p, mask) if m])]
        xm = [mpmath.mpf(xi) for xi, m in zip(x, mask) if m]
        return min(kap), max(xm) - min(xm)


@pytest.mark.parametrize("x, p, mask, T", [
    ([0.0, 1.0, 2.5, 4.0], [0.25] * 4, [1, 1, 1, 1], 1.0),
    ([0.0, 1.0, 2.5, 4.0], [0.7, 0.1, 0.1, 0.1], [1, 1, 1, 1], 0.2),  # seed 001's T
    ([3.0, 0.1, 9.0, 2.0, 5.0], [0.1, 0.2, 0.3, 0.2, 0.2], [1, 0, 1, 1, 0], 0.05),
    ([0.0, 2.0], [0.01, 0.99], [1, 1], 1e-3),  # nearly all weight on the largest: tight
])
def test_engine_weights_against_mpmath(x, p, mask, T):
    """The engine's alpha / p vs 50-digit softmax; the bound at 50 digits."""
    x, p, mask = np.array(x), np.array(p), np.array(mask, dtype=bool)
    alpha = alpha_of("fedsoftmax", x, p, mask, inv_temperature=1.0 / T)
    kmin_mp, rng = _mp_kappa_min(x, p, mask, T)
    got = float(np.min(alpha[mask] / p[mask]))
    with mpmath.workdps(50):
        assert abs(mpmath.mpf(got) - kmin_mp) <= mpmath.mpf("1e-12") * kmin_mp + \
            mpmath.mpf("1e-300")
        lower = mpmath.exp(-rng / mpmath.mpf(T))
        assert lower <= kmin_mp  # the statement, without rounding
        assert np.isclose(float(B.evaluate(x_range=float(rng), Temp=T)),
                          float(mpmath.exp(rng / mpmath.mpf(T))), rtol=1e-12, atol=0) \
            or float(rng / T) > 700  # exp overflows float64: the bound is +inf
