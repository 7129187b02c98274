"""The round loop of :func:`toys.run`, written once for every backend (see :mod:`toys._xp`).

One round r (every algorithm; the plan of :mod:`toys.algorithms` picks the pieces):

1. participation mask chi_r from the process (numpy stream ``participation``);
2. at x_r: losses (scores of the loss-weighted rules, gap, rho) and gradients (metrics);
3. weights: alpha_r (simplex rules: BM / average-participating / graph) or omega_r (FedAU
   family), fixed for the whole round;
4. ``local_update`` for all clients (absent clients' results are discarded), with an observer
   that measures the virtual / shadow average at every local step;
5. server step (simplex / FedAU / MIFA / FedVarp), beta's neighbour averages u, FedAU's
   Algorithm 2 update with chi_r;
6. divergence check (a non-finite x_{r+1} stops the run).

Measurements accumulate in preallocated backend buffers and are copied to numpy once at the
end (no device synchronisation inside a round except the divergence check).
"""

from __future__ import annotations

import math

import numpy as np

from . import aggregation as agg
from . import fedau as fa
from .beta import neighbour_average
from .local import local_update

# rows of the per-step buffer (the first seven are the public ``Trace.steps`` arrays)
_SHADOW, _RHO, _DIST2, _DMAX, _DISC, _G2, _LR, _DMEAN, _DSUM = range(9)
_STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
_ROUND = ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
          "drift_sum", "disc_max", "g2_max", "lr", "n_participants", "zeta_obs")
_RI = {k: i for i, k in enumerate(_ROUND)}
_NAN = math.nan


def _nanmin(ops, v):
    v = ops.where(ops.isnan(v), math.inf, v)
    m = ops.amin(v)
    return ops.where(m < math.inf, m, _NAN)


def simulate(ctx, trace):
    """Run ``ctx.rounds`` rounds; fills ``trace`` (numpy) and returns it."""
    ops, orc, plan = ctx.ops, ctx.oracle, ctx.plan
    N, R, tau, rec = ctx.n_clients, ctx.rounds, plan.local_steps, ctx.record
    p = ctx.p
    measure = rec != "none"
    per_step_losses = rec in ("round", "step")
    S = ops.full((len(_STATE), R + 1), _NAN)
    RB = ops.full((len(_ROUND), R), _NAN)
    B = ops.full((9, tau), _NAN)
    BS = ops.full((7, R, tau), _NAN) if rec == "step" else None
    ALPHA = ops.full((R, N), _NAN)
    OMEGA = ops.full((R, N), _NAN) if plan.server == "fedau" else None
    x = ctx.x0
    fed_state = fa.fedau_init(ops, N) if plan.omega == "fedau" else None
    Y = ops.zeros((N, ctx.dim)) if plan.server in ("mifa", "fedvarp") else None
    U = ops.broadcast_rows(x, N) if plan.beta is not None else None
    runmin = None
    prev_end = None  # (W_end, mask) of the previous round, for score_point="local_end"
    part_state = ctx.process.init(ctx.part_rng)
    lrs = plan.lrs
    diverged = None

    for r in range(R):
        part_state, mask_np = ctx.process.step(part_state, ctx.part_rng)
        mask_np = np.asarray(mask_np, dtype=bool)
        trace.participation[r] = mask_np
        mask = ops.asbool(mask_np)
        n_part = int(mask_np.sum())
        W0 = ops.broadcast_rows(x, N)
        L = G = None
        if measure:
            L, G = _state_metrics(ctx, S, r, x, W0)
        elif plan.needs_scores:
            L = orc.losses(x)

        # ---- weights of the round (fixed for the round; never use chi_r for omega)
        if plan.server == "simplex":
            if plan.rule_name == "graph":
                coef = agg.fedavg(ops, None, ctx.graph_p, mask)
            elif plan.rule_name == "participating":
                coef = fa.participating_coef(ops, p, mask)
            else:
                scores = None
                if plan.needs_scores:
                    scores, runmin = _scores(ctx, L, prev_end, runmin)
                coef = plan.rule(ops, scores, p, mask, r)
        elif plan.server == "fedau":
            omega = (fed_state.omega if plan.omega == "fedau" else ctx.known_omega)
            OMEGA[r] = omega
            coef = ops.where(mask, p * omega, 0.0)
        elif plan.server == "mifa":
            coef = ops.where(mask, p, 0.0)
        else:  # fedvarp: coefficient of the fresh updates
            coef = ops.where(mask, p, 0.0) * (N / max(n_part, 1))
        ALPHA[r] = coef
        a_v = fa.participating_coef(ops, coef, mask) if measure else None  # virtual average

        if measure:
            RB[_RI["n_participants"], r] = n_part
            if n_part:
                _rho_sync(ctx, RB, r, a_v, L, S[0, r])

        # ---- local training
        lrs_r = lrs[r * tau:(r + 1) * tau]
        if n_part:
            observer = None
            if measure:
                B[:] = _NAN
                observer = _make_observer(ctx, B, a_v, mask, n_part, per_step_losses)
            G0 = G if (G is not None and plan.batch_size is None and plan.beta is None) else None
            W = local_update(ops, orc, x, lrs_r, ctx.sample_rng, plan.batch_size, plan.prox,
                             plan.beta, U, observer, G0=G0, W0=W0)
            if measure:
                B[_LR] = ops.asarray(lrs_r)
                _round_summaries(ops, RB, B, r, tau)
                if BS is not None:
                    BS[:, r, :] = B[:7]
                if rec == "step":
                    RB[_RI["zeta_obs"], r] = _zeta_obs(ctx, W, mask_np)
        else:
            W = W0
        Delta = W - x if n_part == N else ops.where(mask[:, None], W - x, 0.0)

        # ---- server
        if plan.server in ("simplex", "fedau"):
            x_new = fa.weighted_step(ops, x, Delta, coef, plan.server_lr)
        elif plan.server == "mifa":
            x_new, Y = fa.mifa_step(ops, x, Delta, mask, p, plan.server_lr, Y)
        else:
            x_new, Y = fa.fedvarp_step(ops, x, Delta, mask, p, plan.server_lr, Y)
        if plan.beta is not None:
            W_last = ops.where(mask[:, None], W, x[None, :])
            U = neighbour_average(ops, ctx.graph_P, ctx.graph_degree, W_last, x)
        if fed_state is not None:
            fed_state = fa.fedau_update(ops, fed_state, mask, plan.K)
        if plan.needs_scores and plan.score_point == "local_end":
            prev_end = (W, mask)
        if not ops.all(ops.isfinite(x_new)):
            diverged = r
            break
        x = x_new
    else:
        if measure:
            _state_metrics(ctx, S, R, x, ops.broadcast_rows(x, N))

    # ---- copy to numpy (once)
    trace.diverged_at = diverged
    trace.final_model = np.array(ops.to_numpy(x), dtype=float)
    Sn, RBn = ops.to_numpy(S), ops.to_numpy(RB)
    for i, k in enumerate(_STATE):
        trace.state[k][:] = Sn[i]
    for i, k in enumerate(_ROUND):
        trace.per_round[k][:] = RBn[i]
    trace.per_round["lr"][:] = lrs[::tau] if measure else _NAN
    trace.alpha[:] = ops.to_numpy(ALPHA)
    if OMEGA is not None:
        trace.omega = np.array(ops.to_numpy(OMEGA), dtype=float)
    if BS is not None:
        BSn = ops.to_numpy(BS)
        for i, k in enumerate(("shadow_gap", "rho", "dist2", "drift_max", "disc", "g2_max",
                               "lr")):
            trace.steps[k][:] = BSn[i]
    if diverged is not None:  # rounds that never ran
        trace.participation[diverged + 1:] = False
        if trace.steps is not None:
            for v in trace.steps.values():
                v[diverged + 1:] = _NAN
        trace.per_round["lr"][diverged + 1:] = _NAN
    return trace


def _state_metrics(ctx, S, j, x, W0):
    """loss, gap, dist2, ||grad F||^2 and max_i ||grad F_i - grad F|| at x; returns (L, G)."""
    ops, orc, p = ctx.ops, ctx.oracle, ctx.p
    L = orc.losses(x)
    G = orc.grads(W0)
    F = p @ L
    S[0, j] = F
    gF = p @ G
    S[3, j] = ops.sum(gF * gF)
    S[4, j] = ops.sqrt(ops.amax(ops.sqnorm_rows(G - gF[None, :])))
    if ctx.x_star is not None:
        S[1, j] = F - ctx.F_star
        dx = x - ctx.x_star
        S[2, j] = ops.sum(dx * dx)
    return L, G


def _scores(ctx, L, prev_end, runmin):
    """Excess losses x_i = F_i(point) - offset_i (spec §5.0 options)."""
    ops, plan = ctx.ops, ctx.plan
    vals = L
    if plan.score_point == "local_end" and prev_end is not None:
        W_end, m_prev = prev_end
        vals = ops.where(m_prev, ctx.oracle.losses(W_end), L)
    if ctx.loss_offset == "exact":
        return vals - ctx.F_star_i, runmin
    if ctx.loss_offset == "zero":
        return vals, runmin
    runmin = vals if runmin is None else ops.minimum(runmin, vals)
    return vals - runmin, runmin


def _rho_sync(ctx, RB, r, a_v, L, F):
    ops = ctx.ops
    if ctx.F_star_i is None:
        return
    RB[_RI["rho_sync"], r] = agg.rho(ops, a_v, L - ctx.F_star_i, ctx.p,
                                     scale=ops.maximum(ops.where(F > 0, F, -F), 1.0))
    if ctx.y_star is not None:
        RB[_RI["rho_star"], r] = agg.rho(ops, a_v, ctx.y_star, ctx.p, scale=ctx.F_scale)


def _make_observer(ctx, B, a_v, mask, n_part, with_losses):
    ops, orc, p = ctx.ops, ctx.oracle, ctx.p

    def observe(k, W, G, lr):
        wbar = a_v @ W
        dn = ops.sqnorm_rows(W - wbar[None, :])
        dn_p = ops.where(mask, dn, 0.0)
        B[_DMAX, k] = ops.amax(dn_p)
        B[_DMEAN, k] = ops.sum(dn_p) / n_part
        B[_DSUM, k] = ops.sum(dn_p)
        B[_DISC, k] = a_v @ dn
        B[_G2, k] = ops.amax(ops.where(mask, ops.sqnorm_rows(G), 0.0))
        if ctx.x_star is not None:
            dx = wbar - ctx.x_star
            B[_DIST2, k] = ops.sum(dx * dx)
        if with_losses:
            Lv = orc.losses(wbar)
            F = p @ Lv
            if ctx.x_star is not None:
                B[_SHADOW, k] = F - ctx.F_star
            if ctx.F_star_i is not None:
                B[_RHO, k] = agg.rho(ops, a_v, Lv - ctx.F_star_i, p,
                                     scale=ops.maximum(ops.where(F > 0, F, -F), 1.0))

    return observe


def _round_summaries(ops, RB, B, r, tau):
    RB[_RI["shadow_gap"], r] = ops.sum(B[_SHADOW]) / tau
    # rho over the round's iterations t0..t0+tau-1: the sync value and steps k = 1..tau-1
    sync = RB[_RI["rho_sync"], r]
    if tau == 1:
        RB[_RI["rho_min"], r] = sync
    else:
        m = _nanmin(ops, B[_RHO, :tau - 1])
        RB[_RI["rho_min"], r] = ops.where(ops.isnan(sync), m,
                                          ops.where(ops.isnan(m), sync, ops.minimum(sync, m)))
    RB[_RI["drift_max"], r] = ops.amax(B[_DMAX])
    RB[_RI["drift_mean"], r] = ops.sum(B[_DMEAN]) / tau
    RB[_RI["drift_sum"], r] = ops.sum(B[_DSUM, :tau - 1])
    RB[_RI["disc_max"], r] = ops.amax(B[_DISC])
    RB[_RI["g2_max"], r] = ops.amax(B[_G2])


def _zeta_obs(ctx, W, mask_np):
    """max over participants of ||grad F_i(x_i) - grad F(x_i)|| at their end-of-round models
    (N gradient evaluations per participant: record="step" only)."""
    ops, orc, p = ctx.ops, ctx.oracle, ctx.p
    best = 0.0
    for i in np.flatnonzero(mask_np):
        Gi = orc.grads(W[int(i)])
        diff = Gi[int(i)] - p @ Gi
        best = max(best, math.sqrt(ops.item(ops.sum(diff * diff))))
    return best
