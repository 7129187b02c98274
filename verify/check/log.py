"""A recorded log is judged only when it is whole and agrees with the parameters given.

:func:`verify.check_log` reads the log with :func:`toys.engine.trace_io.read_log` (bounded,
strict parsing; integer rounds 0..R per seed, integer seeds) and then, here:

- every seed has the same rounds 0..R with R >= 1 (no seed judged on part of the run);
- the measured columns (the bound's ``lhs`` column, or the columns :data:`verify.check.LHS`
  derives it from, and the columns of measured parameters) hold numbers; a run whose ``gap``
  or ``dist2`` turns non-finite after a finite start is judged ``diverged``; in any other run
  the state columns (``loss``, ``gap``, ``dist2``, ``grad_norm2``) are finite on every row and
  the event columns on rows 0..R-1 (the last row may be empty: no event); ``kappa_*`` may be
  empty (a round without participants), never infinite;
- ``params`` name only parameters of the bound (an unknown name is refused, naming the valid
  ones: it would be ignored silently) and do not contradict the log: ``T`` is the last round R
  (R x E for the skew family, whose T counts local steps), ``D`` / ``D0`` >= ||x_0 - x*|| =
  sqrt(dist2_0), ``Delta`` >= gap_0 (contraction family), ``rho_bar`` <= min rho_min,
  ``rho_tilde`` >= max rho_star, ``pi`` <= min kappa_min (relative tolerance :data:`RTOL`); a
  ``T`` not given is R.

Errors are boundlab errors naming the file, the column or parameter and the value.
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

__all__ = ["check_param_names", "prepare", "rename", "RTOL"]

#: relative tolerance of the comparisons of ``params`` with the log
RTOL = 1e-9
_STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
_MAY_BE_EMPTY = ("kappa_min", "kappa_max")
_AUX = ("gap", "dist2", "rho_min", "rho_star", "kappa_min")


def prepare(bound, q, frame, params, hyper_table) -> tuple[list, dict]:
    """(one frame per seed sorted by round with float columns, parameters derived from the
    log) of a frame from ``read_log``, or a boundlab error naming the log."""
    from toys.engine import _log_schema as schema

    where = frame.attrs.get("source", "log")
    _check_params_type(params)
    check_param_names(bound, params)
    used = [bound.lhs] if bound.lhs in frame.columns else [c for c in q.columns
                                                           if c in frame.columns]
    for c in dict.fromkeys(used + [c for c in _AUX if c in frame.columns]):
        frame[c] = schema.numeric(frame, c, where)
    if "seed" not in frame.columns:
        frame["seed"] = 0
    logs = [g.sort_values("round").reset_index(drop=True)
            for _, g in frame.groupby("seed", sort=True)]
    last = {int(g["seed"].iloc[0]): int(g["round"].iloc[-1]) for g in logs}
    R = next(iter(last.values()))
    if any(v != R for v in last.values()) or R < 1:
        raise DomainError(f"{where}: column 'round'", _rounds_text(last),
                          "the same rounds 0..R, R >= 1, for every seed (a whole run each)")
    for g in logs:
        if not _diverged(g):
            for c in used:
                _check_finite(g, c, c == bound.lhs, where)
        for c in ("rho_min", "rho_star", "kappa_min"):
            if c in g.columns and np.isinf(g[c].to_numpy()).any():
                _refuse_value(g, c, np.isinf(g[c].to_numpy()), where, "finite numbers or empty")
    return logs, _agree(bound, logs, dict(params or {}), hyper_table, R, where)


def _check_params_type(params):
    if params is not None and not isinstance(params, dict):
        raise DomainError("params", type(params).__name__, "a dict of parameter values")
    for k in params or {}:
        if not isinstance(k, str):
            raise DomainError("params", repr(k), "parameter names (strings)")


def check_param_names(bound, params) -> None:
    """Refuse a name of ``params`` that is not a parameter of ``bound`` (nor an optional one of
    its preconditions): it would be ignored silently. The error names it and the valid names.

    >>> import boundlab
    >>> check_param_names(boundlab.get("drift.plateau"), {"eta": 0.1, "lr": 0.1})
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown parameter of drift.plateau 'lr'; valid: L, eta, \
tau, zeta
    """
    valid = sorted({*bound.params, *bound.extra_params})
    for name in params or {}:
        if name not in valid:
            raise UnknownNameError(f"parameter of {bound.id}", name, valid)


def _rounds_text(last: dict) -> str:
    return ", ".join(f"seed {s}: 0..{r}" for s, r in list(last.items())[:4])


def _diverged(g) -> bool:
    for c in ("gap", "dist2"):
        if c in g.columns:
            v = g[c].to_numpy()
            if np.isfinite(v[0]) and not np.all(np.isfinite(v)):
                return True
    return False


def _check_finite(g, c, is_lhs, where):
    v = g[c].to_numpy()
    if c in _MAY_BE_EMPTY:
        bad = np.isinf(v)
    elif c in _STATE and not is_lhs:
        bad = ~np.isfinite(v)
    else:  # an event: rows 0..R-1 measured, the last row finite or empty
        bad = ~np.isfinite(v)
        bad[-1] = np.isinf(v[-1])
    if bad.any():
        _refuse_value(g, c, bad, where, "finite measured values (an event column may be empty "
                      "on the last row only)")


def _refuse_value(g, c, bad, where, allowed):
    i = int(np.nonzero(bad)[0][0])
    raise DomainError(f"{where}: column {c!r}", float(g[c].iloc[i]),
                      allowed, f"round {int(g['round'].iloc[i])}, seed {int(g['seed'].iloc[0])}")


def _real(v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _agree(bound, logs, params, table, R, where) -> dict:
    """The ``T`` the log implies, after refusing ``params`` that contradict the log."""
    names = set(bound.params) | set(bound.extra_params)
    derived = {}
    src = table.get("T")
    if "T" in names and src in ("rounds", "rounds*local_steps"):
        steps = [params[s] for s, v in table.items() if v == "local_steps" and s in params
                 and s in names and _real(params[s]) is not None]
        want = R if src == "rounds" else (R * float(steps[0]) if steps else None)
        given = _real(params.get("T"))
        if want is not None and "T" not in params:
            derived["T"] = int(want)
        if given is not None and ((want is not None and given != want) or
                                  (want is None and given % R != 0)):
            what = (f"{R}, the last round of the log" if src == "rounds" else
                    f"{R} x E = {want:g} (rounds x local steps)" if want is not None else
                    f"a multiple of the log's {R} rounds")
            raise DomainError("T", params["T"], what, f"{where}: column 'round'")
    checks = [("D", "dist2", lambda v: math.sqrt(max(v[0], 0.0)), ">="),
              ("D0", "dist2", lambda v: math.sqrt(max(v[0], 0.0)), ">="),
              ("rho_bar", "rho_min", lambda v: _agg(np.min, v[:-1]), "<="),
              ("rho_tilde", "rho_star", lambda v: _agg(np.max, v[:-1]), ">="),
              ("pi", "kappa_min", lambda v: _agg(np.min, v[:-1]), "<=")]
    if bound.family == "contraction":
        checks.append(("Delta", "gap", lambda v: float(v[0]), ">="))
    for sym, col, fn, rel in checks:
        given = _real(params.get(sym))
        if sym not in names or given is None:
            continue
        for g in logs:
            if col in g.columns:
                _compare(sym, params[sym], given, fn(g[col].to_numpy()), rel, col, g, where)
    return derived


def _agg(fn, v):
    v = v[np.isfinite(v)]
    return float(fn(v)) if v.size else math.nan


def _compare(sym, raw, given, measured, rel, col, g, where):
    if not math.isfinite(measured):
        return
    tol = RTOL * max(abs(measured), abs(given))
    ok = given >= measured - tol if rel == ">=" else given <= measured + tol
    if not ok:
        raise DomainError(sym, raw, f"{rel} {measured!r}, what the log measures",
                          f"{where}: column {col!r}, seed {int(g['seed'].iloc[0])}")


def rename(frame, columns):
    """``frame`` with the log's column names mapped to this module's (``columns``)."""
    if not columns:
        return frame
    if not isinstance(columns, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in columns.items()):
        raise DomainError("columns", columns, "a dict of column names {name here: name in "
                          "the log}")
    missing = [v for v in columns.values() if v not in frame.columns]
    if missing:
        raise UnknownNameError("column of the log", missing[0], list(frame.columns))
    clash = [k for k, v in columns.items() if k != v and k in frame.columns]
    if clash or len(set(columns.values())) != len(columns):
        raise DomainError("columns", columns, "a mapping onto names the log does not already "
                          f"use, each log column once (clash: {clash[:1] or 'a repeated name'})")
    source = frame.attrs.get("source", "log")
    frame = frame.rename(columns={v: k for k, v in columns.items()})
    frame.attrs["source"] = source
    return frame
