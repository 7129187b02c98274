"""Bucket-by-bucket pieces of the logistic constants (:func:`toys.constants` on a
:class:`~toys.problems.logistic.Logistic` or a size-bucketed
:class:`~toys.problems.bucketed.Bucketed` problem).

A padded ``Logistic`` problem is one block holding every client; a ``Bucketed`` one is a list of
blocks ``(client positions, Logistic)``. Every per-client quantity is computed block by block
and scattered into an (N, ...) array (a loop over buckets, never over clients, and never the
full padded block); for a ``Logistic`` problem the single block is the whole problem, so the
arithmetic is exactly the one-block computation (bit for bit).

Example
-------
>>> import numpy as np, toys
>>> rng = np.random.default_rng(0)
>>> n = [40, 30, 4, 3]
>>> Xs = [rng.normal(size=(k, 2)) for k in n]
>>> ys = [(rng.random(k) < 0.5).astype(float) for k in n]
>>> pad, bk = toys.logistic(Xs, ys, l2=0.1), toys.logistic(Xs, ys, l2=0.1, max_padding=2.0)
>>> len(blocks(pad)), len(blocks(bk))
(1, 2)
>>> lam_p, lam_b = client_gram_eigs(pad), client_gram_eigs(bk)
>>> bool(np.allclose(lam_p[0], lam_b[0], rtol=1e-12) and np.isclose(lam_p[1], lam_b[1]))
True
"""

from __future__ import annotations

import numpy as np

from ..problems.bucketed import Bucketed
from ..problems.logistic import Logistic

__all__ = ["at_1d", "blocks", "client_gram_eigs", "has_offsets", "is_logistic",
           "row_norm_means", "slopes_1d"]


def is_logistic(problem) -> bool:
    """Whether ``problem`` takes the logistic path (a padded or a size-bucketed one)."""
    return isinstance(problem, (Logistic, Bucketed))


def blocks(prob) -> list:
    """The blocks ``[(positions, Logistic), ...]``: the non-empty buckets of a ``Bucketed``
    problem, ``[(slice(None), prob)]`` for a ``Logistic`` one."""
    if isinstance(prob, Bucketed):
        return [(pos, sub) for pos, sub in prob.parts if len(pos)]
    return [(slice(None), prob)]


def client_gram_eigs(prob):
    """``(lam_i (N,), lam_F)``: the largest eigenvalue of every client's Gram matrix
    X_i^T diag(row_w_i) X_i and of their p-weighted sum (``prob.p``, the global weights)."""
    lam_i = np.empty(prob.n_clients)
    gram_F = 0.0
    for pos, sub in blocks(prob):  # buckets
        gram = np.matmul(sub.X.transpose(0, 2, 1), sub.X * sub.row_w[..., None])
        lam_i[pos] = np.linalg.eigvalsh(gram)[:, -1]
        gram_F = gram_F + np.einsum("n,nij->ij", prob.p[pos], gram)
    return lam_i, np.linalg.eigvalsh(gram_F)[-1]


def row_norm_means(prob) -> np.ndarray:
    """(N,) every client's weighted mean row norm sum_k row_w_ik ||x_ik||."""
    out = np.empty(prob.n_clients)
    for pos, sub in blocks(prob):  # buckets
        out[pos] = np.einsum("nk,nk->n", sub.row_w,
                             np.sqrt(np.einsum("nkf,nkf->nk", sub.X, sub.X)))
    return out


def has_offsets(prob) -> bool:
    """Whether any row has a non-zero offset."""
    return any(np.any(sub.offset) for _, sub in blocks(prob))


def slopes_1d(prob):
    """``(xs, os)``: the non-zero features of the real rows of a one-feature problem and their
    offsets (concatenated over the blocks)."""
    xs, os_ = [], []
    for _, sub in blocks(prob):  # buckets
        x = sub.X[:, :, 0]
        nz = sub.mask & (x != 0)
        xs.append(x[nz])
        os_.append(sub.offset[nz])
    return np.concatenate(xs), np.concatenate(os_)


def at_1d(prob, theta, what: str) -> np.ndarray:
    """F_i'' (``what = "curv"``, with l2) or the data part of F_i' (``"slope"``) of a
    one-parameter binary problem at the points ``theta`` (B, G): every client at the shared row
    (B = 1) or client i at row i (B = N). Returns (N, G)."""
    N = prob.n_clients
    B, G = theta.shape
    out = np.empty((N, G))
    for pos, sub in blocks(prob):  # buckets
        out[pos] = _at_block(sub, theta if B == 1 else theta[pos], what, prob.l2)
    return out


def _at_block(sub, theta, what, l2):
    """:func:`at_1d` on one block (its clients, theta (B, G) with B = 1 or its client count)."""
    from ..problems._logistic_math import sigmoid

    x, off, w, y = sub.X[:, :, 0], sub.offset, sub.row_w, sub.y
    n = x.shape[0]
    B, G = theta.shape
    flat = theta.reshape(-1)
    out = np.empty((n, flat.size))
    step = max(1, int(2e7 // max(1, x.size)))
    for s in range(0, flat.size, step):  # chunks of points (memory)
        t = flat[s:s + step]
        z = x[:, :, None] * t[None, None, :] + off[:, :, None]
        sg = sigmoid(z)
        if what == "curv":
            out[:, s:s + step] = np.einsum("nk,nkg->ng", w * x * x, sg * (1.0 - sg)) + l2
        else:
            out[:, s:s + step] = np.einsum("nk,nkg->ng", w * x, sg - y[:, :, None])
    out = out.reshape(n, B, G)
    return out[:, 0, :] if B == 1 else out[np.arange(n), np.arange(n), :]
