"""Tightness brackets: each published upper bound ``B`` against the exact worst case ``W``.

    measured_toy  <=  LB  <=  W  <=  UB  <=  B        bracket [LB/B, UB/B] = [ratio_lo, ratio_hi]

``UB`` is the dual value of a PEP (an upper bound on the worst case over the PEP's function
class), ``LB`` its primal value (a concrete instance of that class). How to read a bracket
depends on how the PEP's class relates to the bound's class:

* **relaxed** assumptions (listed in ``relaxed``; ``exact`` is False) -- the PEP's class is a
  superset of the bound's, e.g. DKR's dissimilarity "for all x" imposed only at ``x*`` and at
  the visited points. Then ``UB >= W``: ``UB <= B`` (``ratio_hi`` <= 1) certifies that the
  bound holds there, loose by at least ``B/UB``; ``UB > B`` does NOT show the bound false, and
  ``LB`` may lie outside the bound's class (``ratio_lo`` = LB/B is a fraction of the bound on
  the relaxed class only).
* **scope** restrictions (listed in ``scope``) -- the PEP covers a subclass of what the bound
  claims (2 clients, exact gradients ``sigma = 0``). ``LB`` is then a genuine instance: ``LB >
  B`` (``ratio_lo`` > 1 with nothing relaxed) shows the bound false; ``ratio_hi`` = UB/B is
  the fraction of the bound the subclass reaches at most.

Both sides are given relative to the bound, in the orientation of every ratio of
:mod:`verify.schema` (measured / bound: <= 1 holds), under the schema's names (:func:`bracket`).

``ordering`` records the checks ``LB <= UB`` (solver consistency, within the model's
tolerance) and ``UB <= B``; ``verdict`` says in words what follows. Where a bound's step-size
preconditions fail, ``preconditions_violated`` lists them and ``B`` need not hold.

Example
-------
>>> from verify.tightness import bracket
>>> r = bracket("drift.plateau", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0}, cache=False)
>>> r["ratio_hi"] < 0.01, r["ordering"]["ub_le_b"]
(True, True)
"""

from __future__ import annotations

import numbers

from boundlab.errors import DomainError, UnknownNameError

from ..result_keys import ResultDict, fraction
from ._common import CACHE_ONLY, NotCached
from ._solve import TIGHT

__all__ = ["NOT_MATCHED", "SUPPORTED", "MODELS", "bracket", "round_param", "model_for",
           "supported_ids"]

#: bound id -> the parameter that counts rounds (``--rounds`` overrides it)
_ROUND_PARAM = {"drift.fedavg_convex": "T", "drift.plateau_finite": "T",
                "contraction.fedprox_sc": "t", "contraction.beta_sc": "t"}

#: bound ids whose assumptions a PEP cannot match, with the reason
NOT_MATCHED = {
    "contraction.fedavg_factor": "a contraction factor 1 - mu/(3L) of the bound's first term, "
                                 "not a bound on a quantity of the method",
    "contraction.fedprox_factor": "a contraction factor, not a bound on a quantity",
    "contraction.beta_factor": "a contraction factor, not a bound on a quantity",
    "drift.client_drift": "not modelled yet (drift metric max_k ||x_i - xbar||^2)",
}


def round_param(bound_id: str) -> str | None:
    """The parameter of ``bound_id`` that counts rounds (``T`` or ``t``), if any.

    >>> round_param("drift.fedavg_convex")
    'T'
    """
    if bound_id in _ROUND_PARAM or bound_id in SUPPORTED or model_for(bound_id) is None:
        return _ROUND_PARAM.get(bound_id)
    import boundlab

    return _MODEL_ROUND_PARAM.get(boundlab.get(bound_id).lhs)  # a registered bound


def bracket(bound_id, params, rounds=None, cache_only=False, *, zeta_at="visited",
            cache=True, solver=None) -> dict | None:
    """The tightness bracket of one catalogue bound at one parameter point.

    Parameters
    ----------
    bound_id : str
        A catalogue id with a PEP model (:data:`SUPPORTED`).
    params : dict
        Every parameter of the bound (scalars). ``sigma`` must be 0 (the PEPs use exact
        gradients); ``skew.recursion`` needs ``rho_bar = rho_tilde = 1`` (alpha = p).
    rounds : int, optional
        Overrides the bound's round count (``T`` or ``t``).
    cache_only : bool
        Return ``None`` instead of solving when some PEP is not in the cache.
    zeta_at : {"visited", "x*"}
        Where DKR's dissimilarity is imposed (``visited`` is the tighter relaxation).

    Returns a :class:`verify.schema.ResultDict` with ``bound_id``, ``bound_value`` (B),
    ``worst_case_upper`` (UB), ``worst_case_lower`` (LB or None), ``ratio_lo`` (LB/B, None
    without LB), ``ratio_hi`` (UB/B, None without UB; <= 1: the bound holds on the PEP's
    class), ``exact``, ``relaxed``, ``scope``, ``solver``, ``gap``, ``seconds``, ``cached``, ``ok``,
    ``ordering``, ``verdict``, ``preconditions_violated``, ``params``, ``pep`` (the record),
    ``lower_in_bound_class`` (the value of an explicit instance satisfying the bound's own
    assumptions exactly, where one is computed; else None). The old keys ``id``, ``bound``,
    ``ratio_low`` (B/UB) and ``ratio_high`` (B/LB) still read, with a DeprecationWarning.

    >>> bracket("skew.recursion", {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "E": 1,
    ...         "G": 1.0, "sigma": 0.0, "Gamma": 0.0, "rho_bar": 1.0, "rho_tilde": 1.0},
    ...         cache=False)["ordering"]["holds"]
    True
    """
    import boundlab

    b = boundlab.get(bound_id)
    if model_for(bound_id) is None:
        raise UnknownNameError("bound id with a PEP model", bound_id, supported_ids())
    params = _scalars(dict(params))
    if rounds is not None:
        rp = round_param(bound_id)
        if rp is None:
            raise DomainError("rounds", rounds, f"not applicable: {bound_id} has no round count")
        params[rp] = rounds
    B = _bound_value(b, params)
    violated = b.violated_preconditions(**params)
    first = _attempt(bound_id, B, params, violated, cache_only, zeta_at, cache, solver, False)
    if first is None or first["bracket"] == "ok":
        return first
    # an inverted or inaccurate bracket: retry once with tighter solver settings
    second = _attempt(bound_id, B, params, violated, cache_only, zeta_at, cache, solver, True)
    if second is None:  # cache-only and the tighter solve is not cached
        first["verdict"] += "; not retried (--cache-only and no cached retry)"
        return first
    keep = ("worst_case_upper", "worst_case_lower", "status", "bracket", "ok", "inaccuracy")
    lost = any(second[k] is None and first[k] is not None
               for k in ("worst_case_upper", "worst_case_lower"))
    if lost:  # the retry lost a side of the bracket: report the first attempt, and the retry
        first["retry"] = {k: second[k] for k in keep}
        first["verdict"] += ("; retried with tighter solver settings: "
                             + (second["inaccuracy"] or second["verdict"]) + " (UB "
                             + _g(second["worst_case_upper"]) + ", LB "
                             + _g(second["worst_case_lower"]) + ")")
        return first
    second["first_attempt"] = {k: first[k] for k in keep}
    if second["bracket"] != "ok":
        second["verdict"] += ("; after a retry with tighter solver settings (first attempt: "
                              + first["inaccuracy"] + ")")
    return second


def _g(v) -> str:
    return "none" if v is None else f"{v:.6g}"


def _attempt(bound_id, B, params, violated, cache_only, zeta_at, cache, solver, tight):
    token, tok_tight = CACHE_ONLY.set(bool(cache_only)), TIGHT.set(bool(tight))
    try:
        rec, scope, notes = model_for(bound_id)(params, zeta_at=zeta_at, cache=cache,
                                                solver=solver)
    except NotCached:
        return None
    except KeyError as exc:  # a registered bound without a parameter its PEP model needs
        from boundlab.errors import MissingParameterError

        raise MissingParameterError(f"{bound_id} (its PEP model)", [exc.args[0]]) from None
    finally:
        CACHE_ONLY.reset(token)
        TIGHT.reset(tok_tight)
    out = _assemble(bound_id, B, params, rec, scope, notes, violated)
    out["tight_retry"] = bool(tight)
    return out


# ------------------------------------------------------------------------------ model plans
def _plateau(params, *, zeta_at, cache, solver):
    from .pep_convex import wc_fedavg_plateau

    rec = wc_fedavg_plateau(params["L"], params["eta"], params["tau"], params["zeta"],
                            zeta_at=zeta_at, cache=cache, solver=solver)
    return rec, ["2 clients", "exact gradients (sigma = 0)"], []


def _avg_gap(params, *, zeta_at, cache, solver):
    from .pep_convex import wc_fedavg_avg_gap

    _need_zero(params, "sigma", "0 (the PEP models exact gradients)")
    scope = ["2 clients", "exact gradients (sigma = 0)"]
    notes = []
    if "M" in params and int(params["M"]) != 2:
        notes.append(f"M = {params['M']} given; 2 clients modelled (the bound does not depend "
                     "on M at sigma = 0)")
    rec = wc_fedavg_avg_gap(params["L"], params["eta"], params["tau"], params["zeta"],
                            params["D"], params["T"], zeta_at=zeta_at, cache=cache,
                            solver=solver)
    if rec.detail.get("mode") == "lyapunov":
        notes.append("T too large for the full PEP: UB from the one-round Lyapunov PEP, LB "
                     "from the worst stationary run")
    return rec, scope, notes


def _skew(params, *, zeta_at, cache, solver):
    from .pep_gap import wc_skew_step

    _need_zero(params, "sigma", "0 (the PEP models exact gradients)")
    for name in ("rho_bar", "rho_tilde"):
        if float(params[name]) != 1.0:
            raise DomainError(name, params[name], "1 (alpha = p, FedAvg: rho = 1 identically; "
                              "other weight rules are not modelled)")
    rec = wc_skew_step(params["Delta"], params["eta"], params["mu"], params["L"],
                       int(params["E"]), params["G"], params["Gamma"], cache=cache,
                       solver=solver)
    return rec, ["2 clients, p = (1/2, 1/2)", "exact gradients (sigma = 0)"], [
        "worst case over the position s = 0..E-1 of the step inside its round"]


def _fedprox(params, *, zeta_at, cache, solver):
    from .pep_gap import wc_fedprox_gap

    _need_zero(params, "sigma", "0 (the PEP models exact gradients)")
    rec = wc_fedprox_gap(int(params["t"]), params["L"], params["mu"], params["alpha"],
                         params["Delta"], params["Gamma"], params["G"], int(params["E"]),
                         gamma=params.get("gamma"), cache=cache, solver=solver)
    return rec, ["2 clients, p = (1/2, 1/2)", "exact gradients (sigma = 0; S unused)"], \
        _chain_note(rec)


def _beta(params, *, zeta_at, cache, solver):
    from .pep_gap import wc_beta_gap

    _need_zero(params, "sigma", "0 (the PEP models exact gradients)")
    rec = wc_beta_gap(int(params["t"]), params["L"], params["mu"], params["beta"],
                      params["Delta"], params["Gamma"], params["G"], int(params["E"]),
                      gamma=params.get("gamma"), cache=cache, solver=solver)
    return rec, ["2 clients (graph weights 1/2 forced)", "exact gradients (sigma = 0; S unused)"
                 ], _chain_note(rec)


def _lemma(params, *, zeta_at, cache, solver):
    from .pep_gap import wc_local_dist_step

    _need_zero(params, "sigma", "0 (the PEP models exact gradients)")
    if "gamma_prev" in params:
        _need_zero(params, "gamma_prev", "0 (t = 0: round 0 anchors u = w_bar_0; later rounds "
                   "depend on the previous round's local models and are not modelled)")
    rec = wc_local_dist_step(params["L"], params["mu"], params["gamma"], int(params["E"]),
                             params["dist_t"], params["Gamma"], params["G"],
                             alpha=params.get("alpha", 0.0), beta=params.get("beta", 1.0),
                             cache=cache, solver=solver)
    return rec, ["2 clients, p = (1/2, 1/2)", "exact gradients (sigma = 0; S unused)"], []


def _chain_note(rec):
    if rec.status.startswith("chained"):
        return ["rounds chained (upper bound only: no instance, LB = None)"]
    return []


SUPPORTED = {
    "drift.plateau": _plateau,
    "drift.fedavg_convex": _avg_gap,
    "drift.plateau_finite": _avg_gap,
    "skew.recursion": _skew,
    "contraction.fedprox_sc": _fedprox,
    "contraction.beta_sc": _beta,
    "contraction.lemma_a3": _lemma,
    "contraction.lemma_b3": _lemma,
}

#: PEP models of registered bounds (``boundlab.register(b, algorithm=..., function_class=...)``):
#: (lhs, algorithm, function class) -> model plan; the bound must have the model's parameters
MODELS = {
    ("plateau_gap", "fedavg", "smooth-convex"): _plateau,
    ("avg_shadow_gap", "fedavg", "smooth-convex"): _avg_gap,
    ("next_sq_dist", "fedavg", "smooth-strongly-convex"): _skew,
    ("gap_t", "fedprox", "smooth-strongly-convex"): _fedprox,
    ("gap_t", "beta", "smooth-strongly-convex"): _beta,
    ("dist_next", "fedprox", "smooth-strongly-convex"): _lemma,
    ("dist_next", "beta", "smooth-strongly-convex"): _lemma,
}
_MODEL_ROUND_PARAM = {"avg_shadow_gap": "T", "gap_t": "t"}


def model_for(bound_id: str):
    """The PEP model plan of ``bound_id``: a catalogue id of :data:`SUPPORTED`, or a
    registered bound whose lhs, algorithm and function class match :data:`MODELS` (else None).

    >>> model_for("drift.plateau").__name__, model_for("drift.client_drift")
    ('_plateau', None)
    """
    if bound_id in SUPPORTED:
        return SUPPORTED[bound_id]
    import boundlab

    meta = boundlab.registry.registration(bound_id)
    if not meta:
        return None
    key = (boundlab.get(bound_id).lhs, meta.get("algorithm"), meta.get("function_class"))
    return MODELS.get(key)


def supported_ids() -> list[str]:
    """Catalogue ids with a PEP model, then the registered bounds that match one.

    >>> "drift.plateau" in supported_ids()
    True
    """
    import boundlab

    return sorted(SUPPORTED) + [i for i in boundlab.registry.registered_ids()
                                if model_for(i) is not None]


# ---------------------------------------------------------------------------------- helpers
def _scalars(params):
    out = {}
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            try:
                v = float(v)
            except (TypeError, ValueError):
                raise DomainError(k, v, "a real number") from None
        out[k] = int(v) if float(v).is_integer() and k in ("tau", "T", "t", "E", "M") else v
    return out


def _need_zero(params, name, domain):
    if name in params and float(params[name]) != 0.0:
        raise DomainError(name, params[name], domain)


def _bound_value(b, params) -> float:
    """``B`` at ``params``; sigma = 0 is taken as the limit where a domain excludes it."""
    try:
        return float(b.evaluate(**params))
    except DomainError as exc:
        if exc.name == "sigma" and float(params.get("sigma", 1.0)) == 0.0:
            subs = {p.symbol: params[n] for n, p in b.params.items()}
            b.evaluate(**{**params, "sigma": 1.0})  # validates every other parameter
            return float(b.expr.subs(subs))
        raise


#: relative excess of LB over UB forgiven as float rounding
INVERSION_RTOL = 1e-12


def _inaccuracy(rec, ub, lb, lb_le_ub) -> str:
    """Why a bracket cannot be trusted ('' when it can): LB > UB, or a solve that missed its
    tolerances / reported an inaccurate status.

    >>> from verify.tightness._solve import PEPRecord
    >>> _inaccuracy(PEPRecord("m", value=1.0, lower=1.1), 1.0, 1.1, False)
    'inverted bracket: LB = 1.1 > UB = 1 (relative excess 0.1)'
    """
    why = []
    if lb_le_ub is False:
        why.append(f"inverted bracket: LB = {lb:.6g} > UB = {ub:.6g} (relative excess "
                   f"{(lb - ub) / max(abs(ub), 1e-300):.2g})")
    if not rec.ok:
        why.append(f"solver tolerances not met (status {rec.status})")
    return "; ".join(why)


def _assemble(bound_id, B, params, rec, scope, notes, violated):
    ub, lb = rec.value, rec.lower
    scale = max(abs(ub or 0.0), abs(lb or 0.0), 1e-300)
    # LB > UB is a contradiction whatever the solver's tolerance: the bracket is then
    # ``inaccurate`` (never ok); only float rounding (1e-12 relative) is forgiven
    lb_le_ub = None if (ub is None or lb is None) else bool(lb <= ub + INVERSION_RTOL * scale)
    inaccurate = _inaccuracy(rec, ub, lb, lb_le_ub)
    ub_le_b = None if ub is None else bool(ub <= B * (1 + 1e-12))
    lb_le_b = None if lb is None else bool(lb <= B * (1 + 1e-12))
    exact = not rec.relaxed
    holds = None if ub_le_b is None else bool(ub_le_b and lb_le_ub is not False)
    if ub is None:
        verdict = f"no worst case: {rec.status}"
    elif inaccurate:
        verdict = f"inaccurate: {inaccurate}"
    elif ub_le_b:
        verdict = (f"bound holds on the PEP class: UB/B = {ub / B:.4g}, loose by at least a "
                   f"factor {B / ub:.4g}") if ub > 0 else "bound holds; worst case is 0"
    elif lb_le_b is False and exact:
        verdict = "VIOLATED: a worst-case instance (LB) exceeds B"
    elif lb_le_b is False:
        verdict = ("LB > B on the relaxed class: not a proof that the bound is false "
                   "(the instance may violate the bound's assumptions)")
    else:
        verdict = "inconclusive: UB > B (relaxed class or chained rounds)"
    if violated:
        verdict += f"; preconditions violated ({'; '.join(violated)}): B need not hold"
    return ResultDict({
        "bound_id": bound_id, "bound_value": B, "worst_case_upper": ub, "worst_case_lower": lb,
        "ratio_lo": fraction(lb, B), "ratio_hi": fraction(ub, B), "exact": exact,
        "relaxed": list(rec.relaxed), "scope": list(scope), "notes": list(notes),
        "solver": rec.solver, "gap": rec.gap, "seconds": rec.seconds, "cached": rec.cached,
        "ok": bool(rec.ok and not inaccurate), "status": rec.status,
        "bracket": "inaccurate" if inaccurate else "ok", "inaccuracy": inaccurate,
        "ordering": {"lb_le_ub": lb_le_ub, "ub_le_b": ub_le_b, "lb_le_b": lb_le_b,
                     "holds": holds},
        "lower_in_bound_class": rec.detail.get("lower_quadratic"),
        "verdict": verdict, "preconditions_violated": list(violated), "params": dict(params),
        "pep": rec.to_dict(),
    })
