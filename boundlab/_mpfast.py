"""The fast half of the exact fallback of :class:`boundlab._exact.ExactEvaluator`: mpmath at two
precisions, accepted only where the two agree far below float64's rounding.

:func:`two_precision_value` runs a function lambdified for mpmath at ``dps`` and ``2 * dps``
decimal digits (``dps`` = 40 plus the decimal span of the inputs' exponents, so that ``1 - p``
keeps every digit of a tiny ``p`` and 30 more), doubling again (up to ``8 * dps``) while two
consecutive values disagree (a form that cancels more digits). It returns the float64 nearest
to the higher-precision value of the first consecutive pair that agrees, when

* both values are finite real numbers and the higher one is a normal float64 (no overflow,
  subnormal or zero: those go to sympy's ``evalf``, which handles them);
* they agree to ``2**-70`` relative, 17 bits below half an ulp (``2**-54``);
* the higher value moved by ``4 * |difference| + 2**-80 * |value|`` either way rounds to the same
  float64, so the rounding is not decided by digits either value may get wrong, and sympy's
  25-digit ``evalf`` (relative error below ``2**-83``) rounds to the same float too;

and None otherwise (the caller then runs ``evalf``). ``floor`` and ``ceiling`` are
:func:`guarded_floor` / :func:`guarded_ceil`, which refuse (raise :class:`NearInteger`, so None)
an argument that lies within ``2**-(prec/2)`` of an integer without being one: there the
working precision, not the true value, could pick the integer.

Example
-------
>>> import mpmath
>>> f = lambda p, K: 1 / p - (1 - p) ** K / p  # cancels as p -> 0
>>> two_precision_value(f, [1e-17, 50.0])
49.999999999999986
>>> two_precision_value(lambda p, K: (1 - p) * K, [1.0, 50.0]) is None  # exactly 0: evalf's
True
"""

from __future__ import annotations

import math

import mpmath
from mpmath.libmp import mpf_pos, round_nearest, to_float

__all__ = ["two_precision_value", "guarded_floor", "guarded_ceil", "NearInteger", "FAST_DPS"]

#: working precision (decimal digits) of the first evaluation, before the inputs' span is added
FAST_DPS = 40
_AGREE = 2.0**-70  # the two values must agree to this relative (half an ulp is 2**-54)
_MARGIN = 2.0**-80  # relative margin that must not change the rounding
_NORMAL_MIN = 2.0**-1022
_DOUBLINGS = 3  # precisions dps, 2 dps, 4 dps, 8 dps: consecutive pairs compared


class NearInteger(ArithmeticError):
    """floor/ceiling of a value too close to an integer to be decided at this precision."""


def _check_integer_distance(x):
    d = min(x - mpmath.floor(x), mpmath.ceil(x) - x)
    if d and d <= max(abs(x), 1) * mpmath.mpf(2) ** (-(mpmath.mp.prec // 2)):
        raise NearInteger(x)


def guarded_floor(x):
    """``mpmath.floor(x)``, raising :class:`NearInteger` for an ``x`` near but not on an integer.

    >>> int(guarded_floor(mpmath.mpf(7) / 2))
    3
    """
    x = mpmath.mpf(x)
    _check_integer_distance(x)
    return mpmath.floor(x)


def guarded_ceil(x):
    """``mpmath.ceil(x)``, raising :class:`NearInteger` for an ``x`` near but not on an integer.

    >>> int(guarded_ceil(mpmath.mpf(6)))
    6
    """
    x = mpmath.mpf(x)
    _check_integer_distance(x)
    return mpmath.ceil(x)


def _nearest(x) -> float:
    """The float64 nearest to the mpf ``x`` (ties to even), as ``float`` of a sympy Float."""
    return to_float(mpf_pos(x._mpf_, 53, round_nearest))


def _value(fn, values, dps):
    """``fn`` at the exact inputs with ``dps`` digits: an mpf, or None (non-real, not finite,
    an error)."""
    with mpmath.workdps(dps):
        try:
            val = fn(*[mpmath.mpf(v) for v in values])
        except Exception:  # noqa: BLE001 - any failure: the caller falls back to evalf
            return None
        if isinstance(val, int) and not isinstance(val, bool):
            val = mpmath.mpf(val)
        if not isinstance(val, mpmath.mpf) or not mpmath.isfinite(val):
            return None
        return val


def _settle(lo, hi):
    """``(done, float or None)`` for two values of one function, ``hi`` the more precise
    (call at ``hi``'s working precision). Not done: they disagree (more digits may help)."""
    if not hi:
        return True, None
    diff = abs(hi - lo)
    if diff > abs(hi) * _AGREE:
        return False, None
    margin = 4 * diff + abs(hi) * _MARGIN
    f = _nearest(hi)
    if not _NORMAL_MIN <= abs(f) < math.inf:
        return True, None  # zero, subnormal or overflow: evalf's
    if _nearest(hi - margin) != f or _nearest(hi + margin) != f:
        return True, None  # on (or by) a rounding tie: evalf's
    return True, f


def two_precision_value(fn, values) -> float | None:
    """The correctly rounded float64 value of ``fn`` (lambdified for mpmath) at the float
    ``values``, or None where two precisions do not settle it (see the module docstring)."""
    if not all(math.isfinite(v) for v in values):
        return None
    span = max((abs(math.frexp(v)[1]) for v in values if v), default=0)
    dps = FAST_DPS + int(span * 0.30103) + 1
    prev = _value(fn, values, dps)
    for _ in range(_DOUBLINGS):
        if prev is None:
            return None
        dps *= 2
        cur = _value(fn, values, dps)
        if cur is None:
            return None
        with mpmath.workdps(dps):
            done, f = _settle(prev, cur)
        if done:
            return f
        prev = cur
    return None
