"""SCAFFOLD (Karimireddy et al. 2020, Alg. 1, option II control variates) as a client update.

Round r, client i in S (y_i starts at x; local step size eta_l, K local steps)::

    y_i <- y_i - eta_l (g_i(y_i) - c_i + c)                 # K times
    c_i+ = c_i - c + (x - y_i) / (K eta_l)                   # option II
    Delta y_i = y_i - x,  Delta c_i = c_i+ - c_i

    server:  x <- x + eta_g (1/|S|) sum_{i in S} Delta y_i
             c <- c + (1/N) sum_{i in S} Delta c_i

As pieces: :class:`ScaffoldSteps` (client update) with FedAvg's weights (p renormalised over
S: 1/|S| for equal p) and :class:`~toys.algorithms.server.WeightedStep` with ``server_lr`` =
eta_g. Both control variates are the client piece's state, ``ScaffoldState(c, C)``: the
client's local steps need c, and the engine hands the server step's state to no other piece.
The update of c needs only the Delta c_i of S, so it is done at the end of the client round;
it is the server's update with 1/N generalised to p_i (c stays sum_i p_i c_i; the paper's
1/N for equal weights). c and every c_i start at 0. On a population (:func:`toys.run_many`)
c is (B, d) and C (B, N, d), each instance's own; an instance without participants keeps
them.

Generalisations, each reducing to the paper's case: K eta_l is the sum of the step sizes the
client applied (a step-size schedule, per-client local work :mod:`toys.algorithms.local_work`:
client i's own tau_i(r)); minibatches (``batch_size``) as for FedAvg. There is no proximal
term.

Example
-------
>>> import numpy as np, toys
>>> prob = toys.quadratic(n_clients=4, dim=3, seed=0)
>>> sc = toys.run(prob, "scaffold", rounds=30, seed=0, lr=0.05, local_steps=5)
>>> avg = toys.run(prob, "fedavg", rounds=30, seed=0, lr=0.05, local_steps=5)
>>> bool(sc.gap[-1] < 1e-3 * avg.gap[-1])   # no client drift: SCAFFOLD converges to x*
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from array_api_compat import device

from .._array import array_namespace, broadcast_rows, count, wsum
from .client import participants_update
from .local_work import WORK_NAMES, HeteroSteps, steps_like, work_sums

__all__ = ["ScaffoldState", "ScaffoldSteps"]


class ScaffoldState(NamedTuple):
    """The control variates: the server's c (d,) and the clients' C (N, d) (a population's
    (B, d) and (B, N, d))."""

    c: object
    C: object


@dataclass(frozen=True)
class ScaffoldSteps(HeteroSteps):
    """SCAFFOLD's local steps with the correction c - c_i, and the option-II update of the
    control variates (state :class:`ScaffoldState`; ``p`` the weights of c = sum p_i c_i)."""

    p: object = None
    hyper_names = ("lr", "local_steps", "batch_size") + WORK_NAMES
    first_grad_at_x = False  # step 0 takes g_i(x) - c_i + c

    def bind(self, hyper, setup):
        """HeteroSteps' parameters (no ``prox``) and p = the problem's client weights."""
        piece = HeteroSteps.bind(self, hyper, setup)
        return replace(piece, p=setup.asarray(np.asarray(setup.problem.p, dtype=float)))

    def init(self, x, n_clients):
        return ScaffoldState(c=x * 0.0, C=broadcast_rows(x * 0.0, n_clients))

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        if count(mask) == 0:
            return (broadcast_rows(x, oracle.n_clients) if start is None else start), state
        xp = array_namespace(x)
        c, C = state
        N = oracle.n_clients
        lrs = self.round_lrs(round)
        steps = self.round_steps(round, N)
        G0 = grads if self.batch_size is None else None
        W = participants_update(oracle, x, lrs, rng, mask, self.batch_size, 0.0,
                                observer=observer, G0=G0, W0=start,
                                steps=None if steps is None else steps_like(x, steps),
                                shift=c[..., None, :] - C)
        tau = np.full(N, self.local_steps) if steps is None else steps
        s = xp.asarray(work_sums(lrs, tau), dtype=x.dtype, device=device(x))
        C_new = xp.where(mask[..., None],
                         C - c[..., None, :] + (x[..., None, :] - W) / s[..., None], C)
        c_new = c + wsum(self.p, C_new - C)
        if mask.ndim > 1:  # a population: an instance without participants keeps its c
            c_new = xp.where(xp.any(mask, axis=-1)[..., None], c_new, c)
        return W, ScaffoldState(c=c_new, C=C_new)
