"""``toys.run``: simulate one federated algorithm on one problem and return its :class:`Trace`.

Everything is validated before any work (algorithm and hyper-parameter names, domains, x0,
participation, backend, sizes). Randomness comes only from ``seed``:
``np.random.SeedSequence(seed).spawn(2)`` gives the participation stream (numpy, shared by
every backend, so numpy and torch runs see the same participation) and the sampling stream
(minibatches / gradient noise: a numpy Generator, or a ``torch.Generator`` seeded with
``sampling.generate_state(1)[0]`` for the torch backend). Pieces that draw at random use
further children of the same ``SeedSequence`` (``Setup.seed`` and
:func:`toys.algorithms.local_work.round_rng`: Power-of-Choice's candidates, per-client local
work). Same seed and backend => the same bits, also across a checkpoint and resume.

Example
-------
>>> import toys
>>> prob = toys.quadratic(n_clients=4, dim=3, L=4.0, mu=1.0, seed=0)
>>> tr = toys.run(prob, "fedsoftmax", rounds=30, seed=0, lr=0.1, local_steps=2, temperature=0.5)
>>> bool(tr.gap[-1] < tr.gap[0]), tr.alpha.sum(axis=1).round(12).tolist()[:2]
(True, [1.0, 1.0])
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from boundlab.errors import DomainError

from .. import participation as part
from ..algorithms import Algorithm, Setup, bind, get
from ..algorithms._hyper import finite_attr
from ..validation import check_choice, check_int
from . import backends
from .callbacks import run_loop
from .checkpoint import restore
from .measure import N_STEP, check_extra_steps
from .rounds import init_state
from .trace import Trace

__all__ = ["MAX_BUFFER_BYTES", "RECORD_MODES", "run"]

RECORD_MODES = ("none", "sync", "round", "step")
MAX_BUFFER_BYTES = 1 << 32
"""Runs whose measurement buffers or step-size schedule would exceed this many bytes are
refused before any work (e.g. ``rounds=1e12``)."""


def run(problem, algorithm, *, rounds: int, seed: int, participation="full", x0=None,
        backend: str = "numpy", device=None, dtype=None, record: str = "round",
        callbacks=(), checkpoint=None, checkpoint_every: int | None = None, resume=None,
        extra_steps=(), **hyper) -> Trace:
    """Run ``algorithm`` on ``problem`` for ``rounds`` rounds; returns a :class:`Trace`.

    Parameters
    ----------
    problem : FederatedProblem
        e.g. ``toys.make("seed004-toy")``; the torch backend also accepts
        :class:`toys.problems.cnn.CNNProblem`.
    algorithm : str or toys.Algorithm
        a built-in name (``toys.ALGORITHMS``: fedavg, fedprox, fedmax, ..., fedau, beta, ...)
        or a composition of pieces (:mod:`toys.algorithms`).
    rounds, seed : int
        number of communication rounds (>= 1); seed (>= 0) of every random draw.
    participation : str, process, array or (name, options)
        ``"full"`` (default), a name of ``toys.participation`` with optional
        ``"name:key=value,..."`` options, a process object, or a (rounds, N) bool matrix.
    x0 : array (d,), optional
        initial model; default ``problem.x0`` if present, else zeros.
    backend, device, dtype
        a name of :mod:`toys.engine.backends` (``"numpy"``, float64; ``"torch"``: ``device``
        default ``"cuda"`` when available else ``"cpu"``, ``dtype`` ``"float64"`` or
        ``"float32"``).
    record : str
        ``"round"`` (default: per-round arrays incl. shadow-sequence and virtual-average
        values, one extra loss evaluation per local step, batched across rounds:
        :mod:`toys.engine.settle`), ``"step"`` (also the per-step arrays and DKR's observed
        zeta), ``"sync"`` (no per-step loss evaluations) or ``"none"`` (no measurements: for
        speed).
    callbacks : sequence of callables
        ``callback(info)`` after every round (:mod:`toys.engine.callbacks`): ``info`` has the
        round, the model and the run's state, ``info.record(name, value)`` adds a per-round
        metric to ``Trace.metrics``, returning True (or ``info.stop()``) ends the run.
    extra_steps : sequence of str
        per-step quantities recorded on top of ``record="step"``'s (names of
        :data:`toys.engine.measure.EXTRA_STEPS`: ``"pairwise_drift"``, ``"local_deviation"``,
        and the beta algorithm's ``"perturbed_divergence"``, ``"neighbour_avg_deviation"``),
        as ``Trace.steps`` arrays of those names; none by default.
    checkpoint, checkpoint_every, resume : path, int, path
        save the complete engine state to ``checkpoint`` (atomically) every
        ``checkpoint_every`` rounds; ``resume`` continues a run from such a file bit for bit.
        The file must come from this run (same problem data, algorithm, hyper-parameters,
        participation, x0, seed, backend, dtype, record mode and code) and fit its state's
        structure; otherwise an IntegrityError names the file and what differs
        (:mod:`toys.engine.checkpoint`).
    **hyper
        the pieces' hyper-parameters (:mod:`toys.algorithms._hyper`): ``lr`` (required for the
        built-in client updates), ``local_steps``, ``server_lr``, ``batch_size``, ``prox``,
        ``beta``, ``K``, ``temperature`` / ``inv_temperature``, ``k``, ``switch_round``, ...

    >>> import toys
    >>> toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=1, seed=0, lr=-1.0)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: lr = -1.0 is outside its domain: positive finite number, ...
    """
    if checkpoint_every is not None and checkpoint is None:
        raise DomainError("checkpoint_every", checkpoint_every,
                          "given only with checkpoint= (the file the state is saved to)")
    algo = algorithm if isinstance(algorithm, Algorithm) else get(algorithm)
    N, d = _problem_size(problem)
    rounds = check_int("rounds", rounds, lo=1)
    seed = check_int("seed", seed, lo=0)
    check_choice("record mode", record, RECORD_MODES)
    extra_steps = check_extra_steps(extra_steps, record)
    _check_sizes(rounds, N, hyper, record)
    x0 = _x0(problem, x0, d)
    process = part.resolve(participation, N, rounds)
    ss_part, ss_sample = np.random.SeedSequence(seed).spawn(2)
    ops, oracle, sample_rng = backends.get(backend).setup(problem, device, dtype, ss_sample)
    setup = Setup(problem, process, N, rounds, algo.name, asarray=ops.asarray, seed=seed)
    algo = bind(algo, hyper, setup)
    ctx = _context(problem, algo, ops, oracle, x0, process, rounds, record, N, d)
    ctx.part_rng, ctx.sample_rng = np.random.default_rng(ss_part), sample_rng
    ctx.extra_steps = extra_steps
    trace = Trace.empty(rounds, N, ctx.local_steps, record, extra_steps=extra_steps,
                        algorithm=algo.name,
                        problem=getattr(problem, "name", type(problem).__name__), seed=seed,
                        backend=backend, hyper={k: v for k, v in hyper.items()
                                                if k != "messages"})
    trace.info.update({"device": str(ops.device), "participation": part.describe(participation),
                       "dtype": str(ops.dtype).replace("torch.", ""),
                       "loss_offset": None, "server_lr": getattr(algo.server, "server_lr", None),
                       "F_star": ctx.F_star, "lrs_first": float(ctx.lrs[0])})
    trace.info.update(setup.info)
    ctx.fingerprint, ctx.hyper = _fingerprint(trace, N, d, extra_steps), hyper
    state = init_state(ctx)  # also the template a checkpoint must fit
    if resume is not None:
        state = restore(resume, ctx, template=state)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return run_loop(ctx, state, trace, callbacks, checkpoint, checkpoint_every)


# --------------------------------------------------------------------------- helpers
def _problem_size(problem):
    for attr in ("n_clients", "dim", "p"):
        if not hasattr(problem, attr):
            raise DomainError("problem", problem, "a toys.FederatedProblem "
                                                  "(n_clients, dim, p, losses, grads, ...)")
    return int(problem.n_clients), int(problem.dim)


def _check_sizes(rounds, N, hyper, record):
    from . import limits

    tau = hyper.get("local_steps", 1)
    tau = tau if isinstance(tau, (int, float)) and not isinstance(tau, bool) \
        and np.isfinite(tau) and tau >= 1 else 1
    need = {"rounds x local_steps (step-size schedule)": rounds * tau,
            "rounds x n_clients (weights and participation)": rounds * (N + 20)}
    if record == "step":
        need["rounds x local_steps (per-step record)"] = N_STEP * rounds * tau
    for what, n in need.items():
        if 8 * n > MAX_BUFFER_BYTES:
            name = "local_steps" if "schedule" in what and tau > 1 else "rounds"
            raise DomainError(name, hyper.get(name, rounds) if name != "rounds" else rounds,
                              f"a size with {what} x 8 bytes <= {MAX_BUFFER_BYTES} bytes",
                              f"would need {8 * n:.3g} bytes")
    # all the buffers together against the machine's memory, and the time (toys.engine.limits)
    limits.check("toys.run", lambda s: limits.run_need(record=record, **s),
                 {"rounds": rounds, "local_steps": tau, "n_clients": N})


def _x0(problem, x0, d):
    if x0 is None:
        x0 = getattr(problem, "x0", None)
        if x0 is None:
            x0 = np.zeros(d)
    try:
        x = np.array(x0, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise DomainError("x0", x0, f"finite array of shape ({d},)") from None
    if x.shape != (d,) or not np.all(np.isfinite(x)):
        raise DomainError("x0", x0, f"finite array of shape ({d},)")
    return x


def _fingerprint(trace, N, d, extra_steps=()) -> dict:
    """The run's settings a checkpoint must match (with the digests of the problem's data,
    participation, x0 and hyper-parameters: :func:`toys.engine.checkpoint.claim`); the extra
    per-step arrays only when some are recorded (older checkpoints have none)."""
    out = {"algorithm": trace.algorithm, "problem": trace.problem, "seed": trace.seed,
           "rounds": trace.rounds, "n_clients": N, "dim": d, "backend": trace.backend,
           "dtype": trace.info["dtype"], "record": trace.record}
    if extra_steps:
        out["extra_steps"] = list(extra_steps)
    return out


def _context(problem, algo, ops, oracle, x0, process, rounds, record, N, d):
    ctx = SimpleNamespace(ops=ops, oracle=oracle, algo=algo, process=process, rounds=rounds,
                          record=record, n_clients=N, dim=d, problem=problem)
    ctx.p = ops.asarray(np.asarray(problem.p, dtype=float))
    ctx.x0 = ops.asarray(x0)
    ctx.local_steps = int(getattr(algo.client, "local_steps", 1))
    lrs = getattr(algo.client, "lrs", None)
    ctx.lrs = np.full(rounds * ctx.local_steps, np.nan) if lrs is None else np.asarray(lrs)
    # the optima are only read (and, for lazy problems, solved) when something is measured
    xs, Fs, Fsi = ((finite_attr(problem, k) for k in ("x_star", "F_star", "F_star_i"))
                   if record != "none" else (None, None, None))
    ctx.F_star = None if Fs is None else float(Fs)
    ctx.x_star = None if xs is None or Fs is None else ops.asarray(xs)
    ctx.F_star_i = None if Fsi is None else ops.asarray(Fsi)
    ctx.y_star = ctx.F_scale = None
    if ctx.x_star is not None and ctx.F_star_i is not None:
        ctx.y_star = oracle.losses(ctx.x_star) - ctx.F_star_i
        ctx.F_scale = max(1.0, abs(ctx.F_star))
    ctx.norm_scale = max(1.0, float(np.linalg.norm(x0)))
    return ctx
