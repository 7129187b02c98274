"""Checks generated from each catalogue bound's metadata: no check is written per family.

For every catalogue id, :func:`specs` makes one check named ``generic_<id, dots as
underscores>`` that judges it from what the bound declares (:func:`boundlab.registry.meta`:
``lhs``, ``algorithm``, ``function_class``, the run of its paper), never from its id:

* **fixed instance** -- :func:`verify.check` on the bound's registered run (problem,
  algorithm, rounds, seeds, hyper-parameters; the beta algorithm runs on the objective weighted
  by its own graph weights, as the theorems of seed 003 assume). A per-round quantity is
  reported at its worst round;
* **search** -- :func:`verify.falsify` at a small budget (``Context.falsify_budget``, raised by
  ``boundlab verify --budget N``): the worst ratio measured / bound it found, the instance
  (saved and replayable when it violates the bound) and the PEP bracket where a model exists.

A left-hand side that no run measures gives one ``not-applicable`` row with the reason
(:data:`verify.check.NOT_MEASURABLE`), unless a hand-written check already judges the id.
Hand-written checks (:mod:`verify.checks.drift`, ...) stay for what is special (claims, rates,
the papers' protocols); a generic row is not added for what they already judge: a hand check
registered for an id judges it on a fixed run, and one named ``*_worst_instance`` searches it
-- unless the batched search of :func:`verify.falsify` runs the bound as declared
(:func:`verify.falsify.plan.batched_plan_applies`): a paper-setting search (its constants held
fixed) does not replace the search over the bound's whole class, so both rows are reported.

Example
-------
>>> from verify.suite import Context, select
>>> [spec] = select("generic_skew_lemma1")
>>> [r.verdict for r in spec.fn(Context(quick=True, falsify_budget=0))]
['holds']
"""

from __future__ import annotations

import dataclasses
import functools
import time

import numpy as np

import boundlab

from ..compare import CheckResult
from ._registry import REGISTRY, CheckSpec, load_hand_written

__all__ = ["specs", "hand_coverage", "QUICK_ROUNDS", "SEARCH_SUFFIX"]

QUICK_ROUNDS = 20
SEARCH_SUFFIX = "_worst_instance"  # hand checks so named search; the others judge fixed runs


def specs() -> list[CheckSpec]:
    """One :class:`~verify.suite.CheckSpec` per catalogue bound (in catalogue order)."""
    out = []
    for fam in boundlab.FAMILIES:
        for b in boundlab.catalogue(fam):
            name = "generic_" + b.id.replace(".", "_")
            out.append(CheckSpec(name, b.family, (b.id,), functools.partial(_judge, b.id, name),
                                 f"{b.id}: generated from its metadata (lhs {b.lhs})"))
    return out


def hand_coverage() -> tuple[set, set]:
    """``(ids judged on a fixed run, ids searched)`` by the hand-written checks."""
    load_hand_written()
    fixed, searched = set(), set()
    for spec in REGISTRY.values():
        if spec.name.startswith("generic_"):
            continue
        (searched if spec.name.endswith(SEARCH_SUFFIX) else fixed).update(spec.bound_ids)
    return fixed, searched


def _judge(bound_id: str, name: str, ctx) -> list[CheckResult]:
    from ..check import LHS, NOT_MEASURABLE

    bound = boundlab.get(bound_id)
    fixed, searched = hand_coverage()
    if bound.lhs not in LHS:
        if bound_id in fixed | searched:
            return []  # judged by its hand-written check
        why = NOT_MEASURABLE.get(bound.lhs, "not a quantity verify.check knows")
        return [_row(bound, name, "not-applicable", case="not measurable",
                     reason=f"lhs {bound.lhs!r} is not measured on a run: {why}")]
    out = []
    if bound_id not in fixed:
        out.append(_fixed(bound, name, ctx))
    if bound.kind == "upper" and ctx.search_budget() and (
            bound_id not in searched or _batched(bound)):
        out.append(_search(bound, name, ctx))
    return out


#: the main job's search budget of a bound judged over every participation path (FedAU) is
#: the batched one divided by this (an instance there is 2^N runs; ``--budget`` overrides)
PATHS_DIVISOR = 2


def _paths(bound) -> bool:
    """Whether ``bound`` is searched in expectation over every participation path (FedAU)."""
    import boundlab

    try:
        return boundlab.registry.meta(bound.id).get("algorithm") == "fedau"
    except Exception:  # noqa: BLE001 - no metadata: a plain search
        return False


def _batched(bound) -> bool:
    from ..falsify.plan import batched_plan_applies

    return batched_plan_applies(bound)


def _row(bound, name, verdict, *, case, reason="", note="", problem=""):
    return CheckResult(check=name, bound_id=bound.id, paper=bound.source, problem=problem,
                       verdict=verdict, case=case, reason=reason, note=note)


# ------------------------------------------------------------------------------ fixed instance
def _problem(run, algorithm):
    """The run's problem; for the beta algorithm, weighted by its own graph weights."""
    import toys

    spec = run.get("problem")
    opts = dict(spec) if isinstance(spec, dict) else {"name": spec}
    pname = opts.pop("name")
    prob = toys.make(pname, **opts)
    if algorithm == "beta":
        beta = (run.get("hyper") or {}).get("beta", 0.5)
        g = toys.run(prob, "beta", rounds=1, seed=0, lr=1e-3, local_steps=1, record="none",
                     beta=beta).info["graph"]["p"]
        prob = toys.make(pname, **opts, weights=np.asarray(g, dtype=float))
        prob.name = f"{pname}, graph weights"
    return prob


def _fixed(bound, name, ctx) -> CheckResult:
    from ..check import check
    from .user import _result

    meta = boundlab.registry.meta(bound.id)
    run = meta.get("run")
    if not run:
        return _row(bound, name, "not-applicable", case="fixed instance",
                    reason="no run in its metadata (boundlab._catalogue_meta)")
    algorithm = run.get("algorithm") or meta.get("algorithm")
    rounds, seeds = int(run.get("rounds", 50)), run.get("seeds", 1)
    if ctx.quick:
        rounds = min(rounds, QUICK_ROUNDS)
        seeds = min(seeds, 2) if isinstance(seeds, int) else list(seeds)[:2]
    if ctx.seeds is not None:
        seeds = ctx.seeds
    hyper = dict(run.get("hyper") or {})
    if ctx.backend != "numpy":
        hyper.update(backend=ctx.backend, device=ctx.device)
    problem = _problem(run, algorithm)
    df = check(bound, problem, algorithm, rounds=rounds, seeds=seeds,
               params=run.get("params"), **hyper)
    r = _result(bound, name, df, problem, algorithm)
    r.case = "fixed instance"
    r.setting = {**r.setting, "rounds": rounds, "algorithm": algorithm,
                 "function_class": meta.get("function_class")}
    _attach_pep(r, ctx, bound, df)
    return r


def _attach_pep(r, ctx, bound, df) -> None:
    from ..check import LHS
    from ._common import attach_tightness

    if r.verdict not in ("holds", "VIOLATED"):
        return
    row = df.iloc[0]
    params = {k: float(row[k]) for k in bound.params if k in df.columns and np.ndim(row[k]) == 0}
    # a one-round quantity's PEP is small (solved); one over the run's rounds can take
    # minutes: read from the cache only (``boundlab tightness ID ...`` solves and caches it)
    per_round = LHS[bound.lhs].per_round
    attach_tightness(r, ctx if per_round else dataclasses.replace(ctx, quick=True), params,
                     rounds=params.get("T"))


# ------------------------------------------------------------------------------ search
def _search(bound, name, ctx) -> CheckResult:
    from .. import falsify
    from ..falsify.plan import batched_plan_applies

    t0 = time.perf_counter()
    # the batched search evaluates thousands of instances a second; the quadratic fallback
    # (verify.worst_instance, one run each) about fifty: it keeps the earlier budget
    budget = ctx.search_budget(batched=batched_plan_applies(bound))
    if _paths(bound) and ctx.falsify_budget is None:  # FedAU: each instance runs every
        budget //= PATHS_DIVISOR  # participation path (2^N runs): fewer instances here
    res = falsify(bound.id, budget=max(10, budget), seed=0)
    inst = res.instance
    note = (f"verify.falsify, budget {budget} ({res.evaluations} instances, "
            f"{time.perf_counter() - t0:.1f} s); worst measured / bound "
            f"{res.worst_ratio:.4g}" + "".join(f"; {n}" for n in res.notes))
    if res.verdict not in ("holds", "VIOLATED") or inst is None:
        return _row(bound, name, res.verdict, case="search", note=note,
                    reason=res.reason or "no instance")
    r = _row(bound, name, res.verdict, case="search", note=note,
             problem=f"worst instance found ({inst.family})")
    r.measured, r.bound, r.n_seeds, r.seeds = inst.lhs, inst.rhs, 1, [0]
    r.measured_lo = r.measured_hi = inst.lhs
    from ..schema import ratio

    r.ratio = ratio(inst.lhs, inst.rhs)  # measured / bound (verify.schema)
    r.setting = {k: v for k, v in inst.run.items() if np.ndim(v) == 0}
    r.worst = {"ratio": res.worst_ratio, "evaluations": res.evaluations, "budget": budget,
               "seconds": res.seconds, "family": inst.family, "orientation": res.orientation}
    if inst.family == "worst.quadratic":  # a verify.worst record: replay with worst.replay
        r.worst["record"] = inst.data
    if res.exact:  # the PEP bracket relative to the bound: LB/B, UB/B (verify.schema)
        from ..result_keys import ResultDict

        r.tightness = ResultDict({"ratio_lo": _num(res.exact.get("lower")),
                                  "ratio_hi": _num(res.exact.get("upper")),
                                  "solver": res.exact["solver"]})
    return r


def _num(x):
    return float(x) if isinstance(x, (int, float)) and np.isfinite(x) else float("nan")
