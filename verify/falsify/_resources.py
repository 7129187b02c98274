"""Resource limits of :func:`verify.falsify`: refuse a search the machine cannot hold or finish
(:mod:`toys.engine.limits`) before any instance is built.

The sizes are those of the setting (``n_clients``, ``dim``, ``T``, the local steps) and the
``budget``; the estimate follows :func:`verify.falsify.search.search`'s split of the budget into
groups (one batch of ``share`` instances per (scale, T, tau, hyper-parameter, family), run in
generations of at least :data:`~verify.falsify.search.MIN_GROUP`) at the largest T and local
steps of the plan's grids and the largest family.
"""

from __future__ import annotations

import math

__all__ = ["check_search", "check_catalogue"]

_GENERATIONS = 6  # at most len(search._SIGMAS) + 1 generations per group
_MIN_GROUP = 8  # verify.falsify.search.MIN_GROUP


def check_search(plan, families, budget: int) -> None:
    """Refuse (DomainError naming the size) a batched search over ``families`` that would not
    fit in memory or would run past the time limit."""
    from toys.engine import limits

    spec = plan.spec
    grid = len(plan.T_grid) * len(plan.tau_grid) * len(plan.hyper_grid) * len(plan.scales)
    masks = plan.algorithm == "fedau" or any(
        isinstance(h, dict) and h.get("participation") for h in plan.hyper_grid)
    sizes = {"n_clients": int(spec.n_clients), "dim": int(spec.dim), "T": max(plan.T_grid),
             "tau": max(plan.tau_grid), "budget": int(budget)}

    def estimate(s):
        sp = _with_sizes(spec, s)
        n_vars = max(int(f.n_vars(sp)) for f in families) + 2
        groups = grid * len(families)
        share = max(_MIN_GROUP, s["budget"] // max(1, groups))
        run = min(groups, math.ceil(s["budget"] / share))
        gens = max(1, min(_GENERATIONS, share // _MIN_GROUP))
        return limits.batched_need(population=max(1, share // gens), n_vars=n_vars,
                                   n_clients=s["n_clients"], dim=s["dim"], rounds=s["T"],
                                   local_steps=s["tau"], groups=run * gens,
                                   evaluations=min(s["budget"], run * share), masks=masks)

    limits.check("the falsify search", estimate, sizes, given=_given(plan, sizes))


def check_catalogue(setting: dict, budget: int) -> None:
    """The same for the quadratic worst-instance search of a catalogue bound (one instance of
    N (d^2 + 2 d) + d variables at a time, ``budget`` of them)."""
    from toys.engine import limits

    sizes = {"n_clients": _int(setting.get("n_clients", setting.get("M", 3))),
             "dim": _int(setting.get("dim", 2)),
             "rounds": _int(setting.get("rounds", setting.get("T", 30))),
             "tau": _int(setting.get("tau", setting.get("E", 10))), "budget": int(budget)}

    def estimate(s):
        N, d = s["n_clients"], s["dim"]
        return limits.batched_need(population=1, n_vars=N * (d * d + 2 * d) + d, n_clients=N,
                                   dim=d, rounds=s["rounds"], local_steps=s["tau"],
                                   groups=s["budget"], evaluations=s["budget"])

    given = [k for k in sizes if k in setting or k == "budget"]
    limits.check("the falsify search", estimate, sizes, given=given)


def _with_sizes(spec, s):
    import dataclasses

    weights = spec.weights if int(s["n_clients"]) == int(spec.n_clients) else None
    return dataclasses.replace(spec, n_clients=int(s["n_clients"]), dim=int(s["dim"]),
                               weights=weights)


def _given(plan, sizes) -> list:
    """The sizes to name first: every one but the grids' own T and tau (not the user's)."""
    return [k for k in sizes if not (k in ("T", "tau") and len(getattr(
        plan, "T_grid" if k == "T" else "tau_grid")) > 1)]


def _int(v) -> int:
    try:
        return max(1, int(v))
    except (TypeError, ValueError, OverflowError):
        return 1
