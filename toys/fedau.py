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
* :func:`weighted_step` — x + server_lr * sum_n coef_n Delta_n, with coef = p omega chi (FedAU,
  known participation omega = 1/P(participate), average-all omega = 1) or the simplex weights of
  the loss-weighted rules and of average-participating (p chi / sum p chi);
* :func:`mifa_step`, :func:`fedvarp_step` — server memory Y (N, d) of the latest update of every
  client (MIFA: x + eta sum_n p_n y_n; FedVarp: v = sum_n p_n y_n + (N/|S|) sum_{n in S} p_n
  (Delta_n - y_n), zero update when nobody participates, as the IBM code).

Example
-------
>>> import numpy as np
>>> from toys._xp import NUMPY as ops
>>> st = fedau_init(ops, 2)
>>> for chi in ([True, False], [False, False], [True, True]):
...     st = fedau_update(ops, st, np.array(chi), K=np.inf)
>>> st.omega.tolist()   # client 0: intervals 1, 2 -> 1.5 ; client 1: one interval of 3
[1.5, 3.0]
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "FedAUState",
    "fedau_init",
    "fedau_update",
    "fedvarp_step",
    "mifa_step",
    "participating_coef",
    "weighted_step",
]


class FedAUState(NamedTuple):
    """Algorithm 2 state, one entry per client: ``M`` (intervals collected), ``Sd`` (length of
    the interval being counted, S^◇), ``omega`` (the weight to use in the coming round).

    >>> from toys._xp import NUMPY as ops
    >>> fedau_init(ops, 2)._fields
    ('M', 'Sd', 'omega')
    """

    M: object
    Sd: object
    omega: object


def fedau_init(ops, n_clients: int) -> FedAUState:
    """M = 0, S^◇ = 0, omega_0 = 1 for every client.

    >>> from toys._xp import NUMPY as ops
    >>> fedau_init(ops, 3).omega.tolist()
    [1.0, 1.0, 1.0]
    """
    z = ops.zeros((n_clients,))
    return FedAUState(M=z, Sd=ops.copy(z), omega=z + 1.0)


def fedau_update(ops, state: FedAUState, chi, K) -> FedAUState:
    """One step of Algorithm 2 after round t-1 with participation ``chi`` = chi_{t-1}: returns
    the state whose ``omega`` is omega_t. ``K`` is the cutoff (``math.inf``: no cutoff).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> st = fedau_init(ops, 1)
    >>> for _ in range(3):
    ...     st = fedau_update(ops, st, np.array([False]), K=2)
    >>> st.omega.tolist(), st.Sd.tolist()   # one cut-off interval of length K = 2 so far
    ([2.0], [1.0])
    """
    Sd = state.Sd + 1.0
    boundary = chi | (Sd == K)
    M = state.M
    new = ops.where(M == 0, Sd, (M * state.omega + Sd) / (M + 1.0))
    omega = ops.where(boundary, new, state.omega)
    M = ops.where(boundary, M + 1.0, M)
    Sd = ops.where(boundary, 0.0 * Sd, Sd)
    return FedAUState(M=M, Sd=Sd, omega=omega)


def participating_coef(ops, p, mask):
    """p_n chi_n / sum_m p_m chi_m (zero vector if nobody participates): average-participating.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> participating_coef(ops, np.full(4, 0.25), np.array([1, 0, 1, 0], bool)).tolist()
    [0.5, 0.0, 0.5, 0.0]
    """
    a = ops.where(mask, p, 0.0)
    s = ops.sum(a)
    return ops.where(s > 0, a / ops.where(s > 0, s, 1.0), 0.0 * a)


def weighted_step(ops, x, Delta, coef, server_lr: float):
    """x + server_lr * sum_n coef_n Delta_n (``Delta`` zero for absent clients).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> weighted_step(ops, np.zeros(2), np.eye(2), np.array([0.5, 0.25]), 2.0).tolist()
    [1.0, 0.5]
    """
    return x + server_lr * (coef @ Delta)


def mifa_step(ops, x, Delta, mask, p, server_lr: float, Y):
    """MIFA (Gu et al. 2021): y_n <- Delta_n for participants, x + eta sum_n p_n y_n.
    Returns ``(x_new, Y_new)``.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> Y = np.array([[1.0], [3.0]])
    >>> x, Y = mifa_step(ops, np.zeros(1), np.array([[5.0], [0.0]]), np.array([True, False]),
    ...                  np.array([0.5, 0.5]), 1.0, Y)
    >>> x.tolist(), Y.tolist()
    ([4.0], [[5.0], [3.0]])
    """
    Y = ops.where(mask[:, None], Delta, Y)
    return x + server_lr * (p @ Y), Y


def fedvarp_step(ops, x, Delta, mask, p, server_lr: float, Y):
    """FedVarp (Jhunjhunwala et al. 2022): v = sum_n p_n y_n + (N/|S|) sum_{n in S} p_n
    (Delta_n - y_n) with the old y's, then y_n <- Delta_n on S; x + eta v. Zero update and
    unchanged memory when S is empty. Returns ``(x_new, Y_new)``.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> Y = np.array([[1.0], [3.0]])
    >>> x, Y = fedvarp_step(ops, np.zeros(1), np.array([[5.0], [0.0]]), np.array([True, False]),
    ...                     np.array([0.5, 0.5]), 1.0, Y)
    >>> x.tolist()   # 0.5*1 + 0.5*3 + (2/1)*0.5*(5 - 1)
    [6.0]
    """
    n_part = ops.count(mask)
    if n_part == 0:
        return x, Y
    n = mask.shape[0]
    fresh = ops.where(mask, p, 0.0) * (n / n_part)
    v = p @ Y + fresh @ (Delta - Y)
    Y = ops.where(mask[:, None], Delta, Y)
    return x + server_lr * v, Y
