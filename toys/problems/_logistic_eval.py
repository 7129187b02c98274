"""Evaluation of a logistic model on pooled rows (test sets): loss, accuracy.

Example
-------
>>> import toys
>>> prob = toys.seed004_toy(seed=0)
>>> 0.2 < prob.test_loss(prob.x_star) < 0.5
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from .._array import one_blas_thread

__all__ = ["PooledEvaluation"]


class PooledEvaluation:
    """Mixin of :class:`~toys.problems.logistic.Logistic`: evaluate one parameter vector on
    pooled rows (no client structure, no l2 term).

    >>> import toys
    >>> toys.seed004_toy(seed=0).accuracy([0.0], [[1.0]], [1], offset=[1.0])
    1.0
    """

    def pooled_loss(self, w, X, y, offset=None) -> float:
        """Mean loss (no l2 term) of parameter ``w`` on pooled rows ``X`` (n, f), labels ``y``.

        >>> import numpy as np, toys
        >>> prob = toys.seed004_toy(seed=0)
        >>> round(prob.pooled_loss(np.array([0.0]), np.ones((2, 1)), np.array([1.0, 0.0])), 6)
        0.693147
        """
        return self._loss_of(self._pooled_logits(w, X, offset), y)

    def _loss_of(self, Z, y) -> float:
        if self.kind == "logistic":
            return float(np.mean(np.logaddexp(0.0, Z) - np.asarray(y, float) * Z))
        zmax = Z.max(axis=1, keepdims=True)
        lse = zmax[:, 0] + np.log(np.exp(Z - zmax).sum(axis=1))
        return float(np.mean(lse - Z[np.arange(len(Z)), np.asarray(y, int)]))

    def accuracy(self, w, X, y, offset=None) -> float:
        """Fraction of pooled rows classified correctly by parameter ``w``.

        >>> import numpy as np, toys
        >>> prob = toys.seed004_toy(seed=0)
        >>> prob.accuracy(prob.x_star, prob.test["X"], prob.test["y"], prob.test["offset"]) > 0.8
        True
        """
        return self._accuracy_of(self._pooled_logits(w, X, offset), y)

    def _accuracy_of(self, Z, y) -> float:
        pred = (Z > 0).astype(int) if self.kind == "logistic" else Z.argmax(axis=1)
        return float(np.mean(pred == np.asarray(y).astype(int)))

    def test_metrics(self, w, X, y, offset=None) -> tuple[float, float]:
        """``(accuracy, pooled_loss)`` from one product of ``X`` and ``w`` (the values of the
        two methods, bit for bit; :class:`toys.engine.TestMetrics` uses it).

        >>> import numpy as np, toys
        >>> prob, w = toys.seed004_toy(seed=0), np.array([0.3])
        >>> X, y = np.array([[1.0], [-2.0]]), np.array([1.0, 1.0])
        >>> prob.test_metrics(w, X, y) == (prob.accuracy(w, X, y), prob.pooled_loss(w, X, y))
        True
        """
        Z = self._pooled_logits(w, X, offset)
        return self._accuracy_of(Z, y), self._loss_of(Z, y)

    def test_loss(self, w) -> float:
        """Loss of ``w`` on the pooled test set ``self.test`` (DomainError if there is none).

        >>> import toys
        >>> prob = toys.seed004_toy(seed=0)
        >>> 0.2 < prob.test_loss(prob.x_star) < 0.5
        True
        """
        if self.test is None:
            raise DomainError("test", None, "a problem built with a test set")
        return self.pooled_loss(w, self.test["X"], self.test["y"], self.test.get("offset"))

    def _pooled_logits(self, w, X, offset):
        w = np.asarray(w, dtype=float).reshape(self.dim)
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise DomainError("X", X, f"array of shape (n, {self.n_features})")
        with one_blas_thread():  # one thin product: threads only contend on a busy machine
            if self.kind == "logistic":
                return X @ w + (0.0 if offset is None else np.asarray(offset, dtype=float))
            return X @ w.reshape(self.n_features, self.classes)
