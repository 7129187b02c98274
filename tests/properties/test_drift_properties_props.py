"""Property tests of DKR's textbook properties (``drift.convexity``,
``drift.first_order_convexity``, ``drift.smoothness``, ``drift.young``): on hypothesis-drawn
convex quadratics, logistic clients and vectors, the measured left side never exceeds the
catalogue's right side."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab

SET = settings(max_examples=60, deadline=None)
CONV, FIRST = boundlab.get("drift.convexity"), boundlab.get("drift.first_order_convexity")
SMOOTH, YOUNG = boundlab.get("drift.smoothness"), boundlab.get("drift.young")
TOL = 1e-9


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def vec(d, lo=-3.0, hi=3.0):
    return st.lists(fl(lo, hi), min_size=d, max_size=d).map(np.array)


@st.composite
def quadratic(draw, d=3):
    """f(v) = (1/2)(v - c)^T A (v - c) with A = B^T B + eps I (convex), and its exact L."""
    B = np.array(draw(st.lists(vec(d), min_size=d, max_size=d)))
    A = B.T @ B + 1e-3 * np.eye(d)
    c = draw(vec(d))
    return A, c, float(np.linalg.eigvalsh(A).max())


def _f(A, c, v):
    return 0.5 * (v - c) @ A @ (v - c)


@st.composite
def logistic(draw, n=6, d=2):
    """A logistic client: mean log(1 + exp(-y x^T w)), L = lambda_max(X^T X)/(4 n)."""
    X = np.array(draw(st.lists(vec(d), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=n, max_size=n)))
    L = float(np.linalg.eigvalsh(X.T @ X).max()) / (4 * n)

    def f(w):
        return float(np.mean(np.logaddexp(0.0, -y * (X @ w))))

    def g(w):
        s = -y / (1.0 + np.exp(y * (X @ w)))
        return X.T @ s / n

    return f, g, max(L, 1e-12)


def _holds(bound, lhs, **kw):
    rhs = float(bound.evaluate(**kw))
    return lhs <= rhs + TOL * max(abs(rhs), abs(lhs), 1.0)


@SET
@given(quadratic(), vec(3), vec(3), fl(0.0, 1.0))
def test_quadratics_satisfy_2_1_2_2_2_3(q, x, y, lam):
    A, c, L = q
    fx, fy, g = _f(A, c, x), _f(A, c, y), A @ (x - c)
    assert _holds(CONV, _f(A, c, lam * x + (1 - lam) * y), lam=lam, f_x=fx, f_y=fy)
    assert _holds(FIRST, fx + g @ (y - x), f_y=fy)
    assert _holds(SMOOTH, fy, f_x=fx, lin=float(g @ (y - x)), L=L,
                  dist_xy=float((y - x) @ (y - x)))


@SET
@given(logistic(), vec(2), vec(2), fl(0.0, 1.0))
def test_logistic_clients_satisfy_2_1_2_2_2_3(client, x, y, lam):
    f, g, L = client
    assert _holds(CONV, f(lam * x + (1 - lam) * y), lam=lam, f_x=f(x), f_y=f(y))
    assert _holds(FIRST, f(x) + g(x) @ (y - x), f_y=f(y))
    assert _holds(SMOOTH, f(y), f_x=f(x), lin=float(g(x) @ (y - x)), L=L,
                  dist_xy=float((y - x) @ (y - x)))


@SET
@given(vec(4, -10, 10), vec(4, -10, 10), fl(1e-3, 1e3))
def test_young_holds_and_is_an_equality_at_b_eq_lam2_a(a, b, lam):
    assert _holds(YOUNG, float(a @ b), lam_young=lam, a_sq=float(a @ a), b_sq=float(b @ b))
    bb = lam**2 * a
    rhs = float(YOUNG.evaluate(lam_young=lam, a_sq=float(a @ a), b_sq=float(bb @ bb)))
    assert np.isclose(float(a @ bb), rhs, rtol=1e-9, atol=1e-12)


@SET
@given(fl(0.0, 1.0), fl(-5, 5), fl(-5, 5))
def test_convexity_bound_is_the_chord(lam, fx, fy):
    """Linear in lam: f_y at lam = 0, f_x at lam = 1, between them in between."""
    v = float(CONV.evaluate(lam=lam, f_x=fx, f_y=fy))
    assert min(fx, fy) - 1e-12 <= v <= max(fx, fy) + 1e-12
    assert float(CONV.evaluate(lam=0.0, f_x=fx, f_y=fy)) == fy
    assert float(CONV.evaluate(lam=1.0, f_x=fx, f_y=fy)) == fx


@SET
@given(fl(1e-3, 1e3), fl(0.0, 1e3), fl(0.0, 1e3))
def test_young_minimum_over_lam_is_the_cauchy_schwarz_product(lam, a2, b2):
    """min over lam of (lam^2/2) a2 + b2/(2 lam^2) = sqrt(a2 b2) >= <a, b> (Cauchy-Schwarz)."""
    v = float(YOUNG.evaluate(lam_young=lam, a_sq=a2, b_sq=b2))
    assert v >= np.sqrt(a2 * b2) * (1 - 1e-12)
    if a2 > 0 and b2 > 0:
        best = (b2 / a2) ** 0.25
        assert np.isclose(float(YOUNG.evaluate(lam_young=best, a_sq=a2, b_sq=b2)),
                          np.sqrt(a2 * b2), rtol=1e-9)
