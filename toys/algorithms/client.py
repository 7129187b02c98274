"""Client updates: the local training of one round for every client at once, as pieces.

The protocol (any object with these two methods is a client update)::

    init(x, n_clients) -> state                    # x: the initial model (backend array)
    update(state, *, x, oracle, round, rng, mask, **hints) -> (W, state)

``W`` (N, d) are the clients' models at the end of the round (rows of absent clients are
ignored). ``oracle`` has the problem's batched ``losses(W)``, ``grads(W)`` and
``minibatch_grads(W, rng, batch_size)`` on the run's backend; ``rng`` is the run's sampling
stream (numpy ``Generator`` or ``torch.Generator``). The engine also passes ``hints`` a piece
may use or ignore: ``start`` (the (N, d) stack of copies of x), ``grads`` (the full gradients
at x when the engine computed them, else None) and ``observer`` (``observer(k, W, G, lr)``
after local step k feeds the per-step measurements; a piece that never calls it leaves them
NaN). A piece may expose ``local_steps`` (int) and ``lrs`` (the step size of every iteration)
for the trace.

Built-in: :class:`LocalSteps` — tau local (S)GD steps (DKR Alg. 1, BM CLIENT-UPDATE, FedAU
Alg. 1), with FedProx's proximal term (DKR eq. (4), BC §5.2.3); :class:`BetaPerturbed` —
seed 003's step with the gradient at beta w + (1 - beta) u_i (state: the neighbour averages
u_i, :mod:`toys.algorithms.beta`).

Example
-------
>>> import numpy as np, toys
>>> prob = toys.quadratic(n_clients=3, dim=2, seed=0)
>>> c = LocalSteps(local_steps=2, lrs=np.full(2, 0.05))
>>> W, _ = c.update(c.init(np.zeros(2), 3), x=np.zeros(2), oracle=prob, round=0,
...                 rng=np.random.default_rng(0), mask=np.ones(3, bool))
>>> W.shape
(3, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from boundlab.domains import POSITIVE, UNIT_HALF_OPEN
from boundlab.errors import MissingParameterError

from .._array import array_namespace, broadcast_rows, count, is_numpy
from ..local import lr_schedule
from ._hyper import required, value
from .beta import graph_for, neighbour_average

__all__ = ["BetaPerturbed", "LocalSteps", "local_update"]


@dataclass(frozen=True)
class LocalSteps:
    """``local_steps`` local (S)GD steps from the broadcast model: W <- W - lr_k (g(W) +
    prox (W - x)); minibatches of ``batch_size`` (None = full batch); ``lrs`` the step size of
    every global iteration t = r * local_steps + k (:func:`toys.local.lr_schedule`). Rounds
    without participants do no work and draw no random numbers."""

    local_steps: int = 1
    lrs: object = None
    batch_size: int | None = None
    prox: float = 0.0

    hyper_names = ("lr", "local_steps", "batch_size", "prox")
    batched = True  # runs on a population's leading axis (toys.run_many)

    def bind(self, hyper, setup):
        """Bind lr (required), local_steps, batch_size and prox (``prox=None`` on the piece:
        required > 0, FedProx)."""
        if hyper.get("lr") is None:
            raise MissingParameterError(setup.name, ["lr"],
                                        {"lr": "positive number, array or callable"})
        tau = value(hyper, "local_steps", self.local_steps)
        lrs = lr_schedule(hyper["lr"], setup.rounds, tau)
        prox = (required(hyper, "prox", setup.name, POSITIVE) if self.prox is None
                else value(hyper, "prox", self.prox))
        return replace(self, local_steps=tau, lrs=lrs, prox=prox,
                       batch_size=value(hyper, "batch_size", self.batch_size))

    @property
    def first_grad_at_x(self) -> bool:
        """Whether local step 0 takes the full gradient at x of every client it trains (full
        batch): the engine then reads the state metrics' gradients from the observer instead
        of computing them again."""
        return self.batch_size is None

    def init(self, x, n_clients):
        return ()

    def round_lrs(self, round):
        """The round's step sizes: (tau,), or (B, tau) for a population with one schedule
        per instance (:func:`toys.run_many`)."""
        tau = self.local_steps
        return self.lrs[..., round * tau:(round + 1) * tau]

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        if count(mask) == 0:
            return (broadcast_rows(x, oracle.n_clients) if start is None else start), state
        G0 = grads if self.batch_size is None else None
        W = participants_update(oracle, x, self.round_lrs(round), rng, mask, self.batch_size,
                                self.prox, observer=observer, G0=G0, W0=start)
        return W, state


@dataclass(frozen=True)
class BetaPerturbed(LocalSteps):
    """Seed 003's beta-perturbed local SGD: the gradient of step k is taken at
    beta w + (1 - beta) u_i and applied to w; after the round u_i = p_i^{-1} sum_n p_in w^n
    (absent clients contribute the broadcast model; ``P``, ``degree`` from
    :func:`toys.algorithms.beta.graph`). State: U (N, d), starting at the broadcast model
    (a population's U (B, N, d), each instance with its own graph: :func:`toys.run_many`)."""

    beta: float | None = None
    P: object = None
    degree: object = None
    hyper_names = ("lr", "local_steps", "batch_size", "prox", "beta", "messages")

    def bind(self, hyper, setup):
        """LocalSteps' parameters, beta (required, in (0, 1]) and the graph of the messages."""
        piece = LocalSteps.bind(self, hyper, setup)
        beta = required(hyper, "beta", setup.name, UNIT_HALF_OPEN)
        g = graph_for(setup, hyper.get("messages"))
        return replace(piece, beta=beta, P=setup.asarray(g["P"]),
                       degree=setup.asarray(g["degree"]))

    first_grad_at_x = False  # step 0 takes the gradient at beta x + (1 - beta) u_i
    batched = True  # U (B, N, d), P (B, N, N): each instance's own graph (toys.run_many)

    def init(self, x, n_clients):
        return broadcast_rows(x, n_clients)

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        if count(mask) == 0:
            W = broadcast_rows(x, oracle.n_clients) if start is None else start
        else:
            announce = getattr(observer, "perturbation", None)
            if announce is not None:  # the perturbed points, for the observer's seed-003 rows
                announce(self.beta, state)
            W = participants_update(oracle, x, self.round_lrs(round), rng, mask,
                                    self.batch_size, self.prox, self.beta, state, observer,
                                    W0=start)
        W_last = array_namespace(W).where(mask[..., None], W, x[..., None, :])
        return W, neighbour_average(self.P, self.degree, W_last, x)


def participants_update(oracle, x, lrs, rng, mask, batch_size=None, prox: float = 0.0,
                        beta: float | None = None, U=None, observer=None, G0=None, W0=None,
                        steps=None, shift=None):
    """:func:`local_update` of the participants only (``mask``), when the oracle has a
    ``subset`` (problems of toys: quadratic, logistic; numpy and torch): the work is in
    proportion to the participants, the random streams advance as for all N clients (same
    bits), and the result is the (N, d) stack with the absent clients' rows at ``x``. The
    observer sees full (N, d) stacks, as with :func:`local_update`.
    """
    N = oracle.n_clients
    if getattr(mask, "ndim", 1) > 1:  # a population (toys.run_many): every client computes,
        W0 = broadcast_rows(x, N) if W0 is None else W0  # absent rows are put back at x
        W = local_update(oracle, x, lrs, rng, batch_size, prox, beta, U, observer, G0, W0,
                         steps, shift)
        xp = array_namespace(W)
        return W if bool(xp.all(mask)) else xp.where(mask[..., None], W, W0)
    n_part = count(mask)
    subset = getattr(oracle, "subset", None)
    idx = _nonzero(mask) if n_part < N and callable(subset) else None
    sub = None if idx is None else subset(idx)
    if sub is None:
        return local_update(oracle, x, lrs, rng, batch_size, prox, beta, U, observer, G0, W0,
                            steps, shift)
    W_full = broadcast_rows(x, N) if W0 is None else W0
    obs = None
    if observer is not None:
        xp = array_namespace(W_full)
        G_full = xp.zeros_like(W_full)

        def obs(k, Wk, Gk, lr):
            Wf = _copy(W_full)
            Wf[idx] = Wk
            G_full[idx] = Gk
            observer(k, Wf, G_full, lr)

    Ws = local_update(sub, x, lrs, rng, batch_size, prox, beta,
                      None if U is None else U[idx], obs, None if G0 is None else G0[idx],
                      W_full[idx], None if steps is None else steps[idx],
                      None if shift is None else shift[idx])
    W = _copy(W_full)
    W[idx] = Ws
    return W


def _nonzero(mask):
    if is_numpy(mask):
        return np.flatnonzero(mask)
    return mask.nonzero()[:, 0]


def _copy(W):
    return np.array(W, copy=True) if is_numpy(W) else W.clone()


def local_update(oracle, x, lrs, rng, batch_size=None, prox: float = 0.0,
                 beta: float | None = None, U=None, observer=None, G0=None, W0=None,
                 steps=None, shift=None):
    """Run ``len(lrs)`` local steps for every client at once; returns the stack W (N, d).

    Step k (0-based) is ``W <- W - lrs[k] * (g(P) + prox * (W - x))`` with ``P = W`` or, when
    ``beta`` is given, ``P = beta * W + (1 - beta) * U``. ``observer(k, W, G, lr)`` is called
    after step k with the new W and the gradient used. ``G0``, if given, replaces the k = 0
    gradient (it must equal the full gradient at ``x``), and ``W0``, if given, is the (N, d)
    stack of copies of ``x`` to start from (not modified). ``shift`` (N, d), if given, is
    added to every gradient (SCAFFOLD's correction c - c_i); ``steps`` (N,), if given, is each
    client's number of steps: from step ``steps[i]`` on, client i's row stays where it is (the
    step mask of :mod:`toys.algorithms.local_work`; the observer then sees a zero gradient row).

    Deterministic steps (``batch_size=None``, no ``beta``) of a numpy oracle with a fused kernel
    ``local_gd`` (binary logistic problems) run through it: all the steps of a block of
    clients that fits in cache, then the next block; the observer, if any, then sees the kept
    per-step stacks in step order. The bits are those of the step-by-step loop.

    >>> import numpy as np, toys
    >>> prob = toys.quadratic(n_clients=2, dim=2, seed=0)
    >>> W = local_update(prob, prob.x_star_i[0], [0.1], None)
    >>> bool(np.allclose(W[0], prob.x_star_i[0]))   # client 0 starts at its own optimum
    True
    """
    fused = getattr(oracle, "local_gd", None)
    if fused is not None and batch_size is None and beta is None and is_numpy(x) \
            and steps is None and shift is None:
        W = _fused(oracle, fused, x, lrs, prox, observer, G0, W0)
        if W is not None:
            return W
    W = broadcast_rows(x, oracle.n_clients) if W0 is None else W0
    xc = x[..., None, :]  # the server model against the client rows
    for k in range(_n_steps(lrs)):
        lr = _step_size(lrs, k, W)
        if k == 0 and G0 is not None:
            G = G0
        else:
            P = W if beta is None else beta * W + (1.0 - beta) * U
            G = oracle.minibatch_grads(P, rng, batch_size)
        if shift is not None:
            G = G + shift
        step = G if prox == 0.0 else G + prox * (W - xc)
        if steps is None:
            W = W - lr * step
        else:
            W, G = _masked_step(W, lr * step, G, k < steps)
        if observer is not None:
            observer(k, W, G, lr)
    return W


def _n_steps(lrs) -> int:
    """The number of local steps of a round's step sizes: (tau,) or, per instance of a
    population, (B, tau)."""
    return int(getattr(lrs, "shape", (len(lrs),))[-1])


def _step_size(lrs, k, W):
    """Step k's size: a Python float, or per instance (B, 1, 1) on W's backend and dtype."""
    if getattr(lrs, "ndim", 1) == 1:
        return float(lrs[k])
    v = lrs[:, k]
    if not is_numpy(W):
        v = np.array(v)  # a copy: the population's lrs may be a read-only view
        v = array_namespace(W).asarray(v, dtype=W.dtype, device=W.device)
    return v[:, None, None]


def _masked_step(W, lr_step, G, on):
    """(W - lr_step, G) on the rows where ``on``; (W, 0) on the others."""
    xp = array_namespace(W)
    return xp.where(on[..., None], W - lr_step, W), xp.where(on[..., None], G, 0.0)


_FUSED_RECORD_BYTES = 1 << 28  # largest per-step stacks (W_k and G_k, k < tau) kept for an observer


def _fused(oracle, fused, x, lrs, prox, observer, G0, W0):
    """Deterministic local GD through the oracle's fused kernel ``local_gd`` (cache-blocked:
    all the steps of a block of clients at once). With an observer, the per-step stacks are
    kept and observed after the blocks, in step order (the same arrays, so the same
    measurements). Returns None where the kernel does not apply."""
    N, d, tau = oracle.n_clients, len(x), len(lrs)
    Ws = Gs = None
    if observer is not None:
        if 2 * tau * N * d * 8 > _FUSED_RECORD_BYTES:
            return None
        Ws, Gs = np.empty((tau, N, d)), np.empty((tau, N, d))
    W = broadcast_rows(x, N) if W0 is None else np.array(W0, copy=True)
    W = fused(W, x, lrs, prox, G0, Ws, Gs)
    if W is not None and observer is not None:
        if callable(getattr(observer, "observe_all", None)):
            observer.observe_all(Ws, Gs)
        else:
            for k, lr in enumerate(lrs):
                observer(k, Ws[k], Gs[k], float(lr))
    return W
