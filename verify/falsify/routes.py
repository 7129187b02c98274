"""The searches of :func:`verify.falsify` that are not a planned run of the toys engine.

Some left-hand sides are not a value of one optimiser's run: an exact expectation over a
participation process (FedAU's weight error), a moment of a participation interval, the
minimiser of a rate expression, a property of a client objective at chosen points. Each such
family of left-hand sides has one **route**: a module of this package with

* ``FAMILY`` -- the ``Instance.family`` of its instances (saved files name it);
* ``LHS`` -- the left-hand sides it judges, and ``KINDS`` -- the statement kinds
  (``"upper"``, ``"identity"``);
* ``falsify_route(bound, budget, seed, setting, (Falsification, Instance))`` -- the search: a
  :class:`~verify.falsify.Falsification` not yet concluded (its ``instance`` the worst one),
  or :class:`~verify.falsify.plan.NotApplicable` with the reason;
* ``measure_instance(bound, data) -> (ratio, lhs, rhs, ...)`` -- the float64 replay of a saved
  instance from its ``data`` alone (validated: it comes from a file);
* ``certify(inst, float_ratio)`` -- the :class:`~verify.falsify.certify.Certificate` of the
  worst instance (exact rationals or mpmath; ``float64-only`` with the reason where neither).

An **identity** (``kind == "identity"``: the measured side equals the bound) is judged
two-sided: its ratio is :func:`identity_ratio` = 1 + |measured - stated| / |stated|, so that,
as for an upper bound, a ratio above 1 by more than the certified error is ``VIOLATED`` and a
ratio of 1 within it holds (tight).

>>> route_for_family("fedau.weight_error").FAMILY
'fedau.weight_error'
>>> identity_ratio(2.0, 2.0), identity_ratio(3.0, 2.0), identity_ratio(1.0, 2.0)
(1.0, 1.5, 1.5)
"""

from __future__ import annotations

import importlib
import math

__all__ = ["MODULES", "route_for", "route_for_family", "families", "identity_ratio",
           "float64_only", "or_float64"]

#: the route modules of this package, in the order a bound is offered to them
MODULES = ("weight_error_search", "points_route", "interval_route", "argmin_route",
           "complexity_route", "plateau_route", "reweighted_route", "kappa_route",
           "softmax_route", "constants_route")


def _modules():
    return [importlib.import_module(f"{__package__}.{m}") for m in MODULES]


def route_for(bound):
    """The route module that judges ``bound`` (by its ``lhs`` and ``kind``), or None."""
    kind, lhs = getattr(bound, "kind", None), getattr(bound, "lhs", None)
    for mod in _modules():
        if lhs in mod.LHS and kind in mod.KINDS:
            return mod
    return None


def route_for_family(family: str):
    """The route module whose instances are of ``family``, or None."""
    for mod in _modules():
        if mod.FAMILY == family:
            return mod
    return None


def families() -> tuple:
    """The instance families of the routes (the saved-file schema accepts them)."""
    return tuple(mod.FAMILY for mod in _modules())


def identity_ratio(measured, stated):
    """1 + |measured - stated| / |stated| (1: equal; inf: stated 0, measured not); works on
    floats and on mpmath numbers."""
    diff = abs(measured - stated)
    if diff == 0:
        return type(diff)(1) if not isinstance(diff, int) else 1.0
    if stated == 0:
        return math.inf
    return 1 + diff / abs(stated)


def float64_only(inst, float_ratio: float, why: str):
    """The ``float64-only`` certificate of ``inst`` at ``float_ratio``, saying ``why``."""
    from .certify import FLOAT64, Certificate, _float_error

    return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), inst.lhs, inst.rhs, why)


def or_float64(certify_fn, inst, float_ratio: float, what: str = "high-precision"):
    """``certify_fn(inst)`` (a route's exact or mpmath certificate), or :func:`float64_only`
    saying why where that replay fails (``no <what> replay: ...``)."""
    try:
        return certify_fn(inst)
    except (ArithmeticError, ValueError, TypeError, ZeroDivisionError) as exc:
        return float64_only(inst, float_ratio, f"no {what} replay: {exc}")
