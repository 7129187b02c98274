"""Checkpoints are data bound to the run that made them (issue 20): foreign, edited, forged,
oversized and code-naming files are refused with an IntegrityError naming the file and the
field; the legitimate changes of a state's structure during a run are accepted."""

import io
import json
import tracemalloc
import zipfile

import numpy as np
import pytest

import toys
from boundlab.errors import IntegrityError
from boundlab.integrity import sha256
from toys.engine import checkpoint as ck

KW = dict(rounds=6, seed=1, lr=0.1)


# ------------------------------------------------------------------------------ file surgery
def _members(path):
    """(meta dict, [arrays]) of a checkpoint (read here as a trusted test file)."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["meta"].tobytes())
        arrays = [z[f"a{i}"] for i in range(len(z.files) - 1)]
    return meta, arrays


def _write(path, meta, arrays, reseal=True):
    """Write a checkpoint; ``reseal``: recompute the payload hash as an attacker can (the
    claim stays the one stored in the file)."""
    if reseal:
        meta["seal"]["payload_sha256"] = sha256(ck._payload(meta["tree"], arrays))
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)})
    path.write_bytes(buf.getvalue())
    return path


def _checkpoint(tmp_path, prob, algo="fedavg", name="ck.npz", **kw):
    path = tmp_path / name
    toys.run(prob, algo, checkpoint=path, checkpoint_every=3, **{**KW, **kw})
    return path


def _refused(match, prob, path, algo="fedavg", **kw):
    with pytest.raises(IntegrityError, match=match) as info:
        toys.run(prob, algo, resume=path, **{**KW, **kw})
    assert path.name in str(info.value)
    return info.value


# ------------------------------------------------------------------------------ foreign files
def test_another_instance_with_the_same_name_and_sizes(tmp_path):
    a, b = toys.quadratic(3, 2, seed=0), toys.quadratic(3, 2, seed=1)
    assert (a.name, a.n_clients, a.dim) == (b.name, b.n_clients, b.dim)
    path = _checkpoint(tmp_path, a)
    _refused("does not belong here: problem_data", b, path)


def test_another_participation_x0_or_schedule(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = _checkpoint(tmp_path, prob, participation="bernoulli:p=0.5")
    _refused("participation", prob, path, participation="bernoulli:p=0.6")
    _refused("participation", prob, path, participation="markov:p=0.5")
    _refused("x0", prob, path, participation="bernoulli:p=0.5", x0=np.ones(2))
    _refused("hyper.local_steps", prob, path, participation="bernoulli:p=0.5", local_steps=2)
    # the same process spelled differently is the same run
    tr = toys.run(prob, "fedavg", resume=path, participation=("bernoulli", {"p": 0.5}), **KW)
    full = toys.run(prob, "fedavg", participation="bernoulli:p=0.5", **KW)
    np.testing.assert_array_equal(tr.final_model, full.final_model)


def test_another_participation_matrix(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    M = np.ones((6, 3), bool)
    path = _checkpoint(tmp_path, prob, participation=M)
    M2 = M.copy()
    M2[5, 0] = False  # differs only in a round after the checkpoint
    _refused("participation", prob, path, participation=M2)


# ------------------------------------------------------------------------------ edited files
def test_an_edited_model_array_with_its_json_untouched(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = _checkpoint(tmp_path, prob)
    meta, arrays = _members(path)
    x = meta["tree"]["items"]["x"]["i"]
    arrays[x] = arrays[x] + 1.0
    _write(path, meta, arrays, reseal=False)
    _refused("payload is not valid", prob, path)


def test_a_compressed_or_object_npz_is_refused(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = _checkpoint(tmp_path, prob)
    meta, arrays = _members(path)
    buf = io.BytesIO()
    np.savez_compressed(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                        **{f"a{i}": a for i, a in enumerate(arrays)})
    path.write_bytes(buf.getvalue())
    _refused("stored", prob, path)
    _write(path, meta, [np.array([None, 1], dtype=object)] + arrays[1:], reseal=False)
    _refused("plain bool / integer / float", prob, path)


# ------------------------------------------------------------------------------ forged trees
def _forge(tmp_path, prob, field, node, algo="fedavg", **kw):
    path = _checkpoint(tmp_path, prob, algo, **kw)
    meta, arrays = _members(path)
    meta["tree"]["items"][field] = node
    return _write(path, meta, arrays)


@pytest.mark.parametrize("reseal", [True, False])
def test_a_tree_naming_a_file_writer_writes_nothing(tmp_path, reseal):
    prob = toys.quadratic(3, 2, seed=0)
    marker = tmp_path / "PWNED.pth"
    path = _checkpoint(tmp_path, prob)
    meta, arrays = _members(path)
    arrays.append(np.frombuffer(b"import os\n", np.uint8))
    meta["tree"]["items"]["client"] = {
        "t": "namedtuple", "cls": "toys.engine.checkpoint:atomic_write_bytes",
        "items": [{"t": "str", "v": str(marker)}, {"t": "array", "i": len(arrays) - 1}]}
    _write(path, meta, arrays, reseal=reseal)
    _refused("client" if reseal else "payload", prob, path)
    assert not marker.exists()


def test_records_are_rebuilt_with_the_pieces_own_type(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = _checkpoint(tmp_path, prob, "fedau")
    meta, arrays = _members(path)
    w = meta["tree"]["items"]["weights"]
    assert w["t"] == "record" and w["fields"] == ["M", "Sd", "omega"] and "cls" not in w
    w["fields"] = ["M", "omega", "Sd"]
    _write(path, meta, arrays)
    _refused("weights is not valid: a record of fields", prob, path, "fedau")


@pytest.mark.parametrize("field,node,match", [
    ("round", {"t": "int", "v": "7"}, "round is not valid: an integer in \\[0, 6\\]"),
    ("round", {"t": "float", "v": "3.0"}, "round is not valid: node type int"),
    ("stopped_at", {"t": "str", "v": "3"}, "stopped_at is not valid"),
    ("prev_end", {"t": "tuple", "items": []}, "prev_end is not valid"),
    ("metrics", {"t": "dict", "items": {"m": {"t": "array", "i": 0}}}, "metrics.m"),
    ("x", {"t": "tensor", "i": 0}, "x is not valid"),
    ("x", {"t": "array", "i": 99}, "x is not valid: the index of an unused array"),
    ("buffers", {"t": "dict", "items": {}}, "buffers is not valid: a dict of keys"),
    ("part_rng", {"t": "dict", "items": {"numpy": {"t": "none"}}}, "part_rng.numpy"),
])
def test_wrong_structure_names_the_place(tmp_path, field, node, match):
    prob = toys.quadratic(3, 2, seed=0)
    _refused(match, prob, _forge(tmp_path, prob, field, node))


def test_a_state_that_starts_empty_takes_only_run_shaped_arrays(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    kw = dict(loss_offset="running_min")
    path = _checkpoint(tmp_path, prob, "fedsoftmax", **kw)
    meta, arrays = _members(path)
    node = meta["tree"]["items"]["weights"]
    assert node["t"] == "array" and arrays[node["i"]].shape == (3,)  # None at init
    arrays[node["i"]] = np.zeros(4)
    _write(path, meta, arrays)
    _refused("weights is not valid: an array of shape", prob, path, "fedsoftmax", **kw)


# ------------------------------------------------------------------------------ sizes
def test_a_header_claiming_a_gigantic_array_allocates_nothing(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = _checkpoint(tmp_path, prob)
    meta, _ = _members(path)
    x = f"a{meta['tree']['items']['x']['i']}.npy"
    out = io.BytesIO()
    with zipfile.ZipFile(path) as zf, zipfile.ZipFile(out, "w") as zo:
        for info in zf.infolist():
            raw = zf.read(info)
            if info.filename == x:  # the model (2,) claims to be 2 GiB of float64
                bomb = raw.replace(b"'shape': (2,), ", b"'shape': (268435456,), ")
                assert bomb != raw
                raw = bomb
            zo.writestr(info.filename, raw)
    path.write_bytes(out.getvalue())
    tracemalloc.start()
    try:
        _refused("header claims 2147483648 bytes", prob, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * len(out.getvalue()) + (8 << 20)


def test_a_file_over_the_runs_limit_is_not_read(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    path = tmp_path / "huge.npz"
    with open(path, "wb") as fh:
        fh.truncate(64 << 20)  # sparse: 64 MiB of zeros
    _refused("checkpoint is not valid: a file of at most", prob, path)


# ------------------------------------------------------------------------------ settings
def test_a_step_size_function_is_bound_by_its_schedule(tmp_path):
    prob = toys.quadratic(3, 2, seed=0)
    kw = dict(rounds=6, seed=1)
    path = tmp_path / "ck.npz"
    toys.run(prob, "fedavg", lr=lambda t: 0.1 / (1 + t), checkpoint=path, checkpoint_every=3,
             callbacks=[lambda info: info.round == 4], **kw)
    full = toys.run(prob, "fedavg", lr=lambda t: 0.1 / (1 + t), **kw)
    again = toys.run(prob, "fedavg", lr=lambda t: 0.1 / (1 + t), resume=path, **kw)
    np.testing.assert_array_equal(again.final_model, full.final_model)
    with pytest.raises(IntegrityError, match="does not belong here: hyper.lr.schedule"):
        toys.run(prob, "fedavg", lr=lambda t: 0.2 / (1 + t), resume=path, **kw)


def _bucketed(label_flip=None):
    rng = np.random.default_rng(0)
    n = [60, 40, 5, 3]
    Xs = [rng.normal(size=(k, 2)) for k in n]
    ys = [(rng.random(k) < 0.5).astype(float) for k in n]
    if label_flip is not None:
        ys[label_flip][0] = 1.0 - ys[label_flip][0]
    prob = toys.logistic(Xs, ys, l2=0.1, max_padding=2.0)
    assert type(prob).__name__ == "Bucketed"
    return prob


def test_a_bucketed_problem_is_bound_by_every_bucket(tmp_path):
    prob = _bucketed()
    path = _checkpoint(tmp_path, prob, lr=0.5)
    tr = toys.run(_bucketed(), "fedavg", resume=path, **{**KW, "lr": 0.5})
    np.testing.assert_array_equal(tr.final_model,
                                  toys.run(prob, "fedavg", **{**KW, "lr": 0.5}).final_model)
    _refused("problem_data", _bucketed(label_flip=3), path, lr=0.5)  # one label, last bucket


def test_torch_state_resumes_and_tensor_nodes_are_checked(tmp_path):
    pytest.importorskip("torch")
    prob = toys.quadratic(n_clients=4, dim=3, seed=0)
    kw = dict(rounds=6, seed=2, backend="torch", device="cpu", lr=0.1,
              participation="bernoulli:p=0.5")
    path = tmp_path / "t.npz"
    toys.run(prob, "fedau", checkpoint=path, checkpoint_every=3,
             callbacks=[lambda info: info.round == 4], **kw)
    meta, arrays = _members(path)
    assert meta["tree"]["items"]["x"]["t"] == "tensor"
    assert meta["tree"]["items"]["sample_rng"]["items"]["torch"]["t"] == "array"
    with pytest.raises(IntegrityError, match="does not belong here: backend"):
        toys.run(prob, "fedau", resume=path, **{**kw, "backend": "numpy", "device": None})
    with pytest.raises(IntegrityError, match="does not belong here: dtype"):
        toys.run(prob, "fedau", resume=path, **{**kw, "dtype": "float32"})
    rng = meta["tree"]["items"]["sample_rng"]["items"]["torch"]["i"]
    arrays[rng] = arrays[rng][:-1]
    _write(path, meta, arrays)
    _refused("sample_rng.torch is not valid: an array of shape", prob, path, "fedau", **kw)
