"""Every client's binary logistic loss at many shared points in one pass over the data: the
kernel of the engine's shadow / virtual-average measurements (``Logistic.losses_at``).

For labels y in {0, 1} the loss of a row is ``BCE(z, y) = softplus(s z)``, s = 1 - 2y, and
``softplus(t) = max(t, 0) + log(1 + e^{-|t|})``. A client's mean of the last term over its
rows is the log of the product of the factors ``1 + e^{-|t_k|}`` in [1, 2], divided by n_i:
one logarithm per client and point instead of one ``log1p`` per row (the costliest operation
of the evaluation). The product is formed by halving (exact powers of two stay exact), over
groups of at most :data:`GROUP_ROWS` rows so that it stays below 2^512.

Accuracy (tested against 50-digit arithmetic): the rounding of the product adds an absolute
error of about eps = 2.2e-16 (times a small constant) to a client's mean loss, where the
row-wise ``log1p`` evaluation has a relative one; for losses above ~1e-2 both are within
1e-14 relative, for a client whose loss is itself ~1e-14 the product form is only accurate to
about eps absolute.

Bits: the losses at a point do not depend on the other points evaluated with it nor on the
chunk size (a single point is evaluated as a pair, because a matrix-vector product sums in
another order than the matrix product): the engine may batch points across rounds.

Example
-------
>>> import numpy as np
>>> X = np.ones((2, 2, 1)); y = np.array([[1.0, 0.0], [0.0, 0.0]])
>>> L = binary_losses_at(X, 1.0 - 2.0 * y, np.ones((2, 2), bool), None, 0.0, np.zeros((3, 1)))
>>> L.shape, bool(np.allclose(L, np.log(2.0)))
((3, 2), True)
"""

from __future__ import annotations

import numpy as np

from .._array import one_blas_thread

__all__ = ["GROUP_ROWS", "LOSSES_CHUNK_BYTES", "binary_losses_at"]

LOSSES_CHUNK_BYTES = 1 << 19  # logits of a chunk of clients (two such arrays stay in L2)
GROUP_ROWS = 512  # rows per product of factors in [1, 2]: the product stays below 2^512


def binary_losses_at(X, sign, mask, offset, l2, P, chunk_bytes=LOSSES_CHUNK_BYTES):
    """Every client's mean ridge-logistic loss at each of the points ``P`` (m, f), shared by
    all clients: an (m, N) array, row j the losses at ``P[j]``.

    ``X`` (N, n, f) with zero padding rows, ``sign`` (N, n) = 1 - 2y (labels in {0, 1}),
    ``mask`` (N, n) the real rows (each client's rows weigh 1 / n_i: ``Logistic.row_w``),
    ``offset`` (N, n) or None (zero on padding rows), ``l2`` the ridge weight.
    """
    N, n, f = X.shape
    P = np.asarray(P, dtype=float)
    m = P.shape[0]
    if m == 1:  # as a pair: the bits of the point evaluated with others
        return binary_losses_at(X, sign, mask, offset, l2, np.concatenate([P, P]),
                                chunk_bytes)[:1]
    counts = mask.sum(axis=1)
    groups = [(g, min(n, g + GROUP_ROWS)) for g in range(0, n, GROUP_ROWS)]
    pads = np.stack([(g1 - g0) - mask[:, g0:g1].sum(axis=1) for g0, g1 in groups], axis=1)
    PT = np.ascontiguousarray(P.T)
    out = np.empty((m, N))
    c = int(max(1, min(N, chunk_bytes // max(1, n * m * 8))))
    work = (np.empty((c * n, m)), np.empty((c * n, m)))
    # one BLAS thread: these tall, thin products lose to threading
    with np.errstate(over="ignore", under="ignore"), one_blas_thread():
        for lo in range(0, N, c):  # chunks of clients (the logits stay in cache)
            hi = min(N, lo + c)
            sl = slice(lo, hi)
            total = _chunk(X[sl], sign[sl], None if offset is None else offset[sl], PT,
                           groups, pads[sl], work)
            out[:, sl] = (total / counts[sl, None]).T
    out += (0.5 * l2 * np.einsum("ij,ij->i", P, P))[:, None]
    return out


def _chunk(X, sign, offset, PT, groups, pads, work):
    """The summed row losses (b, m) of a chunk of b clients (see :func:`binary_losses_at`)."""
    b, n, f = X.shape
    R, m = b * n, PT.shape[1]
    t, a = work[0][:R], work[1][:R]
    np.matmul(X.reshape(R, f), PT, out=t)  # the logits: their bits do not depend on m >= 2
    if offset is not None:
        np.add(t, offset.reshape(R, 1), t)
    np.multiply(t, sign.reshape(R, 1), t)  # t = s z (exact)
    np.maximum(t, 0.0, out=a)
    total = a.reshape(b, n, m).sum(axis=1)  # sum of max(t, 0) per client and point
    np.abs(t, t)
    np.negative(t, t)
    np.exp(t, t)
    np.add(t, 1.0, t)  # the factors 1 + e^{-|t|} in [1, 2]; padding rows exactly 2
    t3, a3 = t.reshape(b, n, m), a.reshape(b, n, m)
    for gi, (g0, g1) in enumerate(groups):
        prod = _product(t3[:, g0:g1], a3[:, g0:g1])
        total += np.log(np.ldexp(prod, -pads[:, gi, None]))  # the padding's 2^pad, exactly
    return total


def _product(V, S):
    """The product over axis 1 of ``V`` (b, k, m) by halving, through the scratch ``S`` of the
    same shape (two arrays: no overlapping operands, which numpy would copy first)."""
    k = V.shape[1]
    while k > 1:
        h = k // 2
        np.multiply(V[:, :h], V[:, k - h:k], out=S[:, :h])
        if k - h > h:  # odd k: the middle factor stays
            S[:, h] = V[:, h]
        V, S, k = S, V, k - h
    return V[:, 0]
