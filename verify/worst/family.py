"""The search space of :func:`verify.worst_instance`: :class:`Family`, quadratic federated
problems with fixed constants, and a point z in [-1, 1]^n mapped to one of them (see
:mod:`verify.worst` for the parametrisation). Its own module so that the measures
(:mod:`verify.worst.measures`) and the search (:mod:`verify.worst.api`) both import it, and
neither imports the other's importer.

Example
-------
>>> f = Family(n_clients=3, dim=2, L=1.0, mu=0.1, heterogeneity="zeta", value=0.5,
...            shared_hessian=True)
>>> prob, x0 = f.instance(np.zeros(f.n_vars))
>>> round(zeta_of(prob.A, prob.c, prob.p), 12)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

__all__ = ["Family", "zeta_of"]


def zeta_of(A, c, p) -> float:
    """zeta = max_i ||A_i (c_i - c_bar)||, c_bar = sum_i p_i c_i: the dissimilarity of
    quadratic clients with identical Hessians (exact for all x)."""
    cbar = p @ c
    return float(np.max(np.linalg.norm(np.einsum("nij,nj->ni", A, c - cbar), axis=1)))



@dataclass(frozen=True)
class Family:
    """Quadratic federated problems with fixed constants (see :mod:`verify.worst`).

    >>> f = Family(n_clients=2, dim=2, L=1.0, mu=0.1, heterogeneity="Gamma", value=0.5, D=1.0)
    >>> prob, x0 = f.instance(np.zeros(f.n_vars))
    >>> round(prob.Gamma, 12), round(float(np.linalg.norm(x0 - prob.x_star)), 12)
    (0.5, 1.0)
    """

    n_clients: int = 3
    dim: int = 2
    L: float = 1.0
    mu: float = 0.1
    heterogeneity: str = "Gamma"
    value: float = 1.0
    D: float = 1.0
    shared_hessian: bool = False
    weights: tuple | None = None

    def __post_init__(self):
        if self.heterogeneity not in ("Gamma", "zeta"):
            raise DomainError("heterogeneity", self.heterogeneity, "'Gamma' or 'zeta'")
        if self.heterogeneity == "zeta" and not self.shared_hessian:
            raise DomainError("shared_hessian", False, "True for a zeta family (a dissimilarity "
                              "bounded for all x forces identical Hessians on quadratics)")
        if not (0 < self.mu <= self.L):
            raise DomainError("mu", self.mu, f"0 < mu <= L = {self.L}")
        if self.n_clients < 2 or self.dim < 1:
            raise DomainError("n_clients", self.n_clients, "integer >= 2 (and dim >= 1)")

    @property
    def _n_hess(self) -> int:
        return 1 if self.shared_hessian else self.n_clients

    @property
    def n_vars(self) -> int:
        """Dimension of the search space."""
        d = self.dim
        return self._n_hess * (d + d * (d - 1) // 2) + self.n_clients * d + d

    def instance(self, z, weights=None):
        """``(toys.Quadratic, x0)`` of the point ``z`` in [-1, 1]^n_vars (``weights`` overrides
        the family's client weights, e.g. graph weights)."""
        from scipy.linalg import expm

        import toys

        z = np.clip(np.asarray(z, dtype=float), -1.0, 1.0)
        N, d, h = self.n_clients, self.dim, self._n_hess
        k = d * (d - 1) // 2
        pos = 0
        eig = self.mu + (self.L - self.mu) * (z[pos:pos + h * d].reshape(h, d) + 1) / 2
        pos += h * d
        rot = z[pos:pos + h * k].reshape(h, k) * math.pi
        pos += h * k
        iu = np.triu_indices(d, 1)
        A = np.empty((h, d, d))
        for j in range(h):  # h <= a handful: one small matrix exponential each
            S = np.zeros((d, d))
            S[iu] = rot[j]
            R = expm(S - S.T)
            A[j] = (R * eig[j]) @ R.T
        A = 0.5 * (A + A.transpose(0, 2, 1))
        A = np.broadcast_to(A, (N, d, d)).copy()
        off = z[pos:pos + N * d].reshape(N, d)
        pos += N * d
        u = z[pos:pos + d]
        w = weights if weights is not None else self.weights
        p = np.full(N, 1.0 / N) if w is None else np.asarray(w, dtype=float) / np.sum(w)
        off = off - p @ off
        if not np.any(off):
            off = np.zeros((N, d))
            off[0, 0], off[1, 0] = 1.0, -1.0
        prob = toys.Quadratic(A, off, weights=p, name="worst-instance quadratic")
        scale = self._scale(prob, A, off, p)
        prob = toys.Quadratic(A, off * scale, weights=p, name="worst-instance quadratic")
        nu = float(np.linalg.norm(u))
        u = u / nu if nu > 1e-12 else np.eye(d)[0]
        return prob, prob.x_star + self.D * u

    def _scale(self, prob, A, off, p) -> float:
        if self.heterogeneity == "Gamma":
            g = float(prob.Gamma)
            return math.sqrt(self.value / g) if g > 0 else 1.0
        zeta = zeta_of(A, off, p)
        return self.value / zeta if zeta > 0 else 1.0
