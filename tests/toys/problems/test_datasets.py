"""Bundled data, partitions, and the IDX / LEAF loaders on fixture files written here."""

from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError
from toys.problems.partitions import (
    class_histograms,
    lognormal_sizes,
    partition_dirichlet,
    partition_iid,
    partition_shards,
)


def _write_idx(path, arr, code=0x08, compress=False):
    dt = {0x08: ">u1", 0x0B: ">i2", 0x0D: ">f4", 0x0E: ">f8"}[code]
    raw = bytes([0, 0, code, arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    raw += np.asarray(arr, dtype=dt).tobytes()
    path.write_bytes(gzip.compress(raw) if compress else raw)
    return path


# --------------------------------------------------------------------------- partitions
def test_partitions_cover_every_sample_once():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 5, size=500)
    for parts in (partition_iid(500, 7, rng), partition_iid(500, 7, rng, size_sigma=1.0),
                  partition_shards(y, 7, rng), partition_dirichlet(y, 7, 0.3, rng)):
        allidx = np.concatenate(parts)
        assert len(parts) == 7 and np.array_equal(np.sort(allidx), np.arange(500))
        assert min(len(p) for p in parts) >= 1


def test_shards_give_at_most_two_labels_and_equal_sizes():
    y = np.repeat(np.arange(10), 60)
    parts = partition_shards(y, 10, np.random.default_rng(3), shards_per_client=2)
    assert all(len(np.unique(y[p])) <= 2 for p in parts)
    assert {len(p) for p in parts} == {60}


def test_dirichlet_skew_grows_as_alpha_shrinks():
    y = np.repeat(np.arange(10), 200)
    rng = np.random.default_rng(0)

    def skew(alpha):
        H = class_histograms(y, partition_dirichlet(y, 20, alpha, rng), 10)
        return H.max(axis=1).mean()

    assert skew(0.05) > skew(1.0) > skew(100.0)
    assert skew(100.0) < 0.2


def test_lognormal_sizes():
    rng = np.random.default_rng(0)
    s = lognormal_sizes(1000, 10, 0.0, rng)
    assert s.tolist() == [100] * 10
    s = lognormal_sizes(1000, 10, 1.5, rng, min_size=5)
    assert s.sum() == 1000 and s.min() >= 5 and s.max() > 2 * s.min()
    with pytest.raises(DomainError, match="n_clients"):
        lognormal_sizes(5, 10, 0.0, rng)


# --------------------------------------------------------------------------- IDX
@pytest.mark.parametrize("compress", [False, True])
def test_load_idx_round_trip(tmp_path, compress):
    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    p = _write_idx(tmp_path / ("a.idx" + (".gz" if compress else "")), arr, compress=compress)
    out = toys.load_idx(p)
    assert out.shape == (2, 3, 4) and np.array_equal(out, arr)
    f = np.array([[1.5, -2.0]], dtype=float)
    assert np.array_equal(toys.load_idx(_write_idx(tmp_path / "f.idx", f, code=0x0D)), f)
    s = np.array([-300, 5], dtype=np.int16)
    assert toys.load_idx(_write_idx(tmp_path / "s.idx", s, code=0x0B)).tolist() == [-300, 5]


def test_load_idx_rejects_malformed(tmp_path):
    bad = tmp_path / "bad.idx"
    bad.write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x02ab")
    with pytest.raises(DomainError, match="magic"):
        toys.load_idx(bad)
    short = tmp_path / "short.idx"
    short.write_bytes(bytes([0, 0, 8, 1, 0, 0, 0, 5, 1, 2]))
    with pytest.raises(DomainError, match="expected 5 values"):
        toys.load_idx(short)
    with pytest.raises(DomainError, match="readable"):
        toys.load_idx(tmp_path / "missing.idx")


def test_from_dataset_idx(tmp_path):
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 30)
    images = np.clip(rng.normal(60 + 60 * labels[:, None, None], 30, (90, 4, 4)), 0, 255)
    ip = _write_idx(tmp_path / "img-idx3-ubyte.gz", images.astype(np.uint8), compress=True)
    lp = _write_idx(tmp_path / "lab-idx1-ubyte", labels.astype(np.uint8))
    prob = toys.from_dataset("idx", images=ip, labels=lp, partition="iid", n_clients=3,
                             seed=0, l2=0.5)
    assert prob.kind == "multinomial" and prob.n_features == 16 and prob.classes == 3
    assert int(prob.counts.sum()) == 90
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10
    with pytest.raises(MissingParameterError, match="labels"):
        toys.from_dataset("idx", images=ip)


# --------------------------------------------------------------------------- LEAF
def _leaf_doc(users, rng, f=3):
    data = {}
    for u in users:
        n = int(rng.integers(5, 9))
        x = rng.normal(size=(n, f))
        data[u] = {"x": x.tolist(), "y": (x[:, 0] > 0).astype(int).tolist()}
        data[u]["y"][0], data[u]["y"][1] = 0, 1  # both labels present
    return {"users": list(users), "num_samples": [len(data[u]["y"]) for u in users],
            "user_data": data}


def test_load_leaf_file_and_directory(tmp_path):
    rng = np.random.default_rng(0)
    d = tmp_path / "train"
    d.mkdir()
    (d / "part0.json").write_text(json.dumps(_leaf_doc(["u0", "u1"], rng)))
    (d / "part1.json").write_text(json.dumps(_leaf_doc(["u2"], rng)))
    users, Xs, ys = toys.load_leaf(d)
    assert users == ["u0", "u1", "u2"] and all(x.shape[1] == 3 for x in Xs)
    users1, _, _ = toys.load_leaf(d / "part1.json")
    assert users1 == ["u2"]
    prob = toys.from_dataset("leaf", path=d, l2=0.1)
    assert prob.n_clients == 3 and prob.kind == "logistic"
    assert prob.counts.tolist() == [len(y) for y in ys]
    prob2 = toys.from_dataset("leaf", path=d, n_clients=2, l2=0.1)
    assert prob2.n_clients == 2
    prob3 = toys.from_dataset("leaf", path=d, partition="iid", n_clients=2, l2=0.1, seed=1)
    assert int(prob3.counts.sum()) == sum(len(y) for y in ys)


def test_load_leaf_rejects_malformed(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"users": ["a"]}))
    with pytest.raises(DomainError, match="user_data"):
        toys.load_leaf(p)
    p.write_text(json.dumps({"users": ["a"], "num_samples": [3],
                             "user_data": {"a": {"x": [[1.0]], "y": [0]}}}))
    with pytest.raises(DomainError, match="consistent sizes"):
        toys.load_leaf(p)
    with pytest.raises(DomainError, match="existing"):
        toys.load_leaf(tmp_path / "nope")
    with pytest.raises(MissingParameterError, match="path"):
        toys.from_dataset("leaf")


# --------------------------------------------------------------------------- bundled
def test_breast_cancer_partitions_and_standardisation():
    prob = toys.from_dataset("breast_cancer", partition="iid", n_clients=4, seed=0,
                             size_sigma=1.0, test_fraction=0.2, fit_intercept=True)
    assert prob.kind == "logistic" and prob.dim == 31
    assert int(prob.counts.sum()) == 569 - round(0.2 * 569) and prob.test["X"].shape[1] == 31
    pooled = prob.X[prob.mask][:, :30]
    assert np.allclose(pooled.mean(axis=0), 0, atol=1e-10)
    assert np.allclose(pooled.std(axis=0), 1, atol=1e-10)
    assert np.allclose(prob.p, prob.counts / prob.counts.sum())
    acc = prob.accuracy(prob.x_star, prob.test["X"], prob.test["y"])
    assert acc > 0.9  # a standardised ridge logistic model separates this data well
    sh = toys.from_dataset("breast_cancer", partition="shards", n_clients=5, seed=0)
    assert all(len(np.unique(sh.y[i][sh.mask[i]])) <= 2 for i in range(5))
    di = toys.from_dataset("breast_cancer", partition="dirichlet", alpha=0.1, n_clients=5, seed=0)
    assert di.Gamma > prob.Gamma  # label skew makes clients more heterogeneous


def test_digits_is_softmax_with_ten_classes():
    prob = toys.from_dataset("digits", partition="dirichlet", alpha=0.5, n_clients=2, seed=0,
                             max_samples=100, l2=5.0)
    assert prob.kind == "multinomial" and prob.classes == 10 and prob.dim == 640
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10


def test_from_dataset_bad_input():
    with pytest.raises(UnknownNameError):
        toys.from_dataset("mnist")
    with pytest.raises(UnknownNameError):
        toys.from_dataset("breast_cancer", partition="weird")
    with pytest.raises(DomainError, match="size_sigma"):
        toys.from_dataset("breast_cancer", partition="shards", size_sigma=1.0)
    with pytest.raises(DomainError, match="partition"):
        toys.from_dataset("breast_cancer", partition="natural")
    sep = toys.from_dataset("breast_cancer", partition="iid", n_clients=3, l2=0.0)
    with pytest.raises(DomainError, match="l2"):  # breast cancer is separable: no unregularised MLE
        _ = sep.F_star_i
