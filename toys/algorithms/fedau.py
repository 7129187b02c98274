"""Seed 002 (Wang & Ji, FedAU): aggregation weights omega and the server updates of the baselines.

Algorithm 1 of the paper (spec §5.1.1) is FedAvg with pluggable weights::

    x_{t+1} = x_t + (eta / N) sum_n chi_t^n omega_t^n Delta_t^n ,

eta = ``server_lr``, Delta = y_{t,I} - x_t (local step ``gamma`` = ``lr``, I = ``local_steps``).
The paper's objective is the uniform average f = (1/N) sum_n F_n; here the factor 1/N is the
client weight p_n of the problem (identical for uniform p; for other p the fixed point targets
sum_n p_n F_n, the problem's F). Every server rule below is written with p and reduces to the
paper's formula when p = 1/N:

* :func:`fedau_init` / :func:`fedau_update` — Algorithm 2 (online cutoff-interval estimate,
  state = the three per-client quantities M, S^◇ (``Sd``), omega of the paper); omega_t never
  depends on chi_t;
* :class:`FedAUWeights` — the weight rule p omega chi with omega from Algorithm 2;
  :class:`FixedOmega` — omega = 1/P(participate) (known participation) or 1 (average-all).

The server steps (x + eta sum coef Delta, MIFA, FedVarp) are in :mod:`toys.algorithms.server`.

Example
-------
>>> import numpy as np
>>> st = fedau_init(2)
>>> for chi in ([True, False], [False, False], [True, True]):
...     st = fedau_update(st, np.array(chi), K=np.inf)
>>> st.omega.tolist()   # client 0: intervals 1, 2 -> 1.5 ; client 1: one interval of 3
[1.5, 3.0]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from .._array import array_namespace
from ..validation import check
from ._hyper import DOMAINS

__all__ = ["FedAUState", "FedAUWeights", "FixedOmega", "fedau_init", "fedau_update"]


class FedAUState(NamedTuple):
    """Algorithm 2 state, one entry per client: ``M`` (intervals collected), ``Sd`` (length of
    the interval being counted, S^◇), ``omega`` (the weight to use in the coming round).

    >>> fedau_init(2)._fields
    ('M', 'Sd', 'omega')
    """

    M: object
    Sd: object
    omega: object


def fedau_init(n_clients: int) -> FedAUState:
    """M = 0, S^◇ = 0, omega_0 = 1 for every client (numpy; :func:`fedau_update` moves the
    state to the backend of ``chi``).

    >>> fedau_init(3).omega.tolist()
    [1.0, 1.0, 1.0]
    """
    z = np.zeros(n_clients)
    return FedAUState(M=z, Sd=z.copy(), omega=z + 1.0)


def fedau_update(state: FedAUState, chi, K) -> FedAUState:
    """One step of Algorithm 2 after round t-1 with participation ``chi`` = chi_{t-1}: returns
    the state whose ``omega`` is omega_t. ``K`` is the cutoff (``math.inf``: no cutoff).

    >>> import numpy as np
    >>> st = fedau_init(1)
    >>> for _ in range(3):
    ...     st = fedau_update(st, np.array([False]), K=2)
    >>> st.omega.tolist(), st.Sd.tolist()   # one cut-off interval of length K = 2 so far
    ([2.0], [1.0])
    """
    xp = array_namespace(chi)
    Sd = state.Sd + 1.0
    boundary = chi | (Sd == K)
    M = state.M
    new = xp.where(M == 0, Sd, (M * state.omega + Sd) / (M + 1.0))
    omega = xp.where(boundary, new, state.omega)
    M = xp.where(boundary, M + 1.0, M)
    Sd = xp.where(boundary, 0.0 * Sd, Sd)
    return FedAUState(M=M, Sd=Sd, omega=omega)


def _to_backend(state: FedAUState, p, shape) -> FedAUState:
    """The state's arrays on the backend (and dtype) of ``p``, of the participation's
    ``shape`` (a population's (B, N) from the (N,) of :func:`fedau_init`; a no-op on numpy
    float64 of that shape)."""
    if isinstance(state.M, type(p)) and state.M.dtype == p.dtype:
        if tuple(state.M.shape) == tuple(shape):
            return state
        xp = array_namespace(p)
        return FedAUState(*(xp.broadcast_to(v, tuple(shape)) for v in state))
    xp = array_namespace(p)
    return FedAUState(*(xp.broadcast_to(xp.asarray(np.asarray(v), dtype=p.dtype,
                                                   device=p.device), tuple(shape))
                        for v in state))


@dataclass(frozen=True)
class FedAUWeights:
    """FedAU's weight rule: p_n omega_t^n chi_t^n with omega_t from Algorithm 2 (cutoff ``K``,
    ``math.inf`` for none). omega_t is chosen before chi_t is seen; the estimator then takes
    chi_t in (so the state after round t gives omega_{t+1}). On a population
    (:func:`toys.run_many`) the state is (B, N): each instance's own estimate, elementwise.

    >>> import numpy as np
    >>> rule = FedAUWeights(K=math.inf); st = rule.init(2)
    >>> for chi in ([True, False], [False, False], [True, True]):
    ...     w, st = rule.update(st, losses=None, p=np.full(2, 0.5), mask=np.array(chi), round=0)
    >>> w.tolist(), rule.omega(st).tolist()   # w used omega = 1; then intervals 1, 2 and 3
    ([0.5, 0.5], [1.5, 3.0])
    """

    K: float = math.inf
    needs_losses = False
    batched = True
    hyper_names = ("K",)

    def bind(self, hyper, setup):
        """K: integer >= 1, or None / math.inf for no cutoff."""
        K = hyper.get("K", self.K)
        if K is None or (isinstance(K, (int, float)) and not isinstance(K, bool)
                         and math.isinf(K) and K > 0):
            return replace(self, K=math.inf)
        return replace(self, K=float(check("K", K, DOMAINS["K"])))

    def init(self, n_clients):
        return fedau_init(n_clients)

    def omega(self, state):
        """The omega the next :meth:`update` uses (recorded by the engine as ``Trace.omega``)."""
        return state.omega

    def update(self, state, *, losses, p, mask, round):
        state = _to_backend(state, p, mask.shape)
        xp = array_namespace(p)
        weights = xp.where(mask, p * state.omega, 0.0)
        return weights, fedau_update(state, mask, self.K)


@dataclass(frozen=True)
class FixedOmega:
    """p_n omega_n chi_n with time-constant omega: 1/P(client n participates) (seed 002's
    known-participation baseline; ``omega`` is then bound from the participation process) or
    1 (average-all, ``omega=None``). On a population (:func:`toys.run_many`) omega is
    (B, N) when the instances' participation processes are given (``Setup.processes``).

    >>> import numpy as np
    >>> r = FixedOmega(np.array([2.0, 4.0]))
    >>> r.update((), losses=None, p=np.full(2, 0.5), mask=np.ones(2, bool), round=0)[0].tolist()
    [1.0, 2.0]
    """

    omega_values: object = None
    needs_losses = False
    batched = True

    def bind(self, hyper, setup):
        """``omega_values="known"``: 1/P(participate) from the participation process (of
        every instance of a population: ``setup.processes``, when given)."""
        if not (isinstance(self.omega_values, str) and self.omega_values == "known"):
            return self
        procs = getattr(setup, "processes", None)
        probs = (np.asarray(setup.process.probs, dtype=float) if procs is None else
                 np.stack([np.asarray(q.probs, dtype=float) for q in procs]))
        setup.info["participation_probs"] = probs
        om = np.where(probs > 0, 1.0 / np.where(probs > 0, probs, 1.0), 0.0)
        return replace(self, omega_values=setup.asarray(om))

    def init(self, n_clients):
        return ()

    def omega(self, state):
        return self.omega_values

    def update(self, state, *, losses, p, mask, round):
        xp = array_namespace(p)
        om = self.omega_values
        return xp.where(mask, p * (1.0 if om is None else om), 0.0), state


