"""Numerical kernels of the logistic problems: stable sigmoid / softmax, batched Hessians, and
the separability test that decides whether an unregularised logistic loss has a finite minimiser.

Example
-------
>>> import numpy as np
>>> from toys._logistic_math import sigmoid, separable_clients
>>> float(sigmoid(np.array([0.0]))[0])
0.5
>>> X = np.array([[[1.0], [-1.0]], [[1.0], [1.0]]]); y = np.array([[1.0, 0.0], [1.0, 0.0]])
>>> separable_clients(X, y, np.ones((2, 2), bool)).tolist()   # client 0: sign(x) predicts y
[0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["binary_hessians", "multinomial_hessians", "separable_clients", "sigmoid", "softmax"]

_CHUNK = 4_000_000  # entries of the largest temporary in the Hessian assembly


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function.

    >>> import numpy as np
    >>> sigmoid(np.array([-800.0, 800.0])).tolist()
    [0.0, 1.0]
    """
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


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
