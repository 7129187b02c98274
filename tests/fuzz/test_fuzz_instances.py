"""Saved worst instances are untrusted input: damaged, forged, foreign, huge and mistyped files
through ``verify.worst.replay`` (no CLI command reads one).

Every case must give a clear boundlab error naming the field, or a replay of the instance the
file really holds; no case may run code or write a file. ``cases(...)`` is also what the
before/after counts of issue 20 were measured with.
"""

import itertools
import json

import numpy as np
import pytest
from _fuzz_harness import GOOD, Case, classify, counts, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import verify
from boundlab.errors import BoundlabError
from verify.worst import replay


def reseal(doc):
    """What a forger does: recompute the file's hashes after editing it."""
    try:
        from verify.worst.file import seal_document
    except ImportError:  # code without seals (the counts before issue 20)
        return doc
    try:
        return seal_document(doc)
    except Exception:  # noqa: BLE001 - a structure the claim cannot read: keep the old seal
        return doc


def foreign_code(doc):
    """``doc`` sealed as another boundlab release would seal it."""
    try:
        import boundlab.integrity  # noqa: F401
    except ImportError:  # code without seals (the counts before issue 20)
        return doc
    import boundlab

    real = boundlab.__version__
    boundlab.__version__ = "0.0-other"
    try:
        return reseal(doc)
    finally:
        boundlab.__version__ = real


def write(path, doc, seal=True):
    path.write_text(json.dumps(reseal(doc) if seal else doc))
    return path


def save_instances(tmp):
    """Three small saved instances (one per kind of measure) and their search ratios."""
    out = {}
    for name, bound, setting in (("drift", "drift.client_drift", {"rounds": 3}),
                                 ("gap_t", "contraction.fedprox_sc", {"rounds": 4}),
                                 ("final", "skew.corollary", {"rounds": 4})):
        w = verify.worst_instance(bound, budget=10, seed=0, save=tmp / f"{name}.json",
                                  setting={**setting, "save_always": True})
        out[name] = (tmp / f"{name}.json", w.ratio)
    return out


def _close(ref):
    def check(res):
        r = res["ratio"]
        return None if abs(r - ref) <= 1e-9 * abs(ref) else f"ratio {r!r}, true {ref!r}"
    return check


def _edited(doc, dotted, value):
    doc = json.loads(json.dumps(doc))
    node = doc
    *parents, last = dotted.split(".")
    for p in parents:
        node = node.setdefault(p, {})  # (a file of code without seals has no "seal")
    node[last] = value
    return doc


def cases(tmp, marker, saved):
    def api(name, path, mention=None, expect="error", check=None, bound=None):
        return Case(name, lambda: replay(path, bound=bound), expect=expect, mention=mention,
                    check=check)

    def forged(name, dotted, value, mention, seal=True, base="drift"):
        doc = _edited(docs[base], dotted, value)
        return api(name, write(tmp / f"f-{next(number)}.json", doc, seal), mention)

    number = itertools.count()

    docs = {k: json.loads(p.read_text()) for k, (p, _) in saved.items()}
    drift, ratio = saved["drift"]
    text = drift.read_text()
    d = docs["drift"]
    A = np.asarray(d["instance"]["A"])
    perm = [2, 0, 1]
    permuted = _edited(_edited(d, "instance.A", A[perm].tolist()), "instance.c",
                       np.asarray(d["instance"]["c"])[perm].tolist())
    out = [api(f"valid {k}", p, expect="ok", check=_close(r)) for k, (p, r) in saved.items()]
    out += [
        api("forged but honest: clients permuted", write(tmp / "perm.json", permuted),
            expect="ok", check=_close(ratio)),
        api("truncated", write_text(tmp / "tr.json", text[:len(text) // 2]), "tr.json"),
        api("empty", write_text(tmp / "e.json", ""), "e.json"),
        api("random bytes", write_bytes(tmp / "r.json", bytes(range(256)) * 16), "r.json"),
        api("not an object", write_text(tmp / "l.json", "[1, 2]"), "l.json"),
        api("deep", write_text(tmp / "deep.json", "[" * 50000 + "]" * 50000), "deep.json"),
        api("huge file", write_bytes(tmp / "huge.json", b" " * (65 * 1024 ** 2)), "huge.json"),
        forged("a small file claiming a huge replay", "instance.run.cfg.rounds", 10 ** 9,
               "rounds"),
        forged("1001 clients", "instance.A", [[[1.0]]] * 1001, "instance.A"),
        # valid but foreign
        api("a bound measured otherwise", drift, "bound", bound="contraction.fedprox_sc"),
        api("another instance's seal", write(tmp / "swap.json", {
            **d, "seal": docs["gap_t"].get("seal")}, seal=False), "bound_id"),
        api("made by another release", write(tmp / "other.json", foreign_code(d), seal=False),
            "release"),
        # forged: edited, with or without recomputed hashes
        forged("A edited, hashes kept", "instance.A", (A * 2).tolist(), "matrices", seal=False),
        forged("L edited, hashes kept", "params.L", 3.0, "params.L", seal=False),
        forged("A scaled, hashes recomputed", "instance.A", (A * 2).tolist(), "L"),
        forged("zeta claimed 0.7, hashes recomputed", "instance.run.cfg.zeta", 0.7, "zeta"),
        forged("params zeta claimed 0.7, hashes recomputed", "params.zeta", 0.7, "zeta"),
        forged("mu above the eigenvalues, hashes recomputed", "instance.run.cfg.mu", 0.9, "mu"),
        forged("D claimed 3, hashes recomputed", "instance.run.cfg.D", 3.0, "D"),
        forged("client Hessians differ under a zeta claim", "instance.A",
               [A[0].tolist(), (A[1] * 0.5).tolist(), A[2].tolist()], "zeta"),
        # the replay's default zeta (0.5) is the instance's: the constants used are checked
        api("zeta dropped from the setting", write(tmp / "nozeta.json", _edited(
            d, "instance.run.cfg", {k: v for k, v in d["instance"]["run"]["cfg"].items()
                                    if k != "zeta"})), expect="ok", check=_close(ratio)),
        forged("payload hash recomputed only", "seal.payload_sha256", "0" * 64, "payload",
               seal=False),
        # code-naming and file-writing payloads
        forged("code as the bound id", "bound_id", f"__import__('pathlib').Path("
               f"{str(marker)!r}).touch()", "bound id"),
        forged("a callable as the algorithm", "instance.run.cfg.rule",
               "toys.engine.checkpoint:atomic_write_bytes", "rule", base="final"),
        forged("a path in a text field", "path", str(marker), "payload", seal=False),
    ]
    wrong = {"bound_id": 7, "family": [], "ratio": "1", "lhs": None, "rhs": {}, "evaluations":
             1.5, "seconds": "s", "seed": True, "budget": "10", "how": 3, "path": 1, "verdict":
             0, "trace": "x", "params": [], "extra": "x", "instance": 1, "seal": "x",
             "params.L": "1", "extra.lhs": 1, "extra.setting": [], "instance.A": "A",
             "instance.c": [[1.0, "x"]] * 3, "instance.weights": [1.0, 2.0],
             "instance.x0": [True, 1.0], "instance.run": [], "instance.run.eta": "0.1",
             "instance.run.cfg.tau": 2.5, "instance.run.cfg.L": "1", "instance.run.cfg.bad": 1}
    for dotted, value in wrong.items():
        field = dotted.split(".")[-1]
        out.append(forged(f"wrong type: {dotted}", dotted, value, field,
                          seal=dotted != "seal"))
    return out


def write_text(path, text):
    path.write_text(text)
    return path


def write_bytes(path, data):
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("instances")
    saved = save_instances(tmp)
    return tmp, saved, cases(tmp, tmp / "EXECUTED", saved)


def test_every_instance_case_is_refused_clearly_or_replayed_honestly(setup):
    tmp, _, cs = setup
    bad = [(c.name, *classify(c)) for c in cs]
    bad = [b for b in bad if b[1] not in GOOD]
    assert not bad, bad
    assert not (tmp / "EXECUTED").exists()
    tally = counts(cs)
    assert tally["tried"] == tally["clear"] + tally["ok"] >= 50, tally


@fuzz_settings(max_examples=25)
@given(i=st.integers(0, 10 ** 9), ch=st.sampled_from(list('0 9-.e,[]{}"nx')))
def test_one_character_edits_are_caught_by_the_seal(setup, i, ch):
    tmp, saved, _ = setup
    text = saved["drift"][0].read_text()
    i %= len(text)
    if text[i] == ch:
        return
    path = tmp / "edit.json"
    path.write_text(text[:i] + ch + text[i + 1:])
    try:
        res = replay(path)
    except BoundlabError:
        return
    assert res["ratio"] == pytest.approx(saved["drift"][1], rel=1e-9)  # whitespace only
