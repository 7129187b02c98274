"""The exact layer of :mod:`verify.falsify.power` (the PEP's worst case at the parameters the
main job judged a bound at) and the oracle's PEP points away from them: a mutant is flagged
where a PEP value in the bound's class exceeds it, its preconditions holding there.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._power_layers import PEP_SECONDS, SMALL, TOL, Flag, LayerRun

__all__ = ["exact_layer", "catalogue_pep_points", "pep_points", "scaled_points"]


def exact_layer(mutants, points) -> LayerRun:
    """The exact layer: ``points`` are ``(params, certified worst-case value, how)`` of the
    original's class; a mutant is flagged where the value exceeds it, its preconditions
    holding there."""
    out = LayerRun(evaluations=len(points))
    for m in mutants:
        out.flags[m.id] = Flag(False)
        for params, value, how in points:
            B = _value_at(m, params)
            if B is not None and value > B + TOL * max(abs(B), abs(value), 1e-12):
                out.flags[m.id] = Flag(True, how, {"worst_case": value, "bound": B,
                                                   "params": params})
                break
    return out


def _value_at(bound, params):
    names = set(bound.params) | set(bound.extra_params)
    use = {k: v for k, v in params.items() if k in names}
    if set(bound.params) - set(use):
        return None
    try:
        if bound.violated_preconditions(**use) or bound.unchecked_preconditions(**use):
            return None
        v = float(bound.evaluate(**{k: use[k] for k in bound.params}))
    except Exception:  # noqa: BLE001 - outside its domain: no certificate there
        return None
    return v if math.isfinite(v) else None


def catalogue_pep_points(bound_id, observed, max_rounds=3) -> tuple:
    """``(points, solves, seconds, reason)``: the PEP brackets of a catalogue bound at the
    parameters the main job judged it at (its worst instances, then its fixed instances),
    with the local steps and rounds capped (:data:`SMALL`, ``max_rounds``: a smaller point of
    the same domain, where the SDP is small), where a model exists and accepts them
    (sigma = 0), within :data:`PEP_SECONDS`. A point counts when the
    PEP's lower bound lies in the bound's class (no relaxed assumption), else the explicit
    instance of the bound's class the model computes (``lower_in_bound_class``)."""
    import boundlab
    from verify.tightness import SUPPORTED
    from verify.tightness.brackets import round_param

    bound = boundlab.get(bound_id)
    if bound_id not in SUPPORTED:
        return [], 0, 0.0, "no PEP model (verify.tightness.SUPPORTED)"
    _, calls, searches, _, _ = observed
    cands = [s["result"].params for s in searches] + [c["kw"].get("params") or {}
                                                      for c in calls]
    rp = round_param(bound_id)
    todo = []
    for prm in cands:
        prm = {k: float(np.asarray(v)) for k, v in prm.items() if np.ndim(v) == 0
               and (k in bound.params or k in bound.extra_params)}
        prm.update({k: min(prm[k], SMALL[k]) for k in SMALL if k in prm})  # a PEP it can solve
        if rp and rp in prm:
            prm[rp] = min(prm[rp], max_rounds)
        if prm not in todo:
            todo.append(prm)
    return pep_points(bound_id, todo, max_solves=3)


def pep_points(bound_id, candidates, max_solves, seconds=PEP_SECONDS) -> tuple:
    """``(points, solves, seconds, reason)``: the PEP bracket of ``bound_id`` at each of
    ``candidates`` (parameter dicts) in turn, at most ``max_solves`` solves and ``seconds``;
    a point's value is the PEP's lower bound when it lies in the bound's class, else the
    explicit instance of the bound's class the model computes (``lower_in_bound_class``)."""
    from verify.tightness import bracket

    points, solves, t0, why = [], 0, time.perf_counter(), []
    for prm in candidates:
        if solves >= max_solves or time.perf_counter() - t0 > seconds:
            break
        try:
            rec = bracket(bound_id, prm)
            solves += 1
        except Exception as exc:  # noqa: BLE001 - the model refuses this point
            why.append(f"{type(exc).__name__}: {str(exc)[:80]}")
            continue
        lb = rec["worst_case_lower"] if rec["exact"] and rec["ok"] else None
        how = "PEP lower bound (exact class)"
        if lb is None and rec.get("lower_in_bound_class") is not None:
            lb, how = rec["lower_in_bound_class"], "explicit instance of the bound's class (PEP)"
        if lb is not None and math.isfinite(lb):
            points.append((prm, float(lb), how))
    reason = "" if points else ("no point accepted by the PEP model" + (
        f" ({why[0]})" if why else ""))
    return points, solves, time.perf_counter() - t0, reason


def scaled_points(bound, base, factors=(0.01, 100.0), rounds=(1,)) -> list:
    """Points around each of ``base`` (parameter dicts): one positive real parameter at a
    time times each of ``factors`` (sigma stays 0, a parameter fixed at 1 by the PEP model
    stays 1), and the round count at each of ``rounds`` (fewer rounds than the exact layer's:
    a larger SDP costs minutes) -- where an exponent typo shows: the worst case and the bound
    scale alike in the original, not in the mutant."""
    from verify.tightness.brackets import round_param

    rp = round_param(bound.id)
    out = []
    for prm in base:
        for k, v in prm.items():
            dom = ({**bound.params, **bound.extra_params}[k]).domain
            if k == rp:
                out += [{**prm, k: float(r)} for r in rounds if r != v]
            elif not dom.integer and v > 0 and v != 1.0 and k != "sigma":
                out += [{**prm, k: v * f} for f in factors]
    return [p for i, p in enumerate(out) if p not in out[:i]]
