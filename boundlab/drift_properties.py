"""The textbook properties DKR's proofs use (seed 004, appendix §2.3, Properties 2.1-2.5).

Part of the ``drift`` family (collected through :mod:`boundlab.drift`). Each is stated for one
function f and points x, y (vectors a, b) and is encoded with the numbers it compares as
parameters, its left-hand side the quantity a check measures on a client objective:

* Property 2.1 (convexity): f(lam x + (1 - lam) y) <= lam f(x) + (1 - lam) f(y), lam in [0, 1];
* Property 2.2 (first-order characterization): f(x) + <grad f(x), y - x> <= f(y) (the tangent
  plane at x lies below f), for convex differentiable f;
* Property 2.3 (L-smoothness): f(y) <= f(x) + <grad f(x), y - x> + (L/2)||y - x||^2;
* Property 2.5 (Young's inequality): <a, b> <= (lam^2/2)||a||^2 + ||b||^2/(2 lam^2), lam > 0
  (the proof of Lemma 2.2 takes lam = sqrt(2 eta), DKR-8).

Property 2.4 (the polarization identity, printed without its parentheses) is erratum DKR-9;
it is an identity of inner products, not a bound. Properties 2.1-2.3 hold for every client of
DKR's setting (assumption 5: convex; assumption 6: L-smooth, with L bounding every client,
DKR-16); Property 2.5 for any vectors.

Example
-------
>>> import boundlab
>>> b = boundlab.get("drift.young")
>>> float(b.evaluate(lam_young=1.0, a_sq=2.0, b_sq=8.0))  # (1/2) 2 + 8/2
5.0
"""

from __future__ import annotations

from .core import Bound, make_params
from .symbols import sym

__all__ = ["BOUNDS"]

_SRC = "seed 004, appendix §2.3"
f_x, f_y, lam, lin = sym("f_x"), sym("f_y"), sym("lam"), sym("lin")
L, dist_xy = sym("L"), sym("dist_xy")
lam_y, a_sq, b_sq = sym("lam_young"), sym("a_sq"), sym("b_sq")

convexity = Bound(
    id="drift.convexity",
    source=f"{_SRC}, Property 2.1 (convexity)",
    expr=lam * f_x + (1 - lam) * f_y,
    params=make_params("lam", "f_x", "f_y"),
    kind="upper",
    lhs="f_combination",
    description=(
        "f(lam x + (1 - lam) y) <= lam f(x) + (1 - lam) f(y) for all x, y in dom f (convex) and "
        "lam in [0, 1]: the definition of convexity (DKR assumption 5 for every client F_i). "
        "The left side is f at the convex combination."
    ),
    terms={"x": lam * f_x, "y": (1 - lam) * f_y},
)

first_order_convexity = Bound(
    id="drift.first_order_convexity",
    source=f"{_SRC}, Property 2.2 (first-order characterization of convexity)",
    expr=f_y,
    params=make_params("f_y"),
    kind="upper",
    lhs="tangent_value",
    description=(
        "f(y) >= f(x) + <grad f(x), y - x> for all x, y (f convex and differentiable on an open "
        "domain); written as an upper bound on the tangent plane at x evaluated at y, "
        "f(x) + <grad f(x), y - x> <= f(y). The left side is that tangent value."
    ),
)

_tangent, _curv = f_x + lin, L / 2 * dist_xy
smoothness = Bound(
    id="drift.smoothness",
    source=f"{_SRC}, Property 2.3 (L-smoothness)",
    expr=_tangent + _curv,
    params=make_params("f_x", "lin", "L", "dist_xy"),
    kind="upper",
    lhs="f_at_y",
    description=(
        "f(y) <= f(x) + <grad f(x), y - x> + (L/2)||y - x||^2 for all x, y, with lin = "
        "<grad f(x), y - x> and dist_xy = ||y - x||^2 (the quadratic upper bound of an L-smooth "
        "f; DKR's L bounds every client, DKR-16). The left side is f(y)."
    ),
    terms={"tangent": _tangent, "curvature": _curv},
)

_ya, _yb = lam_y**2 / 2 * a_sq, b_sq / (2 * lam_y**2)
young = Bound(
    id="drift.young",
    source=f"{_SRC}, Property 2.5 (Young's inequality)",
    expr=_ya + _yb,
    params=make_params("lam_young", "a_sq", "b_sq"),
    kind="upper",
    lhs="inner_product",
    description=(
        "<a, b> <= (lam^2/2)||a||^2 + ||b||^2/(2 lam^2) for all a, b in R^d and lam > 0, with "
        "a_sq = ||a||^2, b_sq = ||b||^2; equality when b = lam^2 a. The proof of Lemma 2.2 uses "
        "lam = sqrt(2 eta) (DKR-8)."
    ),
    terms={"a": _ya, "b": _yb},
)

BOUNDS = [convexity, first_order_convexity, smoothness, young]
