"""Logistic clients: binary L2-regularised logistic regression (``toys.logistic``) whose
features are scaled so that every client is L-smooth by construction
(lambda_max(X_i^T X_i) / (4 n_i) + l2 = L) with l2 = mu (or L/1000 when mu = 0, so that an
exact optimum exists). Exact optima come from toys' batched Newton solver. No batched form:
the search runs ``toys.run`` once per instance.

>>> import numpy as np
>>> from verify.falsify.families.registry import Spec
>>> spec = Spec(L=1.0, mu=0.1, D=1.0, n_clients=2, dim=2)
>>> prob, x0 = FAMILY.build(np.full(FAMILY.n_vars(spec), 0.2), spec)
>>> prob.kind, round(float(np.linalg.norm(x0 - prob.x_star)), 9)
('logistic', 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LogisticFamily", "FAMILY"]


@dataclass(frozen=True)
class LogisticFamily:
    """``rows`` samples per client; features and labels are search variables."""

    name: str = "logistic"
    rows: int = 4
    classes: tuple = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")

    def n_vars(self, spec) -> int:
        N, d = int(spec.n_clients), int(spec.dim)
        return N * self.rows * (d + 1) + d

    def build(self, z, spec):
        import toys

        z = np.clip(np.asarray(z, dtype=float), -1.0, 1.0)
        N, d, n = int(spec.n_clients), int(spec.dim), self.rows
        X = z[:N * n * d].reshape(N, n, d) + 0.3 * np.eye(n, d)  # never all zero
        y = (z[N * n * d:N * n * (d + 1)].reshape(N, n) > 0).astype(float)
        l2 = spec.mu if spec.mu > 0 else 1e-3 * spec.L
        top = np.linalg.eigvalsh(np.einsum("nri,nrj->nij", X, X) / (4 * n))[:, -1]
        X = X * np.sqrt((spec.L - l2) / top)[:, None, None]
        prob = toys.logistic(list(X), list(y), l2=l2, weights=spec.weights)
        u = z[N * n * (d + 1):]
        nu = float(np.linalg.norm(u))
        u = u / nu if nu > 1e-9 else np.eye(d)[0]
        return prob, prob.x_star + spec.D * u

    def stack(self, Z, spec):
        return None


FAMILY = LogisticFamily()
