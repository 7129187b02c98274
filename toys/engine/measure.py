"""The measurements of the round loop: state metrics at the server model and the per-step
observer of the virtual / shadow average (drift, gradients, ||grad F||^2 at the virtual
average with record="step", the shadow points, whose losses and the round summaries
:mod:`toys.engine.settle` completes in batches; see
:mod:`toys.engine.trace` for the meaning of every quantity). Written once for every backend
(array-API namespace).

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

from .._array import array_namespace, broadcast_rows, item, sqnorm_rows, wdot, wsum
from ..algorithms.beta import perturbed
from ..algorithms.weights import rho

__all__ = ["EXTRA_STEPS", "N_ROWS", "N_STEP", "RI", "ROUND", "STATE", "STASH_BYTES", "Observer",
           "check_extra_steps", "grad_norms_at", "grad_values", "loss_values", "losses_at",
           "pair_drift", "perturbed_values", "recorded_rows", "state_grads", "state_losses",
           "state_metrics", "step_skew", "step_values", "zeta_obs"]

# rows of the per-step buffer (the first N_STEP are the public ``Trace.steps`` arrays, in the
# order of ``toys.engine.trace.STEP_FIELDS``; PAIR and DEV are recorded only when asked)
SHADOW, RHO, DIST2, DMAX, DISC, G2, LR, GN, DMEAN, DSUM, PAIR, DEV, PERT, NBR = range(14)
N_STEP, N_ROWS = 8, NBR + 1
EXTRA_STEPS = {"pairwise_drift": PAIR, "local_deviation": DEV, "perturbed_divergence": PERT,
               "neighbour_avg_deviation": NBR}
"""The per-step quantities a run records only when asked (``toys.run(extra_steps=...)``,
``toys.run_many(measure=...)``), name -> buffer row: ``pairwise_drift`` max over pairs of
participants of ||x_i^(r,k) - x_j^(r,k)||^2 (DKR's d_k; N^2 d numbers a step),
``local_deviation`` max over participants of ||x_i^(r,k) - x_r||^2 (BC's distance to the
round's start model) and, for seed 003's beta algorithm (a client piece that announces its
perturbation, :meth:`Observer.perturbation`; NaN for any other piece),
``perturbed_divergence`` max over participants of ||wbar_{r,k-1} - w~^i_{r,k-1}||^2 in column
k-1, the perturbed point w~ = beta w + (1 - beta) u_i where step k takes its gradient (BC's
Lemma B.2, k - 1 = 0..tau-1), and ``neighbour_avg_deviation`` max over all pairs of clients of
||u_i - u_j||^2, the round's neighbour averages (BC's Lemma B.1; the same in every column)."""
STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
ROUND = ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
         "drift_sum", "disc_max", "g2_max", "lr", "n_participants", "zeta_obs")
RI = {k: i for i, k in enumerate(ROUND)}
_NAN = math.nan


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
    L = ctx.oracle.losses(x) if L is None else L
    F, gap, dist2 = loss_values(ctx.p, L, x, ctx.x_star, ctx.F_star)
    S[0, j] = F
    if gap is not None:
        S[1, j], S[2, j] = gap, dist2
    return L


def loss_values(p, L, x, x_star, F_star, summed: bool = False):
    """(F, gap, dist2) at the server points ``x`` (..., d) from the client losses ``L``
    (..., N) there: F = sum_i p_i L_i (``summed``: the elementwise products summed, the form
    of a batch of points, :mod:`toys.engine.settle`), F - F* and ||x - x*||^2 (None, None
    without an optimum). One implementation for :func:`toys.run` and :func:`toys.run_many`
    (leading axes: instances)."""
    xp = array_namespace(L)
    F = xp.sum(L * p, axis=-1) if summed else wdot(p, L)
    if x_star is None:
        return F, None, None
    dx = x - x_star
    return F, F - F_star, xp.sum(dx * dx, axis=-1)


def state_grads(ctx, S, j, G):
    """||grad F||^2 and max_i ||grad F_i - grad F|| from the client gradients G at x."""
    S[3, j], S[4, j] = grad_values(ctx.p, G)


def grad_values(p, G, dissim: bool = True):
    """(||grad F||^2, max_i ||grad F_i - grad F||) from the client gradients ``G`` (..., N, d)
    at a server point (leading axes: instances, as :func:`loss_values`); ``dissim=False``:
    the second is not computed (None)."""
    xp = array_namespace(G)
    gF = wsum(p, G)
    if not dissim:
        return xp.sum(gF * gF, axis=-1), None
    return (xp.sum(gF * gF, axis=-1),
            xp.sqrt(xp.max(sqnorm_rows(G - gF[..., None, :]), axis=-1)))


def grad_norms_at(ctx, P):
    """||grad F(P[j])||^2 = ||sum_i p_i grad F_i(P[j])||^2 at each of the points ``P`` (m, d),
    as the state metric ``grad_norm2`` (:func:`state_grads`): one batched ``oracle.grads``
    call (all clients) per point."""
    xp = array_namespace(P)
    out = []
    for j in range(P.shape[0]):
        gF = ctx.p @ ctx.oracle.grads(P[j])
        out.append(xp.sum(gF * gF))
    return xp.stack(out)


def step_skew(a_v, Lv, F, F_star_i, p):
    """rho(t, w) = sum_i a_i (F_i(w) - F_i*) / sum_i p_i (F_i(w) - F_i*) at points w from the
    clients' losses there ``Lv`` (..., N), F(w) ``F`` (...) (the scale of the undefined case,
    max(1, |F|)) and the virtual averages' weights ``a_v`` (..., N) (leading axes: the points
    of a batch of rounds, :mod:`toys.engine.settle`, or the instances of a population,
    :func:`toys.run_many`); row by row, so each point gets the bits of its own computation.

    >>> import numpy as np
    >>> float(step_skew(np.array([1.0, 0.0]), np.array([3.0, 2.0]), np.array(2.5),
    ...                 np.array([1.0, 1.0]), np.array([0.5, 0.5])))
    1.3333333333333333
    """
    xp = array_namespace(Lv)
    return rho(a_v, Lv - F_star_i, p, scale=xp.maximum(xp.where(F > 0, F, -F), 1.0))


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
    the buffer ``B`` (:data:`N_ROWS`, tau).

    A client piece calls ``observer(k, W, G, lr)`` after local step k (the protocol of
    :mod:`toys.algorithms.client`); a fused kernel that keeps the stacks of every step may call
    ``observe_all(Ws, Gs)`` once instead. The steps are stashed and measured together by
    :meth:`flush`, unless the stash would exceed :data:`STASH_BYTES`; the losses at the shadow
    points (``segments``) are evaluated later, for a batch of rounds at once
    (:mod:`toys.engine.settle`).
    ``first_grads`` is the gradient stack of step 0 (the full gradients at x for a full-batch
    piece), kept for the state metrics. ``with_grads`` (record="step"): also ||grad F||^2 at
    each virtual average (:func:`grad_norms_at`, tau gradient evaluations a round). ``extra``:
    the rows of :data:`EXTRA_STEPS` also measured (``start``: the round's server model x_r;
    the beta algorithm's rows need its :meth:`perturbation`).
    """

    def __init__(self, ctx, B, a_v, mask, n_part, with_losses, with_grads=False,
                 extra=frozenset(), start=None):
        self.ctx, self.B, self.a_v, self.mask = ctx, B, a_v, mask
        self.n_part, self.with_losses, self.with_grads = n_part, with_losses, with_grads
        self.rows = _STEP_ROWS | frozenset(extra) if extra else None
        self.start = start
        self.tau = B.shape[1]
        self.Ws = self.Gs = self.first_grads = None
        self.segments = []  # the shadow points (k0, k1, wbar), evaluated in a batch
        self._stashed = 0
        self.pert = self._prev = None  # (beta, U) of the beta piece; the last iterates seen

    def perturbation(self, beta, U):
        """Seed 003's beta piece announces its round (before the first step): the gradient of
        every step is taken at beta W + (1 - beta) U, ``U`` (N, d) the neighbour averages,
        fixed for the round. Read only by the rows PERT and NBR (:data:`EXTRA_STEPS`)."""
        self.pert = (beta, U)

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
        ctx, B = self.ctx, self.B
        wbar, rows = step_values(self.a_v, Ws, Gs, self.mask, self.n_part, ctx.x_star,
                                 self.rows, self.start, self._perturb(k0, Ws))
        for row, v in rows.items():
            B[row, k0:k1] = v
        if self.with_grads:
            B[GN, k0:k1] = grad_norms_at(ctx, wbar)
        if self.with_losses:  # the losses there: later, in a batch (toys.engine.settle)
            self.segments.append((k0, k1, wbar))

    def _perturb(self, k0, Ws):
        """``(beta, U, the iterates before each of the steps Ws)`` for the rows PERT / NBR
        (None when neither is recorded or no perturbation was announced): the round's start
        rows before step 0, then the previous step's iterates."""
        if self.pert is None or self.rows is None or self.rows.isdisjoint((PERT, NBR)):
            return None
        xp = array_namespace(Ws)
        first = broadcast_rows(self.start, Ws.shape[-2]) if k0 == 0 else self._prev
        self._prev = Ws[-1]
        return (*self.pert, xp.concat([first[None], Ws[:-1]], axis=0))


def step_values(a_v, Ws, Gs, mask, n_part, x_star, rows=None, start=None, perturb=None):
    """The per-step measurements after local steps: ``Ws``, ``Gs`` (..., N, d) the clients'
    iterates and gradients (leading axes: the steps of a round for :func:`toys.run`, the
    instances of a population for :func:`toys.run_many`), ``a_v`` (..., N) or (N,) the
    virtual average's weights, ``mask`` the participants (None: all), ``n_part`` their number.
    Returns
    (the virtual averages wbar (..., d), {row: values (...)}) for the rows DMAX, DSUM, DMEAN
    (drift over the participants), DISC (sum_i a_i ||x_i - wbar||^2), G2 and DIST2, or only
    those of ``rows`` (a set of row ids; None: all but :data:`EXTRA_STEPS`, which are computed
    only when named: PAIR by :func:`pair_drift`, DEV the largest ||x_i - start||^2 over the
    participants, ``start`` (..., d) the round's server models; PERT and NBR, the beta
    algorithm's, from ``perturb`` = (beta, U, the iterates before the steps) by
    :func:`perturbed_values`, NaN without it) — each by the same
    expression, so a subset has the bits of the full computation. One implementation for both
    engines, written so that each step / instance gets the bits of its own products
    (:func:`toys._array.wsum`)."""
    xp = array_namespace(Ws)
    want = _STEP_ROWS if rows is None else rows
    wbar = wsum(a_v, Ws)
    out = {}
    if not want.isdisjoint((DMAX, DSUM, DMEAN, DISC)):
        dn = sqnorm_rows(Ws - wbar[..., None, :])
        dn_p = dn if mask is None else xp.where(mask, dn, 0.0)  # None: every client takes part
        if DMAX in want:
            out[DMAX] = xp.max(dn_p, axis=-1)
        if DSUM in want or DMEAN in want:
            dsum = xp.sum(dn_p, axis=-1)
            out[DSUM] = dsum
            if DMEAN in want:
                out[DMEAN] = dsum / n_part
        if DISC in want:
            out[DISC] = wdot(a_v, dn)
    if G2 in want:
        g2 = sqnorm_rows(Gs)
        out[G2] = xp.max(g2 if mask is None else xp.where(mask, g2, 0.0), axis=-1)
    if x_star is not None and DIST2 in want:
        dx = wbar - x_star
        out[DIST2] = xp.sum(dx * dx, axis=-1)
    if PAIR in want:
        out[PAIR] = pair_drift(Ws, mask)
    if DEV in want:
        dv = sqnorm_rows(Ws - start[..., None, :])
        out[DEV] = xp.max(dv if mask is None else xp.where(mask, dv, 0.0), axis=-1)
    if not want.isdisjoint((PERT, NBR)):
        out.update(perturbed_values(a_v, mask, perturb, want, wbar))
    return wbar, out


def perturbed_values(a_v, mask, perturb, want, like) -> dict:
    """Seed 003's rows (``want``: PERT, NBR) from ``perturb`` = (beta, U (..., N, d), the
    iterates before the steps (..., N, d)): PERT max over the participants of ||wbar -
    (beta W + (1 - beta) U)||^2 at the iterates before each step (wbar their virtual average
    with weights ``a_v``: the query point of BC's Lemma B.2), NBR max over all pairs of
    clients of ||u_i - u_j||^2 (Lemma B.1; :func:`pair_drift` of U). ``perturb`` None (a piece
    without a perturbation): NaN shaped as ``like`` without its last axis.

    >>> import numpy as np
    >>> W, U = np.array([[0.0], [2.0]]), np.array([[4.0], [0.0]])  # wbar 1, w~ = [2, 1]
    >>> v = perturbed_values(np.array([0.5, 0.5]), None, (0.5, U, W), {PERT, NBR}, W[0])
    >>> float(v[PERT]), float(v[NBR])
    (1.0, 16.0)
    """
    xp = array_namespace(like)
    if perturb is None:
        nan = xp.zeros_like(like[..., 0]) + _NAN
        return {r: nan for r in (PERT, NBR) if r in want}
    beta, U, before = perturb
    out = {}
    if PERT in want:
        wb = wsum(a_v, before)
        dv = sqnorm_rows(perturbed(beta, before, U) - wb[..., None, :])
        out[PERT] = xp.max(dv if mask is None else xp.where(mask, dv, 0.0), axis=-1)
    if NBR in want:
        out[NBR] = pair_drift(U, None) + xp.zeros_like(like[..., 0])
    return out


_STEP_ROWS = frozenset((DMAX, DSUM, DMEAN, DISC, G2, DIST2))


def check_extra_steps(names, record: str) -> tuple:
    """``names`` (a sequence of names of :data:`EXTRA_STEPS`, recorded with record="step") as a
    tuple without repeats; DomainError naming the parameter otherwise.

    >>> check_extra_steps(["pairwise_drift"], "step")
    ('pairwise_drift',)
    """
    from boundlab.errors import DomainError

    vals = (names,) if isinstance(names, str) else tuple(names)
    for n in vals:
        if not isinstance(n, str) or n not in EXTRA_STEPS:
            raise DomainError("extra_steps", n, f"names of {tuple(EXTRA_STEPS)}")
    if vals and record != "step":
        raise DomainError("extra_steps", vals, f"per-step quantities of record='step' "
                                               f"(record={record!r})")
    return tuple(dict.fromkeys(vals))


def recorded_rows(extra=()) -> list:
    """The buffer rows a record="step" run keeps (``Trace.steps``, in the order of
    ``STEP_FIELDS`` and then the names ``extra`` of :data:`EXTRA_STEPS`).

    >>> recorded_rows(("local_deviation",))[-2:]
    [7, 11]
    """
    return [*range(N_STEP), *(EXTRA_STEPS[n] for n in extra)]


def pair_drift(Ws, mask):
    """max over pairs of participants of ||x_i - x_j||^2 from the iterates ``Ws`` (..., N, d)
    (``mask`` (..., N) or (N,) the participants, None: all): (...). N^2 d numbers per
    point, element by element (no Gram-matrix cancellation).

    >>> import numpy as np
    >>> W = np.array([[0.0, 0.0], [3.0, 4.0], [9.0, 9.0]])
    >>> float(pair_drift(W, None)), float(pair_drift(W, np.array([True, True, False])))
    (162.0, 25.0)
    """
    xp = array_namespace(Ws)
    D = sqnorm_rows(Ws[..., :, None, :] - Ws[..., None, :, :])  # (..., N, N)
    if mask is not None:
        D = xp.where(mask[..., :, None] & mask[..., None, :], D, 0.0)
    return xp.max(xp.reshape(D, (*D.shape[:-2], D.shape[-1] * D.shape[-2])), axis=-1)


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
