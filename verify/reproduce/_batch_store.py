"""The batched seeds (:mod:`verify.reproduce.batch`) kept point by point in the sweep's own
store (:class:`verify.sweep.store.SweepStore`, the folder :func:`verify.sweep` would write for
the same sweep), so an interrupted item resumes point by point whichever path ran a point: the
points already there are read back, the missing ones run as one population and are written as
they would be by the sweep (their rows: the grid values, ``seed``, ``round`` and every
metric; the metrics are what :func:`~verify.reproduce.common.sweep_runs` reads).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["stored_sweep"]


def stored_sweep(out, problem, algo, *, grid: dict, rounds: int, seeds, callbacks=(),
                 metrics=("test_accuracy",), **fixed):
    """:func:`~verify.reproduce.batch.batched_sweep` with the finished points of ``out`` (a
    sweep folder of :func:`verify.sweep`'s store) read back and the others written there;
    None when the missing points do not batch (the caller's sweep then resumes the folder)."""
    from verify.sweep.api import _spec
    from verify.sweep.store import SweepStore

    from .batch import batched_points
    from .callbacks import HeldOut

    seeds = [int(s) for s in seeds]
    kw = {"record": "none", "callbacks": [HeldOut(problem), *callbacks], **fixed}
    spec = _spec(problem, algo, grid, seeds, rounds, None, "local", kw, None, 0.95, None)
    points = spec["points"]
    store = SweepStore(out, spec)
    try:
        todo = [i for i in range(len(points)) if i not in store.finished()]
        if todo:
            got = batched_points(problem, algo, [points[i] for i in todo], rounds=rounds,
                                 seeds=seeds, callbacks=callbacks, **fixed)
            if got is None:
                return None
            for k, i in enumerate(todo):
                store.write(i, _frame(points[i], seeds, rounds,
                                      {m: v[k] for m, v in got.items()}))
        frames = [store.read(i) for i in range(len(points))]
    finally:
        store.close()
    return _metrics(frames, metrics, len(points), len(seeds), rounds)


def _frame(point, seeds, rounds, values):
    """Point ``point``'s rows as the sweep writes them: per seed, rounds 0 .. R (a round's
    metric on the row after it, round 0 empty), the grid values first."""
    import pandas as pd

    S = len(seeds)
    cols = {k: [v] * (S * (rounds + 1)) for k, v in point.items()}
    cols["seed"] = np.repeat(seeds, rounds + 1)
    cols["round"] = np.tile(np.arange(rounds + 1), S)
    for m, v in sorted(values.items()):
        col = np.full((S, rounds + 1), math.nan)
        col[:, 1:] = v
        cols[m] = col.reshape(-1)
    return pd.DataFrame(cols)


def _metrics(frames, metrics, P, S, rounds):
    import pandas as pd

    df = pd.concat(frames, ignore_index=True)
    res = {}
    for m in metrics:
        col = df[m].to_numpy(dtype=float) if m in df.columns else np.full(len(df), math.nan)
        res[m] = col.reshape(P, S, rounds + 1)[..., 1:]
    return res
