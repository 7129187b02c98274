"""Ways to split a pooled data set across clients (each returns one index array per client).

* :func:`partition_iid` -- uniform random split, equal or log-normal sizes;
* :func:`partition_shards` -- McMahan et al.: sort by label, cut into ``shards_per_client * N``
  shards, give each client ``shards_per_client`` random shards;
* :func:`partition_dirichlet` -- label skew, the FedAU recipe (spec seeds-002-003 §5.1.4):
  client class mixes kappa_n ~ Dir(alpha 1_C), each class's samples split among the clients in
  proportion kappa_{n,c} / sum_m kappa_{m,c} by cumulative rounding;
* :func:`lognormal_sizes` -- client sizes ~ LogNormal(0, sigma), renormalised to the total
  (the BC recipe of spec seeds-002-003 §5.2.4);
* :func:`partition_dirichlet_lognormal` -- label skew and size skew together: log-normal
  client sizes and a Dirichlet class mix per client (seed 003's imbalanced data, §5.2.4);
* :func:`partition_pathological` -- every client holds exactly ``k`` classes (McMahan et al.'s
  "pathological non-IID"; BM's very-non-IID framework with k = 2).

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
    "partition_dirichlet_lognormal",
    "partition_iid",
    "partition_pathological",
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


def partition_dirichlet_lognormal(y, n_clients: int, alpha: float, size_sigma: float,
                                  rng: np.random.Generator, min_size: int = 1,
                                  sinkhorn_iters: int = 200) -> list[np.ndarray]:
    """Label skew with log-normal sizes: client sizes n_i from :func:`lognormal_sizes`
    (``size_sigma`` = 0: equal), class mixes kappa_i ~ Dir(alpha 1_C) per client; the target
    counts n_i kappa_{i,c} are fitted to the available samples of every class (Sinkhorn
    scaling to the row sums n_i and the class sizes), rounded down, and the remainders are
    given out by largest fractional part. Every client gets exactly n_i samples; every sample
    is used. Seed 003's "a" (class imbalance) is ``alpha = 1 / a``; ``alpha -> inf`` gives
    the global label proportions.

    >>> import numpy as np
    >>> y = np.repeat(np.arange(4), 50)
    >>> parts = partition_dirichlet_lognormal(y, 5, alpha=0.1, size_sigma=1.0,
    ...                                       rng=np.random.default_rng(0))
    >>> sum(len(ix) for ix in parts), len(np.unique(np.concatenate(parts)))
    (200, 200)
    """
    y = np.asarray(y)
    N = check_int("n_clients", n_clients, lo=1)
    a = check_float("alpha", alpha, lo=0.0, lo_open=True)
    it = check_int("sinkhorn_iters", sinkhorn_iters, lo=1)
    classes = np.unique(y)
    by_class = [np.flatnonzero(y == c) for c in classes]
    avail = np.array([len(ix) for ix in by_class], dtype=float)
    sizes = lognormal_sizes(len(y), N, size_sigma, rng, min_size)
    kappa = rng.dirichlet(np.full(len(classes), a), size=N) + 1e-12
    M = kappa * sizes[:, None]
    for _ in range(it):  # Sinkhorn: rows sum to sizes, columns to the class sizes
        M *= (avail / np.maximum(M.sum(axis=0), 1e-300))[None, :]
        M *= (sizes / np.maximum(M.sum(axis=1), 1e-300))[:, None]
    counts = np.floor(M).astype(int)
    frac = M - counts
    left = avail.astype(int) - counts.sum(axis=0)
    need = sizes - counts.sum(axis=1)
    for i in np.argsort(-need, kind="stable"):  # hand out the remainders (not a hot path)
        for c in np.argsort(-frac[i], kind="stable"):
            if need[i] == 0:
                break
            take = min(need[i], left[c])
            counts[i, c] += take
            left[c] -= take
            need[i] -= take
    parts: list[list[np.ndarray]] = [[] for _ in range(N)]
    for c, idx in enumerate(by_class):
        idx = idx[rng.permutation(len(idx))]
        for i, chunk in enumerate(np.split(idx, np.cumsum(counts[:, c])[:-1])):
            parts[i].append(chunk)
    return [np.sort(np.concatenate(p)) for p in parts]


def partition_pathological(y, n_clients: int, k: int,
                           rng: np.random.Generator) -> list[np.ndarray]:
    """Every client holds exactly ``k`` distinct classes: the class slots are consecutive
    runs of k in a repeated random permutation of the classes (so the classes are spread
    evenly over the clients), and each class's samples are split evenly among the clients
    that hold it. Classes no client draws (N k < C) are left out.

    >>> import numpy as np
    >>> y = np.repeat(np.arange(5), 20)
    >>> parts = partition_pathological(y, 4, 2, np.random.default_rng(0))
    >>> [len(np.unique(y[ix])) for ix in parts]
    [2, 2, 2, 2]
    """
    y = np.asarray(y)
    N = check_int("n_clients", n_clients, lo=1)
    classes = np.unique(y)
    C = len(classes)
    k = check_int("k", k, lo=1, hi=C)
    reps = -(-N * k // C)
    slots = np.concatenate([rng.permutation(C) for _ in range(reps)])[:N * k].reshape(N, k)
    bad = np.array([len(np.unique(r)) < k for r in slots])
    while bad.any():  # redraw the rare rows with a repeated class (straddling two permutations)
        slots[bad] = np.stack([rng.permutation(C)[:k] for _ in range(int(bad.sum()))])
        bad = np.array([len(np.unique(r)) < k for r in slots])
    parts: list[list[np.ndarray]] = [[] for _ in range(N)]
    for c in range(C):
        holders = np.flatnonzero((slots == c).any(axis=1))
        if holders.size == 0:
            continue
        idx = np.flatnonzero(y == classes[c])
        if len(idx) < holders.size:
            raise DomainError("k", k, f"a number of classes per client such that class "
                                      f"{classes[c]!r} ({len(idx)} samples) has at most one "
                                      f"holder per sample ({holders.size} holders)")
        idx = idx[rng.permutation(len(idx))]
        for i, chunk in zip(holders, np.array_split(idx, holders.size)):
            parts[i].append(chunk)
    return [np.sort(np.concatenate(p)) for p in parts]
