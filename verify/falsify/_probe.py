"""Values of a bound's expressions at random points of its domain, for
:mod:`verify.falsify.mutants` (duplicates) and :mod:`verify.falsify.power` (is a mutant >= the
original everywhere?).

:func:`domain_points` draws the points (seeded); :func:`evaluate_expr` evaluates one expression
there with ``lambdify`` (it prints and compiles the whole tree: 20-50 ms on the catalogue's larger
bounds); :class:`Probe` evaluates node by node with a memo, so that the many mutants of one bound,
which share all but one path of their tree with the original, cost a few new nodes each.

>>> import boundlab
>>> b = boundlab.get("drift.plateau")
>>> pts = domain_points(b, 4, seed=1)
>>> bool(np.allclose(Probe(b, pts)(b.expr), evaluate_expr(b.expr, b, pts)))
True
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

__all__ = ["domain_points", "evaluate_expr", "Probe"]


def _sample(domain, n, rng):
    lo = domain.lo if math.isfinite(domain.lo) else -5.0
    hi = domain.hi if math.isfinite(domain.hi) else None
    if domain.integer:  # half uniform over 41 values, half log-uniform up to lo + 1e4
        first = math.floor(lo) + 1 if domain.lo_open else math.ceil(lo)
        top = int(hi) if hi is not None else max(first, 0) + 40
        near = rng.integers(first, top + 1, n).astype(float)
        far = first - 1 + np.floor(10.0 ** rng.uniform(0, 4, n))
        far = np.minimum(far, top) if hi is not None else far
        return np.where(rng.uniform(size=n) < 0.5, near, far)
    if hi is None:  # (lo, inf): log-uniform over [lo + 1e-3, lo + 1e3]
        return lo + 10.0 ** rng.uniform(-3, 3, n)
    x = rng.uniform(lo, hi, n)
    return np.where(x <= lo, (lo + hi) / 2, x) if domain.lo_open else x


def domain_points(bound, n: int, seed: int = 0) -> dict:
    """``n`` random points of the domain of every parameter of ``bound`` (params and
    extra_params): ``{name: array}``; positive reals log-uniform over [1e-3, 1e3]; integers
    half uniform in [lo, lo + 40] (or their interval), half log-uniform in [lo, lo + 1e4)
    (small values, where integer formulas change regime, are drawn often); bounded reals
    uniform.

    >>> import boundlab
    >>> p = domain_points(boundlab.get("weight_error.average"), 5)
    >>> sorted(p), bool(np.all((p["p"] > 0) & (p["p"] <= 1)))
    (['K', 'T', 'p'], True)
    """
    rng = np.random.default_rng(seed)
    allp = {**bound.params, **bound.extra_params}
    return {name: _sample(p.domain, n, rng) for name, p in sorted(allp.items())}


def evaluate_expr(expr, bound, pts) -> np.ndarray:
    """``expr`` (over the symbols of ``bound``'s parameters) at the points ``pts``, as floats
    (nan where it is not real)."""
    allp = {**bound.params, **bound.extra_params}
    names = sorted(allp)
    fn = sp.lambdify([allp[n].symbol for n in names], expr, modules="numpy")
    with np.errstate(all="ignore"):
        out = fn(*[np.asarray(pts[n], dtype=float) for n in names])
    out = np.broadcast_to(np.asarray(out, dtype=complex if np.iscomplexobj(out) else float),
                          np.shape(pts[names[0]]))
    if np.iscomplexobj(out):
        out = np.where(np.abs(out.imag) < 1e-12 * np.abs(out.real) + 1e-300, out.real, np.nan)
    return np.asarray(out, dtype=float)


_UNARY = {sp.log: np.log, sp.exp: np.exp, sp.floor: np.floor, sp.ceiling: np.ceil,
          sp.Abs: np.abs}
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}


class Probe:
    """Float values of expressions over ``bound``'s symbols at the points ``pts``
    (:func:`domain_points`): nan where not real or undefined, +-inf where infinite.

    ``probe(expr, keep=True)`` remembers the value of every node of ``expr`` (the original's
    nodes, or every mutant's when the points are few); ``keep=False`` remembers them for this
    call only (a large grid: memory stays the original's nodes plus one tree). A node type it
    does not know is evaluated by :func:`evaluate_expr`.
    """

    def __init__(self, bound, pts):
        self.bound, self.pts = bound, pts
        allp = {**bound.params, **bound.extra_params}
        self.shape = np.shape(next(iter(pts.values())))
        self.memo = {p.symbol: np.broadcast_to(np.asarray(pts[n], dtype=float), self.shape)
                     for n, p in allp.items()}

    def __call__(self, expr, keep: bool = False) -> np.ndarray:
        scratch = self.memo if keep else {}
        with np.errstate(all="ignore"):
            return np.array(self._value(expr, scratch), dtype=float)

    def _value(self, node, scratch):
        v = self.memo.get(node)
        if v is None:
            v = scratch.get(node)
        if v is None:
            v = np.broadcast_to(np.asarray(self._compute(node, scratch), dtype=float),
                                self.shape)
            scratch[node] = v
        return v

    def _compute(self, node, scratch):  # noqa: C901 - one case per node type
        def val(x):
            return self._value(x, scratch)

        if node.is_Number or node.is_NumberSymbol:
            return float(node)
        if node.is_Add or node.is_Mul:
            vals = [val(a) for a in node.args]
            return np.sum(vals, axis=0) if node.is_Add else np.prod(vals, axis=0)
        if node.is_Pow:
            return np.power(val(node.args[0]), val(node.args[1]))
        if isinstance(node, (sp.Max, sp.Min)):
            fn = np.maximum if isinstance(node, sp.Max) else np.minimum
            return fn.reduce([val(a) for a in node.args])
        if node.func in _UNARY:
            return _UNARY[node.func](val(node.args[0]))
        if node.is_Piecewise:
            conds = [np.broadcast_to(self._truth(c, scratch), self.shape) for _, c in node.args]
            return np.select(conds, [val(e) for e, _ in node.args], np.nan)
        return evaluate_expr(node, self.bound, self.pts)

    def _truth(self, cond, scratch):
        if cond is sp.true or cond is sp.false:
            return bool(cond)
        if cond.is_Relational and cond.rel_op in _COMPARE:
            return _COMPARE[cond.rel_op](self._value(cond.lhs, scratch),
                                         self._value(cond.rhs, scratch))
        if isinstance(cond, (sp.And, sp.Or)):
            fn = np.logical_and if isinstance(cond, sp.And) else np.logical_or
            return fn.reduce([np.broadcast_to(self._truth(c, scratch), self.shape)
                              for c in cond.args])
        if isinstance(cond, sp.Not):
            return np.logical_not(self._truth(cond.args[0], scratch))
        return np.asarray(evaluate_expr(sp.Piecewise((1, cond), (0, True)), self.bound,
                                        self.pts), dtype=bool)
