"""Derivation tests of DKR's textbook properties (seed 004, appendix §2.3, Properties 2.1,
2.2, 2.3 and 2.5): the catalogue's expressions against the statements typed from the paper, each
statement proved symbolically on the function classes the toys use (convex quadratics, the
logistic loss), and the evaluation path against mpmath where its terms can cancel."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

import boundlab
from boundlab.symbols import sym

CONV, FIRST = boundlab.get("drift.convexity"), boundlab.get("drift.first_order_convexity")
SMOOTH, YOUNG = boundlab.get("drift.smoothness"), boundlab.get("drift.young")
f_x, f_y, lam, lin, L, dist = (sym(n) for n in ("f_x", "f_y", "lam", "lin", "L", "dist_xy"))
lam_y, a_sq, b_sq = sym("lam_young"), sym("a_sq"), sym("b_sq")
d = 3
xs, ys = sp.symbols("x0:3", real=True), sp.symbols("y0:3", real=True)
X, Y = sp.Matrix(xs), sp.Matrix(ys)


def _psd(n=d):
    """A symbolic PSD matrix B^T B (general entries)."""
    B = sp.Matrix(n, n, sp.symbols(f"b0:{n * n}", real=True))
    return B.T * B


def _quad(A, c, v):
    return ((v - c).T * A * (v - c))[0] / 2


def test_expressions_are_the_printed_statements():
    assert sp.expand(CONV.expr - (lam * f_x + (1 - lam) * f_y)) == 0
    assert FIRST.expr == f_y and FIRST.lhs == "tangent_value"
    assert sp.expand(SMOOTH.expr - (f_x + lin + L / 2 * dist)) == 0
    assert sp.expand(YOUNG.expr - (lam_y**2 / 2 * a_sq + b_sq / (2 * lam_y**2))) == 0
    assert {b.kind for b in (CONV, FIRST, SMOOTH, YOUNG)} == {"upper"}
    for b in (CONV, FIRST, SMOOTH, YOUNG):
        assert b.source.startswith("seed 004, appendix §2.3, Property 2.")


def test_property_2_1_on_convex_quadratics():
    """lam f(x) + (1 - lam) f(y) - f(lam x + (1 - lam) y) = lam (1 - lam)/2 (x - y)^T A (x - y)
    >= 0 for f = (1/2)(v - c)^T A (v - c) with A = B^T B: the bound minus the left side."""
    A, c, t = _psd(), sp.Matrix(sp.symbols("c0:3", real=True)), sp.Symbol("t")
    gap = CONV.expr.subs({lam: t, f_x: _quad(A, c, X), f_y: _quad(A, c, Y)}) \
        - _quad(A, c, t * X + (1 - t) * Y)
    want = t * (1 - t) / 2 * ((X - Y).T * A * (X - Y))[0]
    assert sp.expand(gap - want) == 0


def test_property_2_2_is_the_limit_of_2_1_and_holds_on_quadratics():
    """(f(x + t (y - x)) - f(x))/t -> <grad f(x), y - x> as t -> 0, and convexity (2.1 at lam =
    1 - t) gives it <= f(y) - f(x); on quadratics f(y) - tangent = (1/2)(y - x)^T A (y - x)."""
    A, c, t = _psd(), sp.Matrix(sp.symbols("c0:3", real=True)), sp.Symbol("t", positive=True)
    f = lambda v: _quad(A, c, v)  # noqa: E731
    grad = A * (X - c)
    lin_xy = (grad.T * (Y - X))[0]
    assert sp.expand(sp.limit(sp.expand((f(X + t * (Y - X)) - f(X)) / t), t, 0) - lin_xy) == 0
    tangent = f(X) + lin_xy
    assert sp.expand(FIRST.expr.subs(f_y, f(Y)) - tangent
                     - ((Y - X).T * A * (Y - X))[0] / 2) == 0


def test_property_2_3_on_quadratics_and_the_logistic_loss():
    # quadratics: bound - f(y) = (1/2)(y - x)^T (L I - A)(y - x) >= 0 when A <= L I
    A, c = _psd(), sp.Matrix(sp.symbols("c0:3", real=True))
    lin_xy = ((A * (X - c)).T * (Y - X))[0]
    rhs = SMOOTH.expr.subs({f_x: _quad(A, c, X), lin: lin_xy, dist: ((Y - X).T * (Y - X))[0]})
    gap = rhs - _quad(A, c, Y)
    want = ((Y - X).T * (L * sp.eye(d) - A) * (Y - X))[0] / 2
    assert sp.expand(gap - want) == 0
    # the logistic loss log(1 + e^-z) has second derivative s(1 - s) <= 1/4 (at z = 0): the
    # constant L = ||x||^2/4 the seed-004 toy's exact bound uses per sample
    z = sp.Symbol("z", real=True)
    h2 = sp.diff(sp.log(1 + sp.exp(-z)), z, 2)
    assert sp.simplify(h2.subs(z, 0) - sp.Rational(1, 4)) == 0
    assert sp.solve(sp.diff(sp.simplify(h2), z), z) == [0]
    assert all(float(h2.subs(z, v)) <= 0.25 for v in np.linspace(-20, 20, 81))


def test_property_2_5_is_a_completed_square_with_equality_at_b_eq_lam2_a():
    lm = sp.Symbol("lam", positive=True)
    a, b = sp.Matrix(sp.symbols("a0:3", real=True)), sp.Matrix(sp.symbols("e0:3", real=True))
    rhs = YOUNG.expr.subs({lam_y: lm, a_sq: (a.T * a)[0], b_sq: (b.T * b)[0]})
    gap = rhs - (a.T * b)[0]
    sq = lm * a - b / lm
    assert sp.expand(gap - (sq.T * sq)[0] / 2) == 0
    assert sp.expand(gap.subs(dict(zip(b, lm**2 * a)))) == 0
    # the proof of Lemma 2.2 takes lam = sqrt(2 eta): eta ||a||^2 + ||b||^2/(4 eta) (DKR-8)
    eta = sym("eta")
    assert sp.expand(YOUNG.expr.subs(lam_y, sp.sqrt(2 * eta)) - (eta * a_sq + b_sq / (4 * eta))) \
        == 0


def _mp(bound, **kw):
    f = sp.lambdify([bound.params[n].symbol for n in bound.params], bound.expr, "mpmath")
    with mpmath.workdps(60):
        return f(*(mpmath.mpf(kw[n]) for n in bound.params))


@pytest.mark.parametrize("bound, kw", [
    (SMOOTH, dict(f_x=1.0, lin=-(1.0 - 2.0**-40), L=3.0, dist_xy=1e-13)),
    (SMOOTH, dict(f_x=1e8, lin=-1e8 + 0.5, L=1.0, dist_xy=1e-9)),
    (CONV, dict(lam=0.3, f_x=-7.0 / 3.0, f_y=1.0)),
    (CONV, dict(lam=1.0 - 2.0**-30, f_x=1e-10, f_y=-1e-10 * (2.0**30 - 1))),
    (YOUNG, dict(lam_young=1e-6, a_sq=1e10, b_sq=1e-20)),
])
def test_evaluation_matches_mpmath_where_terms_cancel(bound, kw):
    """The catalogue's evaluation of the float inputs vs the same inputs at 60 digits."""
    want = _mp(bound, **kw)
    got = float(bound.evaluate(**kw))
    assert abs(got - float(want)) <= 1e-12 * max(abs(float(want)), 1e-300) + 1e-300
