"""The numpy backend of :func:`toys.run` (float64, CPU): the problem itself is the oracle.

Example
-------
>>> import toys
>>> ops, oracle, rng = setup(toys.quadratic(2, 2, seed=0), None, None, 0)
>>> ops.full((2,), 1.0).dtype.name, oracle.n_clients
('float64', 2)
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

__all__ = ["NumpyOps", "setup"]


class NumpyOps:
    """Array creation and conversion on numpy float64 arrays (the math is the array-API
    namespace's: numpy's own functions).

    >>> NumpyOps().asarray([1, 2]).dtype.name
    'float64'
    """

    name = "numpy"
    device = "cpu"
    dtype = np.dtype(np.float64)

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=self.dtype if dtype is None else dtype)

    def asbool(self, x):
        return np.asarray(x, dtype=bool)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=self.dtype if dtype is None else dtype)

    def full(self, shape, value, dtype=None):
        return np.full(shape, value, dtype=self.dtype if dtype is None else dtype)

    def to_numpy(self, x):
        return np.asarray(x)


def setup(problem, device, dtype, sample_seed):
    """``(ops, oracle, rng)``: float64 on the CPU; ``sample_seed`` is the sampling
    ``SeedSequence`` (the numpy Generator's seed)."""
    if dtype not in (None, "float64", np.float64):
        raise DomainError("dtype", dtype, "float64 for the numpy backend "
                                          "(use backend='torch' for float32)")
    if device not in (None, "cpu"):
        raise DomainError("device", device, "None or 'cpu' for the numpy backend")
    return NumpyOps(), problem, np.random.default_rng(sample_seed)
