"""Exact optima of :class:`~toys.problems.logistic.Logistic` (a mixin): x*, F*, x_i*, F_i*
solved lazily on first access by batched damped Newton (:mod:`toys.problems._newton`) over
cache-sized blocks of clients (cost linear in N, no switch of method at a size threshold), with
one BLAS thread for the small batched products.

With l2 = 0 a separable or rank-deficient client has no finite minimiser: its optima raise
:class:`~toys.problems.base.OptimumUnavailable` with the reason.

Example
-------
>>> import numpy as np, toys
>>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
>>> bool(np.linalg.norm(prob.p @ prob.grads(prob.x_star)) < 1e-10)
True
"""

from __future__ import annotations

import os

import numpy as np

from .._array import one_blas_thread
from ._logistic_math import separable_clients, sigmoid
from ._newton import newton
from .base import OptimumUnavailable

__all__ = ["OPTIMA_THREADS", "ExactOptima", "map_blocks"]

OPTIMA_THREADS = None
"""Threads that solve the blocks of clients' own optima at once (the blocks are independent,
each written to its own rows: the same bits with any number of threads, tested); None: the
CPUs this process may use. Set 1 on a machine busy with other work."""

_HESSIAN_CHUNK = 1e5  # Hessian entries per block of clients in the optimum solves (cache-sized:
# 250 clients of n = 100, d = 20; 1.7x less CPU than 2e6 entries, measured at N = 2e4)


class ExactOptima:
    """x_star, F_star, x_star_i, F_star_i of a logistic problem, solved on first access."""

    # Solved lazily on first access (running needs none). With l2 = 0 a separable or
    # rank-deficient client has no finite minimiser: its optima raise OptimumUnavailable.
    x_star = property(lambda self: self._optimum("x_star"), doc="argmin F (solved lazily)")
    F_star = property(lambda self: self._optimum("F_star"), doc="min F (solved lazily)")
    x_star_i = property(lambda self: self._optimum("x_star_i"), doc="argmin F_i (lazily)")
    F_star_i = property(lambda self: self._optimum("F_star_i"), doc="min F_i (lazily)")

    def _optimum(self, name):
        if name not in self._optima:
            try:
                self._solve_clients() if name.endswith("_i") else self._solve_global()
            except OptimumUnavailable as exc:
                for k in (("x_star_i", "F_star_i") if name.endswith("_i")
                          else ("x_star", "F_star")):
                    self._optima[k] = exc
        value = self._optima[name]
        if isinstance(value, OptimumUnavailable):
            raise OptimumUnavailable(name, value.reason)
        return value

    def _chunks(self):
        """Client index blocks whose explicit Hessians take at most ``_HESSIAN_CHUNK`` entries
        (memory bounded, cost linear in N: no switch of method at a size threshold)."""
        N, d = self.n_clients, self.dim
        step = max(1, int(_HESSIAN_CHUNK // (d * d)))
        for lo in range(0, N, step):
            hi = min(N, lo + step)
            idx = np.arange(lo, hi)
            yield idx, (self if len(idx) == N else self._range(lo, hi, idx))

    def _range(self, lo, hi, idx):
        """:meth:`subset` of the contiguous clients lo..hi-1 whose arrays are views (no copy)."""
        sub = self.subset(idx)
        for name in self._client_arrays:
            try:
                v = getattr(self, name)
            except AttributeError:  # not an array of this kind of problem
                continue
            sub.__dict__[name] = None if v is None else v[lo:hi]
        return sub

    def _solve_clients(self):
        if self.l2 == 0.0:
            self._check_finite_optimum(self.X, self.y, self.mask, "client")
        x = np.empty((self.n_clients, self.dim))

        def solve(block):
            idx, sub = block
            x[idx] = newton(sub.losses, sub.grads, np.zeros((len(idx), self.dim)),
                            hess=_rows_hessians(sub))

        with one_blas_thread():  # small batched products: 1 BLAS thread wins
            map_blocks(solve, list(self._chunks()))
        self._optima.update(x_star_i=x, F_star_i=self.losses(x))

    def _hessian_F(self, w):
        """grad^2 F(w) = sum_i p_i grad^2 F_i(w), accumulated over client blocks (binary: one
        pooled product X^T diag(p_i row_w s (1 - s)) X per block of rows, BLAS-friendly)."""
        H = np.zeros((self.dim, self.dim))
        if self.kind != "logistic":
            for idx, sub in self._chunks():
                H += np.einsum("n,nij->ij", self.p[idx], sub.hessians(w))
            return H
        N, n, f = self.X.shape
        step = max(1, int(_HESSIAN_CHUNK * 8 // (n * f)))
        for lo in range(0, N, step):
            sl = slice(lo, min(N, lo + step))
            z = np.matmul(self.X[sl], w)
            if self._off is not None:
                z = z + self._off[sl]
            s = sigmoid(z)
            c = (self.p[sl, None] * self.row_w[sl]) * s * (1.0 - s)
            Xb = self.X[sl].reshape(-1, f)
            H += (Xb * c.reshape(-1, 1)).T @ Xb
        return H + self.l2 * np.eye(self.dim)

    def _solve_global(self):
        try:
            start = (self.p @ self.x_star_i)[None]
        except OptimumUnavailable:
            pooled = (self.X.reshape(1, -1, self.n_features), self.y.reshape(1, -1),
                      self.mask.reshape(1, -1))
            if self.l2 == 0.0 and self.kind == "logistic":
                self._check_finite_optimum(*pooled, "pooled")
            start = np.zeros((1, self.dim))
        self._optima.update(global_newton(self, start))

    def _check_finite_optimum(self, X, y, mask, what):
        """OptimumUnavailable when l2 = 0 and the data of some ``what`` (client / pooled) have
        no unique finite minimiser (rank-deficient design, or (quasi-)separable)."""
        name = "x_star_i" if what == "client" else "x_star"
        ranks = np.linalg.matrix_rank(X)
        low = np.flatnonzero(ranks < self.n_features)
        if low.size:
            raise OptimumUnavailable(name, f"l2 = 0 and the {what} data {low.tolist()[:10]} "
                                           "have a rank-deficient design matrix: the minimiser "
                                           "is not unique")
        sep = separable_clients(X, y, mask)
        if sep.size:
            raise OptimumUnavailable(name, f"l2 = 0 and the {what} data {sep.tolist()[:10]} are "
                                           "(quasi-)separable: the unregularised loss has no "
                                           "finite minimiser")


def map_blocks(fn, blocks) -> None:
    """``fn(block)`` for every block, on :data:`OPTIMA_THREADS` threads (numpy releases the
    GIL in its batched products; the blocks must write disjoint outputs)."""
    n = OPTIMA_THREADS
    if n is None:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    n = max(1, min(int(n or 1), len(blocks)))
    if n == 1:
        for b in blocks:  # blocks of clients
            fn(b)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n) as pool:
        list(pool.map(fn, blocks))


def global_newton(prob, start) -> dict:
    """x*, F* of F = sum_i p_i F_i by damped Newton from ``start`` (1, d), with the problem's
    ``losses``, ``grads`` and summed Hessian ``_hessian_F`` (one BLAS thread)."""
    p = prob.p

    def fun(T):
        return np.array([p @ prob.losses(T[0])])

    def grad(T):
        return (p @ prob.grads(T[0]))[None]

    with one_blas_thread():
        x = newton(fun, grad, start, hess=lambda T, rows: prob._hessian_F(T[0])[None])[0]
    return {"x_star": x, "F_star": prob.F(x)}


def _rows_hessians(sub):
    """``hess(X, rows)`` for :func:`~toys.problems._newton.newton`: the Hessians of the
    clients ``rows`` of ``sub`` only."""

    def hess(X, rows):
        part = sub if len(rows) == sub.n_clients else sub.subset(rows)
        return part.hessians(X[rows])

    return hess
