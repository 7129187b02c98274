"""Pieces every check uses: evaluate a bound with measured constants and judge it.

Example
-------
>>> import boundlab
>>> from verify.checks._common import judge
>>> r = judge(boundlab.get("drift.plateau"), [0.02], dict(eta=0.2, tau=10, L=0.2, zeta=0.43),
...           check="demo", problem="toy", deterministic=True)
>>> r.verdict, r.dominant_term
('holds', 'drift_het')
"""

from __future__ import annotations

import numpy as np

import boundlab

from ..compare import CheckResult, claim_result, compare, trace_diverged

__all__ = ["judge", "claim", "slope_ci", "constants_record", "attach_tightness", "server_models",
           "simulate", "trace_diverged", "worst_rows"]


def constants_record(consts, names=None, extra: dict | None = None) -> dict:
    """``{name: {"value", "how"}}`` from a :class:`toys.constants.Constants` (+ extras).

    ``extra`` maps a name to a number or to ``(value, how)``.
    """
    out = {}
    if consts is not None:
        for name in names or ("L", "L_F", "mu", "Gamma", "zeta", "sigma2", "G2", "D"):
            v = getattr(consts, name, None)
            if v is not None:
                out[name] = {"value": float(v.value), "how": v.how}
    for name, v in (extra or {}).items():
        if isinstance(v, tuple):
            out[name] = {"value": float(v[0]), "how": v[1]}
        else:
            out[name] = {"value": float(v), "how": "setting"}
    return out


def judge(bound, lhs_samples, params: dict, *, check: str, problem: str, case: str = "",
          seeds=(), setting=None, constants=None, note: str = "", diverged=False,
          extra_violations=(), series=None, deterministic: bool = False) -> CheckResult:
    """Evaluate ``bound`` at ``params`` (extra keys ignored), then :func:`verify.compare`.

    ``compare`` evaluates the bound's preconditions from ``params`` itself;
    ``extra_violations`` adds assumption failures the preconditions cannot see (e.g. partial
    participation): they make the verdict ``not-applicable``. ``diverged``: True or a reason
    (see :func:`verify.compare.trace_diverged`). ``deterministic``: the samples come from
    identical runs (one effective sample).
    """
    usable = {k: v for k, v in params.items() if k in bound.params or k in bound.extra_params}
    terms = {}
    if bound.terms:
        try:
            terms = {k: float(v) for k, v in bound.evaluate_terms(
                **{k: v for k, v in usable.items() if k in bound.params}).items()}
        except Exception:  # noqa: BLE001 - compare reports the evaluation failure
            terms = {}
    setting = dict(setting or {})
    setting.update({k: float(v) for k, v in usable.items() if np.ndim(v) == 0})
    r = compare(bound, lhs_samples, params=usable, check=check, case=case, problem=problem,
                seeds=seeds, setting=setting, terms=terms, constants=constants,
                diverged=diverged, preconditions_violated=list(extra_violations), note=note,
                deterministic=deterministic)
    if series is not None:
        r.series = series
    return r


def claim(check: str, paper: str, problem: str, *, statement: str, statistic: float,
          threshold: float, outcome, interval=None, bound_id: str = "", case: str = "",
          note: str = "", setting=None, series=None, seeds=(), effective_samples: int = 1
          ) -> CheckResult:
    """A paper's qualitative claim (an ordering, a rate, a monotonicity) judged on measured
    runs: a claim record (statement, statistic, threshold, outcome), never a bound check.

    ``outcome``: ``"supported"`` / ``"refuted"`` / ``"inconclusive"``, or a bool (True =
    supported, False = refuted). ``paper`` is the source text (e.g. "seed 003, eq. (9)").

    >>> claim("c", "seed 004, Sec. 3", "toy", statement="gap grows with tau", statistic=2.0,
    ...       threshold=0.0, outcome=True).verdict
    'supported'
    """
    if isinstance(outcome, (bool, np.bool_)):
        outcome = "supported" if outcome else "refuted"
    return claim_result(check, paper, problem, statement=statement, statistic=statistic,
                        threshold=threshold, outcome=outcome, interval=interval,
                        bound_id=bound_id, case=case, note=note, setting=setting,
                        series=series, seeds=seeds, effective_samples=effective_samples)


def slope_ci(x, y, level: float = 0.95) -> tuple[float, float, float]:
    """Least-squares slope of ``y`` on ``x`` with its two-sided Student-t interval.

    >>> s, lo, hi = slope_ci([0, 1, 2, 3], [0.0, 1.1, 1.9, 3.0])
    >>> round(s, 2), lo < s < hi
    (0.98, True)
    """
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    fit = stats.linregress(x, y)
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 2) * fit.stderr) if x.size > 2 else 0.0
    return float(fit.slope), float(fit.slope) - half, float(fit.slope) + half


def simulate(ctx, problem, algorithm: str, **kw):
    """``toys.run`` on the backend and device the suite was asked for (``--backend``).

    >>> import toys
    >>> from verify.suite import Context
    >>> simulate(Context(), toys.quadratic(2, 2, seed=0), "fedavg", rounds=2, seed=0,
    ...          lr=0.1).backend
    'numpy'
    """
    import toys

    backend = getattr(ctx, "backend", "numpy") if ctx is not None else "numpy"
    if backend != "numpy":
        kw.setdefault("backend", backend)
        kw.setdefault("device", getattr(ctx, "device", None))
    return toys.run(problem, algorithm, **kw)


def server_models(prob, rounds: int, runs=(), algorithm: str = "fedavg", x0=None,
                  **hyper) -> np.ndarray:
    """Server models x_0..x_T of the deterministic full-batch run of ``algorithm`` (round by
    round), plus the final models of ``runs`` (traces, or the rows of a sweep's runs with the
    :func:`~verify.checks._runs.final_model` measures): the points where a-posteriori
    constants (sigma^2, G^2, zeta) are evaluated.

    The loop is over rounds, not seeds: a trace keeps only its final model, so x_1..x_T come
    from one-round runs, each started where the previous one ended.

    ``lr`` may be a callable of the global iteration index; it is shifted per round.

    >>> import toys
    >>> prob = toys.quadratic(n_clients=2, dim=2, seed=0)
    >>> server_models(prob, 3, lr=0.1, local_steps=2).shape
    (4, 2)
    """
    import toys

    x = np.asarray(getattr(prob, "x0", np.zeros(prob.dim)) if x0 is None else x0, dtype=float)
    tau = int(hyper.get("local_steps", 1))
    lr = hyper.pop("lr")
    models = [x]
    for r in range(rounds):
        step = (lambda t, r=r: lr(t + r * tau)) if callable(lr) else lr
        x = toys.run(prob, algorithm, rounds=1, seed=0, x0=x, lr=step, record="none",
                     **hyper).final_model
        models.append(x)
    return np.vstack(models + [tr.final_model for tr in runs])


# PEP solves the suite runs itself (small Gram matrices, seconds); larger ones are only read
# from the cache (``boundlab tightness ID ...`` solves and caches them; later runs show them).
PEP_MAX_LOCAL_STEPS = 10
PEP_CACHE_ONLY = {"drift.fedavg_convex": "full PEP over T rounds takes minutes",
                  "drift.plateau": "convex Lyapunov PEP takes 10 s to minutes"}


def attach_tightness(result: CheckResult, ctx, params: dict, rounds=None) -> None:
    """Add the PEP tightness bracket to ``result`` (see :mod:`verify.tightness`).

    Solves only small PEPs (at most ``PEP_MAX_LOCAL_STEPS`` local steps; DKR's zeta imposed at
    x*, the cheaper valid relaxation); ``--quick`` and the ids in ``PEP_CACHE_ONLY`` read the
    cache only. What was skipped, and why, is recorded in ``result.tightness["status"]``.
    """
    if not getattr(ctx, "tightness", True):
        return
    try:
        from ..result_keys import ResultDict
        from ..tightness import SUPPORTED, bracket
    except ImportError as exc:  # pragma: no cover - PEPit missing from a broken install
        result.tightness = {"status": f"unavailable: {exc}"}
        return
    if result.bound_id not in SUPPORTED:
        return
    steps = params.get("tau", params.get("E", 1))
    if steps > PEP_MAX_LOCAL_STEPS:
        result.tightness = {"status": f"skipped: {steps} local steps > {PEP_MAX_LOCAL_STEPS} "
                                      "(PEP too large)"}
        return
    pep_params = {k: v for k, v in params.items() if k in boundlab.get(result.bound_id).params}
    cache_only = bool(ctx.quick) or result.bound_id in PEP_CACHE_ONLY
    try:
        rec = bracket(result.bound_id, pep_params, rounds=rounds, cache_only=cache_only,
                      zeta_at="x*")
    except Exception as exc:  # noqa: BLE001 - the verdict stands without the bracket
        result.tightness = {"status": f"unavailable: {type(exc).__name__}: {exc}"[:200]}
        return
    if rec is None:
        why = PEP_CACHE_ONLY.get(result.bound_id, "--quick")
        cmd = "boundlab tightness " + result.bound_id + " " + " ".join(
            f"{k}={v:g}" for k, v in pep_params.items()) + " --zeta-at x*"
        result.tightness = {"status": f"not cached ({why}); solve with: {cmd}"}
        return
    keep = ("worst_case_upper", "worst_case_lower", "ratio_lo", "ratio_hi", "exact",
            "relaxed", "solver", "gap", "seconds", "verdict", "bracket", "inaccuracy")
    # the bracket relative to the bound (LB/B, UB/B: verify.schema's orientation); the old
    # keys ratio_low / ratio_high (B/UB, B/LB) still read, with a DeprecationWarning
    result.tightness = ResultDict({k: rec[k] for k in keep if k in rec})
    order = rec.get("ordering") or {}
    if "holds" in order:
        result.tightness["ordering_ok"] = bool(order["holds"])


def worst_rows(ctx, check: str, items) -> list[CheckResult]:
    """Worst-instance search (:func:`verify.worst_instance`) for each ``(bound_id, setting,
    full_budget, quick_budget)`` of ``items``: one bound-check row each, judged at the worst
    instance found (``VIOLATED`` when the search drove LHS / RHS above 1). The search record
    (ratio, evaluations, trace, the instance) is in ``result.worst``; the report saves the
    instance of a violated bound for replay.
    """
    import time

    from ..worst import worst_instance

    out = []
    for bid, setting, full, quick in items:
        bound = boundlab.get(bid)
        t0 = time.perf_counter()
        w = worst_instance(bound, "quadratic", budget=ctx.budget(full, quick), seed=0,
                           setting=setting)
        r = compare(bound, [w.lhs], params=w.params, check=check, case=bid,
                    problem=f"worst instance of {w.family}", seeds=[0], deterministic=True,
                    setting=dict(w.extra.get("setting", {})),
                    note=f"{w.evaluations} instances searched (differential evolution + "
                         f"Nelder-Mead, seed 0, {time.perf_counter() - t0:.1f} s); "
                         f"max LHS/RHS found {w.ratio:.4g}; {w.how}")
        r.worst = {"ratio": w.ratio, "evaluations": w.evaluations, "budget": w.budget,
                   "seconds": w.seconds, "family": w.family, "record": w.to_dict()}
        r.series = {"kind": "search", "trace": w.trace,
                    "title": f"worst-instance search: {bid} ({w.evaluations} instances)"}
        out.append(r)
    return out
