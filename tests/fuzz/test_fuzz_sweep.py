"""Sweep folders and Dask addresses are untrusted input: damaged, forged, foreign, huge and
mistyped files in ``verify.sweep(..., out=DIR)`` / ``boundlab sweep ... --out DIR``, and
schedulers that hang or answer garbage.

Every case must give a clear boundlab error naming the file (or ``out`` / ``scheduler``), or
the table of the sweep itself; no case may run code or write a file. ``cases(tmp)`` is also
what the before/after counts of issue 20 were measured with (cases tagged ``"v2"`` damage the
seal files and fields that only the sealed format has).
"""

import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from _fuzz_harness import GOOD, Case, classify, counts, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import verify
from boundlab.errors import BoundlabError

KW = dict(grid={"lr": [0.05, 0.1, 0.2]}, seeds=1, rounds=2, n_clients=2, dim=2)
ARGV = ["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1,0.2", "--seeds",
        "1", "--rounds", "2", "n_clients=2", "dim=2", "--no-progress", "--json"]
P1 = "point-00001.parquet"
DEAD_MARK = ".boundlab-tmp-999999999-0123456789abcdef-"  # of a writer that is gone


def _dead_lock(d):
    """The lock a killed sweep leaves in its folder: it proves DEAD_MARK's files its own."""
    from boundlab.io import LOCK

    (d / LOCK).write_text(json.dumps({"format": "boundlab-lock/1", "pid": 999999999,
                                      "mark": DEAD_MARK}))


def _sha(data):
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------------ damage
def _rand(n, seed=0):
    return bytes(np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8))


def _edit_json(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def _set(keys, value):
    def fn(doc):
        node = doc
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = value
    return fn


def _reclaim(doc_path, keys, value):
    """Edit the seal's claim and recompute its plain hash (a forger's edit)."""
    from boundlab.integrity import digest

    def fn(doc):
        _set(["seal", "claim", *keys], value)(doc)
        doc["seal"]["claim_sha256"] = digest(doc["seal"]["claim"])
    _edit_json(doc_path, fn)


def _edit_point(d, fn, reseal=False, i=1):
    """Rewrite point ``i`` as a valid Parquet file with ``fn(frame)`` (fresh checksums); with
    ``reseal`` also recompute its seal's payload hash (a forger who knows the format)."""
    path = d / f"point-{i:05d}.parquet"
    frame = fn(pd.read_parquet(path))
    if frame is not None:
        frame.to_parquet(path, index=False)
    if reseal:
        _edit_json(d / f"seal-{i:05d}.json",
                   _set(["seal", "payload_sha256"], _sha(path.read_bytes())))


def _swap(a, b):
    x, y = a.read_bytes(), b.read_bytes()
    a.write_bytes(y)
    b.write_bytes(x)


def _bomb(d):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"lr": pa.nulls(68_000_000, pa.int8())}), d / P1,
                   compression="none", write_statistics=False, use_dictionary=False)


def _write(name, data):
    return lambda d: (d / name).write_bytes(data)


def _damages(tmp, other, marker):
    """(name, damage(folder), text the error must name, tags) of each hostile folder."""
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    writer = {"__call__": "toys.engine.checkpoint:atomic_write_bytes",
              "args": [str(marker), "x"]}
    S1, P2, SJ, E1, V2 = "seal-00001.json", "point-00002.parquet", "sweep.json", "point-00001", \
        ("v2",)

    def col(name, values):
        return lambda f: f.assign(**{name: values(f) if callable(values) else values})

    def forged(fn, reseal=False):
        return lambda d: _edit_point(d, fn, reseal)
    return [
        ("truncated sweep.json", lambda d: (d / SJ).write_text((d / SJ).read_text()[:40]), SJ,
         ()),
        ("empty sweep.json", _write(SJ, b""), SJ, ()),
        ("random sweep.json", _write(SJ, _rand(300)), SJ, ()),
        ("huge sweep.json", _write(SJ, b" " * (8 << 20)), SJ, ()),
        ("deep sweep.json", _write(SJ, b"[" * 9000 + b"]" * 9000), SJ, ()),
        ("sweep.json is a list", _write(SJ, b"[1, 2]"), SJ, ()),
        ("truncated point", lambda d: (d / P1).write_bytes((d / P1).read_bytes()[:100]), E1,
         ()),
        ("empty point", _write(P1, b""), E1, ()),
        ("random point", _write(P1, _rand(900)), E1, ()),
        ("huge point", _write(P1, b"PAR1" + b"\0" * (3 << 20)), E1, ()),
        ("parquet bomb point", _bomb, E1, ()),
        ("point is a directory", lambda d: ((d / P1).unlink(), (d / P1).mkdir()), E1, ()),
        ("points swapped", lambda d: _swap(d / P1, d / P2), E1, ()),
        ("point from another sweep", lambda d: shutil.copy(other / P1, d / P1), E1, ()),
        ("forged point (edited loss, valid parquet)", forged(col(
            "loss", lambda f: f["loss"] * 0.5)), E1, ()),
        ("forged point (code in a text column)", forged(col("loss", [code] * 3)), E1, ()),
        ("sweep.json of another sweep", lambda d: shutil.copy(other / SJ, d / SJ), SJ, ()),
        ("sweep.json deleted", lambda d: (d / SJ).unlink(), SJ, ()),
        ("unknown file named like a point", _write("point-7.parquet", b"x"), "point-7", ()),
        ("point of another format", _write("point-00001.csv", b"a\n1\n"), "00001.csv", ()),
        ("point beyond the grid", lambda d: shutil.copy(d / P1, d / "point-00009.parquet"),
         "point-00009", ()),
        # the sealed format's own files and fields
        ("point and seal swapped together", lambda d: (
            _swap(d / P1, d / P2), _swap(d / S1, d / "seal-00002.json")), E1, V2),
        ("point and seal from another sweep", lambda d: (
            shutil.copy(other / P1, d / P1), shutil.copy(other / S1, d / S1)), E1, V2),
        ("seal deleted", lambda d: (d / S1).unlink(), E1, V2),
        ("truncated seal", _write(S1, b'{"format": "bo'), S1, V2),
        ("empty seal", _write(S1, b""), S1, V2),
        ("random seal", _write(S1, _rand(200, 1)), S1, V2),
        ("huge seal", _write(S1, b" " * (2 << 20)), S1, V2),
        ("forged point, resealed: rows dropped", forged(lambda f: f.iloc[:2], True), E1, V2),
        ("forged point, resealed: lr of another point", forged(col("lr", [0.2] * 3), True),
         E1, V2),
        ("forged point, resealed: seeds", forged(col("seed", [7] * 3), True), E1, V2),
        ("forged point, resealed: text in loss", forged(col("loss", [code] * 3), True), E1,
         V2),
        ("forged point, resealed: bytes column", forged(col("blob", [b"\x00"] * 3), True),
         E1, V2),
        ("forged point, resealed: columns reordered", forged(
            lambda f: f[list(f.columns[::-1])], True), E1, V2),
        ("forged point, resealed: bomb", _resealed_bomb, E1, V2),
        ("sweep.json: code-naming fields (rehashed)", lambda d: _reclaim(
            d / SJ, ["sweep", "problem"], "os:system"), SJ, V2),
        ("sweep.json: file-writing fields", lambda d: _edit_json(
            d / SJ, _set(["sweep"], {**writer, "code": code})), SJ, V2),
        ("seal: file-writing claim (rehashed)", lambda d: _reclaim(
            d / S1, ["params"], writer), E1, V2),
    ]


def _resealed_bomb(d):
    _bomb(d)
    _edit_json(d / "seal-00001.json", _set(["seal", "payload_sha256"],
                                           _sha((d / P1).read_bytes())))


def _type_damages():
    """Wrong types in each field of sweep.json and of a point's seal."""
    out = []
    bad = {"null": None, "int": 7, "text": "os:system", "list": [1], "dict": {"a": 1},
           "float": 1e308}
    for keys in (["format"], ["sweep"], ["seal"], ["seal", "claim"], ["seal", "claim_sha256"],
                 ["seal", "payload_sha256"], ["sweep", "rounds"], ["sweep", "seeds"]):
        for label, v in bad.items():
            out.append((f"sweep.json {'.'.join(keys)} = {label}", lambda d, k=keys, v=v:
                        _edit_json(d / "sweep.json", _set(k, v)), "sweep.json", ("v2",)))
    for keys in (["claim", "sweep"], ["claim", "version"], ["claim", "sweep", "rounds"]):
        for label, v in bad.items():
            out.append((f"sweep.json claim {'.'.join(keys[1:])} = {label} (rehashed)",
                        lambda d, k=keys, v=v: _reclaim(d / "sweep.json", k[1:], v),
                        "sweep.json", ("v2",)))
    for keys in (["format"], ["seal"], ["seal", "claim"], ["seal", "payload_sha256"],
                 ["seal", "claim", "index"], ["seal", "claim", "params"]):
        for label, v in bad.items():
            out.append((f"seal {'.'.join(keys)} = {label}", lambda d, k=keys, v=v:
                        _edit_json(d / "seal-00001.json", _set(k, v)), "00001", ("v2",)))
    return out


def _ok_cases(reference):
    def same(df):
        try:
            pd.testing.assert_frame_equal(df, reference)
        except AssertionError as e:
            return f"not the sweep's table: {str(e)[:200]}"
        return None
    # a dead writer's, proved by its lock (issue 31: a name alone proves nothing)
    temps = (f".point-00001.parquet{DEAD_MARK}k3j_x9.parquet",
             f".point-00002.parquet{DEAD_MARK}ab.parquet")

    def no_temps(d):
        def check(df):
            left = [n for n in temps if (d / n).exists()]
            return f"temporary files left: {left}" if left else same(df)
        return check
    return [
        ("resume of an intact folder", lambda d: None, lambda d: same),
        ("a point missing (interrupted)", lambda d: (d / P1).unlink(), lambda d: same),
        ("temporary files of a killed run", lambda d: [_dead_lock(d)] + [
            (d / n).write_bytes(_rand(64)) for n in temps], no_temps),
    ]


def cases(tmp, marker, reference=None):
    """The hostile folders, each in its own copy of a sweep made by this code."""
    pristine, other = tmp / "pristine", tmp / "other"
    if not pristine.exists():
        verify.sweep("quadratic", "fedavg", out=pristine, **KW)
        verify.sweep("quadratic", "fedavg", out=other, **{**KW, "n_clients": 3})
    if reference is None:
        reference = verify.sweep("quadratic", "fedavg", **KW)
    v2 = (pristine / "seal-00001.json").exists()
    out = []
    for k, (name, damage, mention, tags) in enumerate(_damages(tmp, other, marker)
                                                      + _type_damages()):
        if "v2" in tags and not v2:
            continue
        d = tmp / f"c{k}"
        shutil.copytree(pristine, d)
        damage(d)
        out.append(Case(name, lambda d=d: verify.sweep("quadratic", "fedavg", out=d, **KW),
                        mention=mention, tags=tags))
    for k, (name, damage, check) in enumerate(_ok_cases(reference)):
        d = tmp / f"ok{k}"
        shutil.copytree(pristine, d)
        damage(d)
        out.append(Case(name, lambda d=d: verify.sweep("quadratic", "fedavg", out=d, **KW),
                        expect="ok", check=check(d)))
    return out


def cli_cases(tmp, marker):
    """The same damages through ``boundlab sweep ... --out DIR``."""
    pristine, other = tmp / "pristine", tmp / "other"
    out = []
    for k, (name, damage, mention, tags) in enumerate(_damages(tmp, other, marker)):
        if "v2" in tags and not (pristine / "seal-00001.json").exists():
            continue
        if "huge" in name or "bomb" in name:
            continue  # the API cases cover them; the CLI reads through the same code
        d = tmp / f"cli{k}"
        shutil.copytree(pristine, d)
        damage(d)
        out.append(Case(f"cli: {name}", ARGV + ["--out", str(d)], mention=mention, tags=tags))
    return out


# ------------------------------------------------------------------------------ Dask
class Server:
    """A TCP server on 127.0.0.1 that answers every connection as ``mode`` says: ``hang``
    (accepts, never answers), ``huge`` (a length prefix of 2**64 - 1), ``random`` (random
    bytes), ``close`` (closes at once), ``junk`` (a well-framed handshake of junk)."""

    def __init__(self, mode):
        import socket
        import threading

        self.mode, self.conns = mode, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import struct

        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            body = struct.pack("QQ", 1, 8) + b"\x93junk!!!"
            reply = {"hang": b"", "huge": b"\xff" * 8 + b"junk", "random": _rand(64, 2),
                     "junk": struct.pack("Q", len(body)) + body}.get(self.mode)
            if reply is None:
                c.close()
            elif reply:
                c.sendall(reply)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def dask_cases(servers):
    """Scheduler addresses and connect timeouts, API and CLI (``servers``: mode -> Server)."""
    def api(name, scheduler, timeout=0.5, mention="scheduler"):
        return Case(name, lambda: verify.sweep("quadratic", "fedavg", executor="dask",
                                               scheduler=scheduler, connect_timeout=timeout,
                                               **KW), mention=mention)

    def cli(name, scheduler, timeout="0.5", mention="scheduler"):
        return Case(f"cli: {name}", ARGV + ["--executor", "dask", "--scheduler", scheduler,
                                            "--connect-timeout", timeout], mention=mention)
    out = []
    for make in (api, cli):
        out += [make(f"scheduler that {m}s", s.address) for m, s in servers.items()]
        out += [make(f"address {a!r}", a) for a in (
            "tcp://127.0.0.1", "127.0.0.1:8786", "http://127.0.0.1:8786", "tcp://:8786",
            "tcp://127.0.0.1:0", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:abc", "tcp://[::1",
            "tcp://127.0.0.1:1", "os:system")]
    out += [api(f"connect_timeout {t!r}", servers["hang"].address, t, "connect_timeout")
            for t in (0, -1, float("nan"), float("inf"), "10s", 1e9)]
    out += [api("scheduler not a string", 8786), api("scheduler a list", ["tcp://h:1"])]
    return out


# ------------------------------------------------------------------------------ tests
@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweeps")
    marker = tmp / "EXECUTED"
    return tmp, marker, cases(tmp, marker), cli_cases(tmp, marker)


def test_every_damaged_folder_is_refused_clearly_or_gives_the_sweep(folders):
    tmp, marker, api, cli = folders
    bad = [(c.name, *classify(c)) for c in api + cli]
    bad = [b for b in bad if b[1] not in GOOD]
    assert not bad, bad
    assert not marker.exists()
    tally = counts(api + cli)
    assert tally["tried"] == tally["clear"] + tally["ok"] >= 150, tally


def test_temporary_files_of_a_killed_run_are_removed_and_never_read(folders):
    tmp = folders[0]
    d = tmp / "temps"
    shutil.copytree(tmp / "pristine", d)
    (d / P1).unlink()
    _dead_lock(d)
    dead = d / f".point-00001.parquet{DEAD_MARK}x.parquet"
    shutil.copy(tmp / "other" / P1, dead)  # a result of another sweep, under a temp name
    df = verify.sweep("quadratic", "fedavg", out=d, **KW)
    pd.testing.assert_frame_equal(df, verify.sweep("quadratic", "fedavg", **KW))
    assert not [p.name for p in d.iterdir() if p.name.startswith(".")]


@fuzz_settings(max_examples=25)
@given(data=st.binary(max_size=600),
       target=st.sampled_from(["sweep.json", P1, "seal-00001.json"]))
def test_any_bytes_in_any_file_give_a_clear_error(folders, data, target):
    tmp = folders[0]
    d = tmp / "any"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(tmp / "pristine", d)
    (d / target).write_bytes(data)
    with pytest.raises(BoundlabError, match=target.split(".")[0]):
        verify.sweep("quadratic", "fedavg", out=d, **KW)


@fuzz_settings(max_examples=25)
@given(value=st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                          | st.floats(allow_nan=False, allow_infinity=False),
                          lambda c: st.lists(c, max_size=3)
                          | st.dictionaries(st.text(max_size=4), c, max_size=3),
                          max_leaves=8),
       field=st.sampled_from(["format", "sweep", "seal", "claim", "claim_sha256"]))
def test_any_json_value_in_a_sweep_json_field_is_refused(folders, value, field):
    tmp = folders[0]
    d = tmp / "anyjson"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(tmp / "pristine", d)
    keys = ["seal", field] if field in ("claim", "claim_sha256") else [field]
    _edit_json(d / "sweep.json", _set(keys, value))
    with pytest.raises(BoundlabError, match="sweep.json"):
        verify.sweep("quadratic", "fedavg", out=d, **KW)


@pytest.fixture(scope="module")
def servers():
    made = {m: Server(m) for m in ("hang", "huge", "random", "close", "junk")}
    yield made
    for s in made.values():
        s.close()


def test_every_bad_scheduler_is_refused_clearly_and_in_time(servers):
    pytest.importorskip("distributed")
    import time

    bad = []
    for c in dask_cases(servers):
        start = time.monotonic()
        outcome, detail = classify(c)
        if outcome not in GOOD or time.monotonic() - start > 4.0:
            bad.append((c.name, outcome, round(time.monotonic() - start, 1), detail))
    assert not bad, bad
