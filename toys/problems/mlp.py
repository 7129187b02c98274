"""Seed 003's non-convex model: a one-hidden-layer MLP (``hidden`` ReLU units, softmax output,
cross-entropy + l2/2 ||theta||^2) as a federated problem, numpy and torch.

theta = (W1 (f, h), b1 (h), W2 (h, C), b2 (C)) flattened, d = f h + h + h C + C. The losses and
gradients of every client are one batched computation over the (N, d) stack of client models,
no loop over clients or samples: on numpy a hand-written back-propagation (float64); on torch
(:meth:`MLPProblem.torch_oracle`, any device, float32 or float64) ``torch.func``'s
``vmap(grad(loss_one))`` of the one-client loss. Both agree with a per-client autograd reference
to 1e-12 (tests/toys/problems/test_mlp_torch.py). Both have participants-only ``subset``
oracles (rows bit-identical to the full computation) and compute a minibatch on its b drawn
rows per client only (gathered, not the padded n_max rows with zero weights). The numpy
products run on one BLAS thread: these small batched products lose to threading, by 30x on a
busy 2-core machine. The model is non-convex: x*, F*, F_i* are unknown (None), so the
loss-weighted rules use ``loss_offset="zero"``. The initial model ``x0`` is torch's default
layer initialisation (uniform in +-1/sqrt(fan_in)) drawn from a seeded numpy generator.

Example
-------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> prob = MLPProblem(rng.normal(size=(3, 5, 4)), rng.integers(0, 3, (3, 5)),
...                   np.ones((3, 5), bool), classes=3, hidden=8)
>>> prob.dim, prob.losses(np.stack([prob.x0] * 3)).shape
(67, (3,))
"""

from __future__ import annotations

import copy
import math

import numpy as np

from boundlab.errors import DomainError

from .._array import array_namespace, broadcast_rows, one_blas_thread
from ..engine.backends.torch import VmapOracle
from ..validation import check_weights
from .base import FederatedProblem

__all__ = ["MLPProblem", "mlp_problem"]


def _unpack(xp, W, f, h, C):
    N = W.shape[0]
    a, b, c = f * h, f * h + h, f * h + h + h * C
    return (xp.reshape(W[:, :a], (N, f, h)), W[:, a:b], xp.reshape(W[:, b:c], (N, h, C)),
            W[:, c:])


def _forward(xp, W, X, f, h, C):
    W1, b1, W2, b2 = _unpack(xp, W, f, h, C)
    Z1 = X @ W1 + b1[:, None, :]
    H = xp.where(Z1 > 0, Z1, 0.0)
    Z2 = H @ W2 + b2[:, None, :]
    return Z1, H, Z2, W2


def _log_softmax(xp, Z):
    m = xp.max(Z, axis=-1, keepdims=True)
    return Z - m - xp.log(xp.sum(xp.exp(Z - m), axis=-1, keepdims=True))


def mlp_losses(W, X, Y, w_rows, l2, f, h, C):
    """Per-client loss sum_s w_rows[i, s] CE(x_is, y_is) + l2/2 ||W_i||^2 (Y one-hot)."""
    xp = array_namespace(W)
    _, _, Z2, _ = _forward(xp, W, X, f, h, C)
    ce = -xp.sum(_log_softmax(xp, Z2) * Y, axis=-1)
    return xp.sum(w_rows * ce, axis=1) + 0.5 * l2 * xp.sum(W * W, axis=1)


def mlp_grads(W, X, Y, w_rows, l2, f, h, C):
    """The gradients of :func:`mlp_losses`, (N, d) (back-propagation, batched over clients)."""
    xp = array_namespace(W)
    Z1, H, Z2, W2 = _forward(xp, W, X, f, h, C)
    dZ2 = (xp.exp(_log_softmax(xp, Z2)) - Y) * w_rows[:, :, None]
    gW2 = xp.permute_dims(H, (0, 2, 1)) @ dZ2
    dZ1 = xp.where(Z1 > 0, dZ2 @ xp.permute_dims(W2, (0, 2, 1)), 0.0)
    gW1 = xp.permute_dims(X, (0, 2, 1)) @ dZ1
    N = W.shape[0]
    g = l2 * W  # the data terms added in place: one pass over the (N, d) stack, same bits
    a, b, c = f * h, f * h + h, f * h + h + h * C
    g[:, :a] += xp.reshape(gW1, (N, -1))
    g[:, a:b] += xp.sum(dZ1, axis=1)
    g[:, b:c] += xp.reshape(gW2, (N, -1))
    g[:, c:] += xp.sum(dZ2, axis=1)
    return g


class _Oracle:
    """Batched losses / gradients on numpy (hand-written back-propagation, float64);
    ``subset(clients)`` restricts it to the participants (random draws keep the full shape)."""

    _client_arrays = ("X", "Y", "w_rows", "mask", "counts")
    _draw = None  # (N of the full oracle, rows kept) for a subset

    def __init__(self, prob):
        self.n_clients, self.dim = prob.n_clients, prob.dim
        self.shape = (prob.n_features, prob.hidden, prob.classes)
        self.X, self.Y = prob.X, prob.onehot
        self.w_rows, self.mask = prob.w_rows, prob.mask.astype(float)
        self.counts, self.l2 = prob.counts, prob.l2
        self.counts_max = int(prob.counts.max())

    def _bc(self, W):
        return broadcast_rows(W, self.n_clients) if W.ndim == 1 else W

    def losses(self, W):
        with one_blas_thread():
            return mlp_losses(self._bc(W), self.X, self.Y, self.w_rows, self.l2, *self.shape)

    def grads(self, W):
        with one_blas_thread():
            return mlp_grads(self._bc(W), self.X, self.Y, self.w_rows, self.l2, *self.shape)

    def subset(self, clients):
        """The oracle of ``clients`` only (rows bit-identical to the full oracle's)."""
        clients = np.asarray(clients)
        sub = copy.copy(self)
        for name in self._client_arrays:
            setattr(sub, name, getattr(self, name)[clients])
        full_n, rows = self._draw or (self.n_clients, np.arange(self.n_clients))
        sub._draw, sub.n_clients = (full_n, rows[clients]), len(clients)
        return sub

    def minibatch_grads(self, W, rng, batch_size):
        """Gradients on ``batch_size`` rows per client drawn without replacement (all rows
        when the client has fewer): the real rows of the b smallest keys of a uniform
        (N, n_max) draw, gathered in row order, so that only b rows per client are computed."""
        if batch_size is None or batch_size >= self.counts_max:
            return self.grads(W)
        return self.keyed_grads(W, self.draw_keys(rng), int(batch_size))

    def keyed_grads(self, W, keys, b, clients=None):
        """The minibatch gradients of the rows of ``keys`` (N, n_max) (:meth:`rows_of_keys`):
        the statements of :meth:`minibatch_grads` after its draw. ``clients`` (indices), if
        given: ``W`` and ``keys`` are those clients' rows only (a population of MLPs,
        :mod:`toys.problems._stacked_mlp`, passes its participants with their own keys); only
        their drawn rows are gathered."""
        at = np.arange(self.n_clients) if clients is None else np.asarray(clients)
        idx, wb = self.rows_of_keys(keys, b, at)
        rows = at[:, None]
        with one_blas_thread():
            return mlp_grads(self._bc(W), self.X[rows, idx], self.Y[rows, idx], wb, self.l2,
                             *self.shape)

    def draw_keys(self, rng):
        """The uniform keys (N, n_max) of one minibatch draw: ``rng.random((N_full, n_max))``,
        a subset's rows kept."""
        full_n, rows = self._draw or (self.n_clients, None)
        keys = rng.random((full_n, self.mask.shape[1]))
        return keys if rows is None else keys[rows]

    def draw_rows(self, rng, b):
        """:meth:`rows_of_keys` of a fresh draw (:meth:`draw_keys`)."""
        return self.rows_of_keys(self.draw_keys(rng), b)

    def rows_of_keys(self, keys, b, clients=None):
        """``(idx, wb)``: the row indices (N, b) of a minibatch, ascending (padding slots of a
        client with fewer than b rows point at its row 0 with weight 0), and the weights wb
        (N, b), 1/min(b, n_i) on the real rows, for the uniform ``keys`` (N, n_max) of the
        clients ``clients`` (default all)."""
        mask, counts = (self.mask, self.counts) if clients is None else (
            self.mask[clients], self.counts[clients])
        keys = np.where(mask > 0, keys, np.inf)  # padding rows sort last
        idx = np.sort(np.argpartition(keys, b - 1, axis=1)[:, :b], axis=1)
        valid = np.isfinite(np.take_along_axis(keys, idx, axis=1))
        beff = np.minimum(b, counts)[:, None]
        return np.where(valid, idx, 0), valid / beff


class _TorchOracle(VmapOracle):
    """Batched losses / gradients on one torch device and dtype through ``torch.func``: the
    per-client loss of one parameter row is written once and ``vmap(grad(...))`` maps it over
    the (N, d) stack (one batched call, no loop over clients or samples). Participants-only
    ``subset``, the minibatch draw (b rows of smallest float64 key, gathered on the device)
    and the batched calls are the torch backend's
    :class:`~toys.engine.backends.torch.VmapOracle`."""

    def __init__(self, prob, ops):
        import torch

        f, h, C, l2 = prob.n_features, prob.hidden, prob.classes, prob.l2
        sizes = (f * h, h, h * C, C)
        self.row_floats = f + 2 * h + 2 * C  # input, hidden (pre/post ReLU), logits, loss

        def loss_one(theta, X, y, w):
            W1, b1, W2, b2 = torch.split(theta, sizes)
            Z = torch.relu(X @ W1.reshape(f, h) + b1) @ W2.reshape(h, C) + b2
            ell = torch.nn.functional.cross_entropy(Z, y, reduction="none")
            return (w * ell).sum() + 0.5 * l2 * (theta * theta).sum()

        self._bind(ops, prob, ops.asarray(prob.X), ops.aslong(prob.y), loss_one, prob.w_rows)


class MLPProblem(FederatedProblem):
    """Federated classification with a one-hidden-layer ReLU MLP (non-convex; no optima).

    ``X`` (N, n_max, f), ``y`` (N, n_max) ints in [0, classes), ``mask`` (N, n_max) bool;
    ``weights`` default n_i / n; ``hidden`` units (seed 003: 128); ``l2`` (seed 003: 1e-4).

    >>> import numpy as np
    >>> p = MLPProblem(np.zeros((2, 3, 4)), np.zeros((2, 3), int), np.ones((2, 3), bool),
    ...                classes=2, hidden=3)
    >>> p.x_star is None, p.kind, p.dim
    (True, 'mlp', 23)
    """

    kind = "mlp"

    def __init__(self, X, y, mask, classes: int = 10, hidden: int = 128, l2: float = 1e-4,
                 weights=None, seed: int = 0, name: str = "mlp"):
        X = np.asarray(X, dtype=float)
        mask = np.asarray(mask, dtype=bool)
        y = np.asarray(y)
        if X.ndim != 3 or mask.shape != X.shape[:2] or y.shape != X.shape[:2]:
            raise DomainError("X", X, "array (N, n_max, f) with y and mask of shape (N, n_max)")
        self.counts = mask.sum(axis=1).astype(int)
        if np.any(self.counts == 0):
            raise DomainError("counts", self.counts, "at least one sample per client")
        self.classes, self.hidden, self.l2 = int(classes), int(hidden), float(l2)
        lab = y[mask]
        if lab.min() < 0 or lab.max() >= self.classes:
            raise DomainError("y", lab, f"integers in [0, {self.classes - 1}]")
        self.X = np.where(mask[..., None], X, 0.0)
        self.y = np.where(mask, y, 0).astype(int)
        self.mask, self.name = mask, name
        self.n_clients, self.n_features = X.shape[0], X.shape[2]
        self.onehot = np.eye(self.classes)[self.y] * mask[..., None]
        self.w_rows = mask / self.counts[:, None]
        self.p = self.counts / self.counts.sum() if weights is None else check_weights(
            "weights", weights, self.n_clients)
        f, h, C = self.n_features, self.hidden, self.classes
        self.dim = f * h + h + h * C + C
        rng = np.random.default_rng(seed)
        u1, u2 = 1 / math.sqrt(f), 1 / math.sqrt(h)
        self.x0 = np.concatenate([rng.uniform(-u1, u1, f * h), rng.uniform(-u1, u1, h),
                                  rng.uniform(-u2, u2, h * C), rng.uniform(-u2, u2, C)])
        self.noise_std = 0.0
        self.x_star = self.F_star = self.x_star_i = self.F_star_i = None
        self.test = None
        self._np = _Oracle(self)

    @property
    def Gamma(self) -> float:
        """Unknown for the non-convex MLP (NaN)."""
        return math.nan

    def losses(self, W):
        return self._np.losses(np.asarray(W, dtype=float))

    def grads(self, W):
        return self._np.grads(np.asarray(W, dtype=float))

    def hvps(self, W, V):
        raise DomainError("method", "hvps", "not provided by the MLP problem")

    def minibatch_grads(self, W, rng, batch_size):
        return self._np.minibatch_grads(np.asarray(W, dtype=float), rng, batch_size)

    def torch_oracle(self, ops):
        """The batched oracle on ``ops``' device and dtype (used by backend='torch').

        >>> import numpy as np
        >>> from toys.engine.backends.torch import TorchOps
        >>> p = MLPProblem(np.ones((2, 1, 3)), np.zeros((2, 1), int), np.ones((2, 1), bool),
        ...                classes=2, hidden=2)
        >>> ops = TorchOps("cpu")
        >>> float(p.torch_oracle(ops).losses(ops.asarray(p.x0))[0]) == float(p.losses(p.x0)[0])
        True
        """
        return _TorchOracle(self, ops)

    def subset(self, clients):
        """The numpy oracle of ``clients`` only, for participants-only local training (see
        :meth:`FederatedProblem.subset`): rows bit-identical to the full problem's, random
        draws of the full shape.

        >>> import numpy as np
        >>> p = MLPProblem(np.ones((3, 2, 2)), np.zeros((3, 2), int), np.ones((3, 2), bool),
        ...                classes=2, hidden=2)
        >>> W = np.stack([p.x0] * 3)
        >>> bool(np.array_equal(p.subset([0, 2]).grads(W[[0, 2]]), p.grads(W)[[0, 2]]))
        True
        """
        return self._np.subset(clients)

    def arrays(self):
        return {"X": self.X, "y": self.y, "mask": self.mask, "kind": "mlp",
                "classes": self.classes, "p": self.p}

    def _logits(self, w, X):
        w = np.asarray(w, dtype=float)[None, :]
        with one_blas_thread():
            return _forward(np, w, np.asarray(X, dtype=float)[None], self.n_features,
                            self.hidden, self.classes)[2][0]

    def accuracy(self, w, X, y, offset=None) -> float:
        """Accuracy of parameters ``w`` on rows ``X`` (n, f) with labels ``y``."""
        return _accuracy(self._logits(w, X), y)

    def pooled_loss(self, w, X, y, offset=None) -> float:
        """Mean cross-entropy of ``w`` on rows ``X`` (n, f) with labels ``y`` (no l2 term)."""
        return _pooled_loss(self._logits(w, X), y)

    def test_metrics(self, w, X, y, offset=None) -> tuple[float, float]:
        """``(accuracy, pooled_loss)`` of ``w`` on ``X``, ``y`` from one forward pass (the
        values of the two methods, bit for bit; :class:`toys.engine.TestMetrics` uses it).

        >>> import numpy as np
        >>> p = MLPProblem(np.ones((2, 1, 3)), np.zeros((2, 1), int), np.ones((2, 1), bool),
        ...                classes=2, hidden=2)
        >>> X, y = np.eye(3), np.array([0, 1, 0])
        >>> p.test_metrics(p.x0, X, y) == (p.accuracy(p.x0, X, y), p.pooled_loss(p.x0, X, y))
        True
        """
        Z = self._logits(w, X)
        return _accuracy(Z, y), _pooled_loss(Z, y)


def _accuracy(Z, y) -> float:
    return float(np.mean(np.argmax(Z, axis=1) == np.asarray(y)))


def _pooled_loss(Z, y) -> float:
    lsm = _log_softmax(np, Z)
    return float(-np.mean(lsm[np.arange(len(lsm)), np.asarray(y, dtype=int)]))


def mlp_problem(source, hidden: int = 128, l2: float = 1e-4, seed: int = 0,
                name: str | None = None) -> MLPProblem:
    """The MLP problem on the data of a (logistic) problem: same clients, weights and test set.

    >>> import toys
    >>> src = toys.from_dataset("digits", n_clients=3, seed=0, test_fraction=0.2,
    ...                         max_samples=300)
    >>> prob = mlp_problem(src, hidden=16)
    >>> prob.n_clients, prob.classes, prob.test["X"].shape[1]
    (3, 10, 64)
    """
    arr = source.arrays()
    classes = int(arr.get("classes") or 2)
    prob = MLPProblem(arr["X"], arr["y"], arr["mask"], classes=max(classes, 2), hidden=hidden,
                      l2=l2, weights=source.p, seed=seed,
                      name=name or f"mlp-{getattr(source, 'name', 'data')}")
    test = getattr(source, "test", None)
    if test is not None:
        prob.test = {"X": np.asarray(test["X"], dtype=float), "y": np.asarray(test["y"])}
    return prob
