"""The result of :func:`toys.run_many`: :class:`Population`, the population's arrays and one
:class:`~toys.engine.trace.Trace` per instance (built when first read), with toys.run's
divergence ends applied per instance (:func:`_ends`).

Example
-------
>>> import toys
>>> pop = toys.run_many([toys.quadratic(2, 2, seed=s) for s in range(2)], "fedavg", rounds=2,
...                     seeds=0, lr=0.1)
>>> len(pop), pop.gap.shape, pop[1].gap.shape
(2, (2, 3), (3,))
"""

from __future__ import annotations

import math

import numpy as np

from .. import participation as part
from .._array import to_numpy
from .measure import ROUND
from .rounds import DIVERGENCE
from .trace import ROUND_FIELDS, STATE_FIELDS, STEP_FIELDS, Trace, max_skew, virtual_grad_norm2

__all__ = ["Population", "SUMMARIES"]

class Population:
    """The result of :func:`run_many`: a sequence of B :class:`Trace` objects (built when
    first read: ``pop[b]``, ``list(pop)``) and the population's arrays at once, as the traces
    hold them: ``state[name]`` / ``pop.gap`` ... (B, rounds + 1), ``per_round[name]`` /
    ``pop.shadow_gap`` ... (B, rounds), ``alpha`` (B, rounds, N), ``omega`` (or None),
    ``participation``, ``final_model`` (B, d), ``diverged_at`` (B,) (-1: did not diverge).
    Divergence follows toys.run's two rules per instance (:data:`DIVERGENCE`): arrays are NaN
    where an instance's own run never reached.
    """

    def __init__(self, ctx, out):
        self._ctx, self._traces = ctx, {}
        B, R = ctx.B, ctx.rounds
        S = np.moveaxis(to_numpy(out["S"]), 2, 0)  # (B, len(STATE), R + 1)
        self.state = {k: np.array(S[:, i]) for i, k in enumerate(STATE_FIELDS)}
        self.per_round = {k: np.full((B, R), math.nan) for k in ROUND_FIELDS}
        if ctx.record != "none":
            RB = to_numpy(out["RB"])
            if ctx.record in ("round", "step"):
                for name in SUMMARIES:
                    self.per_round[name][:] = RB[ROUND.index(name)].T
            self.per_round["n_participants"][:] = out["npart"].T
            self.per_round["lr"][:] = ctx.lrs[:, ::ctx.tau]
        self.alpha = np.array(np.moveaxis(to_numpy(out["ALPHA"]), 1, 0))
        self.omega = (np.array(np.moveaxis(to_numpy(out["OMEGA"]), 1, 0), dtype=float)
                      if "OMEGA" in out else None)
        self.participation = np.array(np.moveaxis(out["part"], 1, 0))
        self.steps = None
        if "BS" in out:  # (R, B, rows, tau) -> {name: (B, R, tau)}
            BS = to_numpy(out["BS"])
            self.steps = {k: np.array(BS[:, :, i].swapaxes(0, 1))
                          for i, k in enumerate((*STEP_FIELDS, *ctx.want.extra))}
        self.final_model = np.array(out["x"], dtype=float)
        self.diverged_at = _ends(self, out["div"], ctx.record != "none")

    def __len__(self):
        return self._ctx.B

    def __iter__(self):
        return (self[b] for b in range(len(self)))

    def __getitem__(self, b):
        b = range(len(self))[b]
        if b not in self._traces:
            self._traces[b] = _trace(self._ctx, self, b)
        return self._traces[b]

    @property
    def grad_norm2_virtual(self):
        """(B, rounds): ``Trace.grad_norm2_virtual`` of every instance (record="step")."""
        if self.steps is None:
            raise AttributeError("grad_norm2_virtual needs record='step'")
        return virtual_grad_norm2(self.state["grad_norm2"][:, :-1], self.steps["grad_norm2"],
                                  self.per_round["n_participants"], self._ctx.tau)

    @property
    def rho_max(self):
        """(B, rounds): ``Trace.rho_max`` of every instance (record="step"; NaN where the
        skew was not measured)."""
        if self.steps is None:  # as Trace.rho_max (an AttributeError would read as absent)
            from boundlab.errors import DomainError

            raise DomainError("record", self._ctx.record, "'step' (the skew at every "
                                                          "iteration was not recorded)")
        return max_skew(self.steps["rho"])

    def __getattr__(self, name):
        d = self.__dict__
        if name in STATE_FIELDS and "state" in d:
            return d["state"][name]
        if name in ROUND_FIELDS and "per_round" in d:
            return d["per_round"][name]
        raise AttributeError(f"'Population' object has no attribute {name!r}")


SUMMARIES = ("shadow_gap", "drift_max", "drift_mean", "drift_sum", "disc_max", "g2_max")


def _ends(pop, div, measured) -> np.ndarray:
    """toys.run's ends per instance: after a norm divergence at round d nothing is measured
    (state columns > d, round rows > d, alpha / omega rows > d: NaN); the gap criterion on the
    recorded gaps may move the end earlier (state and round arrays after it NaN); the
    participation after the end is False. Returns diverged_at (B,) (-1: none)."""
    R = pop.alpha.shape[1]
    d = np.asarray(div, dtype=int)
    cols = np.arange(R + 1)
    _nan_after(pop, d, cols, alpha=True)
    if measured:
        d = np.where(d < 0, R + 1, d)
        gap = pop.state["gap"]
        with np.errstate(invalid="ignore"):
            over = gap[:, 1:] > DIVERGENCE["gap"] * np.maximum(1.0, gap[:, :1])
        over &= np.isfinite(gap[:, :1])
        first = np.where(over.any(axis=1), np.argmax(over, axis=1), R + 1)
        d = np.minimum(d, first)
        d = np.where(d > R, -1, d)
        _nan_after(pop, d, cols, alpha=False)
    on = d >= 0
    after = on[:, None] & (cols[None, :R] > d[:, None])
    pop.participation[after] = False
    for v in (pop.steps or {}).values():
        v[after] = math.nan
    return d


def _nan_after(pop, d, cols, alpha):
    on = d >= 0
    after = on[:, None] & (cols[None, :] > d[:, None])  # (B, R + 1)
    for v in pop.state.values():
        v[after] = math.nan
    for v in pop.per_round.values():
        v[after[:, :-1]] = math.nan
    if alpha:
        pop.alpha[after[:, :-1]] = math.nan
        if pop.omega is not None:
            pop.omega[after[:, :-1]] = math.nan


def _trace(ctx, pop, b):
    meta = ctx.meta
    tr = Trace.empty(ctx.rounds, ctx.n_clients, ctx.tau, ctx.record,
                     extra_steps=ctx.want.extra, algorithm=ctx.algo.name,
                     problem=ctx.pop.names[b] if hasattr(ctx.pop, "names") else ctx.pop.family,
                     seed=meta["seeds"][b], backend=meta["backend"],
                     hyper={**meta["hyper"], **{k: v[b] for k, v in meta["vary"].items()}})
    for k in STATE_FIELDS:
        tr.state[k][:] = pop.state[k][b]
    for k in ROUND_FIELDS:
        tr.per_round[k][:] = pop.per_round[k][b]
    tr.alpha[:] = pop.alpha[b]
    tr.omega = None if pop.omega is None else np.array(pop.omega[b])
    tr.participation[:] = pop.participation[b]
    if pop.steps is not None:
        for k in pop.steps:
            tr.steps[k][:] = pop.steps[k][b]
    tr.final_model = np.array(pop.final_model[b])
    tr.diverged_at = None if pop.diverged_at[b] < 0 else int(pop.diverged_at[b])
    spec = meta["participation"]
    tr.info.update({"device": str(ctx.ops.device), "population": {"instance": b,
                    "size": ctx.B}, "dtype": str(ctx.ops.dtype).replace("torch.", ""),
                    "participation": part.describe(spec[b] if _per_instance(spec, ctx.B)
                                                   else spec),
                    "F_star": float(ctx.pop.F_star[b]), "stopped_at": None})
    return tr


def _per_instance(spec, B) -> bool:
    return (isinstance(spec, (list, tuple)) and len(spec) == B and B > 1) or \
        (isinstance(spec, np.ndarray) and spec.ndim == 3)
