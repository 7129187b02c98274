"""Quadratic clients F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i), eigenvalues of A_i in [mu, L].

A_i = Q_i diag(e_i) Q_i^T with Q_i orthogonal (the QR factor of a free matrix) and e_i
log-uniform in [max(mu, L/1000), L] (small curvatures matter for gradient methods on convex
functions), centres c_i in D [-1, 1]^d, start x0 = x* + D u. Unlike
:class:`verify.worst.Family` the heterogeneity is free (not held fixed) and the population is
stacked for the population runs (toys.run_many).

>>> import numpy as np
>>> from verify.falsify.families.registry import Spec
>>> spec = Spec(L=4.0, mu=1.0, D=1.0, n_clients=3, dim=2)
>>> prob, x0 = FAMILY.build(np.full(FAMILY.n_vars(spec), 0.5), spec)
>>> bool(np.all(np.linalg.eigvalsh(prob.A) <= 4.0 + 1e-12)), round(float(
...     np.linalg.norm(x0 - prob.x_star)), 12)
(True, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import tilt

__all__ = ["QuadraticFamily", "FAMILY"]


@dataclass(frozen=True)
class QuadraticFamily:
    """Quadratic clients with eigenvalues in [max(mu, floor L), L] (see the module docstring)."""

    name: str = "quadratic"
    floor: float = 1e-3
    classes: tuple = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")
    tilt: bool = True

    def n_vars(self, spec) -> int:
        N, d = int(spec.n_clients), int(spec.dim)
        return N * (d * d + d + d) + d + (0 if spec.zeta is None else tilt.extra_vars(N, d))

    def _arrays(self, Z, spec):
        N, d = int(spec.n_clients), int(spec.dim)
        A, c, u = self._free_arrays(np.atleast_2d(Z)[:, :N * (d * d + 2 * d) + d], spec)
        if spec.zeta is not None:  # one shared client, replicated (the tilts come on top)
            A, c = np.repeat(A[:, :1], A.shape[1], axis=1), np.repeat(c[:, :1], c.shape[1], 1)
        return A, c, u

    def _tilts(self, Z, spec):
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        N, d = int(spec.n_clients), int(spec.dim)
        base = N * (d * d + 2 * d) + d  # the tilts' variables follow the base ones (a search
        k = tilt.extra_vars(N, d)  # may append its own after them: verify.falsify fedau)
        return tilt.tilts(Z[:, base:base + k], N, d, spec.zeta)

    def _free_arrays(self, Z, spec):
        Z = np.clip(np.atleast_2d(np.asarray(Z, dtype=float)), -1.0, 1.0)
        P, N, d = Z.shape[0], int(spec.n_clients), int(spec.dim)
        lo = max(spec.mu, self.floor * spec.L)
        k = N * d * d
        G = Z[:, :k].reshape(P, N, d, d) + 0.5 * np.eye(d)  # never singular at z = 0
        Q = np.linalg.qr(G)[0]
        e = lo * (spec.L / lo) ** ((Z[:, k:k + N * d].reshape(P, N, d) + 1) / 2)
        A = np.einsum("pnij,pnj,pnkj->pnik", Q, e, Q)
        A = 0.5 * (A + np.swapaxes(A, -1, -2))
        c = spec.D * Z[:, k + N * d:k + 2 * N * d].reshape(P, N, d)
        u = Z[:, k + 2 * N * d:]
        nu = np.linalg.norm(u, axis=-1, keepdims=True)
        u = np.where(nu > 1e-9, u / np.maximum(nu, 1e-300), np.eye(d)[0])
        return A, c, u

    def build(self, z, spec):
        import toys

        A, c, u = self._arrays(z, spec)
        prob = toys.Quadratic(A[0], c[0], weights=spec.weights, name="falsify quadratic")
        if spec.zeta is not None:
            prob = tilt.TiltedProblem(prob, self._tilts(z, spec)[0])
        return prob, prob.x_star + spec.D * u[0]

    def stack(self, Z, spec):
        A, c, u = self._arrays(Z, spec)
        st = StackedQuadratic(A, c, u, spec.D, spec.p)
        return st if spec.zeta is None else tilt.TiltedStack(st, self._tilts(Z, spec))


class StackedQuadratic:
    """A population of quadratic problems (row k = instance k) for toys.run_many; every
    client's own minimum is F_i(c_i) = 0 (``F_star_i``)."""

    def __init__(self, A, c, u, D, p=None):
        P, N, d, _ = A.shape
        self.A, self.c = A, c
        self.p = np.full(N, 1.0 / N) if p is None else np.asarray(p, dtype=float)
        Abar = np.einsum("n,pnij->pij", self.p, A)
        rhs = np.einsum("n,pnij,pnj->pi", self.p, A, c)
        x = np.linalg.solve(Abar, rhs[..., None])[..., 0]
        x = x + np.linalg.solve(Abar, (rhs - np.einsum("pij,pj->pi", Abar, x))[..., None])[..., 0]
        self.x_star = x
        self.F_star = np.einsum("n,pn->p", self.p, self.losses(x[:, None, :]))
        self.x0 = x + D * u
        self.F_star_i = np.zeros((P, N))

    def losses(self, W):
        r = W - self.c
        return 0.5 * np.einsum("pni,pnij,pnj->pn", r, self.A, r)

    def grads(self, W):
        return np.einsum("pnij,pnj->pni", self.A, W - self.c)


FAMILY = QuadraticFamily()
