"""Fuzz of checkpoint files (``toys.run(..., resume=path)``): damaged, foreign, forged, huge,
wrongly typed, code-naming and file-writing checkpoints.

Every case must give a clear boundlab error naming the file (and, where it says so, the field),
or a correct result (bit-identical to the uninterrupted run). No case may run named code (a
probe function reachable as ``toys.engine:fuzz_probe``) or write a file (the marker). Forged
trees come twice: as they are, and with the payload hash recomputed as an attacker can (the
structural rebuild from the run's own template must stop them then).
"""

import atexit
import functools
import io
import json
import pathlib
import shutil
import tempfile
import zipfile

import numpy as np
import pytest
from _fuzz_harness import GOOD, Case, classify, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import toys
from boundlab.errors import BoundlabError

PROB = dict(n_clients=3, dim=2, seed=0)
RUN = dict(rounds=6, seed=1, lr=0.1, participation="bernoulli:p=0.5", record="round")
FIELDS = ("round", "x", "client", "weights", "server", "participation_state", "prev_end",
          "buffers", "participation", "metrics", "diverged_at", "stopped_at", "part_rng",
          "sample_rng")
WRONG = {"str": {"t": "str", "v": "x"}, "nan": {"t": "float", "v": "nan"}, "raw": 5,
         "list": {"t": "list", "items": []}, "bogus": {"t": "bogus"}}


def _run(path=None, prob=None, **kw):
    prob = prob or toys.quadratic(**PROB)
    return toys.run(prob, "fedau", resume=path, **{**RUN, **kw})


@pytest.fixture(scope="module")
def genuine():
    """(bytes of a checkpoint after 3 rounds, the uninterrupted run's final model)."""
    _, marker, full = _built()
    return marker.with_name("genuine.npz").read_bytes(), full


# ------------------------------------------------------------------------------ file surgery
def _parts(data):
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = json.loads(z["meta"].tobytes())
        return meta, [z[f"a{i}"] for i in range(len(z.files) - 1)]


def _pack(meta, arrays, reseal):
    """npz bytes; ``reseal``: recompute the payload hash as an attacker can."""
    if reseal and isinstance(meta, dict) and isinstance(meta.get("seal"), dict):
        from boundlab.integrity import sha256
        from toys.engine.checkpoint import _payload

        meta["seal"]["payload_sha256"] = sha256(_payload(meta.get("tree"), arrays))
    text = meta if isinstance(meta, str) else json.dumps(meta)
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(text.encode(), np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)})
    return buf.getvalue()


def _edit_tree(data, fn, reseal=True):
    meta, arrays = _parts(data)
    fn(meta["tree"]["items"], arrays)
    return _pack(meta, arrays, reseal)


def _set(field, node):
    def fn(items, arrays):
        items[field] = node
    return fn


def _rezip(data, fn):
    """The zip rebuilt with ``fn(name, bytes) -> bytes`` applied to every member."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zf, zipfile.ZipFile(out, "w") as zo:
        for info in zf.infolist():
            zo.writestr(info.filename, fn(info.filename, zf.read(info)))
    return out.getvalue()


def _writer_node(marker, arrays):
    arrays.append(np.frombuffer(b"import os\n", np.uint8))
    return {"t": "namedtuple", "cls": "toys.engine.checkpoint:atomic_write_bytes",
            "items": [{"t": "str", "v": str(marker)}, {"t": "array", "i": len(arrays) - 1}]}


def _attack(fn, marker):
    def edit(items, arrays):
        items["client"] = fn(marker, arrays)
    return edit


_PROBE = {"t": "namedtuple", "cls": "toys.engine:fuzz_probe", "items": []}


# ------------------------------------------------------------------------------ the cases
def _damaged(g):
    out = {"empty": b"", "random": np.random.default_rng(0).bytes(3000),
           "random-zip": _rezip(g, lambda n, b: np.random.default_rng(1).bytes(len(b))),
           "old-format": _rezip(g, lambda n, b: b.replace(b"checkpoint/2", b"checkpoint/1"))}
    out.update({f"truncated-{k}": g[:len(g) * k // 4] for k in (1, 2, 3)})
    out["truncated-last-byte"] = g[:-1]
    return out


def _huge(g):
    def bomb(name, b):  # every array header claims 2 GiB
        return b.replace(b"'shape': (", b"'shape': (268435456, ", 1) if name != "meta.npy" \
            else b
    meta, arrays = _parts(g)
    many = _pack(meta, arrays + [np.zeros(1)] * 5000, False)
    deflated = io.BytesIO()
    np.savez_compressed(deflated, meta=np.zeros(1 << 24, np.uint8))  # 16 MiB in ~16 KiB
    return {"header-bomb": _rezip(g, bomb), "5000-members": many,
            "zip-bomb": deflated.getvalue(),
            "header-huge": _rezip(g, lambda n, b: b[:8] + b"\xff\xff" + b[10:])}


def _meta_types(g):
    meta, arrays = _parts(g)
    out = {}
    for key, bad in (("format", 2), ("seal", "x"), ("tree", []), ("seal", None)):
        m = json.loads(json.dumps(meta))
        m[key] = bad
        out[f"meta-{key}-{type(bad).__name__}"] = _pack(m, arrays, True)
    out["meta-list"] = _pack([meta], arrays, False)
    out["meta-nan"] = _pack(json.dumps(meta).replace('"round"', "NaN", 1), arrays, False)
    out["meta-deep"] = _pack("[" * 100000 + "]" * 100000, arrays, False)
    out["meta-object"] = _rezip(g, lambda n, b: b.replace(b"'|u1'", b"'|O' ")
                                if n == "meta.npy" else b)
    return out


def _forged(g, marker):
    out = {}
    for reseal in (False, True):
        tag = "resealed" if reseal else "plain"
        out[f"file-writer-{tag}"] = _edit_tree(g, _attack(_writer_node, marker), reseal)
        out[f"code-naming-{tag}"] = _edit_tree(g, _set("client", _PROBE), reseal)
        out[f"code-in-weights-{tag}"] = _edit_tree(g, _set("weights", _PROBE), reseal)
    out["edited-model"] = _edit_tree(g, lambda it, a: a.__setitem__(it["x"]["i"], a[
        it["x"]["i"]] + 1.0), reseal=False)
    out["edited-round"] = _edit_tree(g, _set("round", {"t": "int", "v": "2"}), reseal=False)
    out["rng-code-string"] = _edit_tree(g, lambda it, a: it["part_rng"]["items"]["numpy"][
        "items"].__setitem__("bit_generator", {"t": "str", "v": "__import__('os')"}))
    out["rng-huge-int"] = _edit_tree(g, lambda it, a: it["part_rng"]["items"]["numpy"][
        "items"]["state"]["items"].__setitem__("state", {"t": "int", "v": "9" * 4000}))
    out["pickled-array"] = _rezip(g, lambda n, b: _npy(np.array([{}], dtype=object))
                                  if n == "a0.npy" else b)
    for field in FIELDS:
        for name, node in WRONG.items():
            out[f"type-{field}-{name}"] = _edit_tree(g, _set(field, node))
    return out


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


FOREIGN = {"instance": dict(prob=dict(seed=1)), "participation": dict(
    participation="bernoulli:p=0.6"), "x0": dict(x0=np.ones(2)), "seed": dict(seed=2),
    "lr": dict(lr=0.2), "record": dict(record="sync"), "rounds": dict(rounds=8),
    "K": dict(K=3)}
FOREIGN_FIELD = {"instance": "problem_data", "lr": "hyper", "K": "hyper"}


def _cases(g, marker):
    """name -> (file bytes or None for a missing file, run kwargs, expect, mention)."""
    files = {**_damaged(g), **_huge(g), **_meta_types(g), **_forged(g, marker)}
    cases = {k: (v, {}, "error", "ck.npz") for k, v in files.items()}
    cases["missing"] = (None, {}, "error", "ck.npz")
    cases["valid"] = (g, {}, "ok", None)
    for name, kw in FOREIGN.items():
        kw = dict(kw)
        if "prob" in kw:
            kw["prob"] = toys.quadratic(**{**PROB, **kw["prob"]})
        cases[f"foreign-{name}"] = (g, kw, "error", FOREIGN_FIELD.get(name, name))
    return cases


@functools.lru_cache(maxsize=1)
def _built():
    """(name -> case, the marker path, the uninterrupted run's final model), built once."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="fuzz-ck-"))
    atexit.register(shutil.rmtree, d, True)
    p = d / "genuine.npz"
    toys.run(toys.quadratic(**PROB), "fedau", checkpoint=p, checkpoint_every=3,
             callbacks=[lambda info: info.round == 4], **RUN)
    marker = d / "PWNED.pth"
    return _cases(p.read_bytes(), marker), marker, _run().final_model


_NAMES = sorted(_built()[0])


def _case(name, tmp_path):
    cases, marker, full = _built()
    data, kw, expect, mention = cases[name]
    path = tmp_path / "ck.npz"
    if data is not None:
        path.write_bytes(data)

    def check(trace):
        same = np.array_equal(trace.final_model, full)
        return None if same else "resumed run differs from the uninterrupted one"
    return Case(name, lambda: _run(path, **kw), expect, mention, check), marker


def _probe_marker(monkeypatch, tmp_path):
    ran = tmp_path / "CODE-RAN"
    monkeypatch.setattr(toys.engine, "fuzz_probe", lambda *a: ran.touch(), raising=False)
    return ran


@pytest.mark.parametrize("name", _NAMES)
def test_checkpoint_case(name, tmp_path, monkeypatch):
    ran = _probe_marker(monkeypatch, tmp_path)
    case, marker = _case(name, tmp_path)
    outcome, detail = classify(case)
    assert not ran.exists(), f"{name}: code named by the file ran"
    assert not marker.exists(), f"{name}: the file made boundlab write {marker}"
    assert outcome in GOOD, f"{name}: {outcome}: {detail}"


# ------------------------------------------------------------------------------ properties
def _outcome(path, full, exact=True):
    """Resume from ``path``: a clear error naming the file, or (``exact``) the uninterrupted
    run's result; never a raw exception, never code run or a file written."""
    ran = path.with_name("CODE-RAN")
    toys.engine.fuzz_probe = lambda *a: ran.touch()
    try:
        tr = _run(path)
    except BoundlabError as e:
        assert path.name in str(e)
        return
    finally:
        del toys.engine.fuzz_probe
        assert not ran.exists() and not path.with_name("PWNED.pth").exists()
    assert not exact or np.array_equal(tr.final_model, full), "accepted a damaged file"


@fuzz_settings(max_examples=25)
@given(st.data())
def test_damaged_bytes(genuine, tmp_path_factory, data):
    g, full = genuine
    b = bytearray(g)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.one_of(st.none(), st.integers(0, len(b))))
    path = tmp_path_factory.mktemp("dmg") / "ck.npz"
    path.write_bytes(bytes(b if cut is None else b[:cut]))
    _outcome(path, full)


_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                               st.floats(allow_nan=False), st.text(max_size=6)),
                     lambda c: st.one_of(st.lists(c, max_size=3),
                                         st.dictionaries(st.sampled_from(["t", "v", "i", "items",
                                                                          "fields", "cls"]),
                                                         c, max_size=3)), max_leaves=8)


@fuzz_settings(max_examples=25)
@given(st.data())
def test_forged_nodes_with_a_recomputed_seal(genuine, tmp_path_factory, data):
    g, full = genuine
    meta, arrays = _parts(g)
    node, where = meta["tree"], []
    while isinstance(node, dict) and data.draw(st.booleans()):
        kids = node.get("items")
        keys = list(kids) if isinstance(kids, dict) else list(range(len(kids or [])))
        if not keys:
            break
        where.append((kids, data.draw(st.sampled_from(keys))))
        node = kids[where[-1][1]]
    if not where:
        return
    kids, key = where[-1]
    kids[key] = data.draw(_json)
    path = tmp_path_factory.mktemp("forged") / "ck.npz"
    path.write_bytes(_pack(meta, arrays, True))
    # a random node that happens to fit the run's structure is a consistent forgery (an
    # unkeyed seal cannot tell it from a genuine file): accepted, but never run as code
    _outcome(path, full, exact=False)
