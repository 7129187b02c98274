"""Server steps: how the round's client updates move the global model, as ``init`` / ``update``.

The protocol (any object with these two methods is a server step)::

    init(x, n_clients) -> state                    # x: the initial model (backend array)
    update(state, *, x, deltas, weights, mask, p, round) -> (x_new, state)

``deltas`` (N, d) are the clients' updates W_i - x (zero rows for absent clients), ``weights``
(N,) the coefficients of the round's weight rule, ``mask`` (N,) the participation, ``p`` (N,)
the client weights. Built-in steps (``server_lr`` = FedAU's global step eta):

* :class:`WeightedStep` — x + server_lr * sum_n weights_n Delta_n (FedAvg and every
  simplex rule, FedAU and its baselines);
* :class:`MIFAStep` — server memory Y of every client's latest update: y_n <- Delta_n on the
  participants, x + server_lr sum_n p_n y_n (Gu et al. 2021);
* :class:`FedVarpStep` — v = sum_n p_n y_n + sum_{n in S} weights_n (Delta_n - y_n) with the
  old y's (weights = p chi N/|S|), then y_n <- Delta_n on S; no move when S is empty
  (Jhunjhunwala et al. 2022, as the IBM code).

Example
-------
>>> import numpy as np
>>> s = WeightedStep(server_lr=2.0)
>>> x, _ = s.update(s.init(np.zeros(2), 2), x=np.zeros(2), deltas=np.eye(2),
...                 weights=np.array([0.5, 0.25]), mask=np.ones(2, bool), p=None, round=0)
>>> x.tolist()
[1.0, 0.5]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .._array import array_namespace, count, wsum
from ._hyper import value


class _ServerLR:
    hyper_names = ("server_lr",)

    def bind(self, hyper, setup):
        return replace(self, server_lr=value(hyper, "server_lr", self.server_lr))

__all__ = ["FedVarpStep", "MIFAStep", "WeightedStep"]


@dataclass(frozen=True)
class WeightedStep(_ServerLR):
    """x + server_lr * (weights @ deltas)."""

    server_lr: float = 1.0
    batched = True

    def init(self, x, n_clients):
        return ()

    def update(self, state, *, x, deltas, weights, mask, p, round):
        return x + self.server_lr * wsum(weights, deltas), state


def _zeros_like_rows(x, n):
    xp = array_namespace(x)
    return xp.zeros((*x.shape[:-1], n, x.shape[-1]), dtype=x.dtype,
                    device=getattr(x, "device", None))


@dataclass(frozen=True)
class MIFAStep(_ServerLR):
    """MIFA: y_n <- Delta_n for participants, x + server_lr sum_n p_n y_n (state: Y (N, d)).

    >>> import numpy as np
    >>> s = MIFAStep(); Y = np.array([[1.0], [3.0]])
    >>> x, Y = s.update(Y, x=np.zeros(1), deltas=np.array([[5.0], [0.0]]), weights=None,
    ...                 mask=np.array([True, False]), p=np.array([0.5, 0.5]), round=0)
    >>> x.tolist(), Y.tolist()
    ([4.0], [[5.0], [3.0]])
    """

    server_lr: float = 1.0
    batched = True

    def init(self, x, n_clients):
        return _zeros_like_rows(x, n_clients)

    def update(self, state, *, x, deltas, weights, mask, p, round):
        Y = array_namespace(x).where(mask[..., None], deltas, state)
        return x + self.server_lr * wsum(p, Y), Y


@dataclass(frozen=True)
class FedVarpStep(_ServerLR):
    """FedVarp: v = p @ Y + weights @ (Delta - Y), then y_n <- Delta_n on S; x + server_lr v.
    Zero update and unchanged memory when S is empty.

    >>> import numpy as np
    >>> s = FedVarpStep(); Y = np.array([[1.0], [3.0]])
    >>> x, Y = s.update(Y, x=np.zeros(1), deltas=np.array([[5.0], [0.0]]),
    ...                 weights=np.array([1.0, 0.0]), mask=np.array([True, False]),
    ...                 p=np.array([0.5, 0.5]), round=0)
    >>> x.tolist()   # 0.5*1 + 0.5*3 + (2/1)*0.5*(5 - 1)
    [6.0]
    """

    server_lr: float = 1.0
    batched = True

    def init(self, x, n_clients):
        return _zeros_like_rows(x, n_clients)

    def update(self, state, *, x, deltas, weights, mask, p, round):
        if count(mask) == 0:
            return x, state
        xp = array_namespace(x)
        v = wsum(p, state) + wsum(weights, deltas - state)
        Y = xp.where(mask[..., None], deltas, state)
        if mask.ndim == 1:
            return x + self.server_lr * v, Y
        some = xp.any(mask, axis=-1)  # per instance: no move and no memory update without S
        return (xp.where(some[..., None], x + self.server_lr * v, x),
                xp.where(some[..., None, None], Y, state))
