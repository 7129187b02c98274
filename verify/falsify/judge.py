"""measured / bound for a population: one code path for the batched search and the replay.

Orientation: ``ratio = measured LHS / bound RHS`` (> 1: the bound is violated). A bound
``<= 0`` where the measured side is positive gives ``ratio = inf`` (VIOLATED, not an error).
A **signed** quantity (:attr:`verify.measures.Measure.signed`: a descent
E f(x_{t+1}) - f(x_t), which a lemma may bound by a negative number) is judged against a
negative bound too: there ``ratio = 1 + (measured - bound) / |bound|`` (> 1 exactly when the
measured value is above the bound by more than the rounding floor below; 1 within it; a
positive bound keeps measured / bound).
A measured value at or below the rounding floor, :data:`ZERO` times the instance's scale
(1 + |F(x0) - F*| + max_t |F(x_t)| + ||x0 - x*||^2), is indistinguishable from 0 and gives 0:
near the optimum F(x) - F* stalls at a few hundred ulps of F while a bound built from measured
differences (``dist0 - dist_tau``) rounds to ~1e-19, and their quotient says nothing. A
non-finite measurement (an undefined run), a value outside a parameter's domain, or a failed
precondition gives ``-inf`` (never a worst case). A run that diverged (its gap or distance
beyond 1e100 or not finite in some round) gets
:data:`~verify.falsify.certify.DIVERGED_RATIO` (-1e300): below every judged ratio, so it is the
worst case only when every instance diverged, and then its verdict is ``diverged``.
"""

from __future__ import annotations

import math

import numpy as np

from ..measures import measure
from .certify import DIVERGED_RATIO, diverged_rows

__all__ = ["ratios", "judge", "ZERO"]

#: measured values at most this (relative to 1 + |F(x0) - F*|) count as zero (rounding)
ZERO = 1e-13


def ratios(lhs, rhs, scale=1.0, signed=False):
    """measured / bound with the rules of the module docstring (arrays broadcast).

    >>> ratios([-2.0, -0.5, 1.0, -1e-3], [-1.0, -1.0, 2.0, -1e-3 - 1e-17], signed=True).tolist()
    [0.0, 1.5, 0.5, 1.0]
    >>> ratios([-0.5], [-1.0]).tolist()   # unsigned: a value at or below 0 holds
    [0.0]
    """
    lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
    pos = lhs > ZERO * scale
    with np.errstate(all="ignore"):
        r = np.where(pos, np.where(rhs > 0, lhs / rhs, np.inf), 0.0)
        if signed:  # a negative bound: above 1 exactly when measured > bound by more than
            gap = lhs - rhs  # the rounding floor (within it: 1, tight)
            gap = np.where((gap > 0) & (gap <= ZERO * scale), 0.0, gap)
            r = np.where(rhs < 0, np.maximum(1.0 + gap / np.abs(rhs), 0.0), r)
    return np.where(np.isfinite(lhs) & np.isfinite(rhs), r, -np.inf)


def judge(bound, q: dict, scalars: dict, per_instance: dict, lhs: str | None = None):
    """``(ratio (P,), lhs (P,), rhs (P,), k (P,))``: the worst round ``k`` of each instance.

    ``q`` the run quantities (:func:`verify.falsify.population.quantities`), ``scalars`` the
    parameters shared by the population, ``per_instance`` those of each instance ({name: (P,)});
    ``lhs`` the quantity measured (default ``bound.lhs``;
    :func:`verify.measures.paper_name`).
    """
    values, rounds = measure(bound.lhs if lhs is None else lhs, q)
    P, K = values.shape
    names = set(bound.params) | set(bound.extra_params)
    full = {**scalars, **{k: np.asarray(v, dtype=float)[:, None] for k, v in
                          per_instance.items()}, **rounds}
    use = {k: np.broadcast_to(np.asarray(v, dtype=float), (P, K)).ravel()
           for k, v in full.items() if k in names}
    rhs = _evaluate(bound, use, P * K).reshape(P, K)
    scale = _scale(q)
    from ..measures import get as _get_measure

    r = ratios(values, rhs, scale, signed=_get_measure(bound.lhs if lhs is None else lhs).signed)
    r = np.where(diverged_rows(q)[:, None], DIVERGED_RATIO, r)
    r = np.where(_preconditions_ok(bound, use, P * K).reshape(P, K), r, -math.inf)
    k = np.argmax(r, axis=1)
    rows = np.arange(P)
    return r[rows, k], values[rows, k], rhs[rows, k], k


def _scale(q) -> np.ndarray:
    """(P, 1) the natural scale of each instance's measured values (module docstring)."""
    s = 1.0 + np.abs(q["gap"][:, :1]) + np.abs(q["dist2"][:, :1])
    if "loss" in q:
        with np.errstate(all="ignore"):
            s = s + np.nan_to_num(np.nanmax(np.abs(q["loss"]), axis=1, keepdims=True))
    return s


def _evaluate(bound, use, n):
    try:
        return np.broadcast_to(np.asarray(bound.evaluate(**use), dtype=float), (n,)).copy()
    except Exception:  # noqa: BLE001 - some row outside a domain: the others at once
        out = np.full(n, np.nan)
        good = _in_domains(bound, use, n)
        try:
            out[good] = np.broadcast_to(np.asarray(bound.evaluate(
                **{k: v[good] for k, v in use.items()}), dtype=float), (int(good.sum()),))
            return out
        except Exception:  # noqa: BLE001 - judge row by row
            pass
        for i in range(n):
            try:
                out[i] = float(bound.evaluate(**{k: v[i] for k, v in use.items()}))
            except Exception:  # noqa: BLE001 - that row is undefined (ratio -inf)
                pass
        return out


def _preconditions_ok(bound, use, n):
    if not bound.preconditions:
        return np.ones(n, dtype=bool)
    try:
        if not bound.violated_preconditions(**use):
            return np.ones(n, dtype=bool)
    except Exception:  # noqa: BLE001 - judged row by row below
        pass
    try:
        return _admissible(bound, use, n)
    except Exception:  # noqa: BLE001 - a precondition that cannot take arrays: row by row
        pass
    ok = np.zeros(n, dtype=bool)
    for i in range(n):
        try:
            ok[i] = not bound.violated_preconditions(**{k: v[i] for k, v in use.items()})
        except Exception:  # noqa: BLE001 - a value outside its domain: not admissible
            ok[i] = False
    return ok


def _admissible(bound, use, n):
    """Per row, what ``not bound.violated_preconditions(**row)`` answers, in one vectorized
    pass: every required parameter given, each value inside its domain (integers exactly
    representable), and every precondition whose parameters are all given holds."""
    if any(k not in use for k in bound.params):
        return np.zeros(n, dtype=bool)
    ok = _in_domains(bound, use, n)
    with np.errstate(all="ignore"):
        for pc in bound.preconditions:
            if all(name in use for name in pc.names):
                ok &= np.broadcast_to(pc.holds(use), (n,))
    return ok


def _in_domains(bound, use, n):
    """Rows whose every given value lies in its parameter's domain (integers exactly
    representable), as the bound's own validation judges one row."""
    from boundlab._fastcheck import MAX_EXACT_INT

    domains = {k: p.domain for k, p in {**bound.params, **bound.extra_params}.items()}
    ok = np.ones(n, dtype=bool)
    for k, v in use.items():
        ok &= ~domains[k].bad_mask(v)
        if domains[k].integer:
            ok &= np.abs(v) <= MAX_EXACT_INT
    return ok
