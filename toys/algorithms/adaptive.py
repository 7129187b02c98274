"""Adaptive server optimisers (Reddi et al. 2021, Adaptive Federated Optimization, Alg. 2):
FedAdagrad, FedAdam and FedYogi, as server steps.

The round's pseudo-gradient is minus the weighted average of the clients' updates,
Delta = sum_i w_i Delta_i (w the weight rule's coefficients: FedAvg's p renormalised over the
participants), and the server runs one step of an adaptive optimiser on it::

    m <- beta1 m + (1 - beta1) Delta
    v <- v + Delta^2                                      # FedAdagrad
    v <- beta2 v + (1 - beta2) Delta^2                    # FedAdam
    v <- v - (1 - beta2) Delta^2 sign(v - Delta^2)        # FedYogi
    x <- x + server_lr m / (sqrt(v) + eps)

(element-wise; ``eps`` is the paper's adaptivity tau, ``server_lr`` its eta). As in the paper
there is no bias correction, m starts at 0 and v at eps^2 (its v_{-1} >= tau^2). A round
without participants leaves x and the state unchanged. The state is ``Moments(m, v)`` (a
population's (B, d) each, :func:`toys.run_many`: an instance without participants keeps its
x and state).

Example
-------
>>> import numpy as np
>>> s = AdaptiveStep("adam", server_lr=0.1, beta1=0.0, beta2=0.0, eps=1e-12)
>>> x, st = s.update(s.init(np.zeros(2), 1), x=np.zeros(2), deltas=np.array([[2.0, -3.0]]),
...                  weights=np.ones(1), mask=np.ones(1, bool), p=None, round=0)
>>> x.round(12).tolist()   # beta1 = beta2 = 0: a signed step of server_lr per coordinate
[0.1, -0.1]
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from .._array import array_namespace, count, wsum
from ..validation import check_choice
from ._hyper import value

__all__ = ["KINDS", "AdaptiveStep", "Moments"]

KINDS = ("adagrad", "adam", "yogi")


class Moments(NamedTuple):
    """The server optimiser's first and second moments, (d,) each."""

    m: object
    v: object


@dataclass(frozen=True)
class AdaptiveStep:
    """FedAdagrad / FedAdam / FedYogi (``kind``) on the pseudo-gradient -(weights @ deltas)."""

    kind: str = "adam"
    server_lr: float = 1e-2
    beta1: float = 0.9
    beta2: float = 0.99
    eps: float = 1e-3
    batched = True

    def __post_init__(self):
        check_choice("adaptive server optimiser", self.kind, KINDS)

    @property
    def hyper_names(self):
        return ("server_lr", "beta1", "eps") + (("beta2",) if self.kind != "adagrad" else ())

    def bind(self, hyper, setup):
        """server_lr (> 0, default 0.01), beta1, beta2 (in [0, 1), defaults 0.9, 0.99) and
        eps (> 0, default 1e-3)."""
        return replace(self, server_lr=value(hyper, "server_lr", self.server_lr),
                       beta1=value(hyper, "beta1", self.beta1),
                       beta2=value(hyper, "beta2", self.beta2),
                       eps=value(hyper, "eps", self.eps))

    def init(self, x, n_clients):
        return Moments(m=x * 0.0, v=x * 0.0 + self.eps ** 2)

    def update(self, state, *, x, deltas, weights, mask, p, round):
        if count(mask) == 0:
            return x, state
        xp = array_namespace(x)
        D = wsum(weights, deltas)
        D2 = D * D
        m = self.beta1 * state.m + (1.0 - self.beta1) * D
        if self.kind == "adagrad":
            v = state.v + D2
        elif self.kind == "adam":
            v = self.beta2 * state.v + (1.0 - self.beta2) * D2
        else:
            v = state.v - (1.0 - self.beta2) * D2 * xp.sign(state.v - D2)
        x_new = x + self.server_lr * m / (xp.sqrt(v) + self.eps)
        if mask.ndim == 1:
            return x_new, Moments(m, v)
        some = xp.any(mask, axis=-1)[..., None]  # per instance: no move without participants
        return xp.where(some, x_new, x), Moments(xp.where(some, m, state.m),
                                                 xp.where(some, v, state.v))
