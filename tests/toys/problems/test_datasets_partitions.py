"""from_dataset with the skewed partitions: Dirichlet label skew with log-normal sizes, and
exactly k classes per client ("pathological")."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, UnknownNameError


def _labels(prob, i):
    return prob.y[i][prob.mask[i]]


def test_pathological_exact_classes_per_client():
    prob = toys.from_dataset("digits", partition="pathological", n_clients=8, seed=0,
                             classes_per_client=3, test_fraction=0.2)
    assert prob.n_clients == 8
    assert [len(np.unique(_labels(prob, i))) for i in range(8)] == [3] * 8
    # 8 clients x 3 slots cover all 10 classes here; every training row is used once
    assert int(prob.counts.sum()) == 1797 - round(0.2 * 1797)
    assert prob.options["classes_per_client"] == 3
    with pytest.raises(DomainError, match="k"):
        toys.from_dataset("digits", partition="pathological", n_clients=4,
                          classes_per_client=11)


def test_pathological_leaves_out_undrawn_classes():
    prob = toys.from_dataset("digits", partition="pathological", n_clients=2, seed=1,
                             classes_per_client=2)
    seen = np.unique(np.concatenate([_labels(prob, i) for i in range(2)]))
    assert len(seen) == 4  # N k = 4 < C = 10: six classes are held by nobody
    assert int(prob.counts.sum()) == int(np.isin(toys.load_bundled("digits")[1], seen).sum())


def test_dirichlet_lognormal_sizes_and_skew():
    kw = dict(partition="dirichlet_lognormal", n_clients=10, seed=3, alpha=0.1)
    flat = toys.from_dataset("digits", size_sigma=0.0, **kw)
    skew = toys.from_dataset("digits", size_sigma=1.5, **kw)
    assert int(flat.counts.sum()) == int(skew.counts.sum()) == 1797  # every sample used
    assert flat.counts.max() - flat.counts.min() <= 1  # sigma 0: equal sizes
    assert skew.counts.max() > 3 * skew.counts.min()  # log-normal spread
    # alpha = 0.1: most clients are dominated by few classes (global mix is ~uniform)
    top = [np.bincount(_labels(flat, i), minlength=10).max() / flat.counts[i]
           for i in range(10)]
    assert np.median(top) > 0.4
    again = toys.from_dataset("digits", size_sigma=1.5, **kw)
    assert np.array_equal(again.counts, skew.counts)  # same seed, same split


def test_partition_options_through_make():
    prob = toys.make("digits", partition="pathological", classes_per_client=2, n_clients=5)
    assert [len(np.unique(_labels(prob, i))) for i in range(5)] == [2] * 5
    with pytest.raises(UnknownNameError, match="partition"):
        toys.from_dataset("digits", partition="dirichlet-lognormal")
