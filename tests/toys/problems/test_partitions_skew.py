"""Dirichlet label skew with log-normal sizes, and exact-k-classes ("pathological") splits."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boundlab.errors import DomainError
from toys.problems.partitions import (
    class_histograms,
    lognormal_sizes,
    partition_dirichlet_lognormal,
    partition_pathological,
)


def _labels(C=5, per=40):
    return np.repeat(np.arange(C), per)


@settings(max_examples=15, deadline=None)
@given(N=st.integers(1, 12), alpha=st.sampled_from([0.05, 0.5, 5.0]),
       sigma=st.sampled_from([0.0, 1.0]), seed=st.integers(0, 10**6))
def test_dirichlet_lognormal_is_a_partition_with_lognormal_sizes(N, alpha, sigma, seed):
    y = _labels()
    parts = partition_dirichlet_lognormal(y, N, alpha, sigma, np.random.default_rng(seed))
    allix = np.concatenate(parts)
    assert sorted(allix.tolist()) == list(range(len(y)))  # every sample exactly once
    # the sizes are exactly the log-normal draw that starts the same stream
    sizes = lognormal_sizes(len(y), N, sigma, np.random.default_rng(seed))
    assert [len(ix) for ix in parts] == sizes.tolist()


def test_dirichlet_lognormal_skew_follows_alpha():
    y = np.repeat(np.arange(10), 100)
    H_small = class_histograms(y, partition_dirichlet_lognormal(
        y, 20, 0.05, 0.0, np.random.default_rng(0)), 10)
    H_big = class_histograms(y, partition_dirichlet_lognormal(
        y, 20, 100.0, 0.0, np.random.default_rng(0)), 10)
    assert H_small.max(axis=1).mean() > 0.5  # concentrated label mixes
    assert H_big.max(axis=1).mean() < 0.2    # close to the global 1/10 mix


def test_dirichlet_lognormal_same_seed_same_split():
    y = _labels()
    a = partition_dirichlet_lognormal(y, 4, 0.3, 1.0, np.random.default_rng(7))
    b = partition_dirichlet_lognormal(y, 4, 0.3, 1.0, np.random.default_rng(7))
    assert all(np.array_equal(u, v) for u, v in zip(a, b))


@settings(max_examples=15, deadline=None)
@given(N=st.integers(1, 15), k=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_pathological_exactly_k_classes(N, k, seed):
    y = _labels(C=5, per=40)
    parts = partition_pathological(y, N, k, np.random.default_rng(seed))
    assert [len(np.unique(y[ix])) for ix in parts] == [k] * N
    allix = np.concatenate(parts)
    assert len(np.unique(allix)) == len(allix)  # disjoint
    held = {int(c) for ix in parts for c in np.unique(y[ix])}
    # every class held by some client is given out completely
    assert len(allix) == sum(40 for _ in held)


def test_pathological_spreads_classes_evenly():
    y = _labels(C=10, per=50)
    parts = partition_pathological(y, 20, 2, np.random.default_rng(0))
    holders = np.zeros(10, int)
    for ix in parts:
        holders[np.unique(y[ix])] += 1
    assert holders.tolist() == [4] * 10  # 20 clients x 2 slots over 10 classes


def test_pathological_bad_k():
    with pytest.raises(DomainError, match="k"):
        partition_pathological(_labels(), 3, 6, np.random.default_rng(0))
    with pytest.raises(DomainError, match="k"):  # more holders than samples of a class
        partition_pathological(np.array([0, 1]), 3, 2, np.random.default_rng(0))
