"""``toys.run``: simulate one federated algorithm on one problem and return its :class:`Trace`.

Everything is validated before any work (algorithm and hyper-parameter names, domains, x0,
participation, backend). Randomness comes only from ``seed``:
``np.random.SeedSequence(seed).spawn(2)`` gives the participation stream (numpy, shared by
every backend, so numpy and torch runs see the same participation) and the sampling stream
(minibatches / gradient noise: a numpy Generator, or a ``torch.Generator`` seeded with
``sampling.generate_state(1)[0]`` for the torch backend). Same seed and backend => the same
bits.

The algorithms (``toys.ALGORITHMS``) and their hyper-parameters are described in
:mod:`toys.algorithms`; the measurements in :mod:`toys.trace`.

Example
-------
>>> import toys
>>> prob = toys.quadratic(n_clients=4, dim=3, L=4.0, mu=1.0, seed=0)
>>> tr = toys.run(prob, "fedsoftmax", rounds=30, seed=0, lr=0.1, local_steps=2, temperature=0.5)
>>> bool(tr.gap[-1] < tr.gap[0]), tr.alpha.sum(axis=1).round(12).tolist()[:2]
(True, [1.0, 1.0])
"""

from __future__ import annotations

import math
import numbers
from types import SimpleNamespace

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

from .algorithms import ALGORITHMS, validate
from .trace import Trace

__all__ = ["ALGORITHMS", "RECORD_MODES", "run"]

RECORD_MODES = ("none", "sync", "round", "step")


def run(problem, algorithm: str, *, rounds: int, seed: int, participation="full", x0=None,
        backend: str = "numpy", device=None, dtype=None, record: str = "round",
        **hyper) -> Trace:
    """Run ``algorithm`` on ``problem`` for ``rounds`` rounds; returns a :class:`Trace`.

    Parameters
    ----------
    problem : FederatedProblem
        e.g. ``toys.make("seed004-toy")``; the torch backend also accepts
        :class:`toys.torch_models.CNNProblem`.
    algorithm : str
        one of ``toys.ALGORITHMS`` (fedavg, fedprox, fedmax, ..., fedau, beta, ...).
    rounds, seed : int
        number of communication rounds (>= 1); seed (>= 0) of every random draw.
    participation : str, process, array or (name, options)
        ``"full"`` (default: every client every round), a name of
        ``toys.participation`` with optional ``"name:key=value,..."`` options, a process object
        (``init(rng)``, ``step(state, rng) -> (state, mask)``, ``probs``), or an explicit
        (rounds, N) boolean matrix.
    x0 : array (d,), optional
        initial model; default ``problem.x0`` if present, else zeros.
    backend, device, dtype
        ``"numpy"`` (float64) or ``"torch"`` (``device`` default ``"cuda"`` when available
        else ``"cpu"``; ``dtype`` ``"float64"`` default or ``"float32"``).
    record : str
        ``"round"`` (default: per-round arrays incl. shadow-sequence and virtual-average
        values, one extra loss evaluation per local step), ``"step"`` (also the per-step
        arrays and DKR's observed zeta, O(N) gradient calls per participant per round),
        ``"sync"`` (no per-step loss evaluations) or ``"none"`` (no measurements: for speed).
    **hyper
        the algorithm's hyper-parameters (:mod:`toys.algorithms`): ``lr`` (required),
        ``local_steps``, ``server_lr``, ``batch_size``, ``prox``, ``beta``, ``K``,
        ``temperature`` / ``inv_temperature``, ``k``, ``switch_round``, ...

    >>> import toys
    >>> toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=1, seed=0, lr=-1.0)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: lr = -1.0 is outside its domain: positive finite number, ...
    """
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise UnknownNameError("algorithm", algorithm, sorted(ALGORITHMS))
    for attr in ("n_clients", "dim", "p"):
        if not hasattr(problem, attr):
            raise DomainError("problem", problem, "a toys.FederatedProblem "
                                                  "(n_clients, dim, p, losses, grads, ...)")
    N, d = int(problem.n_clients), int(problem.dim)
    rounds = _int("rounds", rounds, 1)
    seed = _int("seed", seed, 0)
    if record not in RECORD_MODES:
        raise UnknownNameError("record mode", record, RECORD_MODES)
    plan = validate(algorithm, hyper, N, rounds)
    if backend not in ("numpy", "torch"):
        raise UnknownNameError("backend", backend, ["numpy", "torch"])
    x0 = _x0(problem, x0, d)
    process = _participation(participation, N, rounds)
    ss_part, ss_sample = np.random.SeedSequence(seed).spawn(2)

    if backend == "numpy":
        if dtype not in (None, "float64", np.float64):
            raise DomainError("dtype", dtype, "float64 for the numpy backend "
                                              "(use backend='torch' for float32)")
        if device not in (None, "cpu"):
            raise DomainError("device", device, "None or 'cpu' for the numpy backend")
        from ._xp import NUMPY as ops
        oracle = problem
        sample_rng = np.random.default_rng(ss_sample)
        dev_name = "cpu"
    else:
        from .torch_backend import setup
        ops, oracle, sample_rng = setup(problem, device, dtype,
                                        int(ss_sample.generate_state(1, np.uint64)[0] >> 1))
        dev_name = str(ops.device)

    ctx = _context(problem, plan, ops, oracle, x0, process, rounds, record, N, d)
    ctx.part_rng = np.random.default_rng(ss_part)
    ctx.sample_rng = sample_rng
    trace = Trace.empty(rounds, N, plan.local_steps, record, algorithm=algorithm,
                        problem=getattr(problem, "name", type(problem).__name__), seed=seed,
                        backend=backend, hyper=dict(plan.hyper))
    trace.info.update({"device": dev_name, "dtype": str(ops.dtype).replace("torch.", ""),
                       "participation": _describe(participation), "loss_offset":
                       ctx.loss_offset if plan.needs_scores else None,
                       "server_lr": plan.server_lr, "F_star": ctx.F_star_np,
                       "lrs_first": float(plan.lrs[0])})
    if plan.beta is not None:
        trace.info["graph"] = ctx.graph_np
    if plan.omega == "known":
        trace.info["participation_probs"] = ctx.probs_np
    from ._rounds import simulate

    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return simulate(ctx, trace)


# --------------------------------------------------------------------------- helpers
def _int(name, v, lo):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) \
            or v != int(v) or v < lo:
        raise DomainError(name, v, f"integer >= {lo}")
    return int(v)


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


class _Full:
    """Every client every round (no randomness)."""

    def __init__(self, n):
        self.n_clients = n
        self.probs = np.ones(n)

    def init(self, rng):
        return None

    def step(self, state, rng):
        return state, np.ones(self.n_clients, dtype=bool)


class _Fixed:
    """An explicit (rounds, N) participation matrix; probs = empirical frequencies."""

    def __init__(self, M):
        self.M = M
        self.probs = M.mean(axis=0)

    def init(self, rng):
        return 0

    def step(self, state, rng):
        return state + 1, self.M[state]


def _parse_opts(text):
    opts = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        if "=" not in item:
            raise DomainError("participation", text, "'name' or 'name:key=value,...'")
        k, _, v = item.partition("=")
        try:
            val = int(v)
        except ValueError:
            try:
                val = float(v)
            except ValueError:
                val = v
        opts[k.strip()] = val
    return opts


def _participation(spec, N, rounds):
    if spec is None or (isinstance(spec, str) and spec == "full"):
        return _Full(N)
    if isinstance(spec, str) or (isinstance(spec, tuple) and len(spec) == 2
                                 and isinstance(spec[0], str)):
        if isinstance(spec, str):
            name, _, rest = spec.partition(":")
            opts = _parse_opts(rest)
        else:
            name, opts = spec[0], dict(spec[1])
        if name == "full" and not opts:
            return _Full(N)
        from . import participation as part

        return part.make(name, N, **opts)
    if hasattr(spec, "init") and hasattr(spec, "step"):
        probs = getattr(spec, "probs", None)
        if probs is not None and np.shape(probs) != (N,):
            raise DomainError("participation", spec, f"a process for N = {N} clients")
        return spec
    M = np.asarray(spec)
    if M.shape != (rounds, N) or M.dtype != bool:
        raise DomainError("participation", spec, f"'full', a process name, a process object, "
                                                 f"or a bool matrix of shape ({rounds}, {N})")
    return _Fixed(M)


def _describe(spec):
    if isinstance(spec, str):
        return spec
    if isinstance(spec, tuple):
        return f"{spec[0]}:{spec[1]}"
    if isinstance(spec, np.ndarray):
        return f"matrix{spec.shape}"
    return type(spec).__name__


def _optional(problem, name):
    v = getattr(problem, name, None)
    if v is None:
        return None
    v = np.asarray(v, dtype=float)
    return v if np.all(np.isfinite(v)) else None


def _context(problem, plan, ops, oracle, x0, process, rounds, record, N, d):
    ctx = SimpleNamespace(ops=ops, oracle=oracle, plan=plan, process=process, rounds=rounds,
                          record=record, n_clients=N, dim=d)
    ctx.p = ops.asarray(np.asarray(problem.p, dtype=float))
    ctx.x0 = ops.asarray(x0)
    if plan.beta is not None:
        from .beta import graph, messages

        g = graph(plan.messages if plan.messages is not None else messages(problem))
        ctx.graph_np = g
        ctx.graph_p = ops.asarray(g["p"])
        ctx.graph_P = ops.asarray(g["P"])
        ctx.graph_degree = ops.asarray(g["degree"])
    xs, Fs, Fsi = (_optional(problem, k) for k in ("x_star", "F_star", "F_star_i"))
    ctx.F_star_np = None if Fs is None else float(Fs)
    ctx.x_star = None if xs is None or Fs is None else ops.asarray(xs)
    ctx.F_star = None if Fs is None else float(Fs)
    ctx.F_star_i = None if Fsi is None else ops.asarray(Fsi)
    off = plan.loss_offset
    if plan.needs_scores:
        if off == "auto":
            off = "exact" if ctx.F_star_i is not None else "zero"
        elif off == "exact" and ctx.F_star_i is None:
            raise DomainError("loss_offset", "exact", "'zero' or 'running_min' for a problem "
                                                      "without exact client optima F_i*")
    ctx.loss_offset = off
    ctx.y_star = ctx.F_scale = None
    if ctx.x_star is not None and ctx.F_star_i is not None:
        ctx.y_star = oracle.losses(ctx.x_star) - ctx.F_star_i
        ctx.F_scale = max(1.0, abs(ctx.F_star))
    if plan.omega == "known":
        probs = np.asarray(process.probs, dtype=float)
        ctx.probs_np = probs
        ctx.known_omega = ops.asarray(np.where(probs > 0, 1.0 / np.where(probs > 0, probs, 1.0),
                                               0.0))
    if plan.omega == "one":
        ctx.known_omega = ops.asarray(np.ones(N))
    return ctx
