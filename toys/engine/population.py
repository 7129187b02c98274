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
average: ``grad_norm2_virtual``, what BC's non-convex theorems bound). Not batched yet: the
rho values (they need F_i* at every point; NaN here) and ``zeta_obs`` (NaN).
Divergence is judged per instance with ``toys.run``'s rule; a diverged instance's arrays end
where its own run ends.

Every built-in piece is batched (``batched = True``): every algorithm of
``toys.algorithms.names()`` (tests/toys/engine/test_population_pieces.py), the clipped client
updates and the accuracy switch (whose stage stays 0: a population has no callbacks). Seed
003's graph is each instance's own; Power-of-Choice and per-client local work draw each
instance's numbers from its own seed. Refused by name: a piece without ``batched = True`` (a
user's, until it takes the leading axis), minibatch noise, callbacks and checkpoints.
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

from boundlab.errors import DomainError

from .. import participation as part
from .._array import array_namespace, broadcast_rows, normalise, to_numpy
from ..algorithms import Algorithm, Setup, bind, get
from ..local import lr_schedule
from ..problems.stacked import stack
from ..validation import check_choice, check_int
from . import backends
from .measure import (
    GN,
    LR,
    N_ROWS,
    N_STEP,
    ROUND,
    SHADOW,
    STATE,
    grad_values,
    loss_values,
    step_values,
)
from .rounds import DIVERGENCE, _weights
from .settle import round_summaries
from .trace import ROUND_FIELDS, STATE_FIELDS, STEP_FIELDS, Trace, virtual_grad_norm2

__all__ = ["POPULATION_RECORD", "Population", "run_many"]

POPULATION_RECORD = ("round", "step", "state", "none")
MAX_POPULATION_BYTES = 1 << 33
"""Populations whose arrays (the clients' models and gradients, the state of the pieces and
the records) would exceed this many bytes are refused before any work."""


def run_many(problems, algorithm, *, rounds: int, seeds, participation="full", x0=None,
             backend: str = "numpy", device=None, dtype=None, record: str = "round",
             vary=None, **hyper) -> Population:
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
    ctx.procs, ctx.fixed_masks = procs, fixed
    ctx.all_full = fixed is None and all(isinstance(p, part.Full) for p in procs)
    ctx.part_rngs = [None] * B if ctx.all_full else \
        [np.random.default_rng(np.random.SeedSequence(s).spawn(2)[0]) for s in seeds]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        out = _loop(ctx)
    ctx.meta = {"seeds": seeds, "backend": backend, "hyper": hyper, "vary": vary or {},
                "participation": participation}
    return Population(ctx, out)


# --------------------------------------------------------------------------- validation
def _seeds(seeds, B):
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return [check_int("seeds", seeds, lo=0)] * B
    vals = list(seeds)
    if len(vals) != B:
        raise DomainError("seeds", f"{len(vals)} seeds", f"one int or {B} ints (one per problem)")
    return [check_int("seeds", s, lo=0) for s in vals]


def _check_batched(algo):
    for role in ("client", "weights", "server"):
        piece = getattr(algo, role)
        if not getattr(piece, "batched", False):
            raise DomainError(f"algorithm.{role}", type(piece).__name__,
                              "a piece with a population axis (batched = True); "
                              f"{algo.name!r} runs with toys.run")


def _processes(spec, B, N, rounds):
    """(processes, fixed masks): one process per instance, or a (B, rounds, N) bool array of
    fixed patterns (each instance's row is its own (rounds, N) matrix, as toys.run takes it)."""
    if isinstance(spec, np.ndarray) and spec.ndim == 3:
        if spec.shape != (B, rounds, N) or spec.dtype != bool:
            raise DomainError("participation", f"array of shape {spec.shape}",
                              f"a bool array of shape ({B}, {rounds}, {N})")
        return [part.resolve(spec[0], N, rounds)] * B, spec
    specs = list(spec) if isinstance(spec, (list, tuple)) and len(spec) == B \
        and not isinstance(spec, str) and B > 1 else [spec] * B
    return [part.resolve(s, N, rounds) for s in specs], None


def _vary(algo, vary, B, rounds):
    """The algorithm with the per-instance values of ``vary`` and the (B, rounds * tau) step
    sizes of every instance."""
    for name in vary:
        if name != "lr":
            raise DomainError("vary", name, "'lr' (the per-instance hyper-parameters batched "
                                            "so far)")
    client = algo.client
    tau = int(getattr(client, "local_steps", 1))
    base = getattr(client, "lrs", None)
    if "lr" in vary:
        vals = list(vary["lr"])
        if len(vals) != B:
            raise DomainError("vary['lr']", f"{len(vals)} values", f"{B} values (one per problem)")
        lrs = _lr_rows(vals, rounds, tau)
    else:
        lrs = np.full((B, rounds * tau), np.nan) if base is None else \
            np.broadcast_to(np.asarray(base, dtype=float), (B, rounds * tau))
    lrs = np.array(lrs)  # writable (torch takes it)
    if base is not None:
        from dataclasses import replace

        server = algo.server  # FedNova normalises by the clients' steps
        if getattr(server, "lrs", None) is not None:
            server = replace(server, lrs=lrs)
        algo = Algorithm(algo.name, replace(client, lrs=lrs), algo.weights, server,
                         algo.description)
    return algo, lrs


def _lr_rows(vals, rounds, tau):
    """(B, rounds * tau) step sizes: constants checked at once, schedules one by one
    (:func:`toys.local.lr_schedule`)."""
    arr = np.asarray(vals, dtype=object)
    if arr.ndim == 2 and arr.shape[1] == rounds * tau:  # one value per iteration, per instance
        a = np.asarray(vals, dtype=float)
        if np.all(np.isfinite(a) & (a > 0)):
            return a
    if all(isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
           for v in vals):
        a = np.asarray(vals, dtype=float)
        if np.all(np.isfinite(a) & (a > 0)):
            return np.repeat(a[:, None], rounds * tau, axis=1)
    return np.stack([lr_schedule(v, rounds, tau) for v in vals])


def _check_memory(B, N, d, rounds, steps):
    need = 8 * (4 * B * N * d + B * (rounds + 1) * (len(STATE) + 2 * N) + B * steps)
    if need > MAX_POPULATION_BYTES:
        raise DomainError("problems", f"B={B}, N={N}, d={d}, rounds={rounds}",
                          f"a population needing <= {MAX_POPULATION_BYTES} bytes",
                          f"would need {need:.3g} bytes")


def _x0(pop, x0, B, d):
    x = pop.x0 if x0 is None else np.asarray(x0, dtype=float)
    x = np.broadcast_to(x, (B, d)) if x.shape in ((d,), (B, d)) else None
    if x is None or not np.all(np.isfinite(x)):
        raise DomainError("x0", x0, f"finite array of shape ({d},) or ({B}, {d})")
    return np.array(x, dtype=float)


def _context(pop, algo, ops, oracle, x0, rounds, record, lrs):
    ctx = SimpleNamespace(ops=ops, oracle=oracle, algo=algo, rounds=rounds, record=record,
                          B=pop.n_instances, n_clients=pop.n_clients, dim=pop.dim, pop=pop)
    ctx.p, ctx.x0, ctx.lrs = ops.asarray(pop.p), ops.asarray(x0), lrs
    ctx.tau = int(getattr(algo.client, "local_steps", 1))
    ctx.x_star = ops.asarray(pop.x_star)
    ctx.F_star = ops.asarray(pop.F_star)
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
        out["BS"] = ops.full((R, B, N_STEP, ctx.tau), math.nan)
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
        _state(ctx, out["S"], R, x, ctx.oracle.losses(x),
               ctx.oracle.grads(broadcast_rows(x, N)), np.zeros(B, dtype=bool))
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
        L, G = orc.losses(x), orc.grads(W0)
        deferred = mask_np.all(axis=1) & bool(getattr(algo.client, "first_grad_at_x", False)) \
            & (not getattr(algo.weights, "needs_losses", True))
        _state(ctx, out["S"], r, x, L, G, deferred)
    elif getattr(algo.weights, "needs_losses", True):
        L = orc.losses(x)
    coef = _weights(ctx, st, r, L, mask)  # toys.run's (ALPHA, and OMEGA when the rule has one)
    obs = _Steps(ctx, r, x, coef, mask, mask_np) if ctx.record in ("round", "step") else None
    W, st.client = algo.client.update(st.client, x=x, oracle=orc, round=r, rng=None,
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
        self.all = bool(mask_np.all())  # every client of every instance: no masking
        self.n_part = ctx.ops.asarray(mask_np.sum(axis=1).astype(float))
        self.buf = ctx.ops.full((ctx.B, N_ROWS, ctx.tau), math.nan)
        self.buf[:, LR] = ctx.ops.asarray(ctx.lrs[:, r * ctx.tau:(r + 1) * ctx.tau])

    def __call__(self, k, W, G, lr):
        ctx = self.ctx
        if not self.all:
            m = self.mask[..., None]
            xp = array_namespace(W)
            W = xp.where(m, W, self.x[..., None, :])
            G = xp.where(m, G, 0.0)
        mask = None if self.all else self.mask
        wbar, rows = step_values(self.a_v, W, G, mask, self.n_part, ctx.x_star)
        for row, v in rows.items():
            self.buf[:, row, k] = v
        _, gap, _ = loss_values(ctx.p, ctx.oracle.losses(wbar), wbar, ctx.x_star, ctx.F_star,
                                summed=True)
        self.buf[:, SHADOW, k] = gap
        if ctx.record == "step":  # ||grad F||^2 at the virtual averages (grad_norms_at's)
            self.buf[:, GN, k] = grad_values(ctx.p, ctx.oracle.grads(wbar))[0]

    def summarise(self, out, r):
        """The round's summaries into column r of ``out["RB"]`` (and its steps into
        ``out["BS"]``), NaN for an instance without participants: toys.run measures nothing
        in such a round."""
        xp = array_namespace(self.buf)
        nan = self.ctx.ops.full((self.ctx.B,), math.nan)
        some = self.ctx.ops.asbool(self.some)
        for name, v in round_summaries(self.buf, nan, self.ctx.tau).items():
            if name != "rho_min":  # rho needs F_i* at x: not batched yet
                out["RB"][ROUND.index(name), r] = xp.where(some, v, math.nan)
        if "BS" in out:
            out["BS"][r] = xp.where(some[:, None, None], self.buf[:, :N_STEP], math.nan)


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
    S[0, j], S[1, j], S[2, j] = F, gap, dist2
    S[3, j], S[4, j] = grad_values(ctx.p, G)


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


# --------------------------------------------------------------------------- the traces
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
                for name in _SUMMARIES:
                    self.per_round[name][:] = RB[ROUND.index(name)].T
            self.per_round["n_participants"][:] = out["npart"].T
            self.per_round["lr"][:] = ctx.lrs[:, ::ctx.tau]
        self.alpha = np.array(np.moveaxis(to_numpy(out["ALPHA"]), 1, 0))
        self.omega = (np.array(np.moveaxis(to_numpy(out["OMEGA"]), 1, 0), dtype=float)
                      if "OMEGA" in out else None)
        self.participation = np.array(np.moveaxis(out["part"], 1, 0))
        self.steps = None
        if "BS" in out:  # (R, B, N_STEP, tau) -> {name: (B, R, tau)}
            BS = to_numpy(out["BS"])
            self.steps = {k: np.array(BS[:, :, i].swapaxes(0, 1))
                          for i, k in enumerate(STEP_FIELDS)}
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

    def __getattr__(self, name):
        d = self.__dict__
        if name in STATE_FIELDS and "state" in d:
            return d["state"][name]
        if name in ROUND_FIELDS and "per_round" in d:
            return d["per_round"][name]
        raise AttributeError(f"'Population' object has no attribute {name!r}")


_SUMMARIES = ("shadow_gap", "drift_max", "drift_mean", "drift_sum", "disc_max", "g2_max")


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
    tr = Trace.empty(ctx.rounds, ctx.n_clients, ctx.tau, ctx.record, algorithm=ctx.algo.name,
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
        for k in STEP_FIELDS:
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
