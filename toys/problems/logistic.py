"""L2-regularised logistic regression (binary and multinomial) as a federated problem.

Client data are padded to a common length and stored as ``X`` (N, n_max, f), ``y`` (N, n_max)
and ``mask`` (N, n_max); every operation is a batched matrix product over the client axis.
Client i's objective is the mean loss over its own rows plus ``l2/2 ||theta||^2``:

* binary: mean BCE-with-logits of z = x^T theta + offset, labels in {0, 1}, d = f;
* multinomial: mean softmax cross-entropy of z = Theta^T x, Theta = theta.reshape(f, C), d = f*C.

The optional ``offset`` (binary only) is a fixed per-row addition to the logit (a GLM offset):
the seed-004 toy uses it to freeze the slope w and train only the bias. Exact optima come from a
batched damped Newton method, solved lazily on first access (running needs none); with
``l2 = 0`` a client whose data are (quasi-)separable or whose design matrix is rank deficient
has no unique finite minimiser, which is detected (a linear program): its optima raise
:class:`~toys.problems.base.OptimumUnavailable` with the reason (``toys.constants`` then reports
Gamma as unavailable), while the problem can still be run.

Example
-------
>>> import numpy as np, toys
>>> rng = np.random.default_rng(0)
>>> Xs = [rng.normal(size=(20, 3)) for _ in range(4)]
>>> ys = [(x[:, 0] + rng.normal(size=20) > 0).astype(float) for x in Xs]
>>> prob = toys.logistic(Xs, ys, l2=0.1)
>>> prob.kind, prob.dim, bool(np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10)
('logistic', 3, True)
"""

from __future__ import annotations

import copy

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_float, check_int, check_numeric, check_weights
from ._logistic_eval import PooledEvaluation
from ._logistic_losses import binary_losses_at
from ._logistic_math import (
    binary_grads,
    binary_hessians,
    binary_local_gd,
    multinomial_hessians,
    residual_offset,
    sigmoid,
    softmax,
    softplus,
)
from ._logistic_noise import StochasticGradients
from ._logistic_optima import ExactOptima
from .base import FederatedProblem

__all__ = ["Logistic", "logistic"]


class Logistic(ExactOptima, PooledEvaluation, StochasticGradients, FederatedProblem):
    """Binary (``classes=None``) or multinomial (``classes=C``) L2-regularised logistic regression.

    Arrays: ``X`` (N, n_max, f) float, ``y`` (N, n_max) (0/1 floats, or int class labels),
    ``mask`` (N, n_max) bool (True on real rows; padded rows must be zero in ``X``), optional
    ``offset`` (N, n_max) (binary only). ``weights`` default to the sample fractions n_i / n.
    Attributes ``x0`` (zeros) and ``test`` (None, or a dict with pooled ``X``, ``y``, ``offset``).

    >>> import numpy as np
    >>> X = np.ones((2, 3, 1)); y = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    >>> prob = Logistic(X, y, np.array([[True, True, True], [True, True, False]]), l2=0.0)
    >>> prob.counts.tolist(), np.round(prob.x_star_i[:, 0], 10).tolist()   # logits log(2/1), 0
    ([3, 2], [0.6931471806, 0.0])
    """

    def __init__(self, X, y, mask, l2: float = 0.0, weights=None, offset=None, classes=None,
                 name: str = "logistic"):
        X = np.asarray(X, dtype=float)
        mask = np.asarray(mask, dtype=bool)
        if X.ndim != 3:
            raise DomainError("X", X, "array of shape (N, n_max, f)")
        N, n_max, f = X.shape
        if mask.shape != (N, n_max):
            raise DomainError("mask", mask, f"bool array of shape ({N}, {n_max})")
        if not np.all(np.isfinite(X)):
            raise DomainError("X", X, "finite feature values")
        self.l2 = check_float("l2", l2, lo=0.0)
        counts = mask.sum(axis=1)
        if np.any(counts == 0):
            raise DomainError("counts", counts, "at least one sample per client")
        # padding rows set to 0 (a plain copy when there is none: 7x faster on large data)
        self.X = X.copy() if mask.all() else np.where(mask[..., None], X, 0.0)
        self.mask = mask
        self.counts = counts.astype(int)
        self.row_w = mask / counts[:, None]
        self.n_clients, self.n_features, self.name = N, f, name
        self.p = self.counts / self.counts.sum() if weights is None else check_weights(
            "weights", weights, N)
        self.noise_std = 0.0
        if classes is None:
            yv = np.asarray(y, dtype=float)
            if yv.shape != (N, n_max) or not np.all(np.isin(yv[mask], (0.0, 1.0))):
                raise DomainError("y", y, "labels in {0, 1} of shape (N, n_max) for binary "
                                          "logistic regression (use multiclass=True for softmax)")
            self.y = np.where(mask, yv, 0.0)
            self.kind, self.classes, self.dim = "logistic", 2, f
            off = np.zeros((N, n_max)) if offset is None else np.asarray(offset, dtype=float)
            if off.shape != (N, n_max) or not np.all(np.isfinite(off)):
                raise DomainError("offset", offset, f"finite array of shape ({N}, {n_max})")
            self.offset = np.where(mask, off, 0.0)
            self._off = self.offset if np.any(self.offset) else None  # None: skip "+ 0"
            self._c = residual_offset(self.X, self.y, self.row_w)  # X^T (y row_w)
        else:
            C = check_int("classes", classes, lo=2)
            yi = np.asarray(y)
            if yi.shape != (N, n_max):
                raise DomainError("y", y, f"class labels of shape ({N}, {n_max})")
            lab = yi[mask]
            if lab.size and (not np.all(lab == np.round(lab)) or lab.min() < 0 or lab.max() >= C):
                raise DomainError("y", lab, f"integer class labels in [0, {C - 1}]")
            if offset is not None:
                raise DomainError("offset", offset, "None for multinomial problems")
            self.y = np.where(mask, yi, 0).astype(int)
            self.Y = (self.y[..., None] == np.arange(C)) & mask[..., None]
            self.kind, self.classes, self.dim = "multinomial", C, f * C
            self.offset = None
            if self.l2 == 0.0:
                raise DomainError("l2", 0.0, "positive real (0, inf) for multinomial problems",
                                  "the softmax parameterisation has a flat direction")
        self.x0 = np.zeros(self.dim)
        self.test = None
        self._optima: dict = {}

    _client_arrays = ("X", "mask", "counts", "row_w", "y", "offset", "_off", "_c", "Y")

    # ----------------------------------------------------------------- internals
    def _theta(self, W):
        W = self._broadcast(W)
        return W if self.kind == "logistic" else W.reshape(
            self.n_clients, self.n_features, self.classes)

    def _logits(self, T):
        if self.kind == "logistic":
            Z = np.matmul(self.X, T[..., None])[..., 0]
            return Z if self._off is None else Z + self._off
        return np.matmul(self.X, T)

    def _flat(self, G):
        return G.reshape(self.n_clients, self.dim)

    # ----------------------------------------------------------------- batched pieces
    def losses(self, W):
        T = self._theta(W)
        Z = self._logits(T)
        if self.kind == "logistic":
            ell = softplus(Z) - self.y * Z
        else:
            zmax = Z.max(axis=2, keepdims=True)
            lse = zmax[..., 0] + np.log(np.exp(Z - zmax).sum(axis=2))
            ell = lse - np.einsum("nkc,nkc->nk", self.Y, Z)
        reg = 0.5 * self.l2 * np.einsum("ni,ni->n", *(2 * [self._flat(T)]))
        return np.einsum("nk,nk->n", self.row_w, ell) + reg

    def losses_at(self, P):
        """Every client's loss at each of the points ``P`` (m, d) in one pass over the data:
        (m, N) (:func:`~toys.problems._logistic_losses.binary_losses_at`: agrees with
        :meth:`losses` to about eps absolute, and a point's values do not depend on the other
        points); None for multinomial problems (the caller then evaluates point by point).

        >>> import numpy as np, toys
        >>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
        >>> P = np.array([[0.0, 0.0], [1.0, -1.0]])
        >>> bool(np.allclose(prob.losses_at(P)[1], prob.losses(P[1]), rtol=1e-14))
        True
        """
        if self.kind != "logistic":
            return None
        return binary_losses_at(self.X, 1.0 - 2.0 * self.y, self.mask, self._off, self.l2, P)

    def grads(self, W):
        T = self._theta(W)
        if self.kind == "logistic":
            return binary_grads(self.X, self._c, self.row_w, self._off, self.l2, T)
        R = (softmax(self._logits(T)) - self.Y) * self.row_w[..., None]
        return self._flat(np.matmul(self.X.transpose(0, 2, 1), R)) + self.l2 * self._flat(T)

    def hvps(self, W, V):
        T = self._theta(W)
        Vt = self._theta(V)
        Z = self._logits(T)
        Xt = self.X.transpose(0, 2, 1)
        if self.kind == "logistic":
            s = sigmoid(Z)
            u = np.matmul(self.X, Vt[..., None])[..., 0] * s * (1.0 - s) * self.row_w
            out = np.matmul(Xt, u[..., None])[..., 0]
        else:
            P = softmax(Z)
            U = np.matmul(self.X, Vt)
            PU = P * U
            S = (PU - P * PU.sum(axis=2, keepdims=True)) * self.row_w[..., None]
            out = np.matmul(Xt, S)
        return self._flat(out) + self.l2 * self._flat(Vt)

    def hessians(self, W) -> np.ndarray:
        """Per-client Hessians (N, d, d) at ``W`` (explicit; memory N d^2).

        >>> import numpy as np, toys
        >>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
        >>> H = prob.hessians(prob.x_star)
        >>> bool(np.allclose(H @ np.ones(2), prob.hvps(prob.x_star, np.ones(2))))
        True
        """
        T = self._theta(W)
        Z = self._logits(T)
        if self.kind == "logistic":
            s = sigmoid(Z)
            H = binary_hessians(self.X, s * (1.0 - s) * self.row_w)
        else:
            H = multinomial_hessians(self.X, softmax(Z), self.row_w)
        return H + self.l2 * np.eye(self.dim)

    def local_gd(self, W, x, lrs, prox=0.0, G0=None, Ws=None, Gs=None):
        """Full-batch local GD of every client in place on ``W`` (N, d): cache-blocked
        :func:`toys.problems._logistic_math.binary_local_gd`, the bits of steps with :meth:`grads`.
        Returns ``W``, or None for a multinomial problem (no fused kernel).

        >>> import numpy as np, toys
        >>> prob = toys.make("logistic-synthetic", n_clients=3, dim=2)
        >>> W = prob.local_gd(np.zeros((3, 2)), np.zeros(2), [0.1])
        >>> bool(np.array_equal(W, -0.1 * prob.grads(np.zeros(2))))
        True
        """
        if self.kind != "logistic":
            return None
        sel = self.__dict__.get("_sel")
        P = self if sel is None else self.__dict__["_parent"]
        return binary_local_gd(P.X, P._c, P.row_w, P._off, self.l2, W, x, lrs, prox, G0, Ws,
                               Gs, clients=sel)

    def subset(self, clients):
        """The clients ``clients`` only (see :meth:`FederatedProblem.subset`). Nothing is
        copied up front: the fused local GD reads the selected rows of the full data block by
        block, and the other pieces slice the arrays they use on first use."""
        clients = np.asarray(clients)
        d = self.__dict__
        parent = d.get("_parent", self)
        sel = clients if d.get("_sel") is None else d["_sel"][clients]
        sub = copy.copy(self)
        for name in self._client_arrays:
            sub.__dict__.pop(name, None)
        sub._parent, sub._sel, sub.n_clients = parent, sel, len(sel)
        sub._draw = (parent.n_clients, sel, int(parent.counts.max()))
        return sub

    def __getattr__(self, name):
        # per-client arrays of a subset oracle, sliced from the full problem on first use
        d = self.__dict__
        if name in type(self)._client_arrays and d.get("_sel") is not None:
            v = getattr(d["_parent"], name)
            v = None if v is None else v[d["_sel"]]
            d[name] = v
            return v
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def arrays(self):
        out = {"X": self.X, "y": self.y, "mask": self.mask, "l2": self.l2, "p": self.p,
               "kind": self.kind, "classes": self.classes}
        if self.offset is not None:
            out["offset"] = self.offset
        return out

    def Fs(self, Ws):
        """F at many points at once (chunked over points): (R, d) -> (R,).

        >>> import toys
        >>> prob = toys.seed004_toy(seed=0)
        >>> bool(abs(prob.Fs([prob.x_star, prob.x0])[0] - prob.F_star) < 1e-12)
        True
        """
        Ws = np.atleast_2d(np.asarray(Ws, dtype=float))
        R = Ws.shape[0]
        chunk = max(1, int(4e6 // max(1, self.X.size // self.n_features * self.classes)))
        out = np.empty(R)
        for s in range(0, R, chunk):
            blk = Ws[s:s + chunk]
            if self.kind == "logistic":
                Z = np.einsum("nkf,rf->rnk", self.X, blk) + self.offset
                ell = softplus(Z) - self.y * Z
            else:
                Th = blk.reshape(-1, self.n_features, self.classes)
                Z = np.einsum("nkf,rfc->rnkc", self.X, Th)
                zmax = Z.max(axis=3, keepdims=True)
                lse = zmax[..., 0] + np.log(np.exp(Z - zmax).sum(axis=3))
                ell = lse - np.einsum("nkc,rnkc->rnk", self.Y, Z)
            vals = np.einsum("nk,rnk->rn", self.row_w, ell)
            out[s:s + chunk] = vals @ self.p + 0.5 * self.l2 * np.einsum("ri,ri->r", blk, blk)
        return out


def logistic(Xs, ys, l2: float = 0.0, weights=None, fit_intercept: bool = False,
             multiclass: bool | None = None, classes: int | None = None, offsets=None,
             name: str = "logistic", max_padding: float | None = None) -> FederatedProblem:
    """Logistic regression from per-client arrays ``Xs[i]`` (n_i, f) and labels ``ys[i]`` (n_i,).

    Labels in {0, 1} give binary logistic regression (mean BCE + l2/2 ||x||^2); more than two
    classes (or ``multiclass=True``) give softmax regression with integer labels in [0, C)
    (``classes`` defaults to the largest label + 1). ``fit_intercept`` appends a column of ones
    (the intercept is then regularised like every other coordinate). ``offsets[i]`` (n_i,) adds a
    fixed term to the logits (binary only).

    ``max_padding`` bounds the memory of skewed client sizes. ``None`` (default): one
    :class:`Logistic` block, every client padded to the largest one, X (N, n_max, f). A real
    number >= 1: the clients are grouped by size into buckets, each padded to its own largest
    client, so that the stored rows are at most ``max_padding`` x the real rows (every client's
    padded length <= max_padding x n_i); the result is a
    :class:`~toys.problems.bucketed.Bucketed` problem (same clients, weights and optima,
    values equal to round-off) when that stores fewer rows than one block, else the
    :class:`Logistic`. The kernels' temporaries (local GD, losses at many points, Hessians) are
    already chunked over clients, so the stored data set the memory.

    >>> import numpy as np, toys
    >>> rng = np.random.default_rng(1)
    >>> Xs = [rng.normal(size=(30, 2)) for _ in range(3)]
    >>> ys = [rng.integers(0, 3, size=30) for _ in range(3)]
    >>> prob = toys.logistic(Xs, ys, l2=0.05, fit_intercept=True)
    >>> prob.kind, prob.classes, prob.dim
    ('multinomial', 3, 9)
    """
    if max_padding is not None:
        from .bucketed import check_max_padding

        max_padding = check_max_padding(max_padding)
    if len(Xs) == 0 or len(Xs) != len(ys):
        raise DomainError("Xs", len(Xs), "one feature array per client, as many as label arrays")
    Xs = [np.atleast_2d(check_numeric(f"Xs[{i}]", x, "features")).astype(float)
          for i, x in enumerate(Xs)]
    ys = [check_numeric(f"ys[{i}]", y, "labels").reshape(-1) for i, y in enumerate(ys)]
    f = Xs[0].shape[1]
    for i, (x, y) in enumerate(zip(Xs, ys)):
        if x.ndim != 2 or x.shape[1] != f or x.shape[0] != y.shape[0] or x.shape[0] == 0:
            raise DomainError(f"Xs[{i}]", x, f"non-empty array (n_i, {f}) with n_i labels")
    if fit_intercept:
        Xs = [np.hstack([x, np.ones((x.shape[0], 1))]) for x in Xs]
        f += 1
    pooled = np.concatenate(ys)
    if not np.all(np.isfinite(pooled.astype(float))):
        raise DomainError("ys", pooled, "finite labels")
    uniq = np.unique(pooled)
    if multiclass is None:
        multiclass = classes is not None and classes > 2 or uniq.size > 2
    N = len(Xs)
    n = np.array([x.shape[0] for x in Xs])
    n_max = int(n.max())
    if max_padding is not None:
        C = (int(classes) if classes is not None else int(uniq.max()) + 1) if multiclass \
            else None
        prob = _bucketed(Xs, ys, n, max_padding=max_padding, l2=l2, weights=weights,
                         offsets=offsets, classes=C, name=name)
        if prob is not None:
            return prob
    mask = np.arange(n_max)[None, :] < n[:, None]
    X = np.zeros((N, n_max, f))
    y = np.zeros((N, n_max))
    X[mask] = np.concatenate(Xs)
    y[mask] = pooled
    off = None
    if offsets is not None:
        if len(offsets) != N:
            raise DomainError("offsets", len(offsets), f"{N} arrays (one per client)")
        off = np.zeros((N, n_max))
        off[mask] = np.concatenate([np.asarray(o, dtype=float).reshape(-1) for o in offsets])
    if multiclass:
        C = int(classes) if classes is not None else int(uniq.max()) + 1
        return Logistic(X, y, mask, l2=l2, weights=weights, offset=off, classes=C, name=name)
    return Logistic(X, y, mask, l2=l2, weights=weights, offset=off, name=name)


def _bucketed(Xs, ys, sizes, *, max_padding, l2, weights, offsets, classes, name):
    """A :class:`~toys.problems.bucketed.Bucketed` problem of one ``Logistic`` per size bucket,
    or None when the buckets would store as many rows as one padded block.

    >>> Xs, ys = [np.ones((k, 1)) for k in (8, 1)], [np.arange(k) % 2 for k in (8, 1)]
    >>> _bucketed(Xs, ys, np.array([8, 1]), max_padding=2.0, l2=0.1, weights=None,
    ...           offsets=None, classes=None, name="logistic").n_clients
    2
    """
    from .bucketed import Bucketed, bucket_arrays

    packed = bucket_arrays(Xs, ys, sizes, max_padding=max_padding, offsets=offsets)
    if packed is None:
        return None
    p = sizes / sizes.sum() if weights is None else check_weights("weights", weights, len(sizes))
    parts = [(idx, Logistic(X, y, mask, l2=l2, offset=off, classes=classes, name=name))
             for idx, X, y, mask, off in packed]
    return Bucketed(parts, p, name=name, max_padding=max_padding)
