"""From a PEP worst case to a concrete function: smooth (strongly) convex interpolation.

Given points x_i, gradients g_i and values f_i that satisfy the interpolation conditions of
L-smooth convex functions, Taylor, Hendrickx and Glineur (Math. Prog. 161, 2017, Theorem 4)
give a function of the class through them, the conjugate of the smallest 1/L-strongly convex
function through the conjugate data. Evaluated, it is a small convex QP over the simplex:

    f(x) = min_{lambda in simplex} sum_i lambda_i (f_i - ||g_i||^2 / (2L))
                                   + ||M lambda - L x||^2 / (2L),   M = [L x_i - g_i]_i,
    grad f(x) = L x - M lambda*(x)

(f(x_i) = f_i and grad f(x_i) = g_i at the data). The mu-strongly convex case interpolates
f - mu/2 ||x||^2 (an (L - mu)-smooth convex function) and adds it back. The QP is solved
exactly on small supports (the KKT system of every support of size 1 or 2, which is where the
points a gradient method visits lie), else by SLSQP polished on its support.
:class:`Interpolated` is that function as a one-client ``toys.FederatedProblem``, so that the
real engine (``toys.run``) runs gradient descent on it.

>>> import numpy as np
>>> X = np.array([[0.0], [1.0]]); G = np.array([[0.0], [1.0]]); F = np.array([0.0, 0.5])
>>> prob = Interpolated(X, G, F, L=1.0)
>>> float(prob.losses(np.array([[0.5]]))[0]), float(prob.grads(np.array([[1.0]]))[0, 0])
(0.125, 1.0)
"""

from __future__ import annotations

import itertools

import numpy as np

from toys.problems.base import FederatedProblem

__all__ = ["Interpolated", "evaluate"]

_KKT_TOL = 1e-11


def evaluate(x, X, G, F, L):
    """(f(x), grad f(x)) of the smooth convex interpolant of (X, G, F) (mu = 0)."""
    M = (L * X - G).T  # (d, n)
    c = F - np.sum(G * G, axis=1) / (2 * L)
    n = X.shape[0]
    scale = 1.0 + float(np.max(np.abs(c))) + float(np.sum((L * x) ** 2)) / L
    for size in (1, 2):
        best = None
        for S in itertools.combinations(range(n), size):
            lam = _kkt(M, c, L, x, list(S), scale)
            if lam is not None:
                val = _phi(lam, M, c, L, x)
                if best is None or val < best[0]:
                    best = (val, lam)
        if best is not None:
            return best[0], L * x - M @ best[1]
    lam = _slsqp(M, c, L, x)
    return _phi(lam, M, c, L, x), L * x - M @ lam


def _phi(lam, M, c, L, x):
    r = M @ lam - L * x
    return float(c @ lam + r @ r / (2 * L))


def _kkt(M, c, L, x, S, scale):
    """lambda optimal with support S, or None."""
    MS = M[:, S]
    k = len(S)
    K = np.zeros((k + 1, k + 1))
    K[:k, :k] = MS.T @ MS / L
    K[:k, k] = K[k, :k] = 1.0
    rhs = np.concatenate([MS.T @ x - c[S], [1.0]])
    sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
    lamS, nu = sol[:k], -sol[k]
    if np.any(lamS < -1e-14) or np.linalg.norm(K @ sol - rhs) > _KKT_TOL * scale:
        return None
    lam = np.zeros(M.shape[1])
    lam[S] = np.maximum(lamS, 0.0)
    lam /= lam.sum()
    grad = c + M.T @ (M @ lam - L * x) / L
    return lam if np.all(grad >= nu - _KKT_TOL * scale) else None


def _slsqp(M, c, L, x):
    from scipy.optimize import minimize

    n = M.shape[1]
    vals = [_phi(np.eye(n)[i], M, c, L, x) for i in range(n)]
    res = minimize(lambda lam: _phi(lam, M, c, L, x), np.eye(n)[int(np.argmin(vals))],
                   jac=lambda lam: c + M.T @ (M @ lam - L * x) / L, method="SLSQP",
                   bounds=[(0, 1)] * n, constraints=[{"type": "eq", "fun": lambda v: v.sum() - 1,
                                                       "jac": lambda v: np.ones(n)}],
                   options={"ftol": 1e-16, "maxiter": 500})
    lam = np.maximum(res.x, 0)
    return lam / lam.sum()


class Interpolated(FederatedProblem):
    """The interpolating function of (X, G, F) as a one-client problem; ``X[0]`` must be a
    minimiser (``G[0] = 0``), e.g. the PEP's x*. L-smooth and mu-strongly convex."""

    kind = "interpolated"

    def __init__(self, X, G, F, *, L: float, mu: float = 0.0, name="PEP interpolation"):
        X, G, F = (np.asarray(a, dtype=float) for a in (X, G, F))
        self.L, self.mu = float(L), float(mu)
        self._X, self._G, self._F = X, G - mu * X, F - 0.5 * mu * np.sum(X * X, axis=1)
        self.name, self.n_clients, self.dim = name, 1, X.shape[1]
        self.p, self.counts = np.ones(1), np.ones(1, dtype=int)
        self.x_star, self.F_star = X[0].copy(), float(F[0])
        self.x_star_i, self.F_star_i = X[:1].copy(), np.array([float(F[0])])

    def _at(self, w):
        v, g = evaluate(w, self._X, self._G, self._F, self.L - self.mu)
        return v + 0.5 * self.mu * float(w @ w), g + self.mu * w

    def losses(self, W):
        return np.array([self._at(w)[0] for w in self._broadcast(W)])

    def grads(self, W):
        return np.array([self._at(w)[1] for w in self._broadcast(W)])

    def hvps(self, W, V):
        raise NotImplementedError("the interpolant is C^1 only: no Hessian-vector products")

    def minibatch_grads(self, W, rng, batch_size):
        return self.grads(W)

    def arrays(self):
        return {"X": self._X, "G": self._G, "F": self._F}
