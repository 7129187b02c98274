"""The seeds of an arm as one population: :func:`batched_metrics` runs the (grid point, seed) runs
of a reproduction's sweep whose problems stack (logistic regression, softmax or binary; on torch
also the one-hidden-layer MLP and the CNN; any participation, full-batch or minibatch local
steps) as ONE :func:`toys.run_many` on the engine's instance axis, and reads the held-out test
metrics from the models of every round.

Each instance is bit for bit its own ``toys.run`` on the same problem (the run's minibatch and
participation streams are the instance's own; tests/verify/reproduce/test_batch.py checks the
accuracies against separate runs with :class:`toys.engine.TestMetrics`). The problems of a
population are padded to one row length (:func:`toys.problems.stacked.pad_rows`: zero rows, and
each instance still draws the minibatch keys of its own unpadded rows), and the tests check that
the numbers equal those of the unpadded problem's own run. Seeds whose row lengths differ by
more than :data:`PAD_SLACK` (:data:`FULL_BATCH_SLACK` with full-batch local steps) run as
separate populations (:func:`row_groups`), so that the zero rows do not cost more than the loop
saves. An instance that diverges is rerun on its own (``toys.run``, the same stopping rule).
Round callbacks are replayed on each instance's rounds (its models, alphas and participation, as
its own run shows them). Runs the engine cannot batch (the MLP on numpy, where batching is
slower: :data:`MLP_NUMPY`; the CNN on numpy; a piece without a population axis; a callback that
stops a run) return None: the caller keeps its loop over the seeds. On torch
(``backend="torch"``, any device) the instances agree with their own runs to round-off (batched
kernels).

Example
-------
>>> from verify.reproduce.common import federate, pool
>>> X, y, _ = pool("digits", max_samples=300, seed=0)
>>> probs = [federate(X, y, "iid", 4, s) for s in range(3)]
>>> m = batched_metrics(probs, "fedavg", rounds=2, seeds=[0, 0, 0], lr=0.1, local_steps=2,
...                     batch_size=8)
>>> m["test_accuracy"].shape
(3, 2)
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

__all__ = ["BATCHED", "FULL_BATCH_SLACK", "PAD_SLACK", "batched_metrics", "batched_points",
           "batched_sweep", "refusal", "row_groups", "stackable"]


def _inner(q):
    return q.__dict__.get("_inner", q)


def _row_len(q) -> int:
    """The padded number of rows of the clients of ``q`` (data rows or images)."""
    q = _inner(q)
    return int((q.images if q.kind == "cnn" else q.X).shape[1])


BATCHED = ("the seeds of an arm run as one population (toys.run_many; seeds of unlike row "
           "lengths as separate ones; each run its own toys.run, bit for bit on numpy, to "
           "round-off on torch)")


def refusal(problems, algo=None, backend=None) -> str:
    """Why the runs of ``problems`` (built, possibly seen without optima) do not batch; ``""``
    when they do: whole logistic problems of one kind, classes, l2, N and features (numpy, or
    torch on any device), or MLP problems of one N, features, classes, hidden width and l2, or
    CNN problems of one N, image shape, classes, architecture, hidden width and l2, both on the
    torch ``backend`` (:data:`MLP_NUMPY`), with a held-out split (row lengths may differ:
    they are padded), and pieces with a population axis."""
    from toys.problems.cnn import CNNProblem
    from toys.problems.logistic import Logistic
    from toys.problems.mlp import MLPProblem

    qs = [_inner(q) for q in problems]
    kinds = {type(q) for q in qs}
    known = {Logistic, MLPProblem, CNNProblem}
    if len(kinds) > 1 or not kinds <= known:
        odd = sorted(k.__name__ for k in kinds - known) or ["mixed families"]
        return f"{', '.join(odd)}: no population form in the engine"
    if any(q.__dict__.get("_sel") is not None for q in qs):
        return "subset oracles"
    key = {_shape_key(q) for q in qs}
    if len(key) > 1 or not all(getattr(q, "test", None) for q in problems):
        return "problems of different shapes or without a held-out split"
    if MLPProblem in kinds and backend != "torch":
        return MLP_NUMPY
    if CNNProblem in kinds and backend != "torch":
        return "the CNN on numpy: its populations run on torch (--backend torch or --device)"
    if algo is not None and _algorithm(algo) is None:
        return "a piece without a population axis"
    return ""


MLP_NUMPY = ("the MLP on numpy: a population of its d = f h + h + h C rows is memory-bound on "
             "the CPU, slower than the loop (measured: 10 seeds of 001's MLP, 3.3 s batched "
             "against 2.1-2.5 s looped); on torch the seeds batch")


def _shape_key(q) -> tuple:
    """What instances of one population share (all but the row length, which is padded)."""
    if q.kind == "mlp":
        return ("mlp", q.X.shape[0], q.X.shape[2], q.classes, q.hidden, q.l2)
    if q.kind == "cnn":
        return ("cnn", q.images.shape[0], q.images.shape[2:], q.classes, q.arch, q.hidden,
                q.l2)
    return (q.X.shape[0], q.X.shape[2], q.kind, q.classes, q.l2, q.__dict__.get("_off") is None)


def stackable(problems, backend=None) -> bool:
    """Whether ``problems`` stack into one population (:func:`refusal` has no reason)."""
    return bool(problems) and not refusal(problems, backend=backend)


class _Tap:
    """A server piece that runs ``inner`` and keeps every round's new models (B, d): the
    models the held-out metrics are read at (toys.run's ``RoundInfo.model``)."""

    batched = True

    def __init__(self, inner, sink):
        self.inner, self.sink = inner, sink

    @property
    def hyper_names(self):
        return getattr(self.inner, "hyper_names", ())

    def bind(self, hyper, setup):
        bind = getattr(self.inner, "bind", None)
        return _Tap(bind(hyper, setup) if callable(bind) else self.inner, self.sink)

    def init(self, x, n_clients):
        return self.inner.init(x, n_clients)

    def update(self, state, **kw):
        x_new, state = self.inner.update(state, **kw)
        from toys._array import to_numpy

        self.sink.append(np.array(to_numpy(x_new), dtype=float))
        return x_new, state

    def __getattr__(self, name):
        if name in ("inner", "sink"):
            raise AttributeError(name)
        return getattr(self.inner, name)


def _algorithm(algo):
    import toys

    a = algo if isinstance(algo, toys.Algorithm) else toys.algorithms.get(algo)
    if not all(getattr(p, "batched", False) for p in a.pieces):
        return None
    sink: list = []
    return dataclasses.replace(a, server=_Tap(a.server, sink)), sink


def batched_metrics(problems, algo, *, rounds: int, seeds, participation="full",
                    callbacks=None, **hyper):
    """``{"test_accuracy", "test_loss": (B, rounds)}`` of ``algo`` on each of ``problems``
    with its run seed ``seeds[b]`` and its ``participation`` (one spec, or one per problem),
    as populations of alike row lengths (:func:`row_groups`: one population unless padding
    would add more than :data:`PAD_SLACK` of a group's rows, :data:`FULL_BATCH_SLACK` for
    full-batch local steps); None when the runs do not batch
    (see the module docstring). ``callbacks(b)``, if given, returns instance b's round
    callbacks: they are replayed on its rounds (:func:`_replay`: the model, the alphas and the
    participation its own run shows them); a callback that stops a run does not batch (None)."""
    if refusal(problems, algo, hyper.get("backend")):
        return None
    seeds = [int(s) for s in seeds]
    specs = participation if isinstance(participation, list) else None
    out: dict = {}
    slack = PAD_SLACK if hyper.get("batch_size") is not None else FULL_BATCH_SLACK
    for g in row_groups([_row_len(q) for q in problems], slack):
        cbs = None if callbacks is None else (lambda k, g=g: callbacks(g[k]))
        got = _population([problems[b] for b in g], algo, rounds, [seeds[b] for b in g],
                          participation if specs is None else [specs[b] for b in g], cbs,
                          hyper)
        if got is None:
            return None
        for k, v in got.items():
            out.setdefault(k, np.full((len(problems), rounds), math.nan))[g] = v
    return out


PAD_SLACK = 0.25
"""The zero rows padding may add to a population of minibatch runs, as a share of its
instances' own rows: seeds whose clients' row lengths differ more run as separate populations
(:func:`row_groups`). A minibatch step's work hardly grows with the zero rows (only its key
draw), and one population saves the per-step overhead of every run but one."""
FULL_BATCH_SLACK = 0.02
"""The same for full-batch local steps (``batch_size`` None), whose every gradient works on
every padded row: a population saves no work there (its products are already large), so only
seeds of about equal row lengths share one (003:fig3 quick, 3 seeds padded to the longest: 36 s
batched against 32 s looped)."""


def row_groups(lengths, slack: float | None = None) -> list:
    """Instance indices grouped by row length, the lengths in ascending order, each group as
    long as its padded rows (size x longest) stay within ``1 + slack`` times its own rows
    (``slack`` None: :data:`PAD_SLACK`).

    >>> row_groups([100, 30, 105, 32, 200])
    [[1, 3], [0, 2], [4]]
    >>> row_groups([100, 30, 105], slack=10.0)
    [[1, 0, 2]]
    """
    slack = PAD_SLACK if slack is None else slack
    order = sorted(range(len(lengths)), key=lambda b: (lengths[b], b))
    groups: list = []
    for b in order:
        g = groups[-1] if groups else None
        if g is not None and (len(g) + 1) * lengths[b] <= (1 + slack) * (
                sum(lengths[i] for i in g) + lengths[b]):
            g.append(b)
        else:
            groups.append([b])
    return groups


def _population(problems, algo, rounds, seeds, participation, callbacks, hyper):
    """:func:`batched_metrics` of one group of alike problems: one :func:`toys.run_many`."""
    import toys
    from toys._array import one_cpu_thread
    from toys.problems.stacked import StackedCNN, StackedLogistic, StackedMLP, pad_rows

    tapped, sink = _algorithm(algo)
    n = max(_row_len(q) for q in problems)
    padded = [pad_rows(_inner(q), n) for q in problems]
    kind = padded[0].kind
    stacked = (StackedMLP(padded) if kind == "mlp" else StackedCNN(padded) if kind == "cnn"
               else StackedLogistic(padded, optima=False))
    x0 = np.stack([np.asarray(q.x0, dtype=float) for q in problems])
    if isinstance(participation, list) and len(participation) == 1:
        participation = participation[0]
    with one_cpu_thread():
        pop = toys.run_many(stacked, tapped, rounds=rounds,
                            seeds=seeds, participation=participation, x0=x0, record="none",
                            **hyper)
    out = _metrics(problems, sink, rounds)
    specs = participation if isinstance(participation, list) else [participation] * len(seeds)
    for b in range(len(problems)):
        cbs = [] if callbacks is None else list(callbacks(b))
        if pop.diverged_at[b] >= 0:  # rerun on its own: toys.run's ending
            _rerun(out, b, problems[b], algo, rounds, seeds[b], specs[b], hyper, cbs)
        elif cbs and not _replay(out, b, cbs, [m[b] for m in sink], pop.alpha[b],
                                 pop.participation[b]):
            return None
    return out


def _metrics(problems, sink, rounds):
    """The held-out accuracy and loss of instance b at the models of every round, by the
    problem's own ``test_metrics`` (:class:`toys.engine.TestMetrics`' numbers)."""
    B = len(problems)
    acc, loss = np.full((B, rounds), math.nan), np.full((B, rounds), math.nan)
    from toys.engine.callbacks import held_out

    for b, q in enumerate(problems):  # per instance: one pooled product per round
        for r, models in enumerate(sink):
            acc[b, r], loss[b, r] = held_out(q, models[b], q.test)
    return {"test_accuracy": acc, "test_loss": loss}


def _replay(out, b, callbacks, models, alpha, participation) -> bool:
    """Call ``callbacks`` on instance b's rounds as its own run would (``info.model``,
    ``info.state.buffers["ALPHA"]``, ``info.state.participation``, ``info.record``); their
    metrics go into ``out[name][b]``. False when one asks to stop the run."""
    from types import SimpleNamespace

    from toys.engine.callbacks import RoundInfo

    R = len(models)
    state = SimpleNamespace(x=None, metrics={}, buffers={"ALPHA": alpha},
                            participation=participation)
    ctx = SimpleNamespace(rounds=R)
    for r in range(R):
        state.x = models[r]
        info = RoundInfo(round=r, state=state, _ctx=ctx)
        for cb in callbacks:
            cb(info)
        if info._stop:
            return False
    for name, v in state.metrics.items():
        out.setdefault(name, np.full((len(out["test_accuracy"]), R), math.nan))[b] = v
    return True


def _rerun(out, b, prob, algo, rounds, seed, spec, hyper, callbacks):
    import toys
    from toys.engine import TestMetrics

    tr = toys.run(prob, algo, rounds=rounds, seed=seed, participation=spec, x0=prob.x0,
                  record="none", callbacks=[TestMetrics(prob), *callbacks], **hyper)
    for k, v in tr.metrics.items():
        row = out.setdefault(k, np.full((len(out["test_accuracy"]), rounds), math.nan))
        row[b] = math.nan
        row[b, :len(v)] = np.asarray(v, dtype=float)


def batched_sweep(problem, algo, *, grid: dict, rounds: int, seeds, callbacks=(),
                  metrics=("test_accuracy",), **fixed):
    """:func:`verify.reproduce.common.sweep_runs`' numbers (``{metric: (points, seeds,
    rounds)}``, points in the grid's Cartesian order) with the (point, seed) runs of one set
    of run keywords as one population; None when they do not batch (the caller sweeps).
    ``callbacks`` are replayed per instance with the factory's ``last`` problem (and
    ``process``) set to the instance's, as the sweep has them while it runs that point.
    ``participation`` may be a :class:`~.common.LastProcess` (each point's process is read
    right after its problem is built)."""
    import itertools

    names = list(grid)
    points = [dict(zip(names, v)) for v in itertools.product(*grid.values())]
    out = batched_points(problem, algo, points, rounds=rounds, seeds=seeds,
                         callbacks=callbacks, **fixed)
    if out is None:
        return None
    return {m: out.get(m, np.full((len(points), len(seeds), rounds), math.nan))
            for m in metrics}


def batched_points(problem, algo, points, *, rounds: int, seeds, callbacks=(), **fixed):
    """Every metric of the runs of ``points`` (a list of grid points) x ``seeds``:
    ``{metric: (len(points), len(seeds), rounds)}`` (the held-out ones and the callbacks'),
    or None (see :func:`batched_sweep`)."""
    from verify.sweep.api import _build, route

    from .callbacks import LastProcess
    from .data import note

    seeds = [int(s) for s in seeds]
    groups: dict = {}  # the run keywords (but participation) -> instances
    for i, point in enumerate(points):
        prob_kw, run_kw = route(problem, {**fixed, **point})
        prob = _build(problem, prob_kw)
        spec = run_kw.pop("participation", "full")
        proc = getattr(problem, "process", None)
        spec = proc if isinstance(spec, LastProcess) else spec
        g = groups.setdefault(repr(sorted(run_kw.items(), key=lambda kv: kv[0])),
                              {"kw": run_kw, "rows": []})
        g["rows"] += [(i, j, prob, spec, proc) for j in range(len(seeds))]
    why = {refusal([r[2] for r in g["rows"]], algo, g["kw"].get("backend"))
           for g in groups.values()} - {""}
    if why:
        note(seeds=f"the seeds run one at a time ({'; '.join(sorted(why))})")
        return None
    last = (getattr(problem, "last", None), getattr(problem, "process", None))
    res: dict = {}
    try:
        for g in groups.values():
            out = _run_group(problem, algo, g, seeds, rounds, callbacks)
            if out is None:
                note(seeds="the seeds run one at a time (a callback stops a run)")
                return None
            _fill(res, out, g["rows"], (len(points), len(seeds), rounds))
    finally:
        _set_last(problem, *last)
    note(seeds=BATCHED)
    return res


def _run_group(problem, algo, g, seeds, rounds, callbacks):
    rows = g["rows"]
    specs = [r[3] for r in rows]

    def cbs(b):  # instance b's callbacks see its problem as the factory's last
        _set_last(problem, rows[b][2], rows[b][4])
        return callbacks

    return batched_metrics([r[2] for r in rows], algo, rounds=rounds,
                           seeds=[seeds[r[1]] for r in rows],
                           participation=specs if len(rows) > 1 else specs[0],
                           callbacks=cbs if callbacks else None, **g["kw"])


def _set_last(factory, prob, process) -> None:
    """The factory's ``last`` problem (and its ``process``, where it keeps one itself)."""
    if hasattr(factory, "last"):
        factory.last = prob
        if "process" in vars(factory):
            factory.process = process


def _fill(res, out, rows, shape):
    """``res[metric][point, seed]`` from the population's instance rows."""
    for k, (i, j, *_) in enumerate(rows):
        for m, v in out.items():
            res.setdefault(m, np.full(shape, math.nan))[i, j] = v[k]
