"""A tiny array-namespace shim so every algorithm piece is written once for numpy and torch.

The pieces in :mod:`toys.local`, :mod:`toys.aggregation`, :mod:`toys.fedau` and :mod:`toys.beta`
take an ``ops`` argument (``NUMPY`` here, or the torch namespace of
:mod:`toys.torch_backend`) and use only arithmetic operators, indexing and the functions below.
Reductions take a positional ``axis``; results stay arrays of the backend (never Python floats),
so a GPU run does not synchronise inside a round.

Example
-------
>>> import numpy as np
>>> from toys._xp import NUMPY as ops
>>> ops.amax(ops.asarray([[1.0, 3.0], [2.0, 0.0]]), 1).tolist()
[3.0, 2.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["NUMPY", "NumpyOps"]


class NumpyOps:
    """The numpy namespace of the shim (float64 by default). Methods mirror numpy functions
    (creation, elementwise, reductions with a positional ``axis``); :class:`TorchOps` in
    :mod:`toys.torch_backend` has the same methods on torch tensors.

    >>> ops = NumpyOps()
    >>> ops.zeros((2,)).dtype, ops.count(ops.asbool([True, False, True]))
    (dtype('float64'), 2)
    """

    name = "numpy"

    def __init__(self, dtype=np.float64):
        self.dtype = np.dtype(dtype)
        self.device = "cpu"

    # creation / conversion
    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=self.dtype if dtype is None else dtype)

    def asbool(self, x):
        return np.asarray(x, dtype=bool)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=self.dtype if dtype is None else dtype)

    def full(self, shape, value, dtype=None):
        return np.full(shape, value, dtype=self.dtype if dtype is None else dtype)

    def zeros_like(self, x):
        return np.zeros_like(x, dtype=self.dtype)

    def as_float(self, b):
        """A bool mask as a float array of the backend dtype (1.0 / 0.0)."""
        return np.asarray(b, dtype=self.dtype)

    def count(self, mask) -> int:
        """Number of True entries, as a Python int."""
        return int(np.count_nonzero(mask))

    def to_numpy(self, x):
        return np.asarray(x)

    def copy(self, x):
        return np.array(x, copy=True)

    def broadcast_rows(self, x, n):
        """``x`` (d,) repeated as a fresh (n, d) array."""
        return np.repeat(np.asarray(x)[None, :], n, axis=0)

    # elementwise
    def where(self, c, a, b):
        return np.where(c, a, b)

    def exp(self, x):
        return np.exp(x)

    def log(self, x):
        return np.log(x)

    def sqrt(self, x):
        return np.sqrt(x)

    def maximum(self, a, b):
        return np.maximum(a, b)

    def minimum(self, a, b):
        return np.minimum(a, b)

    def isfinite(self, x):
        return np.isfinite(x)

    def isnan(self, x):
        return np.isnan(x)

    # reductions (positional axis)
    def sum(self, x, axis=None):
        return np.sum(x, axis=axis)

    def amax(self, x, axis=None):
        return np.max(x, axis=axis)

    def amin(self, x, axis=None):
        return np.min(x, axis=axis)

    def all(self, x):
        return bool(np.all(x))

    def any(self, x):
        return bool(np.any(x))

    def argsort_desc(self, x):
        """Stable argsort of each row in decreasing order (ties keep the lower index first)."""
        return np.argsort(-x, axis=-1, kind="stable")

    def sqnorm_rows(self, X):
        """Row-wise squared Euclidean norms of ``X`` (N, d) -> (N,)."""
        return np.einsum("ij,ij->i", X, X)

    def item(self, x) -> float:
        return float(x)


NUMPY = NumpyOps()
