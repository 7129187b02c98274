"""Checks of registered bounds: ``boundlab verify --only ID`` for a bound added by
``boundlab.register`` or a plug-in (entry-point group ``boundlab.bounds``).

Each registered bound gets one check, named ``user_<id with dots as underscores>``, that runs
:func:`verify.check` on the run given at registration (``run={"problem": ..., "algorithm": ...,
"rounds": ..., "seeds": ..., "hyper": {...}, "params": {...}}``). ``--quick`` caps the rounds at
:data:`QUICK_ROUNDS` and the seeds at 2; ``--seeds`` overrides the seed count. For a per-round
quantity the worst round (by verdict, then ratio) is reported, with the count of rounds judged.
A bound registered without a run is ``not-applicable`` with the reason.

Example
-------
>>> import dataclasses, boundlab
>>> from verify.suite import Context, select
>>> b = dataclasses.replace(boundlab.get("drift.plateau_finite"), id="mine.finite", terms={})
>>> _ = boundlab.register(b, run={"problem": "seed004-toy", "algorithm": "fedavg",
...     "rounds": 10, "hyper": {"lr": 0.2, "local_steps": 5}})
>>> [spec] = select("mine.finite")
>>> r = spec.fn(Context(quick=True))[0]
>>> spec.name, r.bound_id, r.verdict
('user_mine_finite', 'mine.finite', 'holds')
>>> _ = boundlab.unregister("mine.finite")
"""

from __future__ import annotations

import functools

import numpy as np

import boundlab

from ..compare import CheckResult, compare

__all__ = ["user_specs", "QUICK_ROUNDS"]

QUICK_ROUNDS = 20
_ORDER = ("error", "VIOLATED", "diverged", "inconclusive", "not-applicable", "holds",
          "order-only")


def user_specs() -> list:
    """A :class:`~verify.suite.CheckSpec` for every registered bound."""
    from ._registry import CheckSpec

    out = []
    for bid in boundlab.registry.registered_ids():
        b = boundlab.get(bid)
        name = "user_" + bid.replace(".", "_")
        out.append(CheckSpec(name, b.family, (bid,), functools.partial(_run, bid, name),
                             f"registered bound {bid}: verify.check on its registered run"))
    return out


def _run(bound_id: str, name: str, ctx) -> list:
    import toys

    from ..check import check

    bound = boundlab.get(bound_id)
    meta = boundlab.registry.registration(bound_id)
    run = meta.get("run")
    if not run:
        return [CheckResult(check=name, bound_id=bound_id, paper=bound.source, problem="",
                            verdict="not-applicable",
                            note="no run registered: boundlab.register(bound, run={'problem': "
                                 "..., 'algorithm': ..., 'rounds': ..., 'hyper': {...}})")]
    spec = run.get("problem")
    if isinstance(spec, dict):
        spec = dict(spec)
        problem = toys.make(spec.pop("name"), **spec)
    else:
        problem = toys.make(spec) if isinstance(spec, str) else spec
    algorithm = run.get("algorithm") or meta.get("algorithm")
    rounds = int(run.get("rounds", 50))
    seeds = run.get("seeds", 1)
    if ctx.quick:
        rounds = min(rounds, QUICK_ROUNDS)
        seeds = min(seeds, 2) if isinstance(seeds, int) else list(seeds)[:2]
    if ctx.seeds is not None:
        seeds = ctx.seeds
    df = check(bound, problem, algorithm, rounds=rounds, seeds=seeds,
               params=run.get("params"), **dict(run.get("hyper") or {}))
    return [_result(bound, name, df, problem, algorithm)]


def _result(bound, name, df, problem, algorithm) -> CheckResult:
    """One CheckResult: the whole frame, or its worst round for a per-round quantity."""
    note = f"verify.check of the registered run ({algorithm})"
    group = df
    if df["round"].notna().any():  # a per-round quantity; worst: highest measured / bound
        rank = df["verdict"].map(lambda v: _ORDER.index(v) if v in _ORDER else 0)
        worst = df.assign(_rank=rank).sort_values(["_rank", "ratio"],
                                                  ascending=[True, False]).iloc[0]["round"]
        group = df[df["round"] == worst]
        note += f"; worst of {df['round'].nunique()} rounds judged: round {int(worst)}"
    row = group.iloc[0]
    params = {k: row[f"param_{k}"] for k in {**bound.params, **bound.extra_params}
              if f"param_{k}" in group.columns}
    lhs, rhs = group["measured"].to_numpy(), group["bound_value"].to_numpy()
    ref = float(np.mean(rhs))
    samples = lhs if np.all(rhs == rhs[0]) else lhs - rhs + ref
    failed = [str(row["reason"])] if row["verdict"] == "not-applicable" else []
    r = compare(bound, samples, ref, params=params, check=name, note=note,
                problem=getattr(problem, "name", type(problem).__name__),
                seeds=[int(s) for s in group["seed"]], diverged=row["verdict"] == "diverged")
    if failed and r.verdict != "not-applicable":  # a precondition failed for another seed
        r = compare(bound, samples, ref, params=params, check=name, note=note,
                    problem=r.problem, seeds=r.seeds, preconditions_violated=failed)
    return r
