"""The measurements of the round loop: state metrics at the server model, the per-step observer
of the virtual / shadow average, and the round summaries (see :mod:`toys.engine.trace` for the
meaning of every quantity). Written once for every backend (array-API namespace).

Example
-------
>>> import numpy as np
>>> buf = np.full((len(ROUND), 2), np.nan)
>>> ROUND.index("n_participants") == RI["n_participants"]
True
"""

from __future__ import annotations

import math

import numpy as np
from array_api_compat import device

from .._array import array_namespace, item, sqnorm_rows
from ..algorithms.weights import rho

__all__ = ["PENDING_POINTS", "RI", "ROUND", "STATE", "STASH_BYTES", "Observer", "Pending",
           "losses_at", "round_summaries", "state_grads", "state_losses", "state_metrics",
           "zeta_obs"]

# rows of the per-step buffer (the first seven are the public ``Trace.steps`` arrays)
SHADOW, RHO, DIST2, DMAX, DISC, G2, LR, DMEAN, DSUM = range(9)
STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
ROUND = ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
         "drift_sum", "disc_max", "g2_max", "lr", "n_participants", "zeta_obs")
RI = {k: i for i, k in enumerate(ROUND)}
_NAN = math.nan


def _nanmin(v):
    xp = array_namespace(v)
    v = xp.where(xp.isnan(v), math.inf, v)
    m = xp.min(v)
    return xp.where(m < math.inf, m, _NAN)


def state_metrics(ctx, S, j, x, W0):
    """loss, gap, dist2, ||grad F||^2 and max_i ||grad F_i - grad F|| at x into column j of
    ``S``; returns (client losses, client gradients)."""
    L = state_losses(ctx, S, j, x)
    G = ctx.oracle.grads(W0)
    state_grads(ctx, S, j, G)
    return L, G


def state_losses(ctx, S, j, x, L=None):
    """loss, gap and dist2 at x into column j of ``S`` (from the client losses ``L`` at x
    when already computed); returns the client losses."""
    xp = array_namespace(x)
    L = ctx.oracle.losses(x) if L is None else L
    F = ctx.p @ L
    S[0, j] = F
    if ctx.x_star is not None:
        S[1, j] = F - ctx.F_star
        dx = x - ctx.x_star
        S[2, j] = xp.sum(dx * dx)
    return L


def state_grads(ctx, S, j, G):
    """||grad F||^2 and max_i ||grad F_i - grad F|| from the client gradients G at x."""
    xp = array_namespace(G)
    gF = ctx.p @ G
    S[3, j] = xp.sum(gF * gF)
    S[4, j] = xp.sqrt(xp.max(sqnorm_rows(G - gF[None, :])))


def rho_sync(ctx, RB, r, a_v, L, F):
    """rho(r, x_r) with the round's weights and rho(r, x*) (BM), when F_i* is known."""
    if ctx.F_star_i is None:
        return
    xp = array_namespace(L)
    RB[RI["rho_sync"], r] = rho(a_v, L - ctx.F_star_i, ctx.p,
                                scale=xp.maximum(xp.where(F > 0, F, -F), 1.0))
    if ctx.y_star is not None:
        RB[RI["rho_star"], r] = rho(a_v, ctx.y_star, ctx.p, scale=ctx.F_scale)


STASH_BYTES = 1 << 28
"""Largest per-round stash (the iterates and gradients of every local step, 2 tau N d
numbers) an :class:`Observer` keeps to measure all the steps at once; beyond it each step is
measured when it happens (the same values, tau loss evaluations instead of one batched one)."""


class Observer:
    """The per-step measurements of a round (virtual / shadow average, drift, gradients) into
    the buffer ``B`` (9, tau).

    A client piece calls ``observer(k, W, G, lr)`` after local step k (the protocol of
    :mod:`toys.algorithms.client`); a fused kernel that keeps the stacks of every step may call
    ``observe_all(Ws, Gs)`` once instead. The steps are stashed and measured together by
    :meth:`flush` (one batched loss evaluation at the tau shadow points, through the oracle's
    ``losses_at`` when it has one), unless the stash would exceed :data:`STASH_BYTES`.
    ``first_grads`` is the gradient stack of step 0 (the full gradients at x for a full-batch
    piece), kept for the state metrics.
    """

    def __init__(self, ctx, B, a_v, mask, n_part, with_losses):
        self.ctx, self.B, self.a_v, self.mask = ctx, B, a_v, mask
        self.n_part, self.with_losses = n_part, with_losses
        self.tau = B.shape[1]
        self.Ws = self.Gs = self.first_grads = self.start_losses = None
        self.wants_start_losses = False  # set by the engine: a fused kernel may fill them
        self.pending = None  # set by the engine: a Pending batch that takes the shadow points
        self.segments = []  # the shadow points handed to it: (k0, k1, wbar)
        self._stashed = 0

    def __call__(self, k, W, G, lr):
        xp = array_namespace(W)
        if k == 0:
            self.first_grads = xp.asarray(G, copy=True)
        if self.Ws is None and 2 * self.tau * W.shape[0] * W.shape[1] * 8 <= STASH_BYTES:
            shape = (self.tau, *W.shape)
            self.Ws = xp.empty(shape, dtype=W.dtype, device=device(W))
            self.Gs = xp.empty(shape, dtype=W.dtype, device=device(W))
        if self.Ws is None:
            self._measure(k, k + 1, W[None], G[None])
        else:
            self.Ws[k], self.Gs[k] = W, G
            self._stashed = k + 1

    def observe_all(self, Ws, Gs):
        """Every step at once: ``Ws``, ``Gs`` (tau, N, d), the iterates and the gradients."""
        self.first_grads = Gs[0]
        self._measure(0, Ws.shape[0], Ws, Gs)

    def flush(self):
        """Measure the stashed steps (call once, after the client update)."""
        if self._stashed:
            k, self._stashed = self._stashed, 0
            self._measure(0, k, self.Ws[:k], self.Gs[:k])

    def _measure(self, k0, k1, Ws, Gs):
        ctx, B, a_v, mask = self.ctx, self.B, self.a_v, self.mask
        xp = array_namespace(Ws)
        m = Ws.shape[0]
        # per-step products (a stacked matmul would sum in another order: other last bits)
        wbar = xp.stack([a_v @ Ws[j] for j in range(m)])  # (m, d): the virtual averages
        D = Ws - wbar[:, None, :]
        dn = sqnorm_rows(D)
        dn_p = xp.where(mask[None, :], dn, 0.0)
        B[DMAX, k0:k1] = xp.max(dn_p, axis=1)
        B[DSUM, k0:k1] = xp.sum(dn_p, axis=1)
        B[DMEAN, k0:k1] = B[DSUM, k0:k1] / self.n_part
        B[DISC, k0:k1] = xp.stack([a_v @ dn[j] for j in range(m)])
        B[G2, k0:k1] = xp.max(xp.where(mask[None, :], sqnorm_rows(Gs), 0.0), axis=1)
        if ctx.x_star is not None:
            dx = wbar - ctx.x_star[None, :]
            B[DIST2, k0:k1] = xp.sum(dx * dx, axis=1)
        if self.with_losses and self.pending is not None:
            self.segments.append((k0, k1, wbar))  # evaluated later, in a batch
        elif self.with_losses:
            shadow_into(self.ctx, B, a_v, k0, k1, losses_at(ctx.oracle, wbar))


def shadow_into(ctx, B, a_v, k0, k1, Lv):
    """The shadow gap and rho at the virtual averages of steps k0..k1-1 into ``B`` from every
    client's losses ``Lv`` (k1 - k0, N) there."""
    xp = array_namespace(Lv)
    F = xp.stack([ctx.p @ Lv[j] for j in range(Lv.shape[0])])
    if ctx.x_star is not None:
        B[SHADOW, k0:k1] = F - ctx.F_star
    if ctx.F_star_i is not None:
        B[RHO, k0:k1] = rho(a_v, Lv - ctx.F_star_i[None, :], ctx.p,
                            scale=xp.maximum(xp.where(F > 0, F, -F), 1.0))


PENDING_POINTS = 64
"""Shadow points (the virtual averages of the local steps) a :class:`Pending` batch collects
across rounds before their losses are evaluated together: one pass over the data for all of
them (``losses_at``), whose per-point bits do not depend on the batch. The batch is also
settled before a checkpoint is written and when the run ends."""


class Pending:
    """Rounds whose shadow losses wait for a batched evaluation: their per-step buffers
    ``B``, virtual-average weights and shadow points. :meth:`settle` evaluates them and
    completes the rounds' summaries (``complete(r, B)``, the engine's)."""

    def __init__(self):
        self.rounds, self.n_points = [], 0

    def add(self, r, observer):
        self.rounds.append((r, observer.B, observer.a_v, observer.segments))
        self.n_points += sum(k1 - k0 for k0, k1, _ in observer.segments)

    def __len__(self):
        return len(self.rounds)

    def settle(self, ctx, complete):
        if not self.rounds:
            return
        xp = array_namespace(self.rounds[0][1])
        P = xp.concat([w for _, _, _, segs in self.rounds for _, _, w in segs], axis=0)
        Lv = losses_at(ctx.oracle, P)
        j = 0
        for r, B, a_v, segs in self.rounds:
            for k0, k1, _ in segs:
                shadow_into(ctx, B, a_v, k0, k1, Lv[j:j + k1 - k0])
                j += k1 - k0
            complete(r, B)
        self.rounds, self.n_points = [], 0


def losses_at(oracle, P):
    """Every client's loss at each of the points ``P`` (m, d): an (m, N) array. One batched
    evaluation through the oracle's ``losses_at`` when it has one, else m ``losses`` calls."""
    fn = getattr(oracle, "losses_at", None)
    if fn is not None:
        out = fn(P)
        if out is not None:
            return out
    xp = array_namespace(P)
    return xp.stack([oracle.losses(P[j]) for j in range(P.shape[0])])


def round_summaries(RB, B, r, tau):
    """The per-round summaries of the per-step buffer ``B`` into column r of ``RB``."""
    xp = array_namespace(B)
    RB[RI["shadow_gap"], r] = xp.sum(B[SHADOW]) / tau
    # rho over the round's iterations t0..t0+tau-1: the sync value and steps k = 1..tau-1
    sync = RB[RI["rho_sync"], r]
    if tau == 1:
        RB[RI["rho_min"], r] = sync
    else:
        m = _nanmin(B[RHO, :tau - 1])
        RB[RI["rho_min"], r] = xp.where(xp.isnan(sync), m,
                                        xp.where(xp.isnan(m), sync, xp.minimum(sync, m)))
    RB[RI["drift_max"], r] = xp.max(B[DMAX])
    RB[RI["drift_mean"], r] = xp.sum(B[DMEAN]) / tau
    RB[RI["drift_sum"], r] = xp.sum(B[DSUM, :tau - 1])
    RB[RI["disc_max"], r] = xp.max(B[DISC])
    RB[RI["g2_max"], r] = xp.max(B[G2])


def zeta_obs(ctx, W, mask_np):
    """max over participants of ||grad F_i(x_i) - grad F(x_i)|| at their end-of-round models
    (N gradient evaluations per participant: record="step" only)."""
    orc, p = ctx.oracle, ctx.p
    xp = array_namespace(W)
    best = 0.0
    for i in np.flatnonzero(mask_np):
        Gi = orc.grads(W[int(i)])
        diff = Gi[int(i)] - p @ Gi
        best = max(best, math.sqrt(item(xp.sum(diff * diff))))
    return best
