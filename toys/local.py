"""Local step-size schedules of the client updates (:mod:`toys.algorithms.client`).

Step sizes come from :func:`lr_schedule`: a number (constant), an array (one value per round, or
one per global SGD iteration ``t = r * local_steps + k``) or a callable of the global iteration
index ``t`` (0-based), e.g. BM's ``eta_t = 1 / (mu (t + gamma))`` (:func:`inverse_time`).

Example
-------
>>> lr_schedule(inverse_time(1.0, 4.0), rounds=1, local_steps=2).tolist()
[0.25, 0.2]
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from boundlab.errors import DomainError

__all__ = ["exponential", "inverse_time", "lr_schedule"]


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
