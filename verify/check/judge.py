"""How :func:`verify.check` and :func:`verify.check_log` judge: each seed's log measured
(the bound's ``lhs``), the right-hand side evaluated per row, the seeds of a round judged
together by :func:`verify.compare.compare`, and the rows in the schema of
:mod:`verify.schema` (``bound_id``, ``measured``, ``bound_value``, ``ratio`` = measured /
bound_value, ``verdict``, ``term_*``, ``param_*``).

Private to :mod:`verify.check`.
"""

from __future__ import annotations

import inspect

import numpy as np

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from ..compare import compare
from .lhs import Quantity, _quantity
from .rhs import rhs_params

__all__ = ["judge", "need_columns", "trace_diverged"]


def _columns(q: Quantity, log, bound) -> dict:
    cols = {"round": log["round"].to_numpy(dtype=int)}
    if bound.lhs in log.columns:
        return {**cols, "_lhs": log[bound.lhs].to_numpy(dtype=float)}
    need_columns(q, log, bound)
    for c in set(q.columns) | {"gap", "rho_min", "rho_star", "kappa_min", "kappa_max"}:
        if c in log.columns:
            cols[c] = log[c].to_numpy(dtype=float)
    empty = [c for c in q.columns if not np.any(np.isfinite(cols[c]))]
    if empty:
        raise DomainError(f"column {empty[0]!r} of the log", "no finite value",
                          f"measured values ({bound.lhs} = {q.doc}; a Trace records it with "
                          "record='round' or 'step')")
    return cols


def need_columns(q: Quantity, log, bound) -> None:
    missing = [] if bound.lhs in log.columns else [c for c in q.columns if c not in log.columns]
    if missing:
        raise UnknownNameError(f"column of the log for {bound.lhs!r} ({q.doc}); needs "
                               f"{', '.join(q.columns)} or a column {bound.lhs!r}", missing[0],
                               list(log.columns))


def _measure(q: Quantity, cols: dict, bound):
    """(lhs values, rounds or None, per-round parameters) of one seed's log."""
    if "_lhs" in cols:
        v = cols["_lhs"]
        if not q.per_round:
            return np.array([v[np.isfinite(v)][-1] if np.any(np.isfinite(v)) else np.nan]), \
                None, {}
        keep = np.isfinite(v)
        return v[keep], cols["round"][keep], {}
    lhs = np.atleast_1d(np.asarray(q.fn(cols), dtype=float))
    per = {k: np.asarray(v, dtype=float) for k, v in (q.measured(cols) if q.measured else
                                                       {}).items()}
    if not q.per_round:
        return lhs, None, per
    rounds = cols["round"][:len(lhs)]
    return lhs, rounds, per


def judge(bound, logs, setting, consts, params, level, *, problem, algorithm, diverged=None,
           check="check"):
    q = _quantity(bound)
    rows = []
    shared = None
    if diverged is None:  # a log: the same rule on its gap / dist2 columns
        from types import SimpleNamespace

        diverged = [trace_diverged(SimpleNamespace(**{c: log[c].to_numpy(dtype=float)
                                                       for c in ("gap", "dist2")
                                                       if c in log.columns})) for log in logs]
    for i, log in enumerate(logs):
        cols = _columns(q, log, bound)
        lhs, rounds, per = _measure(q, cols, bound)
        base = rhs_params(bound, {k: v for k, v in setting.items()}, consts, cols)
        base.update({k: v for k, v in (params or {}).items()})
        shared = base if shared is None else {k: v for k, v in shared.items()
                                              if k in base and base[k] == v}
        seed = int(log["seed"].iloc[0]) if "seed" in log.columns else i
        for j in range(len(lhs)):
            p = {**base, **{k: v[j] for k, v in per.items() if k not in (params or {})}}
            if "t" in per and "t" not in (params or {}):
                p["t"] = int(per["t"][j])
            rows.append({"seed": seed, "round": None if rounds is None else int(rounds[j]),
                         "lhs_value": float(lhs[j]), "params": p,
                         "diverged": diverged[i]})
    _check_params(bound, rows)
    return _frame(bound, rows, shared or {}, level, problem, algorithm, check)


def trace_diverged(trace) -> str:
    """Why a run (a Trace, or a log's columns) counts as diverged, '' if it does not: the
    main job's rule (:func:`verify.compare.trace_diverged`), and for a log, a gap or distance
    that turns non-finite after a finite start (what a diverged Trace writes)."""
    from .. import compare as cmp

    why = cmp.trace_diverged(trace) if hasattr(cmp, "trace_diverged") else (
        "iterates not finite" if getattr(trace, "diverged_at", None) is not None else "")
    if why:
        return why
    for name in ("gap", "dist2"):
        v = np.asarray(getattr(trace, name, [np.nan]), dtype=float)
        bad = np.nonzero(~np.isfinite(v))[0]
        if np.isfinite(v[0]) and bad.size:
            return f"iterates not finite from round {int(bad[0]) - 1}"
    return ""


def _check_params(bound, rows):
    need = [n for n in bound.params if any(n not in r["params"] for r in rows)]
    if need:
        raise MissingParameterError(
            f"{bound.id} (give them in params=)", need,
            {n: bound.params[n].domain.describe() for n in need})


def _frame(bound, rows, shared, level, problem, algorithm, check):
    from .. import schema  # lazily: it imports pandas

    groups: dict = {}
    for r in rows:
        groups.setdefault(r["round"], []).append(r)
    out = []
    for rnd, grp in groups.items():
        rhs, failed, unchecked = [], set(), set()
        for r in grp:
            usable = {k: v for k, v in r["params"].items()
                      if k in bound.params or k in bound.extra_params}
            if not all(np.isfinite(np.asarray(v, dtype=float)).all() for v in usable.values()):
                r["rhs"] = np.nan  # a measured parameter of a diverged run
                r["diverged"] = r["diverged"] or "a measured parameter is not finite"
                rhs.append(r["rhs"])
                continue
            r["rhs"] = float(bound.evaluate(**usable))
            failed.update(bound.violated_preconditions(**usable))
            unchecked.update(f"{t} (not checkable: a parameter is missing; give it in params=)"
                             for t in bound.unchecked_preconditions(**usable))
            rhs.append(r["rhs"])
        lhs = np.array([r["lhs_value"] for r in grp])
        rhs = np.array(rhs)
        ref = float(np.mean(rhs))
        samples = lhs if np.all(rhs == rhs[0]) else lhs - rhs + ref
        why = "; ".join(dict.fromkeys(r["diverged"] for r in grp if r["diverged"]))
        res = _compare(bound, samples, ref, sorted(failed), sorted(unchecked), why or False,
                       level, grp[0]["params"])
        reason = getattr(res, "reason", "") or (
            "precondition violated: " + "; ".join(res.preconditions_violated)
            if res.verdict == "not-applicable" else "")
        for r in grp:
            row = {"bound_id": bound.id, "lhs": bound.lhs, "check": check, "case": "",
                   "problem": problem, "algorithm": algorithm, "seed": r["seed"], "round": rnd,
                   "measured": r["lhs_value"], "measured_mean": res.measured,
                   "measured_lo": res.measured_lo, "measured_hi": res.measured_hi,
                   "bound_value": r["rhs"], "ratio": schema.ratio(r["lhs_value"], r["rhs"]),
                   "worst_ratio": np.nan, "verdict": res.verdict, "reason": reason,
                   "n_seeds": res.n_seeds, "effective_samples": res.effective_samples}
            row.update(_terms(bound, r))
            row.update({f"param_{k}": v for k, v in r["params"].items() if np.ndim(v) == 0})
            out.append(schema.complete(row, bound))
    df = schema.frame(out, aliases={"bound": "bound_id"})
    if all(r["round"] is None for r in rows):
        df["round"] = np.nan  # a per-run quantity: no round (the schema keeps the column)
    df.attrs["params"] = {k: (v.item() if hasattr(v, "item") else v) for k, v in shared.items()
                          if np.ndim(v) == 0}
    return df


def _terms(bound, r) -> dict:
    """``term_<name>`` of one row (nan where a term cannot be evaluated)."""
    out = {f"term_{t}": np.nan for t in (bound.terms or {})}
    if not out or not np.isfinite(r["rhs"]):
        return out
    usable = {k: v for k, v in r["params"].items() if k in bound.params}
    try:
        vals = bound.evaluate_terms(**usable)
    except Exception:  # noqa: BLE001 - outside a domain: no term value
        return out
    return {**out, **{f"term_{t}": float(v) for t, v in vals.items()}}


def _compare(bound, samples, rhs, failed, unchecked, diverged, level, params):
    """:func:`verify.compare.compare`; it judges the preconditions from ``params`` itself where
    it can (``failed`` adds those of other seeds), else ``failed`` and ``unchecked`` say."""
    kw = dict(diverged=diverged, level=level)
    if "params" in inspect.signature(compare).parameters:
        kw["params"] = {k: v for k, v in params.items()
                        if k in bound.params or k in bound.extra_params}
        kw["preconditions_violated"] = failed
    else:  # pragma: no cover - a compare without precondition handling
        kw["preconditions_violated"] = failed + unchecked
    return compare(bound, samples, rhs, **kw)
