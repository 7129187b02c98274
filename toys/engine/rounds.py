"""The round loop of :func:`toys.run`, written once for every backend and every algorithm.

One round r (the algorithm's pieces do the algorithm-specific work; the loop never asks which
algorithm it runs):

1. participation mask chi_r from the process (numpy stream ``participation``);
2. at x_r: losses and gradients (measurements; losses also when the weight rule needs them);
3. ``weights.update`` -> the round's coefficients (fixed for the whole round);
4. ``client.update`` -> the clients' end-of-round models W (an observer measures the virtual
   / shadow average at every local step);
5. ``server.update`` with Delta = W - x (zero rows for absent clients) -> x_{r+1};
6. divergence check (:data:`DIVERGENCE`), callbacks, checkpoint.

Every piece of state lives in :class:`State` (the pieces' states, the participation state, the
random streams are in the context, the measurement buffers), so a run can be checkpointed after
any round and resumed bit for bit (:mod:`toys.engine.checkpoint`). Measurements accumulate in
backend buffers and are copied to numpy once at the end.

Example
-------
>>> DIVERGENCE["norm"] >= 1e6
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._array import array_namespace, broadcast_rows, item, normalise, to_numpy
from . import measure as m
from . import settle as stl

__all__ = ["DIVERGENCE", "State", "init_state", "one_round", "settle"]

DIVERGENCE = {"norm": 1e8, "gap": 1e16}
"""A run is marked diverged at round r when x_{r+1} is not finite, or ||x_{r+1}|| exceeds
``norm`` x max(1, ||x_0||), or (when measured) the gap F(x_{r+1}) - F* exceeds
``gap`` x max(1, F(x_0) - F*). The run stops there; ``Trace.diverged_at`` = r."""
_NAN = math.nan


@dataclass
class State:
    """The complete mutable state of a run after ``round`` rounds."""

    round: int
    x: object
    client: object
    weights: object
    server: object
    participation_state: object
    prev_end: object = None
    buffers: dict = field(default_factory=dict)
    participation: np.ndarray | None = None
    metrics: dict = field(default_factory=dict)
    diverged_at: int | None = None
    stopped_at: int | None = None
    pending: stl.Pending = field(default_factory=stl.Pending)  # rounds awaiting completion


def init_state(ctx) -> State:
    """The state before round 0: every piece's ``init`` and NaN-filled buffers."""
    ops, algo, N, R = ctx.ops, ctx.algo, ctx.n_clients, ctx.rounds
    tau = ctx.local_steps
    buf = {"S": ops.full((len(m.STATE), R + 1), _NAN), "RB": ops.full((len(m.ROUND), R), _NAN),
           "ALPHA": ops.full((R, N), _NAN)}
    if ctx.record == "step":
        buf["BS"] = ops.full((len(m.recorded_rows(_extra(ctx))), R, tau), _NAN)
    if callable(getattr(algo.weights, "omega", None)):
        buf["OMEGA"] = ops.full((R, N), _NAN)
    return State(round=0, x=ctx.x0, client=algo.client.init(ctx.x0, N),
                 weights=algo.weights.init(N), server=algo.server.init(ctx.x0, N),
                 participation_state=ctx.process.init(ctx.part_rng), buffers=buf,
                 participation=np.zeros((R, N), dtype=bool))


def _weights(ctx, st, r, L, mask):
    """The round's coefficients from the weight rule (and its omega, when it has one)."""
    rule = ctx.algo.weights
    losses = L
    if getattr(rule, "loss_point", "global") == "local_end" and st.prev_end is not None:
        W_end, m_prev = st.prev_end
        losses = array_namespace(L).where(m_prev, ctx.oracle.losses(W_end), L)
    if "OMEGA" in st.buffers:
        om = rule.omega(st.weights)
        st.buffers["OMEGA"][r] = 1.0 if om is None else ctx.ops.asarray(om)
    coef, st.weights = rule.update(st.weights, losses=losses, p=ctx.p, mask=mask, round=r)
    st.buffers["ALPHA"][r] = coef
    return coef


def _local(ctx, st, r, x, mask, mask_np, n_part, a_v, W0, G, deferred=False):
    """The clients' round, with the per-step observer when measuring; returns (W, observer or
    None). ``deferred``: the losses at x join the round's shadow points in the batch."""
    measure, B, observer = ctx.record != "none", None, None
    if measure and n_part:
        B = ctx.ops.full((m.N_ROWS, ctx.local_steps), _NAN)
        extra = frozenset(m.EXTRA_STEPS[n] for n in _extra(ctx))
        observer = m.Observer(ctx, B, a_v, mask, n_part, ctx.record in ("round", "step"),
                              with_grads=ctx.record == "step", extra=extra, start=x)
    W, st.client = ctx.algo.client.update(st.client, x=x, oracle=ctx.oracle, round=r,
                                          rng=ctx.sample_rng, mask=mask, start=W0, grads=G,
                                          observer=observer)
    if B is not None:
        observer.flush()
        tau, RB = ctx.local_steps, st.buffers["RB"]
        B[m.LR] = ctx.ops.asarray(ctx.lrs[r * tau:(r + 1) * tau])
        # completed later, with a batch of rounds (toys.engine.settle)
        st.pending.add(r, B, a_v, observer.segments,
                       array_namespace(x).asarray(x, copy=True) if deferred else None)
        if st.pending.full():
            settle(ctx, st)
        if ctx.record == "step":
            RB[m.RI["zeta_obs"], r] = m.zeta_obs(ctx, W, mask_np)
    return W, observer


def _extra(ctx) -> tuple:
    """The names of :data:`~toys.engine.measure.EXTRA_STEPS` the run records (record="step")."""
    return tuple(getattr(ctx, "extra_steps", ())) if ctx.record == "step" else ()


def settle(ctx, st) -> None:
    """Complete the pending measured rounds (:func:`toys.engine.settle.settle`): when the
    batch is full, before a checkpoint and at the end of the run."""
    extra = _extra(ctx)
    stl.settle(ctx, st.pending, st.buffers, m.recorded_rows(extra) if extra else None)


def _measure_start(ctx, st, r, x, W0, n_part):
    """The state metrics at x_r before the round. When the piece's first local step is the
    full gradient at x of every client (``first_grad_at_x``: full batch, full participation)
    the gradients are read from it after the round, and, when the weight rule needs no losses,
    the losses are evaluated later with the round's shadow points (one pass over the data for
    a batch of rounds, :class:`~toys.engine.settle.Pending`). Returns (L or None, G or None,
    losses deferred)."""
    full = n_part == ctx.n_clients and getattr(ctx.algo.client, "first_grad_at_x", False)
    if full and not getattr(ctx.algo.weights, "needs_losses", True):
        return None, None, True
    L = m.state_losses(ctx, st.buffers["S"], r, x)
    if full:
        return L, None, False
    G = ctx.oracle.grads(W0)
    m.state_grads(ctx, st.buffers["S"], r, G)
    return L, G, False


def _measure_end(ctx, st, r, W0, G, observer):
    """The deferred state gradients of round r (see :func:`_measure_start`; the deferred
    losses are settled with the round's shadow points, before its summaries)."""
    if G is None:
        G_first = None if observer is None else observer.first_grads
        m.state_grads(ctx, st.buffers["S"], r,
                      ctx.oracle.grads(W0) if G_first is None else G_first)


def one_round(ctx, st: State) -> None:
    """Run round ``st.round`` and advance ``st`` (diverged_at is set when it diverged)."""
    ops, orc, N = ctx.ops, ctx.oracle, ctx.n_clients
    r, x, buf = st.round, st.x, st.buffers
    st.participation_state, mask_np = ctx.process.step(st.participation_state, ctx.part_rng)
    mask_np = np.asarray(mask_np, dtype=bool)
    st.participation[r] = mask_np
    mask = ops.asbool(mask_np)
    n_part = int(mask_np.sum())
    W0 = broadcast_rows(x, N)
    L = G = None
    deferred = False
    if ctx.record != "none":
        L, G, deferred = _measure_start(ctx, st, r, x, W0, n_part)
    elif getattr(ctx.algo.weights, "needs_losses", True):
        L = orc.losses(x)
    coef = _weights(ctx, st, r, L, mask)
    a_v = None
    if ctx.record != "none":
        xp = array_namespace(coef)
        a_v = normalise(xp.where(mask, coef, 0.0))  # the virtual average's weights
        buf["RB"][m.RI["n_participants"], r] = n_part
        if n_part and not deferred:
            m.rho_sync(ctx, buf["RB"], r, a_v, L, buf["S"][0, r])
    W, observer = _local(ctx, st, r, x, mask, mask_np, n_part, a_v, W0, G, deferred)
    if ctx.record != "none":
        _measure_end(ctx, st, r, W0, G, observer)
    Delta = W - x if n_part == N else array_namespace(W).where(mask[:, None], W - x, 0.0)
    x_new, st.server = ctx.algo.server.update(st.server, x=x, deltas=Delta, weights=coef,
                                              mask=mask, p=ctx.p, round=r)
    if getattr(ctx.algo.weights, "loss_point", "global") == "local_end":
        st.prev_end = (W, mask)
    if _diverged(ctx, x_new):
        st.diverged_at = r
        return
    st.x = x_new
    st.round = r + 1


def _diverged(ctx, x_new) -> bool:
    nrm = math.sqrt(item(array_namespace(x_new).sum(x_new * x_new)))
    return not math.isfinite(nrm) or nrm > DIVERGENCE["norm"] * ctx.norm_scale


def finish(ctx, st: State, trace) -> None:
    """Measure the last state (when the run ended normally) and copy everything to ``trace``."""
    from .trace import ROUND_FIELDS, STATE_FIELDS, STEP_FIELDS

    settle(ctx, st)
    buf, tau = st.buffers, ctx.local_steps
    end = st.round
    if st.diverged_at is None and ctx.record != "none":
        m.state_metrics(ctx, buf["S"], end, st.x, broadcast_rows(st.x, ctx.n_clients))
    Sn, RBn = to_numpy(buf["S"]), to_numpy(buf["RB"])
    for i, k in enumerate(STATE_FIELDS):
        trace.state[k][:] = Sn[i]
    for i, k in enumerate(ROUND_FIELDS):
        trace.per_round[k][:] = RBn[i]
    trace.per_round["lr"][:] = ctx.lrs[::tau] if ctx.record != "none" else _NAN
    trace.alpha[:] = to_numpy(buf["ALPHA"])
    trace.participation[:] = st.participation
    if "OMEGA" in buf:
        trace.omega = np.array(to_numpy(buf["OMEGA"]), dtype=float)
    if "BS" in buf:
        BSn = to_numpy(buf["BS"])
        for i, k in enumerate((*STEP_FIELDS, *_extra(ctx))):
            trace.steps[k][:] = BSn[i]
    for k, v in st.metrics.items():
        trace.metrics[k] = np.array(v, dtype=float)
    trace.final_model = np.array(to_numpy(st.x), dtype=float)
    _mark_gap_divergence(st, trace)
    trace.diverged_at = st.diverged_at
    trace.info["stopped_at"] = st.stopped_at
    last = st.diverged_at if st.diverged_at is not None else st.stopped_at
    if last is not None:  # rounds that never ran
        trace.participation[last + 1:] = False
        if trace.steps is not None:
            for v in trace.steps.values():
                v[last + 1:] = _NAN
        trace.per_round["lr"][last + 1:] = _NAN


def _mark_gap_divergence(st, trace) -> None:
    """The gap criterion of :data:`DIVERGENCE` (judged on the recorded gaps)."""
    gap = trace.state["gap"]
    if not np.isfinite(gap[0]):
        return
    over = np.flatnonzero(gap[1:] > DIVERGENCE["gap"] * max(1.0, gap[0]))
    if over.size and (st.diverged_at is None or over[0] < st.diverged_at):
        r = int(over[0])
        st.diverged_at = r
        for k in trace.state:
            trace.state[k][r + 1:] = _NAN
        for k in trace.per_round:
            trace.per_round[k][r + 1:] = _NAN
