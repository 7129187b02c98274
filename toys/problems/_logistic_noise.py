"""Minibatch gradients and their exact variance for :class:`~toys.problems.logistic.Logistic`
(a mixin): a size-b minibatch per client drawn without replacement, vectorized over clients.

Example
-------
>>> import numpy as np, toys
>>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
>>> g = prob.minibatch_grads(np.zeros((3, 2)), np.random.default_rng(0), 4)
>>> g.shape
(3, 2)
"""

from __future__ import annotations

import numpy as np

from ..validation import check_int
from ._logistic_math import sigmoid, softmax

__all__ = ["StochasticGradients", "keyed_minibatch_grads"]


class StochasticGradients:
    """Mixin of :class:`~toys.problems.logistic.Logistic`: per-client minibatch gradients
    (:meth:`minibatch_grads`), the per-sample gradient variance and the exact minibatch variance
    (spec A3). Uses the host's ``X``, ``y``/``Y``, ``mask``, ``row_w``, ``counts``, ``offset``,
    ``kind``, ``l2``, ``dim``, ``_theta``, ``_logits``, ``_broadcast``, ``grads``."""

    def minibatch_grads(self, W, rng, batch_size):
        if batch_size is None:
            return self.grads(W)
        b = check_int("batch_size", batch_size, lo=1)
        if b >= (self.counts.max() if self._draw is None else self._draw[2]):
            return self.grads(W)
        shape, draw_rows = self._draw_shape(self.mask.shape[1:])
        keys = rng.random(shape) if draw_rows is None else rng.random(shape)[draw_rows]
        return keyed_minibatch_grads(self, self._broadcast(W), keys, b, np.arange(self.n_clients))

    def sample_grad_variance(self, W) -> np.ndarray:
        """Per client (1/n_i) sum_j ||grad f_j(w_i) - grad F_i(w_i)||^2 (population variance).

        >>> import toys
        >>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
        >>> prob.sample_grad_variance([0.0, 0.0]).shape
        (3,)
        """
        T = self._theta(W)
        Z = self._logits(T)
        Xt = self.X.transpose(0, 2, 1)
        sq = np.einsum("nkf,nkf->nk", self.X, self.X)
        if self.kind == "logistic":
            r = (sigmoid(Z) - self.y) * self.mask
            mean = np.matmul(Xt, (r * self.row_w)[..., None])[..., 0]
            r2 = r * r
        else:
            R = (softmax(Z) - self.Y) * self.mask[..., None]
            mean = np.matmul(Xt, R * self.row_w[..., None]).reshape(self.n_clients, -1)
            r2 = np.einsum("nkc,nkc->nk", R, R)
        second = np.einsum("nk,nk->n", self.row_w, sq * r2)
        return np.maximum(second - np.einsum("ni,ni->n", mean, mean), 0.0)

    def minibatch_variance(self, W, batch_size) -> np.ndarray:
        """Exact E||g_i - grad F_i||^2 of a size-b minibatch drawn without replacement (spec A3):
        (n_i - b)/(b (n_i - 1)) * population variance, b = min(batch_size, n_i); 0 if full.

        >>> import toys
        >>> prob = toys.make("logistic-synthetic", n_clients=3)
        >>> w = prob.x0
        >>> [float(prob.minibatch_variance(w, b).max()) for b in (None, 10**6)]
        [0.0, 0.0]
        """
        if batch_size is None:
            return np.zeros(self.n_clients)
        b = np.minimum(check_int("batch_size", batch_size, lo=1), self.counts).astype(float)
        n = self.counts.astype(float)
        factor = np.where(n > 1, (n - b) / (b * np.maximum(n - 1, 1)), 0.0)
        return factor * self.sample_grad_variance(W)


def keyed_minibatch_grads(P, W, keys, b: int, sel) -> np.ndarray:
    """The minibatch gradients of the clients ``sel`` of the logistic problem ``P`` at ``W``
    (len(sel), d) with their drawn ``keys`` (len(sel), n_max, overwritten): the b rows of
    smallest key per client, without replacement (a client with n_i < b uses all its rows).
    The one implementation behind :meth:`StochasticGradients.minibatch_grads` (``sel`` = every
    client) and the stacked population's participants-only rounds."""
    keys[~P.mask[sel]] = np.inf
    idx = np.argpartition(keys, b - 1, axis=1)[:, :b]  # the b smallest keys, unordered
    rows = np.arange(len(sel))[:, None]
    valid = np.isfinite(keys[rows, idx])  # padding has key inf: only clients with n_i < b
    beff = np.minimum(b, P.counts[sel])
    idx = np.where(valid, idx, 0)
    at = sel[:, None]  # the rows of the selected clients in P's arrays
    Xb = P.X[at, idx]
    wb = valid / beff[:, None]
    m = len(sel)
    T = W if P.kind == "logistic" else W.reshape(m, P.n_features, P.classes)
    Xt = Xb.transpose(0, 2, 1)
    if P.kind == "logistic":
        z = np.matmul(Xb, T[..., None])[..., 0] + P.offset[at, idx]
        r = (sigmoid(z) - P.y[at, idx]) * wb
        G = np.matmul(Xt, r[..., None])[..., 0]
    else:
        R = (softmax(np.matmul(Xb, T)) - P.Y[at, idx]) * wb[..., None]
        G = np.matmul(Xt, R)
    return G.reshape(m, P.dim) + P.l2 * T.reshape(m, P.dim)
