"""The float half of :class:`boundlab._exact.ExactEvaluator`: its operations, numpy only.

A compiled expression is a straight-line *program*: a list of ``(op, args, const)``
instructions (``op`` a name of :data:`OPS`, ``args`` indices of earlier instructions, ``const``
an argument index, a ``(value, error)`` pair, an exponent or a comparison) and the index of the
output. :func:`evaluate_program` runs it on float64 arrays, computing every value with a
first-order bound on its absolute error, and hands the entries it cannot certify to ``exact``.

This module imports neither sympy nor anything of boundlab that does, so that a program kept
in the evaluator cache (:mod:`boundlab._cache`) runs without loading sympy; the sympy side
(compiling, and the exact fallback) stays in :mod:`boundlab._exact`, which runs its programs
through this same function, so both paths compute the same bits.

Example
-------
>>> import numpy as np
>>> prog = [("arg", (), 0), ("const", (), (2.0, 0.0)), ("mul", (0, 1), None)]  # 2 * x
>>> evaluate_program(prog, 2, [np.array([1.5, 3.0])], exact=None).tolist()
[3.0, 6.0]
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["RTOL", "OPS", "run_program", "evaluate_program"]

#: relative error bound above which an entry is recomputed exactly
RTOL = 1e-12
_U = 2.0**-53 * 1.5  # unit roundoff with a small safety factor


def run_program(prog, out: int, args):
    """``(value, error bound)`` of the program's output at float64 ``args`` (no fallback)."""
    regs: list = []
    for op, a, const in prog:
        regs.append(OPS[op]([regs[i] for i in a], args, const))
    return regs[out]


def evaluate_program(prog, out: int, args, exact):
    """Vectorized value of a program at ``args`` (arrays that broadcast together).

    Entries whose error bound exceeds ``RTOL * |value|`` or that are not finite are replaced
    by ``exact(point)`` (a list of floats), one point at a time.
    """
    args = [np.asarray(x, dtype=float) for x in args]
    shape = np.broadcast_shapes(*(x.shape for x in args)) if args else ()
    with np.errstate(all="ignore"):
        v, e = run_program(prog, out, args)
        v = np.broadcast_to(np.asarray(v, dtype=float), shape).copy()
        e = np.broadcast_to(np.asarray(e, dtype=float), shape)
        bad = ~np.isfinite(v) | ~(e <= RTOL * np.abs(v))
    return fill_exact(v, bad, args, shape, exact)


def fill_exact(v, bad, args, shape, exact):
    """Replace the ``bad`` entries of ``v`` by ``exact`` at the points (in place; returns v)."""
    if bad.any():
        full = [np.broadcast_to(x, shape) for x in args]
        for idx in zip(*np.nonzero(bad)) if shape else [()]:
            v[idx] = exact([float(x[idx]) for x in full])
    return v


# ---------------------------------------------------------------------- operations (value, error)
def _safe_ratio(e, v):
    """e / |v| with 0/0 -> 0 and x/0 -> inf."""
    av = np.abs(v)
    return np.where(e == 0, 0.0, np.divide(e, av, out=np.full(np.broadcast(e, av).shape,
                                                               np.inf), where=av > 0))


def _arg(_, args, i):
    return args[i], 0.0


def _const(_, __, ve):
    return ve


def _smul(a, b):
    """a * b with 0 * inf -> 0 (an exact input times an infinite sensitivity)."""
    return np.where(np.asarray(b) == 0, 0.0, a * b)


def _two_sum_err(a, b, s):
    """The exact rounding error ``(a + b) - s`` of ``s = fl(a + b)`` (Knuth's TwoSum, valid for
    any float64 ``a``, ``b`` in round-to-nearest; nan where ``s`` is not finite)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


def _add(xs, *_):
    """Left-to-right sum (as ``sum``); its own rounding errors are known exactly (TwoSum), so a
    cancellation of exact operands (``1 - p`` at ``p = 1``) is certified exact."""
    v = 0 + xs[0][0]  # as sum() starts: 0 + x is exact
    r = 0.0
    for x, _ in xs[1:]:
        s = v + x
        r = r + np.abs(_two_sum_err(v, x, s))
        v = s
    return v, sum(x[1] for x in xs) + r * (1 + 2 * len(xs) * _U)  # r's own rounding


def _pow2(x) -> bool:
    m = np.frexp(np.asarray(x, dtype=float))[0]
    return bool(np.ndim(x) == 0 and abs(float(m)) == 0.5)


def _mul(xs, *_):
    vals = [x[0] for x in xs]
    v = functools.reduce(np.multiply, vals)
    exact = sum(1 for val, err in xs if np.ndim(val) == 0 and np.all(err == 0) and _pow2(val))
    e = _U * max(len(xs) - 1 - exact, 0) * np.abs(v)
    for i, (_, ei) in enumerate(xs):
        if np.any(ei != 0):
            others = functools.reduce(np.multiply, [np.abs(vals[j]) for j in range(len(vals))
                                                    if j != i], 1.0)
            e = e + ei * others
    return v, e


def _powc(xs, _, c):
    (b, eb), = xs
    v = np.power(b, c)
    rel = abs(c) * _safe_ratio(eb, b)
    e = np.abs(v) * (rel + _U)
    if c > 0:
        e = np.where(b == 0, np.where(eb == 0, 0.0, np.power(eb, c)), e)
    return v, e


def _pow(xs, *_):
    (b, eb), (c, ec) = xs
    v = np.power(b, c)
    lb = np.log(np.abs(b))
    e = np.abs(v) * (np.abs(c) * _safe_ratio(eb, b) + _smul(np.abs(lb), ec) + 2 * _U)
    e = np.where(b == 0, np.where(eb == 0, 0.0, np.inf), e)
    return v, e


def _pow1p(xs, *_):
    (x, ex), (c, ec) = xs
    base = 1.0 + x
    lg = np.log1p(np.maximum(x, -1.0))
    y = c * lg
    v = np.where(base > 0, np.exp(y), np.power(base, c))
    rel = (np.abs(c) * _safe_ratio(ex, base) + _smul(np.abs(lg), ec)
           + _U * (2 + np.abs(y)))
    e = _smul(rel, np.abs(v))
    eb = ex + np.abs(_two_sum_err(1.0, x, base))  # error of base = 1 + x, its rounding exact
    e_pow = np.abs(v) * (np.abs(c) * _safe_ratio(eb, base) + 2 * _U)  # power(base <= 0, c)
    e_pow = np.where((base == 0) & (eb == 0) & (c > ec), 0.0, e_pow)  # 0^c = 0 exactly, c > 0
    return v, np.where(base > 0, e, e_pow)


def _exp(xs, *_):
    (a, ea), = xs
    v = np.exp(a)
    return v, np.abs(v) * (ea + _U)


def _log(xs, *_):
    (a, ea), = xs
    v = np.log(a)
    return v, _safe_ratio(ea, a) + _U * np.abs(v)


def _log1p(xs, *_):
    (a, ea), = xs
    v = np.log1p(a)
    return v, _safe_ratio(ea, 1.0 + a) + _U * np.abs(v)


def _expm1(xs, *_):
    (a, ea), = xs
    v = np.expm1(a)
    return v, ea * np.exp(a) + _U * np.abs(v)


def _extreme(pick):
    """Max / Min: the error of the chosen argument, and of any other that could be chosen."""
    def op(xs, *_):
        shape = np.broadcast_shapes(*(np.shape(x[0]) for x in xs))
        vals = [np.broadcast_to(x[0], shape) for x in xs]
        errs = [np.broadcast_to(x[1], shape) for x in xs]
        v = functools.reduce(pick, vals)
        sel = functools.reduce(np.maximum, [np.where(val == v, err, 0.0)
                                            for val, err in zip(vals, errs)])
        near = [np.where(np.abs(val - v) <= err + sel, err, 0.0) for val, err in zip(vals, errs)]
        return v, functools.reduce(np.maximum, near)
    return op


def _rounding(fn):
    def op(xs, *_):
        (a, ea), = xs
        v = fn(a)
        near = np.minimum(np.abs(a - np.floor(a)), np.abs(np.ceil(a) - a))
        return v, np.where((ea > 0) & (near <= ea), np.inf, 0.0)
    return op


def _int_floordiv(a, b):
    """floor(a / b) for integer-valued a, b (|a|, |b| < 2**53, b != 0), exactly: fmod is exact,
    a - fmod(a, b) is an integer of magnitude <= |a| (exact), and dividing it by b gives an exact
    integer quotient."""
    r = np.fmod(a, b)
    q = (a - r) / b
    return np.where((r != 0) & ((r < 0) != (b < 0)), q - 1.0, q)


def _division(ceil: bool):
    """floor(a / b) or ceil(a / b): exact (error 0) where a and b are exact integers below
    2**53; elsewhere floor/ceil of the rounded quotient, uncertain (inf) where the quotient is
    within its error bound of an integer (as ``floor`` of ``a * b**-1``)."""
    def op(xs, *_):
        (a, ea), (b, eb) = xs
        q = a / b
        ints = ((ea == 0) & (eb == 0) & (a == np.trunc(a)) & (b == np.trunc(b))
                & (np.abs(a) < 2.0**53) & (np.abs(b) < 2.0**53) & (b != 0))
        exact = -_int_floordiv(-a, b) if ceil else _int_floordiv(a, b)
        v = np.where(ints, exact, np.ceil(q) if ceil else np.floor(q))
        eq = np.abs(q) * (_safe_ratio(ea, a) + _safe_ratio(eb, b) + _U)
        eq = np.where((q == 0) & (a != 0), np.inf, eq)  # the quotient underflowed
        near = np.minimum(np.abs(q - np.floor(q)), np.abs(np.ceil(q) - q))
        return v, np.where(ints | ~((eq > 0) & (near <= eq)), 0.0, np.inf)
    return op


def _abs(xs, *_):
    (a, ea), = xs
    return np.abs(a), ea


def _true(*_):
    return True, 0.0


def _cmp(xs, _, op):
    (a, ea), (b, eb) = xs
    res = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal}[op](a, b)
    unsure = (ea + eb > 0) & (np.abs(a - b) <= ea + eb)
    return res, np.where(unsure, np.inf, 0.0)


def _piecewise(xs, *_):
    v, e = np.nan, np.inf
    taken = False
    for (val, err), (cond, cerr) in zip(reversed(xs[0::2]), reversed(xs[1::2])):
        v = np.where(cond, val, v)
        e = np.where(cond, np.maximum(err, cerr), e)
        taken = taken | cond
    return v, e


OPS = {"arg": _arg, "const": _const, "add": _add, "mul": _mul, "powc": _powc, "pow": _pow,
        "pow1p": _pow1p, "exp": _exp, "log": _log, "log1p": _log1p, "expm1": _expm1,
        "max": _extreme(np.maximum), "min": _extreme(np.minimum),
        "floor": _rounding(np.floor), "ceil": _rounding(np.ceil),
        "floordiv": _division(False), "ceildiv": _division(True),
        "abs": _abs, "true": _true, "cmp": _cmp, "piecewise": _piecewise}
