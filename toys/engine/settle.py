"""Measured rounds completed in batches: the losses at their shadow points (and, when
deferred, at the server model x_r) for many rounds in one pass over the data, then every
round's summaries at once.

A measured round leaves its per-step buffer ``B`` (:class:`toys.engine.measure.Observer`), the
weights of its virtual average and its points in a :class:`Pending` batch; :func:`settle`
evaluates all the points with one ``losses_at`` call (the oracle's batched kernel: one read of
the data for up to :data:`PENDING_POINTS` points instead of one per round), fills the shadow
gaps, the rho values and the deferred state metrics, and computes the round summaries of every
pending round with array operations over the batch. The batch is settled when it holds
:data:`PENDING_POINTS` points or rounds, before a checkpoint is written and when the run
ends. Every value is a row-wise computation, so its bits do not depend on the batch (tested:
settling every round gives the same trace bit for bit).

Example
-------
>>> pend = Pending()
>>> len(pend), pend.n_points
(0, 0)
"""

from __future__ import annotations

import math

from .._array import array_namespace
from ..algorithms.weights import rho
from .measure import (
    DISC,
    DMAX,
    DMEAN,
    DSUM,
    G2,
    N_STEP,
    RHO,
    RI,
    SHADOW,
    loss_values,
    losses_at,
    step_skew,
)

__all__ = ["PENDING_BYTES", "PENDING_POINTS", "Pending", "round_summaries", "settle",
           "summaries"]

PENDING_POINTS = 64
"""Points (shadow points, deferred server models) or rounds a :class:`Pending` batch collects
before it is settled."""

PENDING_BYTES = 1 << 26
"""... or fewer, so that the batch's (points, clients) arrays (the losses, the weights of each
point's virtual average) stay below this many bytes each: with many clients the batch is
settled sooner (e.g. every round at N = 10^6)."""


class Pending:
    """Measured rounds waiting to be completed: (r, B, a_v, segments, x) with the shadow
    points ``segments`` [(k0, k1, wbar)] and the server model ``x`` when its losses were
    deferred (else None)."""

    def __init__(self):
        self.rounds, self.n_points = [], 0

    def add(self, r, B, a_v, segments, x=None):
        self.rounds.append((r, B, a_v, segments, x))
        self.n_points += sum(k1 - k0 for k0, k1, _ in segments) + (x is not None)

    def full(self) -> bool:
        if not self.rounds:
            return False
        clients = self.rounds[0][2].shape[0]  # a_v: one weight per client
        n = max(self.n_points, len(self.rounds))
        return n >= PENDING_POINTS or 8 * self.n_points * clients >= PENDING_BYTES

    def __len__(self):
        return len(self.rounds)


def settle(ctx, pending, buffers, rows=None) -> None:
    """Complete every round of ``pending`` into the run's ``buffers`` (S, RB, BS) and empty
    it (``rows``: the per-step rows BS keeps, :func:`~toys.engine.measure.recorded_rows`)."""
    rounds = pending.rounds
    if not rounds:
        return
    pending.rounds, pending.n_points = [], 0
    xp = array_namespace(rounds[0][1])
    pts, A = [], []
    for _, _, a_v, segs, x in rounds:
        for w in ([] if x is None else [x[None, :]]) + [w for _, _, w in segs]:
            pts.append(w)
            A.append(xp.broadcast_to(a_v[None, :], (w.shape[0], a_v.shape[0])))
    if pts:
        _points(ctx, rounds, buffers, xp.concat(pts, axis=0), xp.concat(A, axis=0))
    summaries(buffers, xp.stack([B for _, B, _, _, _ in rounds]),
              [r for r, _, _, _, _ in rounds], ctx.local_steps, rows)


def _points(ctx, rounds, buffers, P, A):
    """Losses, F, gaps and rho at all the points ``P`` (M, d) (``A`` (M, N): the virtual
    average's weights of each point's round) into the rounds' buffers."""
    xp = array_namespace(P)
    Lv = losses_at(ctx.oracle, P)  # (M, N)
    F = loss_values(ctx.p[None, :], Lv, None, None, None, summed=True)[0]  # row by row: the
    # bits do not depend on M
    gap = None if ctx.x_star is None else F - ctx.F_star
    rh = None if ctx.F_star_i is None else step_skew(A, Lv, F, ctx.F_star_i[None, :], ctx.p)
    S, RB = buffers["S"], buffers["RB"]
    j = 0
    for r, B, a_v, segs, x in rounds:
        if x is not None:  # the deferred state metrics at x_r
            S[0, r] = F[j]
            if gap is not None:
                S[1, r] = gap[j]
                dx = x - ctx.x_star
                S[2, r] = xp.sum(dx * dx)
            if rh is not None:
                RB[RI["rho_sync"], r] = rh[j]
                if ctx.y_star is not None:
                    RB[RI["rho_star"], r] = rho(a_v, ctx.y_star, ctx.p, scale=ctx.F_scale)
            j += 1
        for k0, k1, _ in segs:
            if gap is not None:
                B[SHADOW, k0:k1] = gap[j:j + k1 - k0]
            if rh is not None:
                B[RHO, k0:k1] = rh[j:j + k1 - k0]
            j += k1 - k0


def summaries(buffers, Bs, rs, tau, rows=None) -> None:
    """The per-round summaries of the per-step buffers ``Bs`` (R, N_ROWS, tau) of rounds ``rs``
    into their columns of ``RB`` (and their step arrays, the rows ``rows``, default the first
    N_STEP, into ``BS`` when recorded)."""
    RB = buffers["RB"]
    for name, v in round_summaries(Bs, RB[RI["rho_sync"], rs], tau).items():
        RB[RI[name], rs] = v
    if "BS" in buffers:
        for i, r in enumerate(rs):
            buffers["BS"][:, r, :] = Bs[i, :N_STEP] if rows is None else Bs[i, rows]


def round_summaries(Bs, sync, tau, names=None) -> dict:
    """The round summaries of per-step buffers ``Bs`` (..., N_ROWS, tau) (leading axes: the
    rounds of a batch, or the instances of a population, :func:`toys.run_many`) with the
    rounds' rho at the sync point ``sync`` (...): shadow_gap, rho_min, drift_max, drift_mean,
    drift_sum, disc_max, g2_max, each (...) (reductions over the last axis, row by row);
    ``names``: only these (None: all; each with the same bits)."""
    xp = array_namespace(Bs)
    on = (lambda name: True) if names is None else (lambda name: name in names)
    out = {}
    if on("shadow_gap"):
        out["shadow_gap"] = xp.sum(Bs[..., SHADOW, :], axis=-1) / tau
    if on("rho_min"):
        out["rho_min"] = _rho_min(xp, Bs, sync, tau)
    if on("drift_max"):
        out["drift_max"] = xp.max(Bs[..., DMAX, :], axis=-1)
    if on("drift_mean"):
        out["drift_mean"] = xp.sum(Bs[..., DMEAN, :], axis=-1) / tau
    if on("drift_sum"):
        out["drift_sum"] = xp.sum(Bs[..., DSUM, :tau - 1], axis=-1)
    if on("disc_max"):
        out["disc_max"] = xp.max(Bs[..., DISC, :], axis=-1)
    if on("g2_max"):
        out["g2_max"] = xp.max(Bs[..., G2, :], axis=-1)
    return out


def _rho_min(xp, Bs, sync, tau):
    """rho over each round's iterations t0..t0+tau-1: the sync value and steps k = 1..tau-1."""
    if tau == 1:
        return sync
    R = Bs[..., RHO, :tau - 1]
    m = xp.min(xp.where(xp.isnan(R), math.inf, R), axis=-1)
    m = xp.where(m < math.inf, m, math.nan)
    return xp.where(xp.isnan(sync), m, xp.where(xp.isnan(m), sync, xp.minimum(sync, m)))
