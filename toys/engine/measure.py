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

from .._array import array_namespace, item, sqnorm_rows
from ..algorithms.weights import rho

__all__ = ["RI", "ROUND", "STATE", "make_observer", "round_summaries", "state_metrics",
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
    xp = array_namespace(x)
    orc, p = ctx.oracle, ctx.p
    L = orc.losses(x)
    G = orc.grads(W0)
    F = p @ L
    S[0, j] = F
    gF = p @ G
    S[3, j] = xp.sum(gF * gF)
    S[4, j] = xp.sqrt(xp.max(sqnorm_rows(G - gF[None, :])))
    if ctx.x_star is not None:
        S[1, j] = F - ctx.F_star
        dx = x - ctx.x_star
        S[2, j] = xp.sum(dx * dx)
    return L, G


def rho_sync(ctx, RB, r, a_v, L, F):
    """rho(r, x_r) with the round's weights and rho(r, x*) (BM), when F_i* is known."""
    if ctx.F_star_i is None:
        return
    xp = array_namespace(L)
    RB[RI["rho_sync"], r] = rho(a_v, L - ctx.F_star_i, ctx.p,
                                scale=xp.maximum(xp.where(F > 0, F, -F), 1.0))
    if ctx.y_star is not None:
        RB[RI["rho_star"], r] = rho(a_v, ctx.y_star, ctx.p, scale=ctx.F_scale)


def make_observer(ctx, B, a_v, mask, n_part, with_losses):
    """``observe(k, W, G, lr)``: the per-step measurements of local step k into ``B``."""
    orc, p = ctx.oracle, ctx.p
    xp = array_namespace(p)

    def observe(k, W, G, lr):
        wbar = a_v @ W
        dn = sqnorm_rows(W - wbar[None, :])
        dn_p = xp.where(mask, dn, 0.0)
        B[DMAX, k] = xp.max(dn_p)
        B[DMEAN, k] = xp.sum(dn_p) / n_part
        B[DSUM, k] = xp.sum(dn_p)
        B[DISC, k] = a_v @ dn
        B[G2, k] = xp.max(xp.where(mask, sqnorm_rows(G), 0.0))
        if ctx.x_star is not None:
            dx = wbar - ctx.x_star
            B[DIST2, k] = xp.sum(dx * dx)
        if with_losses:
            Lv = orc.losses(wbar)
            F = p @ Lv
            if ctx.x_star is not None:
                B[SHADOW, k] = F - ctx.F_star
            if ctx.F_star_i is not None:
                B[RHO, k] = rho(a_v, Lv - ctx.F_star_i, p,
                                scale=xp.maximum(xp.where(F > 0, F, -F), 1.0))

    return observe


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
