"""Quadratic federated problems F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i) + b_i.

Everything is in closed form: x_i* = c_i, F_i* = b_i, x* = (sum_i p_i A_i)^{-1} sum_i p_i A_i c_i,
L = max_i lambda_max(A_i), mu = min_i lambda_min(A_i). These toys are the ones on which every
constant of a bound is known exactly (spec seeds-000-001-004 §2.1, §7.8).

Example
-------
>>> import numpy as np, toys
>>> prob = toys.quadratic(n_clients=4, dim=3, L=10.0, mu=0.5, heterogeneity=1.0, seed=0)
>>> eig = np.linalg.eigvalsh(prob.A)
>>> round(float(eig.max()), 12), round(float(eig.min()), 12)
(10.0, 0.5)
>>> bool(np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10)
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ..validation import as_rng, check_float, check_int, check_weights
from .base import FederatedProblem

__all__ = ["Quadratic", "quadratic"]


def quad_losses(A, c, b, W):
    """F_i(w_i) = 1/2 (w_i - c_i)^T A_i (w_i - c_i) + b_i for client points ``W`` (..., N, d)
    with ``A`` (..., N, d, d), ``c`` (..., N, d), ``b`` (..., N): one formula for the numpy
    problem, its torch oracle and a population of quadratics (:mod:`toys.problems.stacked`),
    written so that every instance of a population gets the bits of its own problem (numpy:
    stacked products slice by slice and row sums; torch: elementwise products and row sums).

    >>> import numpy as np
    >>> quad_losses(np.eye(2)[None], np.zeros((1, 2)), np.ones(1), np.ones((1, 2))).tolist()
    [2.0]
    """
    D = W - c
    AD = quad_grads(A, c, W, D)
    if isinstance(D, np.ndarray):
        return 0.5 * np.sum(D * AD, axis=-1) + b
    return 0.5 * (D * AD).sum(dim=-1) + b


def quad_grads(A, c, W, D=None):
    """grad F_i(w_i) = A_i (w_i - c_i) for client points ``W`` (..., N, d) (see
    :func:`quad_losses`)."""
    D = W - c if D is None else D
    if isinstance(D, np.ndarray):
        return np.matmul(A, D[..., None])[..., 0]
    return (A * D.unsqueeze(-2)).sum(dim=-1)


class Quadratic(FederatedProblem):
    """Clients F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i) + b_i with symmetric PSD A_i.

    ``A`` (N, d, d), ``c`` (N, d), ``b`` (N,) (default 0); ``weights`` default uniform (a
    quadratic has no samples: ``counts`` are ones). ``noise_std`` > 0 makes
    :meth:`minibatch_grads` add N(0, (noise_std^2 / batch_size) I_d) noise to each client
    gradient, so the stochastic-gradient variance is E||g_i - grad F_i||^2 =
    d * noise_std^2 / batch_size (``noise_std`` is the per-coordinate std at batch size 1).

    >>> import numpy as np
    >>> q = Quadratic(A=np.stack([np.eye(2), 3 * np.eye(2)]), c=np.array([[0.0, 0.0], [1.0, 1.0]]))
    >>> q.x_star.tolist(), round(q.Gamma, 6)
    ([0.75, 0.75], 0.375)
    """

    kind = "quadratic"

    def __init__(self, A, c, b=None, weights=None, noise_std: float = 0.0,
                 name: str = "quadratic"):
        A = np.asarray(A, dtype=float)
        c = np.asarray(c, dtype=float)
        if A.ndim != 3 or A.shape[1] != A.shape[2] or A.shape[0] < 1:
            raise DomainError("A", A, "array of shape (N, d, d): one symmetric matrix per client")
        N, d = A.shape[0], A.shape[1]
        if c.shape != (N, d):
            raise DomainError("c", c, f"array of shape ({N}, {d}) (one centre per client)")
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(c))):
            raise DomainError("A", A, "finite entries")
        if not np.allclose(A, A.transpose(0, 2, 1), rtol=1e-10, atol=1e-12):
            raise DomainError("A", A, "symmetric matrices")
        A = 0.5 * (A + A.transpose(0, 2, 1))
        self.eigs = np.linalg.eigvalsh(A)  # (N, d), ascending
        scale = max(1.0, float(np.abs(self.eigs).max()))
        if self.eigs.min() < -1e-12 * scale:
            raise DomainError("A", A, "positive semidefinite matrices (convex clients)")
        b = np.zeros(N) if b is None else np.asarray(b, dtype=float)
        if b.shape != (N,) or not np.all(np.isfinite(b)):
            raise DomainError("b", b, f"finite array of shape ({N},)")
        self.name = name
        self.n_clients, self.dim = N, d
        self.A, self.c, self.b = A, c, b
        self.counts = np.ones(N, dtype=int)
        self.p = np.full(N, 1.0 / N) if weights is None else check_weights("weights", weights, N)
        self.noise_std = check_float("noise_std", noise_std, lo=0.0)
        A_bar = np.einsum("n,nij->ij", self.p, A)
        if np.linalg.eigvalsh(A_bar).min() <= 1e-12 * scale:
            raise DomainError("A", A, "matrices whose p-weighted mean is positive definite "
                                      "(otherwise x* is not unique)")
        rhs = np.einsum("n,nij,nj->i", self.p, A, c)
        x = np.linalg.solve(A_bar, rhs)
        x = x + np.linalg.solve(A_bar, rhs - A_bar @ x)  # one step of iterative refinement
        if np.all(c == c[0]):
            x = c[0].copy()  # identical centres: x* = c exactly (Gamma = 0 exactly)
        self.A_bar = A_bar
        self.x_star = x
        self.x_star_i = c.copy()
        self.F_star_i = b.copy()
        self.F_star = self.F(x)
        self.x0 = np.zeros(d)

    _client_arrays = ("A", "c", "b", "eigs")

    # ----------------------------------------------------------------- batched pieces
    def losses(self, W):
        return quad_losses(self.A, self.c, self.b, self._broadcast(W))

    def grads(self, W):
        return quad_grads(self.A, self.c, self._broadcast(W))

    def hvps(self, W, V):
        V = self._broadcast(V)
        return np.matmul(self.A, V[..., None])[..., 0]

    def hessians(self, W=None) -> np.ndarray:
        """Per-client Hessians (N, d, d) (constant: the A_i).

        >>> import toys
        >>> toys.quadratic(2, 2, 4.0, 1.0, 0.0, seed=0).hessians().shape
        (2, 2, 2)
        """
        return self.A.copy()

    def minibatch_grads(self, W, rng, batch_size):
        G = self.grads(W)
        if batch_size is None or self.noise_std == 0.0:
            return G
        b = check_int("batch_size", batch_size, lo=1)
        shape, rows = self._draw_shape(G.shape[1:])
        noise = rng.standard_normal(shape)
        return G + (noise if rows is None else noise[rows]) * (self.noise_std / np.sqrt(b))

    def minibatch_variance(self, W, batch_size) -> np.ndarray:
        """Exact E||g_i(w) - grad F_i(w)||^2 per client: d * noise_std^2 / batch_size (0 if full).

        >>> import toys
        >>> prob = toys.quadratic(2, 3, 4.0, 1.0, 0.0, seed=0, noise_std=0.5)
        >>> prob.minibatch_variance(None, 4).tolist()
        [0.1875, 0.1875]
        """
        if batch_size is None:
            return np.zeros(self.n_clients)
        b = check_int("batch_size", batch_size, lo=1)
        return np.full(self.n_clients, self.dim * self.noise_std ** 2 / b)

    def arrays(self):
        return {"A": self.A, "c": self.c, "b": self.b, "p": self.p, "noise_std": self.noise_std}

    def Fs(self, Ws):
        """F at many points at once: (R, d) -> (R,).

        >>> import toys
        >>> q = toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)
        >>> bool(abs(q.Fs([q.x_star])[0] - q.F_star) < 1e-12)
        True
        """
        Ws = np.atleast_2d(np.asarray(Ws, dtype=float))
        D = Ws[:, None, :] - self.c[None]
        vals = 0.5 * np.einsum("rni,nij,rnj->rn", D, self.A, D) + self.b
        return vals @ self.p


def quadratic(n_clients: int = 10, dim: int = 5, L: float = 10.0, mu: float = 1.0,
              heterogeneity: float = 1.0, seed: int = 0, noise_std: float = 0.0,
              weights=None) -> Quadratic:
    """A random quadratic problem whose extreme eigenvalues are exactly ``L`` and ``mu``.

    A_i = Q_i diag(e_i) Q_i^T with Haar-random orthogonal Q_i and eigenvalues e_i uniform in
    [mu, L], except e_1 = L for the first client and e_d = mu for the last one, so that
    max_i lambda_max(A_i) = L and min_i lambda_min(A_i) = mu are attained. Centres
    c_i = c_0 + heterogeneity * z_i with c_0, z_i ~ N(0, I_d) (the draws do not depend on
    ``heterogeneity``: the same seed gives the same matrices at every heterogeneity), b_i = 0.
    ``heterogeneity = 0`` makes all c_i equal, hence Gamma = 0 and x* = c_0.

    >>> import toys
    >>> prob = toys.quadratic(n_clients=3, dim=2, L=4.0, mu=1.0, heterogeneity=0.0, seed=1)
    >>> prob.Gamma
    0.0
    """
    N = check_int("n_clients", n_clients, lo=1)
    d = check_int("dim", dim, lo=1)
    L = check_float("L", L, lo=0.0, lo_open=True)
    mu = check_float("mu", mu, lo=0.0, hi=L, lo_open=True)
    h = check_float("heterogeneity", heterogeneity, lo=0.0)
    if N == 1 and d == 1 and mu != L:
        raise DomainError("mu", mu, f"equal to L = {L} when n_clients = dim = 1",
                          "one eigenvalue cannot attain both extremes")
    rng = as_rng(seed)
    eigs = mu + (L - mu) * rng.random((N, d))
    eigs[0, 0] = L
    eigs[-1, -1] = mu
    Q, R = np.linalg.qr(rng.standard_normal((N, d, d)))
    Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
    A = np.einsum("nij,nj,nkj->nik", Q, eigs, Q)
    c0 = rng.standard_normal(d)
    z = rng.standard_normal((N, d))
    c = c0 + h * z
    prob = Quadratic(A, c, weights=weights, noise_std=noise_std, name="quadratic")
    prob.options = {"n_clients": N, "dim": d, "L": L, "mu": mu, "heterogeneity": h,
                    "seed": seed, "noise_std": float(noise_std)}
    return prob
