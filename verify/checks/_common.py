"""Pieces every check uses: evaluate a bound with measured constants and judge it.

Example
-------
>>> import boundlab
>>> from verify.checks._common import judge
>>> r = judge(boundlab.get("drift.plateau"), [0.02], dict(eta=0.2, tau=10, L=0.2, zeta=0.43),
...           check="demo", problem="toy")
>>> r.verdict, r.dominant_term
('holds', 'drift_het')
"""

from __future__ import annotations

import numpy as np

import boundlab

from ..compare import CheckResult, compare

__all__ = ["judge", "claim", "constants_record", "attach_tightness", "server_models", "simulate"]


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


def judge(bound, lhs_samples, params: dict, *, check: str, problem: str, seeds=(),
          setting=None, constants=None, note: str = "", diverged: bool = False,
          extra_violations=(), series=None) -> CheckResult:
    """Evaluate ``bound`` at ``params`` (extra keys ignored), then :func:`verify.compare`.

    ``extra_violations`` adds assumption failures the bound's own preconditions cannot see
    (e.g. partial participation); they make the verdict ``not-applicable``.
    """
    usable = {k: v for k, v in params.items() if k in bound.params or k in bound.extra_params}
    rhs = bound.evaluate(**usable)
    terms = {k: float(v) for k, v in bound.evaluate_terms(**usable).items()} if bound.terms else {}
    violated = bound.violated_preconditions(**usable) + list(extra_violations)
    setting = dict(setting or {})
    setting.update({k: float(v) for k, v in usable.items() if np.ndim(v) == 0})
    r = compare(bound, lhs_samples, float(rhs), check=check, problem=problem, seeds=seeds,
                setting=setting, terms=terms, constants=constants, diverged=diverged,
                preconditions_violated=violated, note=note)
    if series is not None:
        r.series = series
    return r


def claim(check: str, bound_id: str, problem: str, ok: bool, *, measured=float("nan"),
          reference=float("nan"), note: str = "", setting=None, series=None,
          seeds=()) -> CheckResult:
    """A paper's qualitative claim (an ordering, a monotonicity) judged on measured runs.

    ``measured`` / ``reference`` are the two numbers compared (shown as measured / bound).

    >>> claim("c", "drift.plateau", "toy", True, measured=1.0, reference=2.0).verdict
    'holds'
    """
    paper = boundlab.get(bound_id).source if bound_id else ""
    ratio = reference / measured if measured not in (0.0,) and np.isfinite(measured) else np.nan
    return CheckResult(check=check, bound_id=bound_id, paper=paper, problem=problem,
                       verdict="holds" if ok else "VIOLATED", measured=float(measured),
                       measured_lo=float(measured), measured_hi=float(measured),
                       bound=float(reference), ratio=float(ratio), n_seeds=len(seeds) or 1,
                       seeds=list(seeds), setting=dict(setting or {}),
                       note=("claim: " + note).strip(), series=series or {})


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
    round), plus the final models of ``runs``: the points where a-posteriori constants
    (sigma^2, G^2, zeta) are evaluated.

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
    keep = ("worst_case_upper", "worst_case_lower", "ratio_low", "ratio_high", "exact",
            "relaxed", "solver", "gap", "seconds", "verdict")
    result.tightness = {k: rec[k] for k in keep if k in rec}
    order = rec.get("ordering") or {}
    if "holds" in order:
        result.tightness["ordering_ok"] = bool(order["holds"])
