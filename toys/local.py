"""Client updates, batched over clients: tau local (stochastic) gradient steps for all N at once.

One function, :func:`local_update`, covers every client update of the five papers:

* plain local SGD / GD (DKR Alg. 1, BM CLIENT-UPDATE, FedAU Alg. 1 with step ``gamma``):
  ``x_i <- x_i - lr_k * g_i(x_i)``;
* FedProx (DKR eq. (4), mu_prox; Buttaci & Calafiore §5.2.3, alpha):
  ``x_i <- x_i - lr_k * (g_i(x_i) + prox * (x_i - x0))``;
* the beta-perturbed step of Buttaci & Calafiore (Alg. 1): the gradient is taken at
  ``beta * x_i + (1 - beta) * u_i`` and applied to ``x_i``.

Step sizes come from :func:`lr_schedule`: a number (constant), an array (one value per round, or
one per global SGD iteration ``t = r * local_steps + k``) or a callable of the global iteration
index ``t`` (0-based), e.g. BM's ``eta_t = 1 / (mu (t + gamma))`` (:func:`inverse_time`).

Example
-------
>>> import numpy as np, toys
>>> from toys._xp import NUMPY
>>> prob = toys.quadratic(n_clients=3, dim=2, seed=0)
>>> W = local_update(NUMPY, prob, np.zeros(2), [0.05, 0.05], np.random.default_rng(0))
>>> W.shape
(3, 2)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from boundlab.errors import DomainError

__all__ = ["exponential", "inverse_time", "local_update", "lr_schedule"]


def lr_schedule(lr, rounds: int, local_steps: int) -> np.ndarray:
    """The local step size of every global SGD iteration, shape (rounds * local_steps,).

    ``lr`` is a positive number (constant); a 1-D array of length ``rounds`` (per round) or
    ``rounds * local_steps`` (per iteration; when ``local_steps = 1`` both readings coincide); or a
    callable ``lr(t)`` of the 0-based global iteration index ``t = r * local_steps + k`` (called on
    an integer array first, then element by element if that fails). Every value must be finite
    and > 0 (checked here, before any work).

    >>> lr_schedule(0.1, 2, 2).tolist()
    [0.1, 0.1, 0.1, 0.1]
    >>> lr_schedule([0.2, 0.1], 2, 2).tolist()
    [0.2, 0.2, 0.1, 0.1]
    >>> lr_schedule(lambda t: 1.0 / (t + 4), 1, 3).tolist()
    [0.25, 0.2, 0.16666666666666666]
    """
    n = rounds * local_steps
    dom = ("positive finite number, array of length rounds or rounds*local_steps, "
           "or callable of the global iteration index t")
    if callable(lr):
        t = np.arange(n)
        try:
            vals = np.broadcast_to(np.asarray(lr(t), dtype=float), (n,)).copy()
        except Exception:  # noqa: BLE001 - scalar-only callables: evaluate one by one
            try:
                vals = np.array([float(lr(int(i))) for i in t])
            except Exception as exc:  # noqa: BLE001
                raise DomainError("lr", lr, dom, f"calling it failed: {exc}") from None
    elif isinstance(lr, numbers.Real) and not isinstance(lr, bool):
        vals = np.full(n, float(lr))
    else:
        try:
            arr = np.asarray(lr, dtype=float)
        except (TypeError, ValueError):
            raise DomainError("lr", lr, dom) from None
        if arr.ndim != 1:
            raise DomainError("lr", lr, dom)
        if arr.shape[0] == n:
            vals = arr.copy()
        elif arr.shape[0] == rounds:
            vals = np.repeat(arr, local_steps)
        else:
            raise DomainError("lr", lr, dom, f"got length {arr.shape[0]}, rounds = {rounds}, "
                                            f"local_steps = {local_steps}")
    bad = ~(np.isfinite(vals) & (vals > 0))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise DomainError("lr", lr, dom, f"value {float(vals[i])!r} at iteration t = {i}")
    return vals


def inverse_time(mu: float, gamma: float):
    """BM's schedule ``eta_t = 1 / (mu (t + gamma))`` as a callable of the iteration index.

    >>> float(inverse_time(1.0, 4.0)(0))
    0.25
    """
    for name, v in (("mu", mu), ("gamma", gamma)):
        if not (isinstance(v, numbers.Real) and math.isfinite(v) and v > 0):
            raise DomainError(name, v, "positive real (0, inf)")
    return lambda t: 1.0 / (mu * (np.asarray(t, dtype=float) + gamma))


def exponential(lr0: float, decay: float, local_steps: int | None = None):
    """``lr0 * decay**t`` per iteration, or ``lr0 * decay**r`` per round when ``local_steps`` is
    given (r = t // local_steps; BM-B's experiments: 1e-3 * 0.99^r).

    >>> float(exponential(1.0, 0.5, local_steps=2)(3))
    0.5
    """
    if not (isinstance(lr0, numbers.Real) and math.isfinite(lr0) and lr0 > 0):
        raise DomainError("lr0", lr0, "positive real (0, inf)")
    if not (isinstance(decay, numbers.Real) and 0 < decay <= 1):
        raise DomainError("decay", decay, "real in (0, 1]")
    if local_steps is None:
        return lambda t: lr0 * decay ** np.asarray(t, dtype=float)
    return lambda t: lr0 * decay ** (np.asarray(t) // local_steps).astype(float)


def local_update(ops, oracle, x, lrs, rng, batch_size=None, prox: float = 0.0,
                 beta: float | None = None, U=None, observer=None, G0=None, W0=None):
    """Run ``len(lrs)`` local steps for every client at once; returns the stack W (N, d).

    ``oracle`` provides ``minibatch_grads(W, rng, batch_size)`` on the backend's arrays (a
    :class:`~toys.base.FederatedProblem` for numpy). Every client starts at ``x`` (d,). Step k
    (0-based) is ``W <- W - lrs[k] * (g(P) + prox * (W - x))`` with ``P = W`` or, when ``beta``
    is given, ``P = beta * W + (1 - beta) * U`` (``U`` (N, d): the clients' u_t^i).
    ``observer(k, W, G, lr)`` is called after step k with the new W and the gradient used.
    ``G0``, if given, replaces the k = 0 gradient (it must equal the full gradient at ``x``; the
    engine passes the one it computed for its metrics when the step is deterministic), and
    ``W0``, if given, is the (N, d) stack of copies of ``x`` to start from (it is not modified).

    Deterministic steps (``batch_size=None``, no ``beta``) of a numpy oracle with a fused kernel
    ``local_gd`` (binary logistic problems) run through it: all the steps of a block of
    clients that fits in cache, then the next block; the observer, if any, then sees the kept
    per-step stacks in step order. The bits are those of the step-by-step loop.

    >>> import numpy as np, toys
    >>> from toys._xp import NUMPY
    >>> prob = toys.quadratic(n_clients=2, dim=2, seed=0)
    >>> W = local_update(NUMPY, prob, prob.x_star_i[0], [0.1], None)
    >>> bool(np.allclose(W[0], prob.x_star_i[0]))   # client 0 starts at its own optimum
    True
    """
    fused = getattr(oracle, "local_gd", None)
    if fused is not None and batch_size is None and beta is None and ops.name == "numpy":
        W = _fused(ops, oracle, fused, x, lrs, prox, observer, G0, W0)
        if W is not None:
            return W
    W = ops.broadcast_rows(x, oracle.n_clients) if W0 is None else W0
    for k, lr in enumerate(lrs):
        lr = float(lr)
        if k == 0 and G0 is not None:
            G = G0
        else:
            P = W if beta is None else beta * W + (1.0 - beta) * U
            G = oracle.minibatch_grads(P, rng, batch_size)
        step = G if prox == 0.0 else G + prox * (W - x)
        W = W - lr * step
        if observer is not None:
            observer(k, W, G, lr)
    return W


_FUSED_RECORD_BYTES = 1 << 26  # largest per-step stacks (W_k and G_k, k < tau) kept for an observer


def _fused(ops, oracle, fused, x, lrs, prox, observer, G0, W0):
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
    W = ops.broadcast_rows(x, N) if W0 is None else ops.copy(W0)
    W = fused(W, x, lrs, prox, G0, Ws, Gs)
    if W is not None and observer is not None:
        for k, lr in enumerate(lrs):
            observer(k, Ws[k], Gs[k], float(lr))
    return W
