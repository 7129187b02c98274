"""Fuzz of the two caches: the evaluator cache (``boundlab bounds eval`` / ``list``) and the PEP
cache (``verify.tightness``): damaged, foreign, forged, huge, wrongly typed, code-naming,
file-writing and terminal-driving files, in a private directory and in one others can write.

A cache is never allowed to change an answer: every case must give the answer of the slow
path (the sympy path, a fresh solve), bit for bit (the PEP: to 1e-9), never a raw exception,
never code run, never a file written. Forged files come with their integrity field recomputed,
as anyone who can write the file can do:

* in a directory that others can write (mode 0777), or that another user owns, the cache is
  refused with a warning and the slow path answers;
* in the user's private directory, a forged PEP entry is caught by its certificate (the
  bracket is recomputed from the solver's certificate on load); a forged *evaluator* entry is
  not (re-deriving it from sympy on load would cost what the cache saves): only the user can
  write there, and :func:`test_private_evaluator_forgery_is_trusted` records that limit.
"""

import atexit
import base64
import functools
import json
import os
import pathlib
import shutil
import tempfile

import numpy as np
import pytest
from _fuzz_harness import GOOD, Case, classify, fuzz_settings, run_cli
from hypothesis import given
from hypothesis import strategies as st

from boundlab import _cache, _cache_build
from verify.cli import bounds_cmd

BID = "drift.plateau"
EVAL = ["bounds", "eval", BID, "eta=0.2", "tau=10", "L=0.19", "zeta=0.407"]
LIST = ["bounds", "list"]
WRONG = {"str": "x", "int": -1, "null": None, "list": [], "dict": {}, "bool": True}
PEP_ARGS = (1.0, 0.1, 0.1, 2, 0.5)  # wc_fedavg_round(L, mu, eta, tau, zeta): Gram size 9
MODES = {"private": 0o700, "world-writable": 0o777, "group-writable": 0o770}


def _tree():
    d = tempfile.mkdtemp(prefix="fuzz-caches-")
    atexit.register(shutil.rmtree, d, True)
    return pathlib.Path(d)


def _with_cache(argv, d):
    """``boundlab ARGV`` in-process with the evaluator cache at ``d`` (forced on)."""
    saved = {k: os.environ.get(k) for k in ("BOUNDLAB_CACHE_DIR", "BOUNDLAB_NO_CACHE")}
    use = bounds_cmd._use_cache
    os.environ["BOUNDLAB_CACHE_DIR"] = str(d) if d else ""
    os.environ["BOUNDLAB_NO_CACHE"] = "" if d else "1"
    bounds_cmd._use_cache = _cache.enabled
    try:
        return run_cli(argv)
    finally:
        bounds_cmd._use_cache = use
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ------------------------------------------------------------------------------ evaluator cache
@functools.lru_cache(maxsize=1)
def _evaluator():
    """(genuine cache dir, index file name, entry file name, other entry name, references)."""
    d = _tree() / "genuine"
    d.mkdir(mode=0o700)
    assert _cache_build.store_catalogue(str(d))
    index = pathlib.Path(_cache.index_path(str(d), _cache.fingerprint())).name
    rows = json.loads((d / index).read_text())["payload"]
    entry = {r["id"]: pathlib.Path(_cache.entry_path(str(d), r["entry"])).name
             for r in rows if r["entry"]}
    refs = {tuple(a): _with_cache(a, None)[:3] for a in (EVAL, EVAL + ["--json"], LIST,
                                                         LIST + ["--json"])}
    return d, index, entry[BID], entry["drift.fedavg_convex"], refs


def _reseal_ev(doc):
    """Recompute the evaluator file's checksum, as anyone who can write it can."""
    if isinstance(doc, dict) and {"kind", "key", "payload"} <= set(doc):
        doc["checksum"] = _cache.checksum(doc["kind"], doc["key"], doc["payload"])
    return doc


def _edit(fn):
    """A JSON edit of a cache file, resealed."""
    def mutate(raw, ctx):
        doc = json.loads(raw)
        fn(doc, ctx)
        return json.dumps(_reseal_ev(doc)).encode()
    return mutate


def _set_payload(field, value):
    return _edit(lambda doc, ctx: doc["payload"].__setitem__(field, value))


def _set_row(field, value):
    def fn(doc, ctx):
        doc["payload"][0][field] = value
    return _edit(fn)


def _bytes(data):
    return lambda raw, ctx: data(raw) if callable(data) else data


def _foreign_entry(raw, ctx):
    d, _, _, other, _ = _evaluator()
    return (d / other).read_bytes()


def _foreign_index(doc, ctx):
    doc["key"] = "b" * 64  # written by other sources


def _op(op, const):
    def fn(doc, ctx):
        doc["payload"]["program"]["prog"][0] = [op, [], const]
    return _edit(fn)


def _scale_program(doc, ctx):  # a forged value: the output times 2
    prog = doc["payload"]["program"]
    prog["prog"].append(["const", [], [(2.0).hex(), (0.0).hex()]])
    prog["prog"].append(["mul", [prog["out"], len(prog["prog"]) - 1], None])
    prog["out"] = len(prog["prog"]) - 1


def _widen_domain(doc, ctx):  # eta = -1 would be accepted
    for p in doc["payload"]["params"]:
        if p[0] == "eta":
            p[1][0] = (-1e300).hex()


def _escape_row(doc, ctx):
    doc["payload"][0]["source"] = "seed \x1b[2J\x1b]0;pwned\x07 \u202e"


def _escape_precondition(doc, ctx):
    for pc in doc["payload"]["preconditions"]:
        pc[0] = "eta <= 1/(4*L)\x1b[31m"


def _wrong(typ):
    """The values of :data:`WRONG` of another type than ``typ`` (the field's own)."""
    return [(k, v) for k, v in WRONG.items()
            if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool))]


def _ev_cases():
    """name -> (target file, mutation, directory mode, argv, what the output must be)."""
    ev, ix = "entry", "index"
    damaged = {"empty": b"", "random": np.random.default_rng(0).bytes(2000),
               "truncated": lambda raw: raw[: len(raw) // 2], "deep": b"[" * 100000,
               "nan": lambda raw: raw.replace(b'"format": 1', b'"format": NaN', 1),
               "huge": lambda raw: raw[:-1] + b" " * (5 * 2**20) + b"}"}
    cases = {}
    for name, data in damaged.items():
        cases[f"entry-{name}"] = (ev, _bytes(data), "private", EVAL, "same")
        cases[f"index-{name}"] = (ix, _bytes(data), "private", LIST, "same")
    cases["entry-foreign"] = (ev, _foreign_entry, "private", EVAL, "same")
    cases["index-foreign"] = (ix, _edit(_foreign_index), "private", LIST, "same")
    forged = {"value-doubled": (ev, _edit(_scale_program), EVAL),
              "domain-widened": (ev, _edit(_widen_domain), EVAL[:3] + ["eta=-1"] + EVAL[4:]),
              "preconditions-dropped": (ev, _set_payload("preconditions", []),
                                        EVAL[:4] + ["tau=1e3", "L=9"] + EVAL[6:]),
              "index-escape": (ix, _edit(_escape_row), LIST)}
    for mode in ("world-writable", "group-writable", "other-uid"):
        for name, (target, fn, argv) in forged.items():
            cases[f"forged-{name}-{mode}"] = (target, fn, mode, argv, "same")
    for field, typ in (("id", str), ("kind", str), ("params", list), ("extra_params", list),
                       ("program", dict), ("terms", list), ("preconditions", list)):
        for tname, bad in _wrong(typ):
            cases[f"type-entry-{field}-{tname}"] = (ev, _set_payload(field, bad), "private",
                                                    EVAL, "same")
    for field, typ in (("id", str), ("family", str), ("kind", str), ("source", str),
                       ("lhs", str), ("params", list), ("printed", bool), ("entry", str)):
        for tname, bad in _wrong(typ):
            cases[f"type-index-{field}-{tname}"] = (ix, _set_row(field, bad), "private",
                                                    LIST + ["--json"], "same")
    cases["value-entry-kind"] = (ev, _set_payload("kind", "x"), "private", EVAL, "same")
    cases["value-index-kind"] = (ix, _set_row("kind", "x"), "private", LIST + ["--json"],
                                 "same")
    cases["code-op-import"] = (ev, _op("__import__", "os"), "private", EVAL, "same")
    cases["code-op-system"] = (ev, _op("system", "touch {marker}"), "private", EVAL, "same")
    cases["file-writer-op"] = (ev, _op("open", "{marker}"), "private", EVAL, "same")
    cases["code-index-id"] = (ix, _set_row("id", "__import__('os').system('x')"), "private",
                              LIST + ["--json"], "same")
    cases["code-index-params"] = (ix, _set_row("params", ["open('{marker}','w')"]), "private",
                                  LIST + ["--json"], "same")
    cases["escape-index-private"] = (ix, _edit(_escape_row), "private", LIST, "printable")
    cases["escape-precondition-private"] = (ev, _edit(_escape_precondition), "private",
                                            EVAL[:5] + ["L=9"] + EVAL[6:], "printable")
    return cases


EV_CASES = _ev_cases()


def _place(tmp, mode, monkeypatch):
    """A copy of the genuine cache in ``tmp`` with the directory ``mode``."""
    d = tmp / "cache"
    shutil.copytree(_evaluator()[0], d)
    os.chmod(d, MODES.get(mode, 0o700))
    if mode == "other-uid":  # the directory then belongs to someone else
        monkeypatch.setattr(os, "getuid", lambda: os.stat(d).st_uid + 4321)
    return d


def _printable(out):
    bad = [c for c in out if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0
           or 0x202A <= ord(c) <= 0x202E]
    return f"raw control characters {bad[:3]!r} reach the terminal" if bad else None


def _ev_case(name, tmp, monkeypatch):
    """The case (the CLI with the evaluator cache at a mutated copy) and its marker file."""
    target, mutate, mode, argv, want = EV_CASES[name]
    _, index, entry, _, refs = _evaluator()
    ref = refs.get(tuple(argv)) or _with_cache(argv, None)[:3]
    d = _place(tmp, mode, monkeypatch)
    marker = tmp / "PWNED"
    path = d / (entry if target == "entry" else index)
    path.write_bytes(mutate(path.read_bytes(), None).replace(b"{marker}", str(marker).encode()))
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(d))
    monkeypatch.delenv("BOUNDLAB_NO_CACHE", raising=False)
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)

    def check(out):
        if want == "printable":
            return _printable(out)
        return None if out == ref[1] else f"output {out[:120]!r} != slow path {ref[1][:120]!r}"

    expect = "error" if ref[0] == 2 else "ok"  # the slow path refuses it: so must the cache
    return Case(name, list(argv), expect, None, check), marker


@pytest.mark.parametrize("name", sorted(EV_CASES))
def test_evaluator_cache_case(name, tmp_path, monkeypatch):
    case, marker = _ev_case(name, tmp_path, monkeypatch)
    outcome, detail = classify(case)
    assert not marker.exists(), f"{name}: the cache file made boundlab write a file"
    assert outcome in GOOD, f"{name}: {outcome}: {detail}"


def test_private_evaluator_forgery_is_trusted(tmp_path, monkeypatch):
    """The documented limit: inside the user's own private directory a resealed evaluator
    entry is believed (only the user can write there); the same file in a directory others
    can write is refused (above)."""
    target, mutate, _, argv, _ = EV_CASES["forged-value-doubled-world-writable"]
    EV_CASES["_private"] = (target, mutate, "private", argv, "same")
    try:
        case, _ = _ev_case("_private", tmp_path, monkeypatch)
    finally:
        del EV_CASES["_private"]
    assert classify(case)[0] == "silent"


# ------------------------------------------------------------------------------ PEP cache
@functools.lru_cache(maxsize=1)
def _pep():
    """(genuine cache dir, its entry's relative path, a foreign entry's bytes, the reference
    record of a fresh solve)."""
    from verify.tightness import PEPCache, wc_fedavg_round

    root = _tree()
    d, other = root / "genuine-pep", root / "other-pep"
    ref = wc_fedavg_round(*PEP_ARGS, cache=PEPCache(d))
    wc_fedavg_round(*PEP_ARGS[:3], 1, PEP_ARGS[4], cache=PEPCache(other))
    [entry] = list(d.rglob("*.json"))
    [foreign] = list(other.rglob("*.json"))
    return d, entry.relative_to(d), foreign.read_bytes(), ref


def _reseal_pep(doc):
    """Recompute the entry's integrity field (the seal; before issue 20: the checksum)."""
    from verify.tightness import cache

    if not isinstance(doc, dict) or not isinstance(doc.get("result"), dict):
        return doc
    if "seal" in doc:
        from boundlab.integrity import seal

        doc["seal"] = seal({"key": doc["key"], "problem": doc.get("problem")},
                           cache._payload(doc["result"]))
    else:
        doc["checksum"] = cache.checksum(doc["key"], doc["result"])
    return doc


def _pep_edit(fn):
    def mutate(raw):
        doc = json.loads(raw)
        fn(doc["result"], doc)
        return json.dumps(_reseal_pep(doc)).encode()
    return mutate


def _setr(field, value):
    return _pep_edit(lambda r, doc: r.__setitem__(field, value))


def _scale(**factors):
    def fn(r, doc):
        for k, f in factors.items():
            r[k] = None if f is None else r[k] * f
    return _pep_edit(fn)


def _cert(name, fn):
    """Edit one certificate array (an attacker's consistent forgery: value / lower follow)."""
    def edit(r, doc):
        c = r.get("certificate")
        if not isinstance(c, dict):  # an entry without certificate: forge the value alone
            r["value"] *= 1e-6
            return
        arr = np.frombuffer(base64.b64decode(c[name]["b64"]), "<f8").copy()
        arr = fn(arr)
        c[name] = {"shape": c[name]["shape"], "b64": base64.b64encode(arr.tobytes()).decode()}
        from verify.tightness.certificate import _recompute, problem_rows
        from verify.tightness.pep_models import _build_rounds

        r["lower"], r["value"], r["errors"] = _recompute(problem_rows(_build_rounds(
            doc["key"]["params"])), c, "x")
    return _pep_edit(edit)


def _pep_cases():
    """name -> (mutation of the entry's bytes, directory mode)."""
    rng = np.random.default_rng(1)
    raw = {"empty": b"", "random": rng.bytes(3000), "deep": b"[" * 100000,
           "truncated": lambda b: b[: len(b) // 2], "foreign": lambda b: _pep()[2],
           "huge": lambda b: b[:-1] + b" " * (40 * 2**20) + b"}",
           "nan": lambda b: b.replace(b'"gap": ', b'"gap": NaN, "x": ', 1)}
    cases = {f"damaged-{k}": (v if callable(v) else (lambda b, v=v: v), "private")
             for k, v in raw.items()}
    forged = {
        "value-1e-6": _scale(value=1e-6), "lower-1e6": _scale(lower=1e6),
        "bracket-1e-6": _scale(value=1e-6, lower=1e-6, gap=1e-6),
        "no-certificate": _pep_edit(lambda r, d: (r.pop("certificate", None),
                                                  r.__setitem__("value", r["value"] * 1e-6))),
        "infeasible-claim": _pep_edit(lambda r, d: (r.pop("certificate", None), r.update(
            value=None, lower=None, gap=None, ok=True, status="infeasible"))),
        "unbounded-claim": _pep_edit(lambda r, d: (r.pop("certificate", None), r.update(
            value=1e308, lower=1e308, status="unbounded"))),
        "dual-scaled": _cert("lam", lambda a: a * 1e-6),
        "primal-scaled": _cert("G", lambda a: a * 1e3),
        "problem-of-another-pep": _pep_edit(lambda r, d: d.__setitem__("problem", "0" * 64)),
        "key-of-another-pep": _pep_edit(lambda r, d: d["key"]["params"].__setitem__("tau", 1)),
    }
    for name, fn in forged.items():
        cases[f"forged-{name}"] = (fn, "private")
    for mode in ("world-writable", "group-writable", "other-uid"):
        cases[f"forged-value-1e-6-{mode}"] = (_scale(value=1e-6), mode)
    fields = {"value": float, "lower": float, "gap": float, "ok": bool, "solver": str,
              "status": str, "seconds": float, "gram_size": int, "errors": dict,
              "attempts": list, "certificate": dict}
    for field, typ in fields.items():
        for tname, bad in _wrong((int, float) if typ is float else typ):
            cases[f"type-{field}-{tname}"] = (_setr(field, bad), "private")
    cases["huge-certificate-shape"] = (_pep_edit(lambda r, d: r["certificate"]["G"].update(
        shape=[10**6, 10**6])), "private")
    cases["certificate-bad-base64"] = (_pep_edit(lambda r, d: r["certificate"]["lam"].update(
        b64="!" * len(r["certificate"]["lam"]["b64"]))), "private")
    cases["code-status"] = (_setr("status", "__import__('os').system('touch {marker}')"),
                            "private")
    cases["code-certificate"] = (_pep_edit(lambda r, d: r.__setitem__("certificate", {
        "G": {"__reduce__": "os.system", "args": ["touch {marker}"]}})), "private")
    cases["file-writer-attempts"] = (_setr("attempts", [{"solver": "open", "status":
                                                         "{marker}", "ok": True}]), "private")
    cases["escape-status"] = (_setr("status", "optimal\x1b[2J\x1b]0;pwned\x07"), "private")
    return cases


PEP_CASES = _pep_cases()


def _pep_case(name, tmp, monkeypatch):
    from verify.tightness import PEPCache, wc_fedavg_round

    mutate, mode = PEP_CASES[name]
    genuine, rel, _, ref = _pep()
    d = tmp / "pep"
    shutil.copytree(genuine, d)
    os.chmod(d, MODES.get(mode, 0o700))
    if mode == "other-uid":
        monkeypatch.setattr(os, "getuid", lambda: os.stat(d).st_uid + 4321)
    marker = tmp / "PWNED"
    path = d / rel
    path.write_bytes(mutate(path.read_bytes()).replace(b"{marker}", str(marker).encode()))

    def check(rec):
        for k in ("value", "lower"):
            got, want = getattr(rec, k), getattr(ref, k)
            if got is None or abs(got - want) > 1e-9 * abs(want):
                return f"{k} = {got!r}, a fresh solve gives {want!r}"
        return _printable(rec.status) or (None if rec.ok else "not ok")
    return Case(name, lambda: wc_fedavg_round(*PEP_ARGS, cache=PEPCache(d)), "ok", None,
                check), marker


@pytest.mark.parametrize("name", sorted(PEP_CASES))
def test_pep_cache_case(name, tmp_path, monkeypatch):
    case, marker = _pep_case(name, tmp_path, monkeypatch)
    outcome, detail = classify(case)
    assert not marker.exists(), f"{name}: the cache file made boundlab write a file"
    assert outcome in GOOD, f"{name}: {outcome}: {detail}"


# ------------------------------------------------------------------------------ properties
@fuzz_settings(max_examples=15, deadline=None)
@given(st.data())
def test_any_damaged_pep_entry_gives_the_fresh_answer(tmp_path_factory, data):
    from verify.tightness import PEPCache, wc_fedavg_round

    genuine, rel, _, ref = _pep()
    d = tmp_path_factory.mktemp("pep") / "c"
    shutil.copytree(genuine, d)
    b = bytearray((d / rel).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
    (d / rel).write_bytes(bytes(b))
    rec = wc_fedavg_round(*PEP_ARGS, cache=PEPCache(d))
    assert abs(rec.value - ref.value) <= 1e-9 * abs(ref.value)
    assert abs(rec.lower - ref.lower) <= 1e-9 * abs(ref.lower)


@fuzz_settings(max_examples=15, deadline=None)
@given(st.data())
def test_any_damaged_evaluator_entry_gives_the_sympy_answer(tmp_path_factory, data):
    genuine, _, entry, _, refs = _evaluator()
    d = tmp_path_factory.mktemp("ev") / "c"
    shutil.copytree(genuine, d)
    b = bytearray((d / entry).read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
    (d / entry).write_bytes(bytes(b))
    assert _with_cache(EVAL, d)[:3] == refs[tuple(EVAL)]
