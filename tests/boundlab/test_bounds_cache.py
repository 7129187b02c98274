"""The compiled-evaluator cache (boundlab._cache): same output as the sympy path, hit / miss,
corrupt and tampered entries, an unwritable directory, stale keys.

The equality tests run ``boundlab bounds eval`` in-process twice per point, once answered from
a warm cache (the fast path forced on, although the test process has loaded the registry) and
once with ``BOUNDLAB_NO_CACHE=1`` (the sympy path), and compare exit status, stdout and stderr
as strings: the JSON output prints every float with ``repr``, so equal text is equal bits.
"""

import contextlib
import dataclasses
import io
import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab
from boundlab import _cache, _cache_build
from boundlab._fastbound import FastBound, NeedsExact
from boundlab.testing import params as valid_params
from verify.cli import bounds_cmd, main

IDS = boundlab.ids()


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A warm cache directory, and the CLI's cache switch on for this module's tests."""
    d = str(tmp_path_factory.mktemp("bounds-cache"))
    assert _cache_build.store_catalogue(d)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BOUNDLAB_CACHE_DIR", d)
        mp.delenv("BOUNDLAB_NO_CACHE", raising=False)
        mp.setattr(bounds_cmd, "_use_cache", _cache.enabled)  # ignore the loaded registry
        yield d


def run(argv, *, cache: bool):
    """(exit status, stdout, stderr, answered by) of one in-process CLI call."""
    out, err, seen = io.StringIO(), io.StringIO(), []
    real = bounds_cmd.eval_report

    def spy(b, args):
        seen.append("cache" if isinstance(b, FastBound) else "sympy")
        return real(b, args)

    bounds_cmd.eval_report = spy
    try:
        with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            mp.setenv("BOUNDLAB_NO_CACHE", "" if cache else "1")  # restored on exit
            rc = main(list(argv))
    finally:
        bounds_cmd.eval_report = real
    return rc, out.getvalue(), err.getvalue(), seen


def _argv(bid, point, *extra):
    return ["bounds", "eval", bid, *[f"{k}={float(v)!r}" for k, v in point.items()], *extra]


def assert_same(bid, point):
    answered = []
    for extra in ((), ("--json", "--strict")):
        argv = _argv(bid, point, *extra)
        fast, slow = run(argv, cache=True), run(argv, cache=False)
        assert fast[:3] == slow[:3], (argv, fast, slow)
        assert slow[3] == ["sympy"]
        answered.append(fast[3])
    return answered


# ------------------------------------------------------------------------------ equality
@st.composite
def wide(draw, bound):
    """Points over the whole domain, extreme magnitudes included (preconditions ignored):
    they exercise overflow, cancellation and so the exact (sympy) fallback."""
    out = {}
    for name, prm in {**bound.params, **bound.extra_params}.items():
        d = prm.domain
        if d.integer:
            v = float(int(d.lo) + draw(st.sampled_from([0, 1, 2, 7, 10**6, 10**12])))
        elif d.lo == 0 and d.hi == 1:
            v = draw(st.sampled_from([1e-300, 1e-17, 0.3, 1 - 1e-16]))
            v = 1.0 if not d.hi_open and draw(st.booleans()) else v
        else:
            lo = d.lo if math.isfinite(d.lo) else 0.0
            v = lo + draw(st.sampled_from([1e-300, 1e-8, 0.5, 3.0, 1e8, 1e150]))
            if not d.lo_open and draw(st.integers(0, 4)) == 0:
                v = lo
            if math.isfinite(d.hi):
                v = min(v, d.hi)
        out[name] = v
    return out


@pytest.mark.parametrize("bid", IDS)
def test_same_output_inside_preconditions(bid, warm):
    """Every catalogue bound, at points drawn by boundlab.testing.params: same bytes, and the
    cache answered."""
    b = boundlab.get(bid)

    @settings(max_examples=3)
    @given(valid_params(b))
    def check(point):
        answered = assert_same(bid, point)
        assert all(a[0] == "cache" for a in answered)

    check()


@pytest.mark.parametrize("bid", IDS)
def test_same_output_over_whole_domain(bid, warm):
    """Extreme points too, where the cache hands over to the sympy path (or a domain error
    is reported): the same bytes, errors included."""
    b = boundlab.get(bid)

    @settings(max_examples=3)
    @given(wide(b))
    def check(point):
        assert_same(bid, point)

    check()


def test_fallback_to_exact_gives_the_sympy_bytes(warm):
    """drift.plateau = 18 L eta^2 tau^2 zeta^2 at eta = L = zeta = 1e150 exceeds float64: the
    cached program cannot certify the value, so the sympy path answers (inf, from the exact
    evaluation), with the same output."""
    point = {"eta": 1e150, "tau": 10.0, "L": 1e150, "zeta": 1e150}
    fast = _cache.load_bound("drift.plateau", warm)
    with pytest.raises(NeedsExact):
        fast.evaluate(**point)
    answered = assert_same("drift.plateau", point)
    assert answered == [["cache", "sympy"]] * 2
    out = json.loads(run(_argv("drift.plateau", point, "--json"), cache=True)[1])
    assert out["value"] is None and out["value_status"] == "inf"


@pytest.mark.parametrize("argv", [
    ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407", "bogus=1"],
    ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19"],
    ["bounds", "eval", "drift.plateau", "eta=-1", "tau=10", "L=0.19", "zeta=0.407"],
    ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=2.5", "L=0.19", "zeta=0.407"],
    ["bounds", "eval", "drift.plateau", "eta=abc", "tau=10", "L=0.19", "zeta=0.407"],
    ["bounds", "eval", "drift.plateau", "eta=2", "tau=10", "L=1", "zeta=1", "--strict"],
    ["bounds", "eval", "drift.client_drift", "eta=0.1", "tau=2", "zeta=1.0", "sigma=0.0"],
    ["bounds", "eval", "drift.nope", "eta=1"],
])
def test_same_errors_and_notes(argv, warm):
    """Unknown / missing / out-of-domain parameters, violated and unchecked preconditions, an
    unknown id: the same exit status and the same one line."""
    fast, slow = run(argv, cache=True), run(argv, cache=False)
    assert fast[:3] == slow[:3]
    assert fast[0] in (0, 2) and (fast[0] == 0 or fast[2].count("\n") == 1)


# ------------------------------------------------------------------------------ hit / miss
def test_miss_then_hit(tmp_path, monkeypatch):
    d = str(tmp_path / "c")
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", d)
    monkeypatch.delenv("BOUNDLAB_NO_CACHE", raising=False)
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    argv = ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407",
            "--json"]
    assert _cache.load_bound("drift.plateau") is None and _cache.load_index() is None
    first = run(argv, cache=True)
    assert first[0] == 0 and first[3] == ["sympy"]  # a miss: the sympy path, then stored
    assert isinstance(_cache.load_bound("drift.plateau"), FastBound)
    second = run(argv, cache=True)
    assert second[:3] == first[:3] and second[3] == ["cache"]

    def no_sympy(*a, **k):
        raise AssertionError("the registry was asked")

    monkeypatch.setattr(boundlab.registry, "get", no_sympy)
    monkeypatch.setattr(boundlab.registry, "catalogue", no_sympy)
    assert run(argv, cache=True)[:3] == first[:3]  # answered from the cache alone
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["bounds", "list", "--json"]) == 0
    assert [r["id"] for r in json.loads(out.getvalue())] == IDS


def test_list_same_rows(warm):
    for argv in (["bounds", "list", "--json"], ["bounds", "list", "--family", "skew"],
                 ["bounds", "list", "--family", "nope"]):
        assert run(argv, cache=True)[:3] == run(argv, cache=False)[:3]
    assert bounds_cmd.list_rows(use_cache=True) == bounds_cmd.list_rows()


def test_disabled_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("BOUNDLAB_NO_CACHE", "1")
    assert not _cache_build.store_catalogue() and _cache.load_index() is None
    assert not (tmp_path / "c").exists()


def test_cache_dir_variables(monkeypatch, tmp_path):
    for k in ("BOUNDLAB_CACHE_DIR", "BOUNDLAB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    assert _cache.cache_dir().endswith(os.path.join(".cache", "boundlab", "bounds"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir() == str(tmp_path / "xdg" / "boundlab" / "bounds")
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path / "root"))
    assert _cache.cache_dir() == str(tmp_path / "root" / "bounds")
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(tmp_path / "own"))
    assert _cache.cache_dir() == str(tmp_path / "own")


# ------------------------------------------------------------------------------ corruption
def _entry_file(d, bid):
    row = next(r for r in _cache.load_index(d) if r["id"] == bid)
    return _cache.entry_path(d, row["entry"])


def test_corrupt_entry_is_ignored_and_rewritten(tmp_path, monkeypatch):
    d = str(tmp_path)
    assert _cache_build.store_catalogue(d)
    path = _entry_file(d, "drift.plateau")
    good = open(path).read()
    data = json.loads(good)
    data["payload"]["program"]["prog"][0][2] = 1  # an edit the checksum does not cover
    with open(path, "w") as fh:
        json.dump(data, fh)
    assert _cache.load_bound("drift.plateau", d) is None  # bad checksum: a miss
    assert _cache.load_bound("drift.fedavg_convex", d) is not None  # the others still hit
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", d)
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    argv = ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407",
            "--json"]
    fast = run(argv, cache=True)  # a miss: the sympy path answers and rewrites the entry
    assert fast[3] == ["sympy"] and fast[:3] == run(argv, cache=False)[:3]
    assert json.loads(open(path).read()) == json.loads(good)
    assert run(argv, cache=True)[3] == ["cache"]
    assert _cache.load_bound("drift.plateau", d) is not None
    with open(path, "w") as fh:
        fh.write(good[: len(good) // 2])  # truncated
    assert _cache.load_bound("drift.plateau", d) is None


def test_corrupt_index_is_a_miss_and_rewritten_by_the_cli(tmp_path, monkeypatch):
    d = str(tmp_path)
    assert _cache_build.store_catalogue(d)
    index = _cache.index_path(d, _cache.fingerprint())
    with open(index, "a") as fh:
        fh.write(" ")  # still JSON, same checksum: stays valid
    assert _cache.load_index(d) is not None
    with open(index, "w") as fh:
        fh.write('{"kind": "index"')
    assert _cache.load_index(d) is None
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", d)
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    assert run(["bounds", "list", "--json"], cache=True)[0] == 0
    assert _cache.load_index(d) is not None


def test_tampered_entry_with_valid_checksum_is_rejected(tmp_path):
    """An entry is data parsed against a schema: an unknown op, a forward register reference
    or a constant of the wrong type is refused even when the checksum matches."""
    d = str(tmp_path)
    assert _cache_build.store_catalogue(d)
    path = _entry_file(d, "drift.plateau")
    data = json.loads(open(path).read())
    prog = data["payload"]["program"]["prog"]
    for bad in (["__import__", [], "os"], ["exp", [len(prog) + 5], None],
                ["const", [], [1.5, 0.0]], ["arg", [], 99]):
        tampered = json.loads(json.dumps(data))
        tampered["payload"]["program"]["prog"][0] = bad
        tampered["checksum"] = _cache.checksum("evaluator", data["key"], tampered["payload"])
        with open(path, "w") as fh:
            json.dump(tampered, fh)
        assert _cache.load_bound("drift.plateau", d) is None, bad


def test_unwritable_directory_falls_back_silently(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    assert not _cache_build.store_catalogue()
    argv = ["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407"]
    for a in (argv, argv + ["--json"], ["bounds", "list", "--json"]):
        fast, slow = run(a, cache=True), run(a, cache=False)
        assert fast[:3] == slow[:3] and fast[0] == 0 and fast[2] == ""
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(blocker))  # the directory is a file
    assert run(argv, cache=True)[:3] == run(argv, cache=False)[:3]


# ------------------------------------------------------------------------------ keys
def test_changed_expression_never_reads_a_stale_entry(tmp_path, monkeypatch):
    """The index is per source fingerprint; entries are keyed by the expressions: a changed
    catalogue bound (here: drift.plateau doubled, as an edited source would give) gets a new
    key, and the old index keeps pointing at the old entry."""
    d = str(tmp_path)
    point = {"eta": 0.2, "tau": 10, "L": 0.19, "zeta": 0.407}
    monkeypatch.setattr(_cache, "fingerprint", lambda: "a" * 64)
    assert _cache_build.store_catalogue(d)
    before = _cache.load_bound("drift.plateau", d).evaluate(**point)

    b = boundlab.get("drift.plateau")
    doubled = dataclasses.replace(b, expr=2 * b.expr, terms={k: 2 * v for k, v in b.terms.items()})
    assert _cache_build.entry_key(doubled) != _cache_build.entry_key(b)
    monkeypatch.setitem(boundlab.registry._family("drift"), "drift.plateau", doubled)
    monkeypatch.setattr(_cache, "fingerprint", lambda: "b" * 64)
    assert _cache.load_bound("drift.plateau", d) is None  # new sources: a miss
    assert _cache_build.store_bound("drift.plateau", d)
    after = _cache.load_bound("drift.plateau", d).evaluate(**point)
    assert after == doubled.evaluate(**point) == 2 * before
    monkeypatch.setattr(_cache, "fingerprint", lambda: "a" * 64)
    assert _cache.load_bound("drift.plateau", d).evaluate(**point) == before


def test_fingerprint_follows_the_sources(tmp_path, monkeypatch):
    fp = _cache.fingerprint()
    assert fp == _cache.fingerprint() and len(fp) == 64
    src = tmp_path / "pkg"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(_cache, "_PKG", str(src))
    one = _cache.fingerprint()
    (src / "a.py").write_text("x = 2\n")
    assert _cache.fingerprint() != one


def test_registered_bounds_take_the_sympy_path(tmp_path, monkeypatch):
    """A bound registered in the process is evaluated by the sympy path and never stored."""
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(tmp_path))
    b = boundlab.get("drift.plateau")
    mine = dataclasses.replace(b, id="mine.cache_demo", expr=b.expr / 2, terms={})
    boundlab.register(mine)
    try:
        assert not _cache.pristine()  # this process has loaded the registry: no cache
        monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
        argv = ["bounds", "eval", "mine.cache_demo", "eta=0.2", "tau=10", "L=0.19",
                "zeta=0.407", "--json"]
        rc, out, _, seen = run(argv, cache=True)
        assert rc == 0 and seen == ["sympy"]
        assert json.loads(out)["value"] == mine.evaluate(eta=0.2, tau=10, L=0.19, zeta=0.407)
        assert all(r["id"] != "mine.cache_demo" for r in _cache.load_index(str(tmp_path)))
        assert not _cache_build.store_bound("mine.cache_demo", str(tmp_path))
    finally:
        boundlab.unregister("mine.cache_demo")
