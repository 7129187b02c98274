"""The ``measures`` of :func:`verify.sweep`: extra columns computed from every run's trace.

A measure is ``fn(trace, problem) -> value``, run where the run ran (a Dask worker included).
A scalar (number, string, bool) is a per-run value, put on the final round's row (NaN / None on
the others, as a per-run left-hand side of a bound); a 1-D array of length ``rounds + 1`` is one
value per state x_0..x_R, of length ``rounds`` one value per round (NaN on the final row).

Example
-------
>>> import toys, verify
>>> df = verify.sweep(toys.quadratic(3, 2, seed=0), "fedavg", grid={}, seeds=2, rounds=2,
...                   lr=0.1, measures={"final_x0": lambda tr, prob: tr.final_model[0],
...                                     "diverged": lambda tr, prob: tr.diverged_at is not None})
>>> df[["seed", "round", "diverged"]].values.tolist()[:3]
[[0, 0, None], [0, 1, None], [0, 2, False]]
>>> int(df["final_x0"].notna().sum())
2
"""

from __future__ import annotations

import functools

import numpy as np

from boundlab.errors import DomainError

__all__ = ["check_measures", "add_measures", "describe_measures"]


def check_measures(measures, taken) -> dict:
    """``measures`` validated: a dict of new column names -> callables (``{}`` for None).

    >>> check_measures({"seed": len}, [])
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: measures = 'seed' is outside its domain: a new column name \
(not seed, round, a grid or fixed name, or a bound column)
    """
    if measures is None:
        return {}
    if not isinstance(measures, dict):
        raise DomainError("measures", measures, "a dict name -> fn(trace, problem)")
    from ..schema import CORE

    taken = {"seed", "round", "bound", "lhs", *CORE, *taken}
    for k, fn in measures.items():
        bad = not isinstance(k, str) or not k or k in taken
        if bad or k.startswith(("term_", "rhs_", "param_")):
            raise DomainError("measures", k, "a new column name (not seed, round, a grid or "
                              "fixed name, or a bound column)")
        if not callable(fn):
            raise DomainError(f"measures[{k!r}]", fn, "a callable fn(trace, problem)")
    return dict(measures)


def _column(name, fn, traces, prob, n):
    parts = []
    for tr in traces:
        v = fn(tr, prob)
        if np.ndim(v) == 0:
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
                    v, (bool, np.bool_)):
                parts.append(np.append(np.full(n - 1, np.nan), float(v)))
            else:
                parts.append([None] * (n - 1) + [v])
        elif np.ndim(v) == 1 and len(v) in (n, n - 1):
            parts.append(np.append(np.asarray(v, dtype=float), [np.nan] * (n - len(v))))
        else:
            raise DomainError(f"measures[{name!r}]", f"a value of shape {np.shape(v)}",
                              f"a scalar or an array of length {n} (states) or {n - 1} (rounds)")
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    return [x for p in parts for x in (p.tolist() if isinstance(p, np.ndarray) else p)]


def add_measures(frame, measures: dict, traces, prob, rounds: int):
    """``frame`` (the runs' logs, one after the other) with one column per measure."""
    new = {}
    for name, fn in measures.items():
        if name in frame.columns:
            raise DomainError(f"measures[{name!r}]", name, "a name that is not already a "
                              "column of the table", f"columns: {', '.join(frame.columns)}")
        new[name] = _column(name, fn, traces, prob, rounds + 1)
    return frame.assign(**new)


def _describe(fn) -> str:
    if isinstance(fn, functools.partial):
        args = [repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in fn.keywords.items()]
        return f"partial({_describe(fn.func)}, {', '.join(args)})"
    mod, name = getattr(fn, "__module__", ""), getattr(fn, "__qualname__", type(fn).__name__)
    return f"{mod}.{name}" if mod else name


def describe_measures(measures: dict) -> dict:
    """name -> a text naming the function (what ``sweep.json`` records).

    >>> describe_measures({"n": functools.partial(round, ndigits=2)})
    {'n': 'partial(builtins.round, ndigits=2)'}
    """
    return {k: _describe(fn) for k, fn in measures.items()}
