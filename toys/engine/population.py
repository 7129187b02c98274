"""``toys.run_many``: B independent federations at once, on a leading population axis.

The sibling of :func:`toys.run` for many instances: B problems of one family stacked
(:func:`toys.problems.stacked.stack`), each with its own seed, participation, initial model
and (``vary``) step-size schedule, run as one batched computation on numpy, torch CPU or torch
CUDA. The algorithm is the same composition of pieces as in ``toys.run`` — the pieces take the
leading axis through the array API (x (B, d), W (B, N, d), masks, losses and weights (B, N))
— and the state metrics are the functions ``toys.run`` measures with
(:func:`toys.engine.measure.loss_values`, :func:`~toys.engine.measure.grad_values`), so each
instance's trace is bit-identical (same backend, on the CPU) to its own ``toys.run``
(tests/toys/engine/test_population.py checks every recorded array, instance by instance).

What a population run records (``record``): ``"round"`` (default) the state metrics at every
server model (``loss``, ``gap``, ``dist2``, ``grad_norm2``, ``grad_dissim``), the weights
``alpha`` (and FedAU's ``omega``), the participation, ``lr`` and ``n_participants`` of every
round, and the round summaries of the per-step measurements (``shadow_gap``, ``drift_max``,
``drift_mean``, ``drift_sum``, ``disc_max``, ``g2_max``, through toys.run's
:func:`~toys.engine.measure.step_values` and :func:`~toys.engine.settle.round_summaries`);
``"state"`` all but the per-step ones; ``"none"`` nothing but the final models (and alpha).
``"step"`` also the per-step arrays ``Trace.steps`` (with ||grad F||^2 at every virtual
average: ``grad_norm2_virtual``, what BC's non-convex theorems bound, and the skew rho(t, w_t)
there, ``steps["rho"]``, with its round maxima ``rho_max``, when every instance's F_i* is
known). Not batched yet: the round values of rho (``rho_sync``, ``rho_star``, ``rho_min``:
NaN here) and ``zeta_obs`` (NaN).
``measure=`` (names of :data:`MEASURABLE`) narrows a record mode to the quantities a caller
reads (e.g. a falsification search reads only its judge's quantities): the others
stay NaN and are not computed (no per-step observer when no per-step quantity is asked); each
measured value keeps the bits of the full run (tests/toys/engine/test_population_measure.py).
Divergence is judged per instance with ``toys.run``'s rule; a diverged instance's arrays end
where its own run ends.

Every built-in piece is batched (``batched = True``): every algorithm of
``toys.algorithms.names()`` (tests/toys/engine/test_population_pieces.py), the clipped client
updates and the accuracy switch (whose stage stays 0: a population has no callbacks). Seed
003's graph is each instance's own; Power-of-Choice and per-client local work draw each
instance's numbers from its own seed. Refused by name: a piece without ``batched = True`` (a
user's, until it takes the leading axis), callbacks and checkpoints. Minibatch noise is each
instance's own numpy stream (:mod:`toys.engine._population_noise`; a population of logistic
problems draws it, noisy quadratics refuse it by name).
Participation draws are each instance's own numpy stream (a loop over the instances for the
draws only; full participation draws nothing).

Example
-------
>>> import toys
>>> probs = [toys.quadratic(n_clients=4, dim=3, seed=s) for s in range(3)]
>>> traces = toys.run_many(probs, "fedavg", rounds=5, seeds=[0, 1, 2], lr=0.05, local_steps=2)
>>> one = toys.run(probs[1], "fedavg", rounds=5, seed=1, lr=0.05, local_steps=2)
>>> bool((traces[1].gap == one.gap).all())
True
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from .. import participation as part
from .._array import array_namespace, broadcast_rows, normalise, to_numpy
from ..algorithms import Algorithm, Setup, bind, get
from ..algorithms._hyper import finite_attr
from ..problems.stacked import stack
from ..validation import check_choice, check_int
from . import backends
from ._population_noise import sample_rngs
from ._population_result import Population
from ._population_setup import (
    MAX_POPULATION_BYTES,
    MEASURABLE,
    POPULATION_RECORD,
    _check_batched,
    _check_memory,
    _processes,
    _seeds,
    _vary,
    _wanted,
    _x0,
)
from .measure import (
    G2,
    GN,
    LR,
    N_ROWS,
    N_STEP,
    NBR,
    PERT,
    RHO,
    ROUND,
    SHADOW,
    STATE,
    grad_values,
    loss_values,
    recorded_rows,
    step_skew,
    step_values,
)
from .rounds import DIVERGENCE, _weights
from .settle import round_summaries

__all__ = ["MAX_POPULATION_BYTES", "MEASURABLE", "POPULATION_RECORD", "Population", "run_many"]


def run_many(problems, algorithm, *, rounds: int, seeds, participation="full", x0=None,
             backend: str = "numpy", device=None, dtype=None, record: str = "round",
             measure=None, vary=None, **hyper) -> Population:
    """Run ``algorithm`` on every problem of ``problems`` at once: a :class:`Population`
    (one :class:`Trace` per instance, and the population's arrays).

    Parameters
    ----------
    problems : sequence of problems of one family, or a stacked population
        B problems with equal ``n_clients`` and ``dim`` (:func:`toys.problems.stacked.stack`).
    algorithm : str or toys.Algorithm
        as for :func:`toys.run`; every piece must run on the population axis
        (``batched = True``).
    rounds : int
        rounds of every instance (>= 1).
    seeds : int or sequence of B ints
        each instance's seed, as ``toys.run``'s ``seed`` (one int: the same for all).
    participation : spec, sequence of B specs, or a (B, rounds, N) bool array
        as ``toys.run``'s, shared or one per instance (the array: each instance's fixed
        pattern, read without a loop over the instances).
    x0 : array (d,) or (B, d), optional
        initial models (default: each problem's ``x0``, else zeros).
    backend, device, dtype : as for :func:`toys.run`.
    record : ``"round"`` (default), ``"step"``, ``"state"`` or ``"none"`` (see the module
        docstring).
    measure : collection of names of :data:`MEASURABLE`, optional
        measure only these quantities (default None: everything ``record`` records); the
        others stay NaN and cost nothing (a run with no per-step quantity runs without the
        per-step observer). ``gap`` is always measured (toys.run's divergence rule reads it).
        Each measured value has the bits of the unrestricted run (tested).
    vary : dict, optional
        hyper-parameters that differ per instance, name -> B values; ``"lr"`` (any schedule
        ``toys.run`` takes, one per instance).
    **hyper
        the hyper-parameters shared by every instance, as for ``toys.run``.
    """
    pop = stack(problems)
    B, N, d = pop.n_instances, pop.n_clients, pop.dim
    rounds = check_int("rounds", rounds, lo=1)
    check_choice("record mode", record, POPULATION_RECORD)
    want = _wanted(measure, record)
    seeds = _seeds(seeds, B)
    algo = algorithm if isinstance(algorithm, Algorithm) else get(algorithm)
    _check_batched(algo)
    procs, fixed = _processes(participation, B, N, rounds)
    ops, oracle, _ = backends.get(backend).setup(pop, device, dtype, 0)
    # a batched piece that draws uses seed[b] for instance b
    setup = Setup(pop, procs[0], N, rounds, algo.name, asarray=ops.asarray,
                  seed=tuple(seeds), processes=tuple(procs))
    given = list(vary["lr"]) if vary and vary.get("lr") is not None else []
    algo = bind(algo, {**({"lr": given[0]} if given else {}), **hyper}, setup)
    algo, lrs = _vary(algo, vary or {}, B, rounds)
    _check_memory(B, N, d, rounds, lrs.shape[-1])
    ctx = _context(pop, algo, ops, oracle, _x0(pop, x0, B, d), rounds, record, lrs)
    ctx.procs, ctx.fixed_masks, ctx.want = procs, fixed, want
    ctx.all_full = fixed is None and all(isinstance(p, part.Full) for p in procs)
    ctx.sample_rngs = sample_rngs(seeds, backend)  # minibatch draws: each run's own stream
    ctx.part_rngs = [None] * B if ctx.all_full else \
        [np.random.default_rng(np.random.SeedSequence(s).spawn(2)[0]) for s in seeds]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        out = _loop(ctx)
    ctx.meta = {"seeds": seeds, "backend": backend, "hyper": hyper, "vary": vary or {},
                "participation": participation}
    return Population(ctx, out)


def _context(pop, algo, ops, oracle, x0, rounds, record, lrs):
    ctx = SimpleNamespace(ops=ops, oracle=oracle, algo=algo, rounds=rounds, record=record,
                          B=pop.n_instances, n_clients=pop.n_clients, dim=pop.dim, pop=pop)
    ctx.p, ctx.x0, ctx.lrs = ops.asarray(pop.p), ops.asarray(x0), lrs
    ctx.tau = int(getattr(algo.client, "local_steps", 1))
    ctx.x_star = ops.asarray(pop.x_star)
    ctx.F_star = ops.asarray(pop.F_star)
    F_star_i = finite_attr(pop, "F_star_i")  # the clients' minima: the skew rho (B, N)
    ctx.F_star_i = None if F_star_i is None else ops.asarray(F_star_i)
    ctx.norm_scale = np.maximum(1.0, np.linalg.norm(x0, axis=1))
    return ctx


# --------------------------------------------------------------------------- the round loop
def _loop(ctx) -> dict:
    """Every round of every instance; returns the (host) records."""
    ops, algo, B, N, R = ctx.ops, ctx.algo, ctx.B, ctx.n_clients, ctx.rounds
    x = ctx.x0
    out = {"S": ops.full((len(STATE), R + 1, B), math.nan), "ALPHA": ops.full((R, B, N), math.nan),
           "RB": ops.full((len(ROUND), R, B), math.nan),
           "part": np.zeros((R, B, N), dtype=bool), "npart": np.full((R, B), math.nan),
           "div": np.full(B, -1), "alive": np.ones(B, dtype=bool)}
    if ctx.record == "step":
        out["BS"] = ops.full((R, B, len(recorded_rows(ctx.want.extra)), ctx.tau), math.nan)
    st = SimpleNamespace(client=algo.client.init(x, N), weights=algo.weights.init(N),
                         server=algo.server.init(x, N), prev_end=None,
                         procs=[p.init(g) for p, g in zip(ctx.procs, ctx.part_rngs)],
                         buffers={"ALPHA": out["ALPHA"]})
    if callable(getattr(algo.weights, "omega", None)):
        st.buffers["OMEGA"] = out["OMEGA"] = ops.full((R, B, N), math.nan)
    for r in range(R):
        mask_np = _masks(ctx, st, r)
        out["part"][r], out["npart"][r] = mask_np, mask_np.sum(axis=1)
        x_new = _round(ctx, st, out, r, x, mask_np)
        x = _divergence(ctx, out, r, x, x_new)
    if ctx.record != "none":
        G = ctx.oracle.grads(broadcast_rows(x, N)) \
            if not ctx.want.state.isdisjoint(("grad_norm2", "grad_dissim")) else None
        _state(ctx, out["S"], R, x, ctx.oracle.losses(x), G, np.zeros(B, dtype=bool))
    out["x"] = to_numpy(x)
    return out


def _masks(ctx, st, r) -> np.ndarray:
    """(B, N) participation of round r: each instance's own process and numpy stream (full
    participation draws nothing)."""
    if ctx.all_full:
        return np.ones((ctx.B, ctx.n_clients), dtype=bool)
    if ctx.fixed_masks is not None:
        return ctx.fixed_masks[:, r]
    rows = []
    for b, (proc, rng) in enumerate(zip(ctx.procs, ctx.part_rngs)):
        st.procs[b], m = proc.step(st.procs[b], rng)
        rows.append(np.asarray(m, dtype=bool))
    return np.stack(rows)


def _round(ctx, st, out, r, x, mask_np):
    """One round of every instance (the steps of toys.engine.rounds.one_round); returns the
    next server models."""
    algo, orc, N = ctx.algo, ctx.oracle, ctx.n_clients
    mask = ctx.ops.asbool(mask_np)
    W0 = broadcast_rows(x, N)
    L = G = None
    if ctx.record != "none":
        L, G = orc.losses(x), orc.grads(W0)  # G: the state metrics' and the step-0 gradients
        deferred = mask_np.all(axis=1) & bool(getattr(algo.client, "first_grad_at_x", False)) \
            & (not getattr(algo.weights, "needs_losses", True))
        _state(ctx, out["S"], r, x, L, G, deferred)
    elif getattr(algo.weights, "needs_losses", True):
        L = orc.losses(x)
    coef = _weights(ctx, st, r, L, mask)  # toys.run's (ALPHA, and OMEGA when the rule has one)
    w = ctx.want
    obs = _Steps(ctx, r, x, coef, mask, mask_np) \
        if w.shadow or w.gn or w.rho or w.rows is None or w.rows else None
    rng = None if ctx.sample_rngs is None else ctx.sample_rngs.for_round(mask_np)
    W, st.client = algo.client.update(st.client, x=x, oracle=orc, round=r, rng=rng,
                                      mask=mask, start=W0, grads=G, observer=obs)
    if obs is not None:
        obs.summarise(out, r)
    xp = array_namespace(W)
    Delta = xp.where(mask[..., None], W - x[..., None, :], 0.0)
    x_new, st.server = algo.server.update(st.server, x=x, deltas=Delta, weights=coef,
                                          mask=mask, p=ctx.p, round=r)
    if getattr(algo.weights, "loss_point", "global") == "local_end":
        st.prev_end = (W, mask)
    return x_new


class _Steps:
    """The per-step observer of a population's round (toys.run's :class:`Observer` rows, with
    the same functions: :func:`~toys.engine.measure.step_values`, the shadow gaps in the
    summed form of :mod:`toys.engine.settle`, :func:`~toys.engine.settle.round_summaries`).
    Absent clients are seen at x with a zero gradient, as toys.run's participants-only
    update shows them."""

    def __init__(self, ctx, r, x, coef, mask, mask_np):
        xp = array_namespace(x)
        self.ctx, self.r, self.x, self.mask = ctx, r, x, mask
        self.a_v = normalise(xp.where(mask, coef, 0.0))  # the virtual average's weights
        self.some = mask_np.any(axis=1)
        self.all_some = bool(self.some.all())
        self.all = bool(mask_np.all())  # every client of every instance: no masking
        self.n_part = ctx.ops.asarray(mask_np.sum(axis=1).astype(float))
        self.buf = ctx.ops.full((ctx.B, N_ROWS, ctx.tau), math.nan)
        self.buf[:, LR] = ctx.ops.asarray(ctx.lrs[:, r * ctx.tau:(r + 1) * ctx.tau])
        self.pert = self._prev = None  # the beta piece's (beta, U); the last iterates seen

    def perturbation(self, beta, U):
        """The beta piece's round (toys.run's :meth:`~toys.engine.measure.Observer.
        perturbation`): U (B, N, d) the neighbour averages."""
        self.pert = (beta, U)

    def _perturb(self, k, W):
        """(beta, U, the iterates before step k) when the beta rows are recorded, else None."""
        rows = self.ctx.want.rows
        if self.pert is None or rows is None or rows.isdisjoint((PERT, NBR)):
            return None
        first = broadcast_rows(self.x, W.shape[-2]) if k == 0 else self._prev
        self._prev = W
        return (*self.pert, first)

    def __call__(self, k, W, G, lr):
        ctx = self.ctx
        if not self.all:
            m = self.mask[..., None]
            xp = array_namespace(W)
            W = xp.where(m, W, self.x[..., None, :])
            if ctx.want.rows is None or G2 in ctx.want.rows:  # only g2_max reads G
                G = xp.where(m, G, 0.0)
        mask = None if self.all else self.mask
        want = ctx.want
        wbar, rows = step_values(self.a_v, W, G, mask, self.n_part, ctx.x_star, want.rows,
                                 self.x, self._perturb(k, W))
        for row, v in rows.items():
            self.buf[:, row, k] = v
        rho = want.rho and ctx.F_star_i is not None
        if want.shadow or rho:  # toys.run's batch of shadow points (toys.engine.settle)
            Lv = ctx.oracle.losses(wbar)
            F, gap, _ = loss_values(ctx.p, Lv, wbar, ctx.x_star, ctx.F_star, summed=True)
            if want.shadow:
                self.buf[:, SHADOW, k] = gap
            if rho:
                self.buf[:, RHO, k] = step_skew(self.a_v, Lv, F, ctx.F_star_i, ctx.p)
        if want.gn:  # ||grad F||^2 at the virtual averages (grad_norms_at's)
            self.buf[:, GN, k] = grad_values(ctx.p, ctx.oracle.grads(wbar), dissim=False)[0]

    def summarise(self, out, r):
        """The round's summaries into column r of ``out["RB"]`` (and its steps into
        ``out["BS"]``), NaN for an instance without participants: toys.run measures nothing
        in such a round."""
        xp = array_namespace(self.buf)
        some = self.ctx.ops.asbool(self.some)
        # not rho_min: F_i* at x is not batched yet
        for name, v in round_summaries(self.buf, None, self.ctx.tau,
                                       self.ctx.want.summaries).items():
            out["RB"][ROUND.index(name), r] = v if self.all_some else xp.where(some, v, math.nan)
        if "BS" in out:
            extra = self.ctx.want.extra
            steps = self.buf[:, recorded_rows(extra)] if extra else self.buf[:, :N_STEP]
            out["BS"][r] = xp.where(some[:, None, None], steps, math.nan)


def _state(ctx, S, j, x, L, G, deferred):
    """The state metrics at the server models x (B, d) into column j of ``S`` (toys.run's
    functions; ``deferred`` (B,): the instances whose toys.run would evaluate F with a batch
    of points, :mod:`toys.engine.settle`)."""
    xp = array_namespace(L)
    F, gap, dist2 = loss_values(ctx.p, L, x, ctx.x_star, ctx.F_star, summed=deferred.all())
    if deferred.any() and not deferred.all():  # some of each: both forms, per instance
        F_sum, gap_sum, _ = loss_values(ctx.p, L, x, ctx.x_star, ctx.F_star, summed=True)
        on = ctx.ops.asbool(deferred)
        F, gap = xp.where(on, F_sum, F), xp.where(on, gap_sum, gap)
    want = ctx.want.state
    for i, v in enumerate((F, gap, dist2)):
        if STATE[i] in want:
            S[i, j] = v
    if not want.isdisjoint(("grad_norm2", "grad_dissim")):
        g, dis = grad_values(ctx.p, G, dissim="grad_dissim" in want)
        if "grad_norm2" in want:
            S[3, j] = g
        if dis is not None:
            S[4, j] = dis


def _divergence(ctx, out, r, x, x_new):
    """toys.run's norm rule per instance: a diverged instance stops (its model is kept)."""
    xp = array_namespace(x_new)
    nrm = np.sqrt(to_numpy(xp.sum(x_new * x_new, axis=-1)).astype(float))
    bad = out["alive"] & ~(np.isfinite(nrm) & (nrm <= DIVERGENCE["norm"] * ctx.norm_scale))
    out["div"][bad] = r
    out["alive"] &= ~bad
    if out["alive"].all():
        return x_new
    return xp.where(ctx.ops.asbool(out["alive"])[:, None], x_new, x)
