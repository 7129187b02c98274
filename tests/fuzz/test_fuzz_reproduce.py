"""Reproduce folders are untrusted input: damaged, forged, foreign, huge and mistyped
``done.json``, ``section.md`` and manifest files in ``boundlab reproduce --out DIR``.

For an item file (``done.json``, ``section.md``) each case checks three things: reading the item
(:func:`verify.reproduce.store.read_item`) is a clear error naming the file; the CLI refuses the
folder (exit 2 naming the file: it no longer is what boundlab wrote); and after a forger also
rewrites the manifest, the CLI runs the item again (never "skipped", never a forged word in the
report). A damaged or foreign manifest makes the folder refused (exit 2) with every file of the
user's intact. No case may run code or write a file outside the folder. ``MUTATIONS`` is also
what the before/after counts of issue 20 were measured with.
"""

import json
import os
import shutil

import numpy as np
import pytest
from _fuzz_harness import GOOD, Case, classify, fuzz_settings, run_cli
from hypothesis import given
from hypothesis import strategies as st

from verify.reproduce import registry, reproduce_all
from verify.reproduce.registry import Claim, Config, Result, experiments

TINY = Config(tiny=True, backend="numpy")
ITEM, DIR = "004:fig3", "004-fig3"
ARGV = ["reproduce", ITEM, "--size", "tiny", "--backend", "numpy"]
MANIFEST_NAME = "boundlab-manifest.json"


def _fresh_fn(cfg):
    return Result([{"value": 1}], [Claim("v", "1", "FRESH", "equal", True)])


@pytest.fixture
def fake(monkeypatch):
    """004's items made instant (the folder format is what is fuzzed, not the science)."""
    import dataclasses

    experiments()
    reg = dict(registry._REGISTRY)
    for i in ("004:fig2", "004:fig3", "004:fig4", "004:fig5"):
        reg[i] = dataclasses.replace(reg[i], fn=_fresh_fn)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    return reg


# ------------------------------------------------------------------------------ damage
def _rand(n, seed=0):
    return bytes(np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8))


def _edit(path, fn):
    doc = json.loads(path.read_text())
    fn(doc)
    path.write_text(json.dumps(doc))


def _set(key, value):
    def fn(doc):
        doc[key] = value
    return fn


def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rehash(out):
    """Recompute the plain file hashes done.json lists (not its seal): a forger's edit."""
    d = out / DIR
    _edit(d / "done.json", lambda doc: doc["files"].update(
        {f: _sha(d / f) for f in doc["files"] if (d / f).is_file()}))


def _write(name, data):
    def fn(out):
        (out / DIR / name).write_bytes(data(out / DIR / name) if callable(data) else data)
    return fn


def _field(key, value):
    return lambda out: _edit(out / DIR / "done.json", _set(key, value))


def _other_config(out):
    reproduce_all(ITEM, out=out.parent / "other", config=Config(tiny=True, backend="numpy",
                                                                seeds=2))
    shutil.rmtree(out / DIR)
    shutil.copytree(out.parent / "other" / DIR, out / DIR)


def _other_item(out):
    reproduce_all("004:fig4", out=out.parent / "other", config=TINY)
    shutil.rmtree(out / DIR)
    shutil.copytree(out.parent / "other" / "004-fig4", out / DIR)


def _other_code(out):
    from boundlab.integrity import seal

    def fn(doc):
        meta = {k: v for k, v in doc.items() if k != "seal"}
        payload = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
        doc["seal"] = seal({"item": ITEM, "config": meta["config"],
                            "code_version": "0.0.1+000000000000"}, payload)
    _edit(out / DIR / "done.json", fn)


def _forged_outcome(out):
    _edit(out / DIR / "done.json", lambda d: d.update(outcome="matches", how="FORGED"))


def _forged_csv(out):
    (out / DIR / "results.csv").write_text("value\nFORGED\n")
    _rehash(out)


def _forged_section(out):
    (out / DIR / "section.md").write_text("## 004:fig3 FORGED \x1b[2J\n")
    _rehash(out)


def _symlink(name, target="/etc/passwd"):
    def fn(out):
        (out / DIR / name).unlink()
        os.symlink(target, out / DIR / name)
    return fn


def _code(marker):
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


def mutations(marker):
    """``(name, file named in the error, damage(out))``: every way an item file is tried."""
    good = lambda p: p.read_bytes()  # noqa: E731
    half = lambda p: good(p)[:len(good(p)) // 2]  # noqa: E731
    m = [("done truncated", "done.json", _write("done.json", half)),
         ("done empty", "done.json", _write("done.json", b"")),
         ("done random bytes", "done.json", _write("done.json", _rand(300))),
         ("done not utf-8", "done.json", _write("done.json", b"\xff\xfe{}")),
         ("done huge", "done.json", _write("done.json", lambda p: good(p) + b" " * (2 << 20))),
         ("done deep", "done.json", _write("done.json", b"[" * 100000)),
         ("done NaN", "done.json", _write("done.json", lambda p: good(p).replace(
             b'"seconds": ', b'"seconds": NaN, "x": '))),
         ("done 1e999", "done.json", _field("seconds", 1e999)),
         ("done a directory", "done.json", lambda out: ((out / DIR / "done.json").unlink(),
                                                         (out / DIR / "done.json").mkdir())),
         ("done a symlink", "done.json", _symlink("done.json")),
         ("foreign: other config", "done.json", _other_config),
         ("foreign: other item", "done.json", _other_item),
         ("foreign: other code version", "done.json", _other_code),
         ("forged outcome", "done.json", _forged_outcome),
         ("forged results.csv, file hash recomputed", "results.csv", _forged_csv),
         ("code: outcome os:system", "done.json", _field("outcome", "os:system")),
         ("code: fn os:system", "done.json", _field("fn", "os:system")),
         ("code: python in a claim", "done.json", _field("claims", [
             {"what": _code(marker), "paper": "", "ours": "", "rule": "", "outcome": "matches",
              "how": ""}])),
         ("code: config naming a callable", "done.json", _field("config", {
             "backend": "os:system", "data": _code(marker)})),
         ("write: files outside the folder", "done.json", _field("files", {
             f"../../{marker.name}": "0" * 64, "section.md": "0" * 64})),
         ("write: id outside the folder", "done.json", _field("id", f"../../{marker.name}")),
         ("section truncated", "section.md", _write("section.md", lambda p: good(p)[:20])),
         ("section empty", "section.md", _write("section.md", b"")),
         ("section random bytes", "section.md", _write("section.md", _rand(300, 1))),
         ("section huge", "section.md", _write("section.md", b"x" * (5 << 20))),
         ("section a symlink", "section.md", _symlink("section.md")),
         ("section forged, file hash recomputed", "done.json", _forged_section)]
    for key in ("format", "id", "ref", "outcome", "how", "size", "backend", "data", "seconds",
                "config", "claims", "error", "files", "seal"):
        for v in (None, 7, "x", [], True):
            if (key, v) in (("data", None), ("error", None)):  # the valid value: no damage
                continue
            m.append((f"wrong type {key}={v!r}", "done.json", _field(key, v)))
    return m


def _finished(tmp_path):
    out = tmp_path / "out"
    reproduce_all(ITEM, out=out, config=TINY)
    return out


def _reran(out):
    def check(stdout):
        if f"{ITEM}     skipped" in stdout or "1 items: 1 match" not in stdout:
            return f"not run again: {stdout[:200]!r}"
        report = (out / "report.md").read_text()
        if "FORGED" in report or "\x1b" in report or "FRESH" not in report:
            return "the report holds forged or stale text"
        return None
    return check


#: a whole item folder of another boundlab run: adopted as boundlab's (module doc of
#: verify.reproduce.store), and not "done" for this configuration, so it runs again
ADOPTED = ("foreign: other config",)
_NAMES = [n for n, _, _ in mutations(__import__("pathlib").Path("EXECUTED"))]


@pytest.mark.parametrize("k", range(len(_NAMES)), ids=_NAMES)
def test_item_file(tmp_path, fake, k):
    from boundlab.io import write_manifest
    from verify.reproduce.store import KIND, read_item

    marker = tmp_path / "EXECUTED"
    name, named, damage = mutations(marker)[k]
    out = _finished(tmp_path)
    damage(out)
    argv = [*ARGV, "--out", str(out)]
    shown = [classify(Case(f"{name}: read", lambda: read_item(out, ITEM, TINY.key()),
                           mention=named if named != "results.csv" else DIR)),
             classify(Case(f"{name}: cli", argv, mention=f"{DIR}/") if name not in ADOPTED
                      else Case(f"{name}: cli", argv, expect="ok", check=_reran(out)))]
    write_manifest(out, KIND)  # the forger also makes the folder look untouched
    if name in ADOPTED:  # already run again by the case above
        pass
    elif "a directory" in name or "a symlink" in name:  # a manifest cannot list these: refused
        shown.append(classify(Case(f"{name}: adopted", argv, mention=f"{DIR}/")))
    else:
        shown.append(classify(Case(f"{name}: adopted", argv, expect="ok", check=_reran(out))))
    for outcome, detail in shown:
        assert outcome in GOOD, f"{name}: {outcome}: {detail}"
    assert not marker.exists() and not (tmp_path.parent / marker.name).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) in (["out"], ["other", "out"])


def manifest_mutations():
    """``(name, damage(out))`` of the folder's manifest; the folder also holds a user's file."""
    MANIFEST = MANIFEST_NAME  # noqa: N806 - boundlab.io.MANIFEST (checked below)
    def w(data):
        return lambda out: (out / MANIFEST).write_bytes(data(out) if callable(data) else data)

    def doc(fn):
        return lambda out: _edit(out / MANIFEST, fn)
    return [("truncated", w(lambda o: (o / MANIFEST).read_bytes()[:40])),
            ("empty", w(b"")), ("random bytes", w(_rand(500, 2))),
            ("huge", w(lambda o: (o / MANIFEST).read_bytes() + b" " * (17 << 20))),
            ("deep", w(b"{\"a\":" * 10000)),
            ("a directory", lambda o: ((o / MANIFEST).unlink(), (o / MANIFEST).mkdir())),
            ("other kind", doc(_set("kind", "verify"))),
            ("code kind", doc(_set("kind", "os:system"))),
            ("files a list", doc(_set("files", ["thesis.tex"]))),
            ("hash an int", doc(lambda d: d["files"].update({"thesis.tex": 7}))),
            ("forged: lists the user's file, wrong hash",
             doc(lambda d: d["files"].update({"thesis.tex": "0" * 64}))),
            ("foreign: of another reproduce folder", lambda o: shutil.copy(
                o.parent / "other" / MANIFEST, o / MANIFEST))]


_MNAMES = [n for n, _ in manifest_mutations()]


def test_the_manifest_name():
    from boundlab.io import MANIFEST

    assert MANIFEST == MANIFEST_NAME


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != MANIFEST_NAME}


@pytest.mark.parametrize("k", range(len(_MNAMES)), ids=_MNAMES)
def test_manifest(tmp_path, fake, k):
    name, damage = manifest_mutations()[k]
    reproduce_all("004:fig4", out=tmp_path / "other", config=TINY)
    out = _finished(tmp_path)
    (out / "thesis.tex").write_text("mine")
    damage(out)
    before = _snapshot(out)
    outcome, detail = classify(Case(name, [*ARGV, "--force", "--out", str(out)],
                                    mention="files boundlab did not write"))
    assert outcome in GOOD, f"{name}: {outcome}: {detail}"
    assert _snapshot(out) == before


def test_a_forged_manifest_cannot_get_a_user_file_deleted(tmp_path, fake):
    from boundlab.io import MANIFEST

    out = _finished(tmp_path)
    (out / DIR / "notes.txt").write_text("mine")
    (out / "thesis.tex").write_text("mine too")
    _edit(out / MANIFEST, lambda d: d["files"].update(
        {f"{DIR}/notes.txt": _sha(out / DIR / "notes.txt"),
         "thesis.tex": _sha(out / "thesis.tex")}))
    status, stdout, err, exc = run_cli([*ARGV, "--force", "--out", str(out)])
    assert exc is None and status == 2 and f"{DIR}/" in err
    assert (out / DIR / "notes.txt").read_text() == "mine"
    status, stdout, err, exc = run_cli(["reproduce", "004:fig5", "--size", "tiny", "--out",
                                        str(out)])
    assert status == 0 and (out / "thesis.tex").read_text() == "mine too"


@fuzz_settings(max_examples=25)
@given(st.binary(max_size=2000))
def test_random_done_json_is_a_clear_error(data):
    import tempfile

    from boundlab.errors import IntegrityError
    from verify.reproduce.store import read_item

    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, DIR))
        with open(os.path.join(d, DIR, "done.json"), "wb") as fh:
            fh.write(data)
        with pytest.raises(IntegrityError, match="done.json"):
            read_item(d, ITEM, TINY.key())


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
                     st.text(max_size=8), lambda c: st.lists(c, max_size=3) |
                     st.dictionaries(st.text(max_size=8), c, max_size=3), max_leaves=10)


@fuzz_settings(max_examples=25)
@given(st.dictionaries(st.sampled_from(["format", "id", "outcome", "how", "config", "claims",
                                        "files", "seal", "error", "seconds"]), _json))
def test_random_done_fields_are_a_clear_error(tmp_path_factory, fields):
    from boundlab.errors import IntegrityError
    from verify.reproduce.store import FORMAT, read_item

    d = tmp_path_factory.mktemp("r")
    (d / DIR).mkdir()
    doc = {"format": FORMAT, "id": ITEM, **fields}
    (d / DIR / "done.json").write_text(json.dumps(doc))
    with pytest.raises(IntegrityError, match="done.json"):
        read_item(d, ITEM, TINY.key())
