"""Exact optima of a :class:`~toys.problems.bucketed.Bucketed` problem (a mixin): x_i*, F_i*
from every bucket's own batched Newton solve (:class:`~toys.problems._logistic_optima.ExactOptima`),
x*, F* by damped Newton on the whole objective sum_i p_i F_i, whose Hessian is the sum over the
buckets of q_b grad^2 F_b (q_b = sum_{i in b} p_i). Solved lazily on first access; with l2 = 0
an optimum that does not exist raises :class:`~toys.problems.base.OptimumUnavailable` with the
reason the padded problem gives (the same client indices).

Example
-------
>>> import numpy as np, toys
>>> prob = toys.logistic([np.ones((8, 1)), np.ones((1, 1))], [np.arange(8) % 2, [1.0]],
...                      l2=0.1, max_padding=2.0)
>>> bool(np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10)
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ._logistic_math import separable_clients
from ._logistic_optima import global_newton
from .base import OptimumUnavailable

__all__ = ["BucketedOptima"]


class BucketedOptima:
    """x_star, F_star, x_star_i, F_star_i of a bucketed problem, solved on first access (a
    :meth:`~toys.problems.bucketed.Bucketed.subset` has none: DomainError)."""

    x_star = property(lambda self: self._optimum("x_star"), doc="argmin F (solved lazily)")
    F_star = property(lambda self: self._optimum("F_star"), doc="min F (solved lazily)")
    x_star_i = property(lambda self: self._optimum("x_star_i"), doc="argmin F_i (lazily)")
    F_star_i = property(lambda self: self._optimum("F_star_i"), doc="min F_i (lazily)")

    def _optimum(self, name):
        if self._optima is None:
            raise DomainError(name, None, "the full problem's optima (a subset has none)")
        if name not in self._optima:
            pair = ("x_star_i", "F_star_i") if name.endswith("_i") else ("x_star", "F_star")
            try:
                self._solve_clients() if name.endswith("_i") else self._solve_global()
            except OptimumUnavailable as exc:
                self._optima.update(dict.fromkeys(pair, exc))
        value = self._optima[name]
        if isinstance(value, OptimumUnavailable):
            raise OptimumUnavailable(name, value.reason)
        return value

    def _solve_clients(self):
        x, F = np.empty((self.n_clients, self.dim)), np.empty(self.n_clients)
        try:
            for pos, sub in self.parts:  # each bucket's batched Newton (ExactOptima)
                x[pos], F[pos] = sub.x_star_i, sub.F_star_i
        except OptimumUnavailable:
            self._check_clients()  # the reason with the problem's client indices
            raise
        self._optima.update(x_star_i=x, F_star_i=F)

    def _check_clients(self):
        """The check of :meth:`ExactOptima._check_finite_optimum` (l2 = 0) over all buckets,
        naming clients by their index in this problem (the same reason as the padded one)."""
        low = np.sort(np.concatenate([pos[np.linalg.matrix_rank(sub.X) < self.n_features]
                                      for pos, sub in self.parts]))
        if low.size:
            raise OptimumUnavailable("x_star_i", f"l2 = 0 and the client data "
                                     f"{low.tolist()[:10]} have a rank-deficient design "
                                     "matrix: the minimiser is not unique")
        sep = np.sort(np.concatenate([pos[separable_clients(sub.X, sub.y, sub.mask)]
                                      for pos, sub in self.parts]))
        if sep.size:
            raise OptimumUnavailable("x_star_i", f"l2 = 0 and the client data "
                                     f"{sep.tolist()[:10]} are (quasi-)separable: the "
                                     "unregularised loss has no finite minimiser")

    def _hessian_F(self, w):
        """grad^2 F(w) = sum_b q_b grad^2 F_b(w) (each bucket's block-accumulated Hessian)."""
        return sum(q * sub._hessian_F(w) for q, (_, sub) in zip(self._mass, self.parts))

    def _solve_global(self):
        try:
            start = (self.p @ self.x_star_i)[None]
        except OptimumUnavailable:
            if self.l2 == 0.0 and self.kind == "logistic":
                parts = [sub for _, sub in self.parts]
                pooled = (np.concatenate([s.X[s.mask] for s in parts])[None],
                          np.concatenate([s.y[s.mask] for s in parts])[None])
                parts[0]._check_finite_optimum(*pooled, np.ones(pooled[1].shape, bool),
                                               "pooled")
            start = np.zeros((1, self.dim))
        self._optima.update(global_newton(self, start))
