"""Sweeps: one algorithm over a grid of settings x seeds, as one tidy table, resumable, local or
on Dask distributed.

:func:`sweep` runs ``toys.run`` for every grid point and seed and returns a pandas DataFrame
with one row per (grid point, seed, round): the grid values, ``seed``, ``round`` and the
measured per-round quantities of :meth:`toys.Trace.to_log` (``loss``, ``gap``, ``dist2``,
``shadow_gap``, ``drift_max``, ``lr``, ..., ``kappa_min``/``kappa_max``; a measured column
whose name is also a grid name is renamed ``run_<name>``, e.g. ``run_lr``) and ``algorithm``
(its name, on every row, with or without a bound). With a ``bound`` it adds the columns of
:mod:`verify.schema` (``bound_id``, ``lhs``, the left-hand side as ``measured``,
``bound_value``, ``ratio`` = measured / bound_value, ``verdict``, ``reason``,
``measured_mean``, ``measured_lo``, ``measured_hi``, ``n_seeds``, the named terms
``term_<name>`` and the scalar parameters ``param_<name>``), judged by :func:`verify.check`'s
rules over the seeds of each grid point (per round for a per-round left-hand side). A per-run
left-hand side (e.g. ``avg_shadow_gap``) is judged once per run: ``measured``, ``bound_value``,
``ratio`` and ``verdict`` are on the row of the final round and empty (NaN / None) on the
others, while ``bound_id``, ``lhs``, ``term_*`` and ``param_*`` are on every row of the run; a
per-round one leaves the judged columns of rounds it does not cover empty. The old names
(``bound``, ``rhs_<name>``) still read, with a DeprecationWarning.

How a grid (or fixed keyword) name is routed
--------------------------------------------
* ``problem_or_factory`` a problem object: every name goes to ``toys.run``;
* a ``toys.make`` name (``"quadratic"``, ...): names that are options of that problem
  (``toys.problems.registry.options_of``) build the problem, the others go to ``toys.run``;
* a callable factory: names among its parameters build the problem, the others go to
  ``toys.run`` (``lr``, ``local_steps``, ``participation``, ``batch_size``, ...).

``seed`` in the grid or fixed keywords is therefore a problem option (the data's seed); the
runs' seeds are ``seeds``.

Resuming: with ``out=DIR`` each finished grid point (all its seeds) is written atomically to
``DIR/point-NNNNN.parquet`` (CSV without pyarrow) next to ``DIR/sweep.json`` (the sweep's
definition); a re-run of the same sweep skips the points already there, so an interrupted sweep
resumes with nothing lost and nothing duplicated. A directory holding another sweep is refused.
The table is then read back from those files, so a resumed sweep and an uninterrupted one give
the same table. Every file of the folder is sealed and checked before use
(:mod:`verify.sweep.store`): a point file swapped, copied from another sweep, edited or
without its seal, and point files without a ``sweep.json``, are an
:class:`~boundlab.errors.IntegrityError` naming the file; temporary files of a killed run are
removed by the next run into the folder and never read.

Per-run and per-round quantities the default columns lack come from ``measures``:
``{name: fn(trace, problem)}``, evaluated on every run's :class:`toys.Trace` where it ran (in
the worker for Dask). A scalar (number, string, bool) is a per-run value on the final round's
row (NaN / None on the others, as a per-run left-hand side); an array of length ``rounds + 1``
is one value per state x_0..x_R, of length ``rounds`` one per round (NaN on the final row).

Everything ``toys.run`` accepts passes through as a fixed keyword: ``backend="torch"`` and
``device``, a ``participation`` process or matrix, a callable ``lr``, ``record``, ``x0``; the
algorithm may be a prebuilt :class:`toys.Algorithm` and the problem an instance. ``grid={}``
is one point (a sweep over seeds only).

``executor="dask"`` runs the grid points on Dask distributed (``pip install boundlab[dask]``):
a ``LocalCluster`` of ``n_workers`` single-threaded processes, or the cluster at
``scheduler="tcp://host:port"``. Files are written by this process as points finish; rows are
ordered by grid point, seed and round, so the table equals the local executor's. A scheduler that
does not connect and answer within ``connect_timeout`` seconds (default 10) is refused.

Example
-------
>>> import verify
>>> df = verify.sweep("quadratic", "fedavg", grid={"lr": [0.05, 0.1]}, seeds=2, rounds=3,
...                   n_clients=3, dim=2, bound=None)
>>> df.shape[0], list(df.columns[:4])
(16, ['lr', 'seed', 'round', 'loss'])
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

__all__ = ["sweep", "EXECUTORS", "route", "algorithm_name"]

EXECUTORS = ("local", "dask")


def sweep(problem_or_factory, algorithm, *, grid, seeds, rounds, bound=None, out=None,
          executor="local", scheduler=None, n_workers=2, params=None, level=0.95,
          progress=None, measures=None, connect_timeout=None, **fixed):
    """Run ``algorithm`` over every point of ``grid`` and every seed; a tidy DataFrame.

    Parameters
    ----------
    problem_or_factory : FederatedProblem, str or callable
        A problem, a ``toys.make`` name or a callable returning a problem (see the module
        docstring for how names are routed between the problem and ``toys.run``).
    algorithm : str or toys.Algorithm
        Passed to ``toys.run``.
    grid : dict
        name -> list of values; the points are the Cartesian product, in the dict's order
        (``{}``: one point, the fixed keywords only).
    seeds : int or sequence of int
        A count (seeds 0..n-1) or the seeds.
    rounds : int
        Rounds of every run.
    bound : Bound or str, optional
        Judged on every grid point over its seeds with :func:`verify.check`'s rules.
    out : path, optional
        Directory of finished points (resumable).
    executor : {"local", "dask"}
    scheduler : str, optional
        Address of an existing Dask scheduler (default: a new ``LocalCluster``).
    n_workers : int
        Worker processes of the default ``LocalCluster``.
    params : dict, optional
        Right-hand-side parameters that override the measured / mapped ones (as in
        :func:`verify.check`).
    progress : callable, optional
        ``progress(done, total)`` after every finished grid point (skipped ones included).
    measures : dict, optional
        name -> ``fn(trace, problem)``: extra columns computed from every run's trace (a
        scalar per run on the final round's row, or an array of length ``rounds + 1`` or
        ``rounds`` per round); module-level functions, so Dask workers can run them.
    connect_timeout : float, optional
        Seconds to wait for the Dask ``scheduler`` to connect and answer (default
        :data:`verify.sweep.executor.CONNECT_TIMEOUT`, 10 s); one that does not is a
        :class:`~boundlab.errors.DomainError` naming ``scheduler``.
    **fixed
        Keywords shared by every point, routed like grid names.
    """
    spec = _spec(problem_or_factory, algorithm, grid, seeds, rounds, bound, executor, fixed,
                 params, level, measures)
    points = spec["points"]
    _check_resources(spec["task"])
    from .executor import check_connect

    check_connect(scheduler if executor == "dask" else None, connect_timeout)
    store = None
    if out is not None:
        from .store import SweepStore

        store = SweepStore(out, spec)
    done = store.finished() if store else set()
    todo = [i for i in range(len(points)) if i not in done]
    frames: dict = {}
    count = [len(points) - len(todo)]
    if progress:
        progress(count[0], len(points))

    def finished(i, frame):
        if store:
            store.write(i, frame)
        else:
            frames[i] = frame
        count[0] += 1
        if progress:
            progress(count[0], len(points))

    tasks = [(spec["task"], i) for i in todo]
    try:
        if executor == "dask":
            from .executor import run_dask

            run_dask(tasks, finished, run=run_point, scheduler=scheduler, n_workers=n_workers,
                     connect_timeout=connect_timeout)
        else:
            for task in tasks:
                finished(task[1], run_point(task))
        if store:
            frames = {i: store.read(i) for i in range(len(points))}
    finally:
        if store:
            store.close()
    return _assemble([frames[i] for i in range(len(points))], spec)


# ------------------------------------------------------------------------------ one point
def run_point(task):
    """The frame of one grid point (every seed); ``task`` = (point-independent spec, index).
    Runs in a worker for Dask: it imports what it needs itself."""
    import pandas as pd

    import toys

    spec, i = task
    prob_kw, run_kw = route(spec["problem"], {**spec["fixed"], **spec["points"][i]})
    if spec["bound"] is not None:  # the record its left-hand side needs (BC's: "step")
        from ..check.api import _bound, _quantity, _record_for

        bound = _bound(spec["bound"])
        run_kw = _record_for(_quantity(bound), bound, run_kw)
    prob = _build(spec["problem"], prob_kw)
    algo = spec["algorithm"]
    traces = [toys.run(prob, algo, rounds=spec["rounds"], seed=int(s), **run_kw)
              for s in spec["seeds"]]
    logs = [tr.to_log(p=prob.p) for tr in traces]
    frame = pd.concat(logs, ignore_index=True)
    frame = frame[["seed", "round", *[c for c in frame.columns if c not in ("seed", "round")]]]
    if spec.get("measures"):
        from .measures import add_measures

        frame = add_measures(frame, spec["measures"], traces, prob, spec["rounds"])
    if spec["bound"] is not None:
        frame = _with_bound(frame, spec, prob, traces, logs, run_kw)
    point = spec["points"][i]
    frame = frame.rename(columns={k: f"run_{k}" for k in point if k in frame.columns})
    for k, v in reversed(list(point.items())):
        frame.insert(0, k, [v] * len(frame))
    return frame


def _with_bound(frame, spec, prob, traces, logs, run_kw):
    """``frame`` with the bound's columns (:mod:`verify.schema`) judged by :func:`verify.check`'s
    rules; ``bound_id``, ``lhs``, ``term_*`` and ``param_*`` filled on every row of a run where
    they are one value over it (a per-run quantity's), not only on the judged row."""
    import toys

    from ..check.api import _bound, _judge, _trace_diverged

    bound = _bound(spec["bound"])
    consts = toys.constants(prob, batch_size=run_kw.get("batch_size")).as_params()
    setting = {**run_kw, "rounds": spec["rounds"], "n_clients": prob.n_clients, "p": prob.p}
    judged = _judge(bound, logs, setting, consts, spec["params"], spec["level"],
                    problem=getattr(prob, "name", "problem"), check="sweep",
                    algorithm=algorithm_name(spec["algorithm"]),
                    diverged=[_trace_diverged(tr) for tr in traces])
    extra = judged.drop(columns=[c for c in judged.columns if c in frame.columns
                                 and c not in ("seed", "round")])
    extra = extra.loc[:, ~extra.columns.duplicated()].copy()
    if judged["round"].isna().all():
        extra["round"] = spec["rounds"]  # a per-run quantity: the final round's row
    extra["round"] = extra["round"].astype(frame["round"].dtype)
    out = frame.merge(extra, on=["seed", "round"], how="left", validate="one_to_one")
    cols = [c for c in out.columns if c in ("bound_id", "lhs", "check", "case", "problem",
                                            "algorithm") or c.startswith(("term_", "param_"))]
    return _fill_runs(out, cols, {c: judged[c].dtype for c in cols})


def algorithm_name(algo) -> str:
    """The ``algorithm`` column of a sweep: the name given, or a prebuilt algorithm's name.

    >>> algorithm_name("fedavg")
    'fedavg'
    """
    return algo if isinstance(algo, str) else getattr(algo, "name", "algorithm")


def _fill_runs(frame, cols, dtypes):
    """Fill ``cols`` on every row of a seed where the column holds one value over that seed
    (integers stay integers where every row got one)."""
    for c in cols:
        col = frame[c]
        if not col.isna().any():
            continue
        one = frame.groupby("seed")[c].transform(lambda s: s.dropna().iloc[0]
                                                 if s.dropna().nunique() == 1 else None)
        frame[c] = col.where(col.notna(), one)
        if dtypes[c].kind in "iu" and frame[c].notna().all():
            frame[c] = frame[c].astype(dtypes[c])
    return frame


# ------------------------------------------------------------------------------ routing
def route(problem, values: dict) -> tuple[dict, dict]:
    """Split ``values`` into (problem options, ``toys.run`` keywords).

    >>> route("quadratic", {"dim": 3, "lr": 0.1})
    ({'dim': 3}, {'lr': 0.1})
    """
    accepted = _problem_options(problem)
    prob = {k: v for k, v in values.items() if k in accepted}
    run = {k: v for k, v in values.items() if k not in accepted}
    return prob, run


def _problem_options(problem) -> set:
    if isinstance(problem, str):
        from toys.problems.registry import options_of

        return set(options_of(problem))
    if callable(problem) and not hasattr(problem, "n_clients"):
        try:
            sig = inspect.signature(problem)
        except (TypeError, ValueError):
            return set()
        return {n for n, p in sig.parameters.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set()


def _build(problem, options):
    import toys

    if isinstance(problem, str):
        return toys.make(problem, **options)
    if callable(problem) and not hasattr(problem, "n_clients"):
        return problem(**options)
    return problem


# ------------------------------------------------------------------------------ spec
def _spec(problem, algorithm, grid, seeds, rounds, bound, executor, fixed, params, level,
          measures=None):
    from toys.validation import check_choice, check_int

    check_choice("executor", executor, EXECUTORS)
    rounds = check_int("rounds", rounds, lo=1)
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        seed_list = list(range(check_int("seeds", seeds, lo=1)))
    else:
        seed_list = [check_int("seeds", s, lo=0) for s in seeds]
        if not seed_list or len(set(seed_list)) != len(seed_list):
            raise DomainError("seeds", seeds, "a count >= 1 or distinct seeds >= 0")
    if not isinstance(grid, dict):
        raise DomainError("grid", grid, "a dict name -> list of values ({}: one point)")
    for k, v in grid.items():
        if isinstance(v, (str, bytes)) or not hasattr(v, "__len__") or len(v) == 0:
            raise DomainError(f"grid[{k!r}]", v, "a non-empty list of values")
        if k in fixed:
            raise DomainError(f"grid[{k!r}]", v, "a name not also given as a fixed keyword")
        bad = [x for x in v if not isinstance(x, (bool, int, float, str, np.integer, np.floating))
               and x is not None]
        if bad:  # a table column: objects go in through a factory or a fixed keyword
            raise DomainError(f"grid[{k!r}]", bad[0], "numbers, strings, booleans or None (a "
                              "table column; pass objects through a problem factory or a "
                              "fixed keyword)")
    reserved = {"seed", "rounds"} - _problem_options(problem)
    for k in [*grid, *fixed]:
        if k in reserved or k in ("seeds", "grid"):
            raise UnknownNameError("grid or fixed name (seeds and rounds are sweep arguments)",
                                   k, sorted(set(grid) - reserved))
    from .measures import check_measures

    measures = check_measures(measures, [*grid, *fixed])
    if bound is not None:
        from ..check.api import _bound, _quantity

        _quantity(_bound(bound))  # a measurable left-hand side, before any work
    names = list(grid)
    points = [dict(zip(names, vals)) for vals in itertools.product(*grid.values())]
    task = {"problem": problem, "algorithm": algorithm, "rounds": rounds, "seeds": seed_list,
            "bound": bound, "fixed": dict(fixed), "points": points,
            "params": dict(params or {}), "level": float(level)}
    if measures:
        task["measures"] = measures
    return {"task": task, "points": points, "grid": dict(grid), "describe": _describe(task)}


def _check_resources(task) -> None:
    """Refuse, before any run, a sweep whose runs and table do not fit in memory or would run
    past the time limit (:mod:`toys.engine.limits`; sizes not given count as 1)."""
    from toys.engine import limits

    runs = [{**task["fixed"], **pt} for pt in task["points"]] or [dict(task["fixed"])]
    prob_n = getattr(task["problem"], "n_clients", 1)
    sizes = {"grid": len(task["points"]), "seeds": len(task["seeds"]),
             "rounds": task["rounds"],
             "n_clients": max(_size(r.get("n_clients", prob_n)) for r in runs),
             "local_steps": max(_size(r.get("local_steps", 1)) for r in runs)}
    record = "step" if any(r.get("record") == "step" for r in runs) else "round"
    limits.check("the sweep", lambda z: limits.sweep_need(record=record, **z), sizes)


def _size(v) -> float:
    """A size given as a number, else 1 (the estimate stays a lower bound)."""
    ok = isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
    if not (ok and np.isfinite(v) and v >= 1):
        return 1
    return int(v) if float(v).is_integer() else float(v)


def _jsonable(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (np.integer, np.floating, np.bool_)):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    for attr in ("id", "name", "registry_name", "__qualname__"):
        if isinstance(getattr(v, attr, None), str):
            return f"<{type(v).__name__} {getattr(v, attr)}>"
    return f"<{type(v).__name__}>"


def _describe(task) -> dict:
    """The sweep's definition as JSON data (what ``sweep.json`` holds and a re-run matches)."""
    out = {k: _jsonable(task[k]) for k in ("problem", "algorithm", "rounds", "seeds", "bound",
                                           "fixed", "points", "params", "level")}
    if "measures" in task:  # only then: a sweep.json written before measures existed matches
        from .measures import describe_measures

        out["measures"] = describe_measures(task["measures"])
    return out


def _assemble(frames, spec):
    """One table; rows in (grid point, seed, round) order whatever order points finished in."""
    import pandas as pd

    from ..schema import ResultFrame

    df = ResultFrame(pd.concat(frames, ignore_index=True), aliases={"bound": "bound_id"})
    if "algorithm" not in df.columns:  # without a bound (a bound's columns carry it)
        df["algorithm"] = algorithm_name(spec["task"]["algorithm"])
    df.attrs["sweep"] = spec["describe"]
    return df
