"""Numerical kernels of the logistic problems: stable sigmoid / softmax, batched Hessians, and
the separability test that decides whether an unregularised logistic loss has a finite minimiser.

Example
-------
>>> import numpy as np
>>> from toys.problems._logistic_math import sigmoid, separable_clients
>>> float(sigmoid(np.array([0.0]))[0])
0.5
>>> X = np.array([[[1.0], [-1.0]], [[1.0], [1.0]]]); y = np.array([[1.0, 0.0], [1.0, 0.0]])
>>> separable_clients(X, y, np.ones((2, 2), bool)).tolist()   # client 0: sign(x) predicts y
[0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["binary_grads", "binary_hessians", "binary_local_gd", "multinomial_hessians",
           "residual_offset", "separable_clients", "sigmoid", "softmax", "softplus"]

_CHUNK = 4_000_000  # entries of the largest temporary in the Hessian assembly
BLOCK_BYTES = 1 << 20  # client data (X rows) per block of binary_local_gd: stays in L2 cache


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function.

    >>> import numpy as np
    >>> sigmoid(np.array([-800.0, 800.0])).tolist()
    [0.0, 1.0]
    """
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class _Work:
    """Preallocated buffers of the gradient kernel for up to ``b`` clients: logits / residual
    Z (b, n), gradient G and temporaries T, V (b, d)."""

    def __init__(self, b, n, d):
        self.Z = np.empty((b, n))
        self.G, self.T, self.V = np.empty((b, d)), np.empty((b, d)), np.empty((b, d))

    def block(self, X, c, row_w, offset, l2, b):
        """The arguments of :func:`_grads_neg` for the first ``b`` buffer rows."""
        Z, G = self.Z[:b], self.G[:b]
        return (X, X.transpose(0, 2, 1), c, row_w, offset, l2, self.V[:b], Z, Z[..., None],
                G, G[..., None], self.T[:b])


def _grads_neg(X, Xt, c, row_w, offset, l2, V, Z, Z3, G, G3, T):
    """Binary ridge-logistic gradients at ``W = -V`` into ``G`` (arrays of one block):
    ``G = X^T q - c + l2 W``, q = row_w * sigmoid(z), z = X W + offset, ``c = X^T (y row_w)``
    (so that X^T q - c = X^T r, r = row_w (sigmoid(z) - y) the residual).

    Working with V = -W gives -z = X V directly (negation is exact: the bits are those of the
    same steps on W). sigmoid(z) = 1 / (1 + exp(-z)); for z < -709 exp overflows to inf (the
    caller ignores the overflow) and the term is 0 instead of a subnormal number < 2.3e-308;
    elsewhere it agrees with :func:`sigmoid` to a few ulps. ``offset=None``: zero offset.
    ``Z3``, ``G3`` are ``Z[..., None]``, ``G[..., None]``."""
    np.matmul(X, V[..., None], Z3)  # -z
    if offset is not None:
        np.subtract(Z, offset, Z)
    np.exp(Z, Z)
    np.add(Z, 1.0, Z)
    np.divide(row_w, Z, Z)  # q = row_w * sigmoid(z)
    np.matmul(Xt, Z3, G3)
    np.subtract(G, c, G)  # X^T r
    np.multiply(V, l2, T)
    np.subtract(G, T, G)  # + l2 W
    return G


def binary_grads(X, c, row_w, offset, l2, W) -> np.ndarray:
    """Gradients of the binary ridge-logistic client losses
    ``sum_k row_w[i,k] BCE(x_ik^T w_i + offset_ik, y_ik) + l2/2 ||w_i||^2``: X (N, n, d),
    row_w, offset (N, n) (offset None: zero), ``c = X^T (y row_w)`` (N, d) (see
    :func:`residual_offset`), W (N, d) -> (N, d).

    >>> import numpy as np
    >>> X, y, row_w = np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), np.full((1, 2), 0.5)
    >>> binary_grads(X, residual_offset(X, y, row_w), row_w, None, 0.0, np.zeros((1, 1))).tolist()
    [[0.0]]
    """
    N, n, d = X.shape
    w = _Work(N, n, d)
    args = w.block(X, c, row_w, offset, l2, N)
    np.negative(W, w.V)
    with np.errstate(over="ignore"):
        return _grads_neg(*args)


def residual_offset(X, y, row_w) -> np.ndarray:
    """``c_i = X_i^T (y_i * row_w_i)`` (N, d): the label part of the logistic gradient.

    >>> import numpy as np
    >>> residual_offset(np.ones((1, 2, 1)), np.array([[1.0, 0.0]]), np.full((1, 2), 0.5)).tolist()
    [[0.5]]
    """
    return np.matmul(X.transpose(0, 2, 1), (y * row_w)[..., None])[..., 0]


def binary_local_gd(X, c, row_w, offset, l2, W, x, lrs, prox=0.0, G0=None, Ws=None,
                    Gs=None, block_bytes=BLOCK_BYTES, clients=None):
    """``len(lrs)`` full-batch gradient steps ``w_i <- w_i - lr_k (g_i(w_i) + prox (w_i - x))``
    for every client, in place on ``W`` (N, d); returns ``W``.

    Clients are processed in blocks whose rows of ``X`` take about ``block_bytes`` (so that a
    block stays in cache for all the steps); every client's arithmetic is that of
    :func:`binary_grads` and of the unblocked step, so the result does not depend on the block
    size. ``G0`` (N, d), if given, is the k = 0 gradient (the full gradient at ``x``).
    ``Ws``, ``Gs`` (len(lrs), N, d), if given, receive the iterate and the gradient of every step.
    ``clients`` (indices), if given, selects the clients to train: ``W``, ``G0``, ``Ws``, ``Gs``
    then have one row per selected client, and each block gathers its rows of ``X`` while it
    is read anyway (participants-only rounds read only the participants' data, once).

    >>> import numpy as np
    >>> X, row_w = np.ones((2, 2, 1)), np.full((2, 2), 0.5)
    >>> c = residual_offset(X, np.array([[1.0, 1.0], [0.0, 0.0]]), row_w)
    >>> W = binary_local_gd(X, c, row_w, None, 0.0, np.zeros((2, 1)), np.zeros(1), [1.0])
    >>> W.ravel().tolist()   # gradient sigmoid(0) - y = -0.5 and +0.5
    [0.5, -0.5]
    """
    N, n, d = X.shape
    N = N if clients is None else len(clients)
    B = int(max(1, min(N, block_bytes // max(1, n * d * X.itemsize))))
    work = _Work(B, n, d)
    lrs = [float(lr) for lr in lrs]
    with np.errstate(over="ignore"):
        _blocks(X, c, row_w, offset, l2, W, x, lrs, prox, G0, Ws, Gs, B, work, clients)
    return W


def _blocks(X, c, row_w, offset, l2, W, x, lrs, prox, G0, Ws, Gs, B, work, clients=None):
    N = W.shape[0]
    for lo in range(0, N, B):  # blocks of clients (not single clients): cache blocking
        hi = min(N, lo + B)
        rows = slice(lo, hi) if clients is None else clients[lo:hi]
        ob = None if offset is None else offset[rows]
        args = work.block(X[rows], c[rows], row_w[rows], ob, l2, hi - lo)
        Xb, Xt, cb, rb, ob, l2, V, Z, Z3, G, G3, T = args
        V3 = V[..., None]
        np.negative(W[lo:hi], V)  # V = -W: the steps below are those on W, negated
        for k, lr in enumerate(lrs):
            if k == 0 and G0 is not None:
                Gk = G0[lo:hi]
            else:  # _grads_neg, inlined
                np.matmul(Xb, V3, Z3)
                if ob is not None:
                    np.subtract(Z, ob, Z)
                np.exp(Z, Z)
                np.add(Z, 1.0, Z)
                np.divide(rb, Z, Z)
                np.matmul(Xt, Z3, G3)
                np.subtract(G, cb, G)
                np.multiply(V, l2, T)
                Gk = np.subtract(G, T, G)
            if Gs is not None:
                Gs[k, lo:hi] = Gk
            if prox == 0.0:
                np.multiply(Gk, lr, T)
            else:  # lr * (G + prox * (W - x)), W - x = -(V + x)
                np.add(V, x, T)
                np.multiply(T, prox, T)
                np.subtract(Gk, T, T)
                np.multiply(T, lr, T)
            np.add(V, T, V)  # W <- W - lr * step
            if Ws is not None:
                np.negative(V, Ws[k, lo:hi])
        np.negative(V, W[lo:hi])


def softplus(z: np.ndarray) -> np.ndarray:
    """log(1 + e^z) = max(z, 0) + log1p(exp(-|z|)): the formula of ``np.logaddexp(0, z)`` with
    vectorised exp / log1p (several times faster; it agrees to a few ulps).

    >>> import numpy as np
    >>> softplus(np.array([-800.0, 0.0, 800.0])).tolist() == [0.0, float(np.log(2.0)), 800.0]
    True
    """
    z = np.asarray(z, dtype=float)
    a = np.abs(z)
    np.negative(a, a)
    np.exp(a, a)
    np.log1p(a, a)
    return np.add(a, np.maximum(z, 0.0), a)


def softmax(Z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis.

    >>> import numpy as np
    >>> softmax(np.zeros((1, 4))).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """
    E = np.exp(Z - Z.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def binary_hessians(X: np.ndarray, c: np.ndarray) -> np.ndarray:
    """X_i^T diag(c_i) X_i for every client: X (N, k, f), c (N, k) -> (N, f, f).

    >>> import numpy as np
    >>> binary_hessians(np.ones((1, 3, 2)), np.full((1, 3), 0.5))[0].tolist()
    [[1.5, 1.5], [1.5, 1.5]]
    """
    return np.matmul((X * c[..., None]).transpose(0, 2, 1), X)


def multinomial_hessians(X: np.ndarray, P: np.ndarray, row_w: np.ndarray) -> np.ndarray:
    """Hessians of the row-weighted softmax cross-entropy w.r.t. Theta (f, C), flattened.

    H = sum_k w_k (diag(p_k) - p_k p_k^T) (x) x_k x_k^T, with the parameter index (feature, class)
    in row-major order. X (N, k, f), P (N, k, C), row_w (N, k) -> (N, f*C, f*C).

    >>> import numpy as np
    >>> H = multinomial_hessians(np.ones((1, 1, 1)), np.array([[[0.5, 0.5]]]), np.ones((1, 1)))
    >>> H[0].tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    N, k, f = X.shape
    C = P.shape[2]
    H = np.zeros((N, f, C, f, C))
    step = max(1, _CHUNK // max(1, N * f * C))
    for s in range(0, k, step):
        live = np.flatnonzero((row_w[:, s:s + step] != 0).any(axis=1))  # skip padding-only blocks
        if live.size == 0:
            continue
        Xs, Ps, ws = X[live, s:s + step], P[live, s:s + step], row_w[live, s:s + step]
        n, kk = live.size, Xs.shape[1]
        Z = (Xs[..., :, None] * Ps[..., None, :]).reshape(n, kk, f * C)  # x_k (x) p_k
        Zw = Z * ws[..., None]
        H[live] -= np.matmul(Zw.transpose(0, 2, 1), Z).reshape(n, f, C, f, C)
        D = np.matmul(Zw.transpose(0, 2, 1), Xs).reshape(n, f, C, f)  # sum w p_c x x^T
        for c in range(C):
            H[live, :, c, :, c] += D[:, :, c, :]
    return H.reshape(N, f * C, f * C)


def separable_clients(X: np.ndarray, y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Indices of clients whose binary data are (quasi-)separable: there is v != 0 with
    (2y_j - 1) x_j^T v >= 0 for all rows and > 0 for some row. Then the unregularised BCE
    decreases forever along v (an offset does not change this) and has no finite minimiser.

    One small linear program per client (HiGHS): maximise sum_j s_j subject to
    0 <= s_j <= (2y_j - 1) x_j^T v, s_j <= 1; the optimum is 0 iff the client is not separable.
    """
    if X.shape[2] == 1:  # one parameter: separable iff all signed rows share one sign
        a = np.where(mask, (2.0 * y - 1.0) * X[:, :, 0], 0.0)
        pos, neg = (a > 0).any(axis=1), (a < 0).any(axis=1)
        return np.flatnonzero(pos ^ neg)
    from scipy import sparse
    from scipy.optimize import linprog

    out = []
    for i in range(X.shape[0]):  # construction-time check, only when l2 == 0
        rows = mask[i]
        A = (2.0 * y[i, rows] - 1.0)[:, None] * X[i, rows]
        n, f = A.shape
        A_ub = sparse.hstack([sparse.csr_matrix(-A), sparse.identity(n, format="csr")]).tocsr()
        res = linprog(np.r_[np.zeros(f), -np.ones(n)], A_ub=A_ub, b_ub=np.zeros(n),
                      bounds=[(None, None)] * f + [(0.0, 1.0)] * n, method="highs")
        if res.status == 0 and res.fun < -0.5:
            out.append(i)
    return np.array(out, dtype=int)
