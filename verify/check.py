"""A generic check of any bound (catalogue or user) on a run or on a recorded log.

:func:`check` runs an algorithm on a problem over seeds, measures the bound's left-hand side
(``bound.lhs``) from the run, evaluates the right-hand side with the problem's constants, the
run's hyper-parameters and measured quantities, checks every precondition and judges with
:func:`verify.compare.compare` (the main job's rules). :func:`check_log` does the same for a
per-round log of any simulator (``toys.engine.trace_io`` writes one from a Trace).

Left-hand sides (``bound.lhs``) that a run measures
--------------------------------------------------
Per run (one row per seed; T = rounds):

* ``avg_shadow_gap`` -- (1/T) sum_{r<T} shadow_gap_r, with shadow_gap_r = (1/tau) sum_{k=1..tau}
  F(xbar^(r,k)) - F* (DKR's shadow sequence; ``Trace.avg_shadow_gap``);
* ``final_gap`` -- gap_T = F(x_T) - F* of the final server model;
* ``max_client_drift`` -- max over rounds of drift_max_r = max_{i,k} ||x_i^(r,k) - xbar^(r,k)||^2;
* ``avg_grad_norm2`` -- (1/T) sum_{t<T} ||grad F(x_t)||^2 (the server models);
* ``Pi`` -- max over rounds of kappa_max_r = max over participants of alpha_i / p_i.

Per round (one row per seed and round; the round enters the right side as below):

* ``gap_t`` -- gap_t = F(x_t) - F*, t = 0..T (the bound's ``t`` = the round);
* ``round_avg_gap`` -- shadow_gap_r, r < T, with ``dist0`` = dist2_r, ``dist_tau`` = dist2_{r+1},
  ``drift_sum`` = drift_sum_r (DKR Lemma 2.2);
* ``dist_next`` -- dist2_{r+1} = ||x_{r+1} - x*||^2 with ``dist_t`` = dist2_r (BC Lemmas A.3/B.3);
* ``grad_norm_sq`` -- grad_norm2_r with ``f_w`` = loss_r, ``f_star`` = loss_r - gap_r;
* ``client_discrepancy`` -- disc_max_r = max_k sum_i alpha_i ||xbar^(r,k) - x_i^(r,k)||^2.

Not measurable from a per-round run (:data:`NOT_MEASURABLE` says why; :func:`check` raises an
error listing the measurable ones): ``plateau_gap``, ``pairwise_drift``,
``pairwise_drift_next``, ``next_sq_dist``, ``round_avg_grad_norm2``, ``avg_grad_norm2_h``,
``local_deviation``, ``local_divergence``, ``neighbour_avg_deviation``,
``perturbed_divergence``, ``local_drift``, ``one_round_descent``, ``round_weight_error``,
``avg_weight_error``, ``contraction_factor``, ``rounds_to_eps``, ``rho`` and the constants and
identities ``speed_constant``, ``error_constant``, ``e_opt``, ``cutoff``, ``lemma_kappa``,
``interval_mean``, ``interval_var``, ``interval_factorial_moment``, ``interval_second_moment``,
``interval_bias_sq``.

Right-hand side parameters
--------------------------
In increasing priority: the problem's constants (``toys.constants``: L, mu, Gamma, zeta, sigma,
G, D; D0 = D), the run's hyper-parameters through :data:`HYPER` and the bound's symbol table
(:func:`symbols`: where the papers' symbols clash), the measured ones (``rho_bar`` = min
rho_min, ``rho_tilde`` = max rho_star, ``pi`` = min kappa_min, ``Pi`` = max kappa_max,
``p_min`` = min p, ``S`` = sum p^2, a symbol mapped to ``"gap_0"`` = F(x_0) - F* (BC's
``Delta``, FedAU's ``F``), and the per-round ones above), then ``params``.
Only scalar ``lr`` maps (a schedule needs ``params``). The symbol table comes from the bound's
metadata (:func:`boundlab.registry.meta`: the paper's notation for a catalogue bound), else
from its registered algorithm (:data:`ALGORITHM_SYMBOLS`), never from its id; a registered
bound with neither, whose id is in a built-in family, keeps that family's table (deprecated:
register it with ``algorithm=``).

Example
-------
>>> import boundlab, toys
>>> from verify.check import check
>>> prob = toys.make("seed004-toy")
>>> df = check("drift.fedavg_convex", prob, "fedavg", rounds=20, seeds=1, lr=0.2,
...            local_steps=10)
>>> df[["seed", "measured", "verdict"]].shape, df["verdict"].iloc[0]
((1, 3), 'holds')
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

import boundlab
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from .compare import compare

__all__ = ["check", "check_log", "LHS", "NOT_MEASURABLE", "HYPER", "ALGORITHM_SYMBOLS",
           "rhs_params", "symbols"]


@dataclass(frozen=True)
class Quantity:
    """A left-hand side measured from a per-round log: its columns and how."""

    doc: str
    columns: tuple
    per_round: bool
    fn: object  # (log columns dict of arrays over rounds 0..R) -> array (per round) or float
    measured: object = None  # per-round parameters, same signature -> {name: array}


def _last(a):
    return a[:-1]  # round events: rows r = 0..R-1 (the last row is the final state only)


LHS = {
    "avg_shadow_gap": Quantity("(1/T) sum_{r<T} shadow_gap_r", ("shadow_gap",), False,
                               lambda c: float(np.mean(_last(c["shadow_gap"])))),
    "final_gap": Quantity("gap_T = F(x_T) - F*", ("gap",), False, lambda c: float(c["gap"][-1])),
    "max_client_drift": Quantity("max_r drift_max_r", ("drift_max",), False,
                                 lambda c: float(np.max(_last(c["drift_max"])))),
    "avg_grad_norm2": Quantity("(1/T) sum_{t<T} ||grad F(x_t)||^2", ("grad_norm2",), False,
                               lambda c: float(np.mean(_last(c["grad_norm2"])))),
    "Pi": Quantity("max_r kappa_max_r (alpha_i / p_i over participants)", ("kappa_max",), False,
                   lambda c: float(np.max(_last(c["kappa_max"])))),
    "gap_t": Quantity("gap_t, t = 0..T", ("gap",), True, lambda c: c["gap"],
                      lambda c: {"t": c["round"]}),
    "round_avg_gap": Quantity("shadow_gap_r, r < T", ("shadow_gap", "dist2", "drift_sum"), True,
                              lambda c: _last(c["shadow_gap"]),
                              lambda c: {"dist0": c["dist2"][:-1], "dist_tau": c["dist2"][1:],
                                         "drift_sum": _last(c["drift_sum"])}),
    "dist_next": Quantity("dist2_{r+1}, r < T", ("dist2",), True, lambda c: c["dist2"][1:],
                          lambda c: {"dist_t": c["dist2"][:-1]}),
    "grad_norm_sq": Quantity("grad_norm2_r, r = 0..T", ("grad_norm2", "loss", "gap"), True,
                             lambda c: c["grad_norm2"],
                             lambda c: {"f_w": c["loss"], "f_star": c["loss"] - c["gap"]}),
    "client_discrepancy": Quantity("disc_max_r, r < T", ("disc_max",), True,
                                   lambda c: _last(c["disc_max"])),
}

NOT_MEASURABLE = {
    "plateau_gap": "a limit T -> inf; check drift.plateau_finite (avg_shadow_gap) instead",
    "pairwise_drift": "pairwise client distances are not recorded",
    "pairwise_drift_next": "pairwise client distances are not recorded",
    "next_sq_dist": "a per-iteration quantity inside rounds (see the skew checks)",
    "round_avg_grad_norm2": "gradients at the local iterates are not recorded",
    "avg_grad_norm2_h": "the gradient of FedAU's reweighted objective h is not recorded",
    "local_deviation": "distances to the round's start model are not recorded",
    "local_divergence": "local divergences are not recorded",
    "neighbour_avg_deviation": "the beta algorithm's neighbour averages are not recorded",
    "perturbed_divergence": "the beta algorithm's perturbed points are not recorded",
    "local_drift": "FedAU's local drift is not recorded",
    "one_round_descent": "an expected one-round descent (conditional expectation)",
    "round_weight_error": "needs the clients' participation probabilities",
    "avg_weight_error": "needs the clients' participation probabilities",
    "contraction_factor": "a factor of the bound, not a measured quantity",
    "rounds_to_eps": "an iteration complexity, not a quantity of one run",
    "rho": "the skew at every iterate is recorded only with record='step'",
}
for _name in ("speed_constant", "error_constant", "e_opt", "cutoff", "lemma_kappa",
              "interval_mean", "interval_var", "interval_factorial_moment",
              "interval_second_moment", "interval_bias_sq"):
    NOT_MEASURABLE[_name] = "a constant or an exact identity of the theory, not a run quantity"

#: bound symbol <- run setting, per family (``"default"`` for any other family)
HYPER = {
    "default": {"eta": "lr", "tau": "local_steps", "E": "local_steps", "I": "local_steps",
                "T": "rounds", "M": "n_clients", "N": "n_clients", "alpha": "prox",
                "beta": "beta", "K": "K"},
    "skew": {"T": "rounds*local_steps"},  # BM's T counts SGD iterations
    "contraction": {"gamma": "lr", "eta": None},  # BC's local step is gamma
    "weight_error": {"gamma": "lr", "eta": "server_lr"},  # FedAU: gamma local, eta global
}
_DEFAULTS = {"local_steps": 1, "server_lr": 1.0, "prox": 0.0}
_BC = {"gamma": "lr", "Delta": "gap_0"}  # BC (seed 003): the local step is gamma
_FEDAU = {"gamma": "lr", "eta": "server_lr", "F": "gap_0"}  # FedAU: gamma local, eta global
#: symbol table of a registered bound that declares its algorithm but no symbols
ALGORITHM_SYMBOLS = {"fedprox": _BC, "fedprox-bc": _BC, "beta": _BC, "fedau": _FEDAU,
                     "fedau-known": _FEDAU}
_LEGACY = {"contraction": {**HYPER["contraction"], "Delta": "gap_0"},
           "weight_error": {**HYPER["weight_error"], "F": "gap_0"}, "skew": HYPER["skew"]}


def symbols(bound) -> dict:
    """Bound symbol <- run setting, constant or ``"gap_0"`` (see the module docstring).

    >>> import boundlab
    >>> symbols(boundlab.get("contraction.fedprox_sc"))["gamma"]
    'lr'
    >>> symbols(boundlab.get("drift.plateau"))["eta"]
    'lr'
    """
    table = dict(HYPER["default"])
    try:
        meta = boundlab.registry.meta(bound.id)
    except UnknownNameError:  # a Bound object that is not registered
        meta = {}
    if meta.get("symbols"):
        table.update(meta["symbols"])
    elif meta.get("algorithm") in ALGORITHM_SYMBOLS:
        table.update(ALGORITHM_SYMBOLS[meta["algorithm"]])
    elif bound.family in _LEGACY and boundlab.registry.is_registered(bound.id):
        table.update(_LEGACY[bound.family])
    return table


def rhs_params(bound, setting: dict, consts: dict | None = None, log=None) -> dict:
    """Scalar right-hand-side parameters of ``bound`` from a run ``setting`` (``lr``,
    ``local_steps``, ``rounds``, ``n_clients``, ``prox``, ...), constants and a per-round log.

    >>> import boundlab
    >>> sorted(rhs_params(boundlab.get("drift.plateau"), {"lr": 0.2, "local_steps": 10},
    ...                   {"L": 0.19, "zeta": 0.4}).items())
    [('L', 0.19), ('eta', 0.2), ('tau', 10), ('zeta', 0.4)]
    """
    bound = _bound(bound)
    names = {**bound.params, **bound.extra_params}
    table = symbols(bound)
    s = {**_DEFAULTS, **setting}
    out = dict(consts or {})
    if "D" in out:
        out.setdefault("D0", out["D"])
    for sym, src in table.items():
        if src is None or src == "gap_0":
            continue
        if src == "rounds*local_steps":
            v = s["rounds"] * s["local_steps"] if "rounds" in s else None
        else:
            v = s.get(src, (consts or {}).get(src))
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            out[sym] = v
    if log is not None:
        out.update(_measured_scalars(table, log))
    if "p" in s and s["p"] is not None:
        p = np.asarray(s["p"], dtype=float)
        out.update(p_min=float(p.min()), S=float(np.sum(p**2)))
    return {k: v for k, v in out.items() if k in names}


def _measured_scalars(table, c) -> dict:
    out = {}
    for name, col, agg in (("rho_bar", "rho_min", np.min), ("rho_tilde", "rho_star", np.max),
                           ("pi", "kappa_min", np.min), ("Pi", "kappa_max", np.max)):
        if col in c and np.any(np.isfinite(_last(c[col]))):
            out[name] = float(agg(_last(c[col])[np.isfinite(_last(c[col]))]))
    if "gap" in c:
        out.update({sym: float(c["gap"][0]) for sym, src in table.items() if src == "gap_0"})
    return out


# ------------------------------------------------------------------------------ public API
def check(bound, problem, algorithm, *, rounds: int, seeds=1, params=None, constants=None,
          level: float = 0.95, **hyper):
    """Run ``algorithm`` on ``problem`` for each seed and judge ``bound`` on the runs.

    Parameters
    ----------
    bound : Bound or str
        A catalogue or registered bound whose ``lhs`` is in :data:`LHS`.
    problem : FederatedProblem or str
        A problem, or a ``toys.make`` name.
    algorithm : str or toys.Algorithm
        Passed to ``toys.run`` as is.
    rounds : int
        Rounds of each run (T).
    seeds : int or sequence of int
        A count (seeds 0..n-1) or the seeds themselves.
    params : dict, optional
        Values of the bound's parameters that override everything measured or mapped.
    constants : dict or toys.Constants, optional
        Constants to use instead of ``toys.constants(problem, batch_size=...)``.
    **hyper
        ``toys.run`` keywords (``lr``, ``local_steps``, ``participation``, ...).

    Returns a :class:`verify.schema.ResultFrame`, one row per seed (and per round for
    per-round quantities), in the schema of :mod:`verify.schema`: ``bound_id``, ``lhs``,
    ``seed``, ``round`` (empty for a per-run quantity), ``measured`` (this seed's value),
    ``measured_mean`` / ``measured_lo`` / ``measured_hi`` (over the seeds), ``bound_value``,
    ``ratio`` (measured / bound_value), ``verdict`` (judged over the seeds per round),
    ``reason``, ``n_seeds``, ``term_<name>`` and ``param_<name>`` (every right-hand-side
    parameter); ``df.attrs["params"]`` holds the scalar parameters shared by every row. The
    old names (``bound``, a bare parameter name) still read, with a DeprecationWarning.
    """
    import toys

    bound = _bound(bound)
    _quantity(bound)
    prob = toys.make(problem) if isinstance(problem, str) else problem
    seed_list = list(range(seeds)) if isinstance(seeds, (int, np.integer)) else list(seeds)
    if not seed_list:
        raise DomainError("seeds", seeds, "a count >= 1 or a non-empty list of seeds")
    traces = [toys.run(prob, algorithm, rounds=rounds, seed=int(s), **hyper) for s in seed_list]
    if constants is None:
        consts = toys.constants(prob, batch_size=hyper.get("batch_size")).as_params()
    else:
        consts = constants.as_params() if hasattr(constants, "as_params") else dict(constants)
    from toys.engine.trace_io import to_log

    logs = [to_log(tr, p=prob.p) for tr in traces]
    setting = {**hyper, "rounds": rounds, "n_clients": prob.n_clients, "p": prob.p}
    name = getattr(prob, "name", type(prob).__name__)
    algo = algorithm if isinstance(algorithm, str) else getattr(algorithm, "name", "algorithm")
    return _judge(bound, logs, setting, consts, params, level, problem=name, algorithm=algo,
                  diverged=[_trace_diverged(tr) for tr in traces])


def check_log(bound, log, params=None, *, columns=None, level: float = 0.95,
              max_bytes: int | None = None):
    """Judge ``bound`` on a recorded run: a per-round log (path to CSV / Parquet / JSON, a
    DataFrame or a dict of columns) with a ``round`` column, an optional ``seed`` column, and
    either the bound's ``lhs`` column or the columns :data:`LHS` derives it from.

    ``params`` gives every right-hand-side parameter the log does not measure (constants,
    step size, rounds, ...); ``columns`` maps names used here to the log's column names,
    e.g. ``{"gap": "train_gap"}``. Preconditions are always checked. Returns the same frame as
    :func:`check`.

    The log is untrusted data and is judged only when whole (``verify._log_check``): every
    seed with rounds 0..R exactly once, integer seeds, numbers in the measured columns, finite
    unless the run diverged (then the verdict is ``diverged``), and ``params`` that do not
    contradict it (``T`` = R, ``D`` >= sqrt(dist2_0), ...); ``T`` defaults to R. A file is read
    up to ``max_bytes`` (default 256 MiB). Anything else is a boundlab error naming the file,
    the column or parameter and the value.

    >>> import boundlab
    >>> log = {"round": [0, 1, 2], "shadow_gap": [0.3, 0.1, float("nan")]}
    >>> check_log("drift.plateau_finite", log, dict(D=1.0, eta=0.1, tau=2, T=2, L=1.0,
    ...           zeta=0.5))["verdict"].tolist()
    ['holds']
    """
    from toys.engine.trace_io import read_log

    from . import _log_check

    bound = _bound(bound)
    q = _quantity(bound)
    frame = _log_check.rename(read_log(log, max_bytes=max_bytes), columns)
    _need_columns(q, frame, bound)
    table = symbols(bound)
    logs, derived = _log_check.prepare(bound, q, frame, params, table)
    return _judge(bound, logs, {}, derived, params, level, problem="log", algorithm="log",
                  check="check_log")


# ------------------------------------------------------------------------------ internals
def _bound(bound):
    return boundlab.get(bound) if isinstance(bound, str) else bound


def _quantity(bound) -> Quantity:
    if bound.lhs in LHS:
        return LHS[bound.lhs]
    why = NOT_MEASURABLE.get(bound.lhs, "not a quantity this module knows")
    raise UnknownNameError(f"measurable left-hand side ({bound.id}: {bound.lhs!r} is not: "
                           f"{why})", bound.lhs, sorted(LHS))


def _columns(q: Quantity, log, bound) -> dict:
    cols = {"round": log["round"].to_numpy(dtype=int)}
    if bound.lhs in log.columns:
        return {**cols, "_lhs": log[bound.lhs].to_numpy(dtype=float)}
    _need_columns(q, log, bound)
    for c in set(q.columns) | {"gap", "rho_min", "rho_star", "kappa_min", "kappa_max"}:
        if c in log.columns:
            cols[c] = log[c].to_numpy(dtype=float)
    empty = [c for c in q.columns if not np.any(np.isfinite(cols[c]))]
    if empty:
        raise DomainError(f"column {empty[0]!r} of the log", "no finite value",
                          f"measured values ({bound.lhs} = {q.doc}; a Trace records it with "
                          "record='round' or 'step')")
    return cols


def _need_columns(q: Quantity, log, bound) -> None:
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


def _judge(bound, logs, setting, consts, params, level, *, problem, algorithm, diverged=None,
           check="check"):
    q = _quantity(bound)
    rows = []
    shared = None
    if diverged is None:  # a log: the same rule on its gap / dist2 columns
        from types import SimpleNamespace

        diverged = [_trace_diverged(SimpleNamespace(**{c: log[c].to_numpy(dtype=float)
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


def _trace_diverged(trace) -> str:
    """Why a run (a Trace, or a log's columns) counts as diverged, '' if it does not: the
    main job's rule (:func:`verify.compare.trace_diverged`), and for a log, a gap or distance
    that turns non-finite after a finite start (what a diverged Trace writes)."""
    from . import compare as cmp

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
    from . import schema  # lazily: it imports pandas

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
