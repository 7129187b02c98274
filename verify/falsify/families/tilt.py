"""Heterogeneity held fixed by construction: one shared function plus a linear tilt per client.

For a bound that names DKR's zeta = max_i sup_x ||grad F_i(x) - grad F(x)||, an instance must
have a known zeta. A family built with ``Spec(zeta=...)`` gives every client the same function
h (its client 0, replicated: the family's ``shared`` arrays) and adds a tilt:

    F_i(x) = h(x) + t_i^T (x - x*),   sum_i p_i t_i = 0,   max_i ||t_i|| = zeta

so grad F_i - grad F = t_i for every x: zeta holds **exactly** (the largest tilt has norm zeta),
and L, mu, x* and F* are h's (the tilts are linear and average to zero). The tilts are free
vectors (search variables), centred and scaled; asymmetric tilts matter: with pairs (t, -t) and
a quadratic h the clients' average would be gradient descent on h exactly. Only zeta is fixed:
Gamma, the optima x_i* of the tilted clients, are not known (a tilted Huber client may have
none), so :class:`TiltedProblem` reports them unavailable.

>>> import numpy as np
>>> Zt = np.random.default_rng(0).uniform(-1, 1, (1, extra_vars(3, 2)))
>>> t = tilts(Zt, 3, 2, zeta=0.5)
>>> t.shape, float(np.linalg.norm(t[0], axis=1).max()), bool(np.abs(t[0].mean(0)).max() < 1e-15)
((1, 3, 2), 0.5, True)
"""

from __future__ import annotations

import numpy as np

from toys.problems.base import FederatedProblem, OptimumUnavailable

__all__ = ["extra_vars", "tilts", "TiltedStack", "TiltedProblem"]


def extra_vars(n_clients: int, dim: int) -> int:
    """Search variables of the tilts: one free vector per client."""
    return int(n_clients) * int(dim)


def tilts(Zt, n_clients: int, dim: int, zeta: float) -> np.ndarray:
    """(P, N, d) tilts from the variables ``Zt`` (P, extra_vars): the free vectors minus their
    mean (uniform client weights), scaled so that the largest norm is ``zeta``."""
    Zt = np.atleast_2d(np.asarray(Zt, dtype=float))
    P, N, d = Zt.shape[0], int(n_clients), int(dim)
    v = Zt[:, :N * d].reshape(P, N, d)
    v = v - v.mean(axis=1, keepdims=True)
    top = np.max(np.linalg.norm(v, axis=-1), axis=1)[:, None, None]
    if N > 1:  # a degenerate draw (all equal): one pair e_1, -e_1
        pair = np.zeros((N, d))
        pair[0, 0], pair[1, 0] = 1.0, -1.0
        v = np.where(top > 1e-9, v / np.maximum(top, 1e-300), pair)
    else:  # one client: no heterogeneity
        v = np.zeros_like(v)
    return zeta * v


class TiltedStack:
    """A stacked population with the tilts ``t`` (P, N, d) added (see the module docstring);
    ``p`` must be uniform over the pairs (the families' p is 1/N)."""

    def __init__(self, base, t):
        self.base, self.t = base, np.asarray(t, dtype=float)
        self.p, self.x_star, self.F_star, self.x0 = base.p, base.x_star, base.F_star, base.x0

    @property
    def F_star_i(self):
        raise OptimumUnavailable("F_star_i", "a tilted client may have no minimiser")

    def losses(self, W):
        return self.base.losses(W) + np.einsum("pnd,pnd->pn", W - self.x_star[:, None, :],
                                               self.t)

    def grads(self, W):
        return self.base.grads(W) + self.t


class TiltedProblem(FederatedProblem):
    """One tilted problem for ``toys.run``: ``base`` (all clients identical) plus tilts
    ``t`` (N, d); x*, F* are the base's, the clients' own optima are unavailable."""

    def __init__(self, base, t):
        self.base, self.t = base, np.asarray(t, dtype=float)
        self.name = f"{base.name} + tilts (zeta {np.linalg.norm(self.t, axis=1).max():.4g})"
        self.kind, self.n_clients, self.dim = base.kind, base.n_clients, base.dim
        self.p, self.counts = base.p, base.counts
        self.x_star, self.F_star = base.x_star, base.F_star
        self.noise_std = 0.0

    @property
    def x_star_i(self):
        raise OptimumUnavailable("x_star_i", "a tilted client may have no minimiser")

    @property
    def F_star_i(self):
        raise OptimumUnavailable("F_star_i", "a tilted client may have no minimiser")

    def losses(self, W):
        W = self._broadcast(W)
        return self.base.losses(W) + np.einsum("nd,nd->n", W - self.x_star, self.t)

    def grads(self, W):
        return self.base.grads(self._broadcast(W)) + self.t

    def hvps(self, W, V):
        return self.base.hvps(W, V)

    def minibatch_grads(self, W, rng, batch_size):
        return self.grads(W)  # exact gradients, as the base families

    def arrays(self):
        return {**self.base.arrays(), "tilt": self.t}
