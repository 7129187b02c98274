"""The thin array layer: what the array-API standard (``array_api_compat``) lacks.

Algorithm pieces do their arithmetic with ``xp = array_namespace(x)`` (numpy and torch alike)
and use the few helpers below for what the standard does not have or where numpy's own kernel
is kept for bit-identical results (``einsum`` row norms). Results stay arrays of the backend
(never Python floats) except :func:`count` and :func:`item`, so a GPU run does not synchronise
inside a round unless a piece asks for a count.

Example
-------
>>> import numpy as np
>>> sqnorm_rows(np.array([[3.0, 4.0], [1.0, 0.0]])).tolist()
[25.0, 1.0]
>>> count(np.array([True, False, True]))
2
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np
from array_api_compat import array_namespace as _namespace
from array_api_compat import is_numpy_array

__all__ = ["array_namespace", "argsort_desc", "broadcast_rows", "count", "is_numpy", "item",
           "normalise", "one_blas_thread", "one_cpu_thread", "per_instance", "sqnorm_rows",
           "to_numpy", "wdot", "wmatmul", "wsum"]


_NUMPY = _namespace(np.zeros(0))


def array_namespace(*xs):
    """``array_api_compat.array_namespace``, with a fast path for plain numpy arrays (the
    same namespace, without the general dispatch: it is called several times per local step).

    >>> array_namespace(np.zeros(2)) is array_namespace(np.zeros(2), np.ones((1, 2)))
    True
    """
    for x in xs:
        if type(x) is not np.ndarray:
            return _namespace(*xs)
    return _NUMPY if xs else _namespace(*xs)


def is_numpy(x) -> bool:
    """Whether ``x`` is a numpy array (or numpy scalar).

    >>> is_numpy(np.zeros(1)), is_numpy([0.0])
    (True, False)
    """
    return is_numpy_array(x) or isinstance(x, np.generic)


def sqnorm_rows(X):
    """Squared Euclidean norms along the last axis: ``X`` (N, d) -> (N,), or a stack
    (k, N, d) -> (k, N) (the same per-row sums).

    >>> sqnorm_rows(np.ones((2, 3))).tolist(), sqnorm_rows(np.ones((1, 2, 3))).tolist()
    ([3.0, 3.0], [[3.0, 3.0]])
    """
    if is_numpy_array(X):
        return np.einsum("...j,...j->...", X, X)
    return (X * X).sum(dim=-1)


def count(mask) -> int:
    """Number of True entries, as a Python int.

    >>> count(np.zeros(3, bool))
    0
    """
    if is_numpy_array(mask):
        return int(np.count_nonzero(mask))
    return int(mask.sum().item())


def item(x) -> float:
    """A 0-d array as a Python float.

    >>> item(np.float64(2.5))
    2.5
    """
    return float(x) if is_numpy_array(x) or np.isscalar(x) else float(x.item())


def to_numpy(x) -> np.ndarray:
    """A backend array as a numpy array (copied to the host when needed).

    >>> to_numpy(np.arange(2)).tolist()
    [0, 1]
    """
    if is_numpy_array(x) or np.isscalar(x):
        return np.asarray(x)
    return x.detach().cpu().numpy()


def broadcast_rows(x, n: int):
    """``x`` (..., d) repeated as a fresh (..., n, d) array of the same backend (a leading
    population axis, if any, is kept: :func:`toys.run_many`).

    >>> broadcast_rows(np.array([1.0, 2.0]), 2).tolist()
    [[1.0, 2.0], [1.0, 2.0]]
    >>> broadcast_rows(np.zeros((3, 2)), 4).shape
    (3, 4, 2)
    """
    if is_numpy_array(x):
        return np.repeat(x[..., None, :], n, axis=-2)
    return x.unsqueeze(-2).repeat(*([1] * (x.ndim - 1)), n, 1)


def wsum(a, X):
    """sum_n a_n X_n over the client axis: ``a`` (..., N), ``X`` (..., N, d) -> (..., d).

    Every instance of a population gets the bits of its own unbatched product: numpy's
    stacked ``matmul`` runs the (1, N) x (N, d) product of ``a @ X`` slice by slice; on torch
    (whose batched and single products may sum in other orders) it is the elementwise product
    summed over the clients, whose order does not depend on the batch (tested).

    >>> wsum(np.array([0.5, 0.25]), np.eye(2)).tolist()
    [0.5, 0.25]
    >>> wsum(np.array([[1.0, 0.0], [0.0, 2.0]]), np.ones((2, 2, 3))).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    if is_numpy_array(X):
        if a.ndim == 1:
            return a @ X
        return np.matmul(a[..., None, :], X)[..., 0, :]
    return (a[..., :, None] * X).sum(dim=-2)


def wdot(a, v):
    """sum_n a_n v_n over the last axis: ``a`` (..., N) or (N,), ``v`` (..., N) -> (...).

    The bits of ``a @ v`` per instance (numpy: a (1, N) x (N, 1) product per slice; torch: the
    elementwise product summed, as :func:`wsum`).

    >>> float(wdot(np.array([0.5, 0.5]), np.array([1.0, 3.0])))
    2.0
    >>> wdot(np.array([0.5, 0.5]), np.array([[1.0, 3.0], [0.0, 2.0]])).tolist()
    [2.0, 1.0]
    """
    if is_numpy_array(v):
        if a.ndim == 1 and v.ndim == 1:
            return a @ v
        return np.matmul(v[..., None, :], a[..., :, None])[..., 0, 0]
    return (a * v).sum(dim=-1)


_WMATMUL_ELEMENTS = 1 << 24  # largest torch product stack (..., rows, N, d) of one block


def wmatmul(P, X):
    """sum_n P_in X_n for every row i: ``P`` (..., M, N), ``X`` (..., N, d) -> (..., M, d)
    (leading axes broadcast: a population's (B, N, N) and (B, N, d), or one (N, N) for all).

    Every instance gets the bits of its own unbatched product: numpy's ``matmul`` runs the
    2-d product slice by slice; on torch (whose batched and single products may sum in other
    orders) it is the elementwise product summed over n, as :func:`wsum`, in blocks of rows
    of at most ``2**24`` elements (a block's sums do not depend on the others).

    >>> wmatmul(np.array([[0.0, 1.0], [0.5, 0.5]]), np.array([[2.0], [4.0]])).tolist()
    [[4.0], [3.0]]
    >>> wmatmul(np.eye(2), np.ones((3, 2, 1))).shape
    (3, 2, 1)
    """
    if is_numpy_array(X):
        return np.matmul(P, X)
    M = P.shape[-2]
    lead = 1
    for n in (X.shape[:-2] if X.ndim >= P.ndim else P.shape[:-2]):
        lead *= int(n)
    rows = max(1, _WMATMUL_ELEMENTS // max(1, lead * P.shape[-1] * X.shape[-1]))
    Xb = X[..., None, :, :]
    parts = [(P[..., i:i + rows, :, None] * Xb).sum(dim=-2) for i in range(0, M, rows)]
    return parts[0] if len(parts) == 1 else array_namespace(X).concat(parts, axis=-2)


def per_instance(v, like):
    """A per-instance value ``v`` (a scalar, or an array of the population's shape (B,))
    shaped to broadcast against ``like`` (B, ...): trailing axes of length 1 added.

    >>> per_instance(np.array([1.0, 2.0]), np.zeros((2, 3, 4))).shape
    (2, 1, 1)
    >>> per_instance(0.5, np.zeros((2, 3)))
    0.5
    """
    nd = getattr(v, "ndim", 0)
    if nd == 0:
        return v
    return v.reshape(tuple(v.shape) + (1,) * (like.ndim - nd))


def argsort_desc(x):
    """Stable argsort in decreasing order (ties keep the lower index first).

    >>> argsort_desc(np.array([1.0, 3.0, 3.0])).tolist()
    [1, 2, 0]
    """
    if is_numpy_array(x):
        return np.argsort(-x, axis=-1, kind="stable")
    return array_namespace(x).argsort(x, axis=-1, descending=True, stable=True)


def normalise(a):
    """``a / sum(a)`` along the last axis (each instance of a population on its own), or
    zeros when the sum is not positive.

    >>> normalise(np.array([1.0, 3.0])).tolist(), normalise(np.zeros(2)).tolist()
    ([0.25, 0.75], [0.0, 0.0])
    >>> normalise(np.array([[1.0, 1.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.5], [0.0, 0.0]]
    """
    xp = array_namespace(a)
    s = xp.sum(a, axis=-1, keepdims=True)
    return xp.where(s > 0, a / xp.where(s > 0, s, 1.0), 0.0 * a)


_BLAS = []


def one_blas_thread():
    """A context manager limiting the BLAS library to one thread (threadpoolctl, with the
    library lookup done once per process: entering costs microseconds). Tall, thin and small
    batched products lose to threading, badly so on a busy machine.

    >>> with one_blas_thread():
    ...     pass
    """
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


@contextlib.contextmanager
def one_cpu_thread():
    """:func:`one_blas_thread` and, when torch is loaded, one torch intra-op thread (its
    count restored after): the papers' small CNN products lose to torch's thread pool as the
    BLAS ones do (002:cnn quick on 2 cores: 63.7 s CPU / 52.5 s wall with two threads, 18.8 /
    18.7 with one).

    >>> with one_cpu_thread():
    ...     pass
    """
    torch = sys.modules.get("torch")
    n = torch.get_num_threads() if torch is not None else 1
    with one_blas_thread():
        if n != 1:
            torch.set_num_threads(1)
        try:
            yield
        finally:
            if n != 1:
                torch.set_num_threads(n)
