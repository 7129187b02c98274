"""Numeric routes to the catalogue's constants that no run measures: a constant defined as the
minimiser of another bound, as the root of an equation, or by a proof's steps, is rebuilt here
from the *other* catalogue entry it is defined by, at high precision, and then judged against its
own closed form (:func:`verify.compare.compare`, ``kind="identity"``: equal to 1e-9 relative).

The catalogue's expressions are evaluated with mpmath at :data:`DPS` digits, directly from their
sympy trees (catalogue data, never user text), outside their parameters' domains where the
definition needs a real extension (a real cutoff K, a real number of local steps E): the
papers' own minimisations are over real values.

Example
-------
>>> import boundlab
>>> f = mp_function(boundlab.get("weight_error.interval_bias"), ("p", "K"))
>>> round(float(f(0.5, 1.5)), 12)
0.125
>>> round(argmin(lambda x: (x - 2) ** 2 + 1, 0.1, 10.0), 12)
2.0
"""

from __future__ import annotations

import mpmath
import sympy as sp

__all__ = ["DPS", "mp_function", "argmin", "root", "DERIVED"]

DPS = 40
#: what the ``problem`` column says for a constant rebuilt by derivation (no run)
DERIVED = "derived (no run; mpmath at 40 digits)"


def mp_function(bound, names):
    """``bound.expr`` as an mpmath function of the parameters ``names`` (in order); every
    argument is made an mpf first (exactly), so no product is taken in float64."""
    syms = [bound.params[n].symbol if n in bound.params else bound.extra_params[n].symbol
            for n in names]
    f = sp.lambdify(syms, bound.expr, modules="mpmath")
    return lambda *args: f(*(mpmath.mpf(a) for a in args))


def _grid(lo, hi, n=400):
    a, b = mpmath.log(lo), mpmath.log(hi)
    return [mpmath.exp(a + (b - a) * k / n) for k in range(n + 1)]


def argmin(f, lo, hi) -> float:
    """The minimiser over [lo, hi] (0 < lo < hi) of a unimodal ``f`` (mpmath-valued):
    the root of its derivative (mpmath's numerical derivative at :data:`DPS` digits), found
    from a sign change on a log grid; an end point where the derivative does not change sign
    there."""
    with mpmath.workdps(DPS):
        d = lambda x: mpmath.diff(f, x)  # noqa: E731
        xs = _grid(mpmath.mpf(lo), mpmath.mpf(hi))
        ds = [d(x) for x in xs]
        if ds[0] >= 0:
            return float(xs[0])
        for (a, da), (b, db) in zip(zip(xs, ds), zip(xs[1:], ds[1:])):
            if da < 0 <= db:
                return float(mpmath.findroot(d, (a, b), solver="anderson"))
        return float(xs[-1])


def root(f, target, lo, hi) -> float:
    """The x in [lo, hi] (0 < lo < hi) where the monotone ``f`` equals ``target``."""
    with mpmath.workdps(DPS):
        g = lambda x: f(x) - target  # noqa: E731
        xs = _grid(mpmath.mpf(lo), mpmath.mpf(hi))
        gs = [g(x) for x in xs]
        for (a, ga), (b, gb) in zip(zip(xs, gs), zip(xs[1:], gs[1:])):
            if ga == 0:
                return float(a)
            if (ga < 0) != (gb < 0):
                return float(mpmath.findroot(g, (a, b), solver="anderson"))
        raise ValueError(f"no root of f = {target} in [{lo}, {hi}]")
