"""Ways to split a pooled data set across clients (each returns one index array per client).

* :func:`partition_iid` -- uniform random split, equal or log-normal sizes;
* :func:`partition_shards` -- McMahan et al.: sort by label, cut into ``shards_per_client * N``
  shards, give each client ``shards_per_client`` random shards;
* :func:`partition_dirichlet` -- label skew, the FedAU recipe (spec seeds-002-003 §5.1.4):
  client class mixes kappa_n ~ Dir(alpha 1_C), each class's samples split among the clients in
  proportion kappa_{n,c} / sum_m kappa_{m,c} by cumulative rounding;
* :func:`lognormal_sizes` -- client sizes ~ LogNormal(0, sigma), renormalised to the total
  (the BC recipe of spec seeds-002-003 §5.2.4).

Example
-------
>>> import numpy as np
>>> from toys.problems.partitions import partition_shards
>>> y = np.repeat(np.arange(5), 20)
>>> parts = partition_shards(y, n_clients=5, rng=np.random.default_rng(0))
>>> [len(np.unique(y[ix])) <= 2 for ix in parts] == [True] * 5
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_float, check_int

__all__ = [
    "class_histograms",
    "lognormal_sizes",
    "partition_dirichlet",
    "partition_iid",
    "partition_shards",
]


def lognormal_sizes(n_total: int, n_clients: int, sigma: float, rng: np.random.Generator,
                    min_size: int = 1) -> np.ndarray:
    """Client sizes summing to ``n_total``: proportional to LogNormal(0, sigma) draws (all equal
    up to one when sigma = 0), each at least ``min_size`` (largest-remainder rounding).

    >>> import numpy as np
    >>> s = lognormal_sizes(100, 4, 1.0, np.random.default_rng(0))
    >>> int(s.sum()), bool(s.min() >= 1)
    (100, True)
    """
    N = check_int("n_clients", n_clients, lo=1)
    n = check_int("n_total", n_total, lo=0)
    sigma = check_float("size_sigma", sigma, lo=0.0)
    m = check_int("min_size", min_size, lo=0)
    if n < N * m:
        raise DomainError("n_clients", N, f"integer <= {n // max(m, 1)} for {n} samples "
                                          f"(each client needs {m})")
    w = np.exp(sigma * rng.standard_normal(N)) if sigma > 0 else np.ones(N)
    share = (n - N * m) * w / w.sum()
    sizes = np.floor(share).astype(int)
    rest = (n - N * m) - sizes.sum()
    sizes[np.argsort(-(share - sizes), kind="stable")[:rest]] += 1
    return sizes + m


def partition_iid(n: int, n_clients: int, rng: np.random.Generator,
                  size_sigma: float = 0.0) -> list[np.ndarray]:
    """A uniformly random split of ``n`` samples (sizes from :func:`lognormal_sizes`).

    >>> import numpy as np
    >>> [len(ix) for ix in partition_iid(10, 3, np.random.default_rng(0))]
    [4, 3, 3]
    """
    sizes = lognormal_sizes(n, n_clients, size_sigma, rng)
    perm = rng.permutation(n)
    return np.split(perm, np.cumsum(sizes)[:-1])


def partition_shards(y, n_clients: int, rng: np.random.Generator,
                     shards_per_client: int = 2) -> list[np.ndarray]:
    """McMahan et al.'s pathological non-iid split (random tie-break inside each label).

    >>> import numpy as np
    >>> parts = partition_shards(np.arange(12) % 3, 3, np.random.default_rng(1))
    >>> sorted(len(ix) for ix in parts)
    [4, 4, 4]
    """
    y = np.asarray(y)
    N = check_int("n_clients", n_clients, lo=1)
    k = check_int("shards_per_client", shards_per_client, lo=1)
    if len(y) < N * k:
        raise DomainError("n_clients", N, f"integer <= {len(y) // k} ({len(y)} samples cut into "
                                          f"{k} shards per client)")
    perm = rng.permutation(len(y))
    order = perm[np.argsort(y[perm], kind="stable")]
    shards = np.array_split(order, N * k)
    pick = rng.permutation(N * k).reshape(N, k)
    return [np.sort(np.concatenate([shards[s] for s in row])) for row in pick]


def partition_dirichlet(y, n_clients: int, alpha: float, rng: np.random.Generator,
                        min_size: int = 1, max_tries: int = 100) -> list[np.ndarray]:
    """Label-skewed split: client class mixes kappa_n ~ Dir(alpha 1_C); each class's samples
    (in a random order) are cut among the clients in proportion kappa_{n,c} / sum_m kappa_{m,c}
    by cumulative rounding (FedAU, spec seeds-002-003 §5.1.4). Sizes are random; draws in which
    a client gets fewer than ``min_size`` samples are repeated (at most ``max_tries`` times).

    >>> import numpy as np
    >>> y = np.repeat(np.arange(4), 50)
    >>> parts = partition_dirichlet(y, 5, alpha=0.5, rng=np.random.default_rng(0))
    >>> sum(len(ix) for ix in parts), min(len(ix) for ix in parts) >= 1
    (200, True)
    """
    y = np.asarray(y)
    N = check_int("n_clients", n_clients, lo=1)
    a = check_float("alpha", alpha, lo=0.0, lo_open=True)
    m = check_int("min_size", min_size, lo=0)
    classes = np.unique(y)
    by_class = [np.flatnonzero(y == c) for c in classes]
    for _ in range(check_int("max_tries", max_tries, lo=1)):
        kappa = rng.dirichlet(np.full(len(classes), a), size=N)  # (N, C)
        parts: list[list[np.ndarray]] = [[] for _ in range(N)]
        for c, idx in enumerate(by_class):
            idx = idx[rng.permutation(len(idx))]
            share = kappa[:, c] / kappa[:, c].sum()
            cuts = np.round(np.cumsum(share) * len(idx)).astype(int)
            cuts[-1] = len(idx)
            for i, chunk in enumerate(np.split(idx, cuts[:-1])):
                parts[i].append(chunk)
        out = [np.sort(np.concatenate(p)) for p in parts]
        if min(len(ix) for ix in out) >= m:
            return out
    raise DomainError("alpha", alpha, f"a concentration large enough that every one of the {N} "
                                      f"clients gets >= {m} samples", f"{max_tries} draws failed")


def class_histograms(y, parts, n_classes: int | None = None) -> np.ndarray:
    """Normalised label histogram of every client, (N, C) (the kappa-hat of FedAU's recipe).

    >>> import numpy as np
    >>> class_histograms(np.array([0, 0, 1, 1]), [np.array([0, 1, 2]), np.array([3])]).tolist()
    [[0.6666666666666666, 0.3333333333333333], [0.0, 1.0]]
    """
    y = np.asarray(y).astype(int)
    C = int(y.max()) + 1 if n_classes is None else int(n_classes)
    H = np.stack([np.bincount(y[ix], minlength=C)[:C] for ix in parts]).astype(float)
    return H / np.maximum(H.sum(axis=1, keepdims=True), 1.0)
