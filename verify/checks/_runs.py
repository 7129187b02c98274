"""The checks' runs over seeds and settings, through :func:`verify.sweep`.

:func:`sweep_runs` is ``verify.sweep`` with the suite's backend and device (``--backend``) and,
when the :class:`verify.suite.Context` names one, its executor; :func:`runs` cuts the tidy
table back into one :class:`Run` per (grid point, seed), in the table's order, which reads
like a :class:`toys.Trace`: state columns (``gap``, ``dist2``, ...: rounds + 1 values), round
columns (``shadow_gap``, ``drift_max``, ...: rounds values) and the per-run ``measures``
(:data:`DIVERGED`, :func:`trace_values`, :func:`final_model`: their final-row value).

Example
-------
>>> import toys
>>> from verify.suite import Context
>>> prob = toys.quadratic(3, 2, seed=0)
>>> df = sweep_runs(Context(), prob, "fedavg", grid={"lr": [0.1, 0.2]}, seeds=[0, 5],
...                 rounds=3, measures={**DIVERGED, **final_model(prob.dim)})
>>> rs = runs(df)
>>> [(r.point["lr"], r.seed) for r in rs]
[(0.1, 0), (0.1, 5), (0.2, 0), (0.2, 5)]
>>> tr = toys.run(prob, "fedavg", rounds=3, seed=5, lr=0.2)
>>> bool(np.array_equal(rs[3].gap, tr.gap) and np.array_equal(rs[3].final_model, tr.final_model))
True
>>> rs[3].shadow_gap.shape, rs[3].diverged
((3,), '')
"""

from __future__ import annotations

import functools
import re

import numpy as np

from toys.engine.trace import ROUND_FIELDS, STATE_FIELDS

from ..compare import trace_diverged

__all__ = ["sweep_runs", "runs", "Run", "DIVERGED", "trace_values", "final_model"]


def sweep_runs(ctx, problem, algorithm, *, seeds, rounds, grid=None, measures=None, **kw):
    """:func:`verify.sweep` (``grid={}`` by default: seeds only) with the suite's backend and
    device, and its executor / scheduler when the context has them."""
    from ..sweep import sweep

    backend = getattr(ctx, "backend", "numpy") if ctx is not None else "numpy"
    if backend != "numpy":  # as simulate(): numpy runs keep toys.run's defaults
        kw.setdefault("backend", backend)
        kw.setdefault("device", getattr(ctx, "device", None))
    for name in ("executor", "scheduler"):
        if getattr(ctx, name, None) is not None:
            kw.setdefault(name, getattr(ctx, name))
    return sweep(problem, algorithm, grid=dict(grid or {}), seeds=seeds, rounds=rounds,
                 measures=measures, **kw)


class Run:
    """The rows of one run (one grid point, one seed) of a sweep table, read like a trace."""

    def __init__(self, rows, grid_names=()):
        self.rows = rows
        self.seed = int(rows["seed"].iloc[0])
        self.point = {k: _plain(rows[k].iloc[0]) for k in grid_names}

    def __getattr__(self, name):
        rows = self.__dict__.get("rows")
        if rows is None or name not in rows.columns:
            raise AttributeError(f"'Run' has no column {name!r}")
        if name in STATE_FIELDS:
            return rows[name].to_numpy()
        if name in ROUND_FIELDS:
            return rows[name].to_numpy()[:-1]
        return rows[name].iloc[-1]  # a per-run measure: on the final round's row

    def per_round(self, name: str) -> np.ndarray:
        """A per-round column (a round field or a per-round measure): its ``rounds`` values,
        without the final row (which holds the final state only).

        A per-state column (``gap``, ``dist2``, ...) is the attribute itself, all rows."""
        return self.rows[name].to_numpy()[:-1]

    @property
    def final_model(self) -> np.ndarray:
        """The final model, from the :func:`final_model` columns."""
        cols = sorted((c for c in self.rows.columns if re.fullmatch(r"final_x\d+", c)),
                      key=lambda c: int(c[7:]))
        return self.rows[cols].iloc[-1].to_numpy(dtype=float)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def runs(frame) -> list[Run]:
    """One :class:`Run` per (grid point, seed) of a :func:`verify.sweep` table, in its order."""
    names = list(frame.attrs.get("sweep", {}).get("points", [{}])[0])
    start = np.flatnonzero(frame["round"].to_numpy() == 0)
    ends = [*start[1:], len(frame)]
    return [Run(frame.iloc[a:b], names) for a, b in zip(start, ends)]


def _diverged(trace, problem) -> str:
    return trace_diverged(trace)


def _attr(trace, problem, name):
    return getattr(trace, name)


def _coordinate(trace, problem, j):
    return float(trace.final_model[j])


#: measure: why the run counts as diverged ('' if not), :func:`verify.compare.trace_diverged`
DIVERGED = {"diverged": _diverged}


def trace_values(*names: str) -> dict:
    """Measures: per-run values the trace derives itself (``avg_shadow_gap``, ``rho_bar``,
    ``rho_tilde``, ...), taken from it so that their definition stays in one place."""
    return {n: functools.partial(_attr, name=n) for n in names}


def final_model(dim: int) -> dict:
    """Measures ``final_x0 .. final_x{dim-1}``: the run's final model, one column per
    coordinate (for a-posteriori constants evaluated at the runs' final models)."""
    return {f"final_x{j}": functools.partial(_coordinate, j=j) for j in range(int(dim))}
