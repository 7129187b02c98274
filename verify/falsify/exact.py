"""The exact worst case (PEP) part of :func:`verify.falsify`: the bracket relative to the
bound, and a PEP lower bound above the bound turned into a concrete instance (the interpolation
of :mod:`verify.falsify.interpolate`) that the real engine replays.
"""

from __future__ import annotations

import math
import warnings

from . import pep as _pep
from .certify import TOL  # a replayed ratio above 1 + TOL is VIOLATED
from .plan import LOCAL_NAMES as _LOCAL_NAMES

__all__ = ["exact_worst_case", "TOL", "PEP_T_MAX"]

#: the largest number of gradient steps (rounds x local steps) a PEP is solved for
PEP_T_MAX = 16


def exact_worst_case(plan, res, wanted, instance_type) -> None:
    """The PEP bracket of ``plan``'s bound into ``res.exact`` (divided by the bound), at the
    plan's horizons and local steps with the largest step its preconditions allow, and at the
    search's worst instance; a lower bound above the bound becomes an interpolated instance
    (``instance_type``, :class:`verify.falsify.Instance`) replayed on the real engine."""
    key = (plan.lhs, plan.algorithm)
    if not wanted:
        res.exact_reason = "not requested (exact=False)"
        return
    if key not in _pep.MODELS:
        res.exact_reason = f"no PEP model for lhs={plan.lhs}, algorithm={plan.algorithm}"
        return
    if getattr(plan, "participation", None) is not None:
        res.exact_reason = "the PEP models full participation, not the searched patterns"
        return
    names = set(plan.bound.params) | set(plan.bound.extra_params)
    modelled = {"L", "mu", "D", "D0", "R", "T", "eta", "lr", "gamma", *_LOCAL_NAMES}
    if names - modelled - set(plan.fixed):
        res.exact_reason = "the bound depends on measured quantities the PEP does not model"
        return
    best = None
    points = [(plan, T, tau, plan.eta_range(T, tau)[1]) for T in plan.T_grid
              for tau in plan.tau_grid if T * tau <= PEP_T_MAX]
    inst = res.instance
    if inst is not None and inst.run["rounds"] * inst.run.get("local_steps", 1) <= PEP_T_MAX:
        r = inst.run  # the search's worst instance, at the scale (L, D) it was found at
        points.append((inst.plan or plan, r["rounds"],
                       r.get("local_steps", 1), r["lr"]))
    failed = []
    for sub, T, tau, eta in points:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                w = _pep.worst_case(plan.lhs, plan.algorithm, T=T, tau=tau, eta=eta,
                                    L=sub.spec.L, mu=sub.spec.mu, D=sub.spec.D)
            except RuntimeError as exc:  # both solvers failed at this point: skip it
                failed.append(f"T={T}, eta={eta:.4g}: {exc}")
                continue
        B = float(plan.bound.evaluate(**{k: v for k, v in {**sub.scalars(T, tau),
                                                             plan.step_name: eta}.items()
                                         if k in names}))
        lo = w["lower"] / B if B > 0 else math.inf
        if best is None or lo > best[0]:
            best = (lo, w, B, T, eta, sub)
    if failed:
        res.notes.append(f"PEP not solved at {len(failed)} point(s): {failed[0]}")
    if best is None:
        res.exact_reason = "the PEP solver failed at every point"
        return
    lo, w, B, T, eta, sub = best
    upper = w["upper"] / B if B > 0 else math.inf
    no_upper = plan.function_class == "smooth-nonconvex" or w["identical_clients"]
    res.exact = {"lower": lo, "upper": None if no_upper else upper, "T": T,
                 "local_steps": w["local_steps"], "eta": eta, "bound": B,
                 "solver": w["solver"], "class": plan.function_class,
                 "model": "identical clients (a lower bound on the class's worst case)"
                 if w["identical_clients"] else "the class"}
    if lo > 1 + TOL:
        _adopt_pep(sub, res, w, T, eta, lo, instance_type)


def _adopt_pep(plan, res, w, T, eta, lo, instance_type) -> None:
    data = {k: w[k] for k in ("points", "grads", "values", "L", "mu")}
    inst = instance_type(plan.bound.id, "pep-interpolation", data,
                    {"algorithm": plan.algorithm, "rounds": T,
                     "local_steps": w["local_steps"], "lr": eta},
                    math.nan, math.nan, math.nan, plan)
    inst.ratio, inst.lhs, inst.rhs = inst.measure()  # GD by toys.run on the interpolant
    res.exact["interpolated_ratio"] = inst.ratio
    if inst.ratio <= 1 + TOL:
        res.notes.append(f"the PEP says violated (lower/bound = {lo:.6g}) but the interpolated "
                         f"instance measured {inst.ratio:.6g}")
    if res.instance is None or inst.ratio > res.instance.ratio:
        res.instance = inst
