"""Run logs are untrusted input: damaged, forged, foreign, huge and mistyped logs through
``verify.check_log`` (no CLI command reads a log).

Every case must give a clear boundlab error naming what is wrong, or a verdict on the whole
data; no case may run code or write a file. ``cases(tmp)`` is also what the before/after
counts of issue 20 were measured with.
"""

import json
import math

import numpy as np
import pytest
from _fuzz_harness import GOOD, Case, classify, counts, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

import verify
from boundlab.errors import BoundlabError

NAN = float("nan")
PRM = dict(D=1.0, eta=0.1, tau=2, T=3, L=1.0, zeta=0.5)
BOUND = "drift.plateau_finite"  # lhs avg_shadow_gap = (1/T) sum_{r<T} shadow_gap_r
ROWS = {"round": [0, 1, 2, 3], "seed": [0, 0, 0, 0], "shadow_gap": [0.5, 0.3, 0.2, NAN],
        "dist2": [1.0, 0.8, 0.6, 0.5]}
MEAN = (0.5 + 0.3 + 0.2) / 3  # by hand


def _csv(rows) -> str:
    cols = list(rows)
    lines = [",".join(cols)]
    for vals in zip(*rows.values()):
        lines.append(",".join("" if isinstance(v, float) and math.isnan(v) else str(v)
                              for v in vals))
    return "\n".join(lines) + "\n"


def _json(rows) -> str:
    out = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in
            zip(rows, vals)} for vals in zip(*rows.values())]
    return json.dumps(out)


def _edit(col, i, value):
    rows = {k: list(v) for k, v in ROWS.items()}
    rows[col][i] = value
    return rows


def _holds_mean(ref=MEAN):
    def check(df):
        if df["measured"].iloc[0] != pytest.approx(ref, rel=1e-12):
            return f"measured {df['measured'].iloc[0]!r}, true {ref!r}"
        return None if df["verdict"].iloc[0] in ("holds", "VIOLATED") else \
            f"verdict {df['verdict'].iloc[0]}"
    return check


def cases(tmp, marker):
    def file(name, content):
        p = tmp / name
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)
        return p

    def api(name, source, mention=None, expect="error", check=None, params=PRM, **kw):
        bound = kw.pop("bound", BOUND)
        return Case(name, lambda: verify.check_log(bound, source, params, **kw),
                    expect=expect, mention=mention, check=check)

    import pandas as pd

    pq = tmp / "ok.parquet"
    pd.DataFrame(ROWS).to_parquet(pq, index=False)
    good_csv = file("ok.csv", _csv(ROWS))
    good_json = file("ok.json", _json(ROWS))
    out = [
        api("valid csv", good_csv, expect="ok", check=_holds_mean()),
        api("valid json", good_json, expect="ok", check=_holds_mean()),
        api("valid parquet", pq, expect="ok", check=_holds_mean()),
        api("valid, T from the log", good_csv, expect="ok", check=lambda df: None if
            df["param_T"].iloc[0] == 3 else "T not 3", params={k: v for k, v in PRM.items()
                                                          if k != "T"}),
        # truncated, empty, random
        api("truncated csv", file("tr.csv", _csv(ROWS)[:-6]), "tr.csv"),
        api("truncated json", file("tr.json", _json(ROWS)[:-9]), "tr.json"),
        api("truncated parquet", file("tr.parquet", pq.read_bytes()[:200]), "tr.parquet"),
        api("empty csv", file("e.csv", ""), "e.csv"),
        api("empty json", file("e.json", b""), "e.json"),
        api("empty parquet", file("e.parquet", b""), "e.parquet"),
        api("header-only csv", file("h.csv", "round,seed,shadow_gap\n"), "h.csv"),
        api("empty json list", file("l.json", "[]"), "l.json"),
        api("random csv", file("r.csv", bytes(np.random.default_rng(0).integers(
            0, 256, 4000, dtype=np.uint8))), "r.csv"),
        api("random json", file("r.json", bytes(range(256)) * 8), "r.json"),
        api("random parquet", file("r.parquet", b"PAR1" + bytes(range(256)) * 8 + b"PAR1"),
            "r.parquet"),
        # foreign: a log of another run
        api("T of another run", good_csv, "T", params={**PRM, "T": 20}),
        api("D below the log's start distance", file("d.csv", _csv(_edit("dist2", 0, 4.0))),
            "D"),
        api("seeds of different lengths", {**{k: v + v[:3] for k, v in ROWS.items()},
                                           "seed": [0] * 4 + [1] * 3}, "round"),
        # forged / damaged rows
        api("a round missing", {k: v[:2] + v[3:] for k, v in ROWS.items()}, "round"),
        api("a round twice", _edit("round", 3, 2), "round"),
        api("round 1e300", _edit("round", 3, 1e300), "round"),
        api("round -1", _edit("round", 0, -1), "round"),
        api("round 2.5", _edit("round", 2, 2.5), "round"),
        api("seed NaN", {**ROWS, "seed": [NAN] * 4}, "seed"),
        api("seed 1.5", {**ROWS, "seed": [1.5] * 4}, "seed"),
        api("inf in a measured row", _edit("shadow_gap", 1, math.inf), "shadow_gap"),
        api("NaN in a measured row", _edit("shadow_gap", 1, NAN), "shadow_gap"),
        api("final value inf", _edit("shadow_gap", 3, math.inf), "shadow_gap"),
        api("final gap inf (diverged)", {**ROWS, "gap": [1.0, 0.5, 0.2, math.inf]},
            expect="ok", bound="skew.corollary", params=dict(T=6, L=1.0, mu=0.1, E=2, G=1.0,
                                                             sigma=0.0, Gamma=0.1,
                                                             rho_bar=1.0, rho_tilde=1.0,
                                                             D0=1.0),
            check=lambda df: None if df["verdict"].iloc[0] == "diverged" else "not diverged"),
        api("only round 0", {k: v[:1] for k, v in ROWS.items()}, "round"),
        # huge
        api("csv over max_bytes", file("big.csv", _csv(ROWS) + "\n" * 5000), "big.csv",
            max_bytes=4096),
        api("deep json", file("deep.json", "[" * 100000 + "]" * 100000), "deep.json"),
        # mistyped and malformed
        api("ragged csv row", file("rg.csv", _csv(ROWS).replace("1,0,0.3,", "1,0,0.3,7,")),
            "rg.csv"),
        api("csv with one extra field on every row", file("rx.csv", _csv(ROWS).replace(
            "\n", ",9\n").replace("dist2,9", "dist2")), "rx.csv"),
        api("duplicate column names", file("dup.csv", _csv(ROWS).replace("dist2", "seed")),
            "dup.csv"),
        api("json rows with other keys", file("k.json", json.dumps(
            [{"round": 0, "shadow_gap": 0.5}, {"round": 1, "other": 1.0}])), "k.json"),
        api("json NaN literal", file("n.json", _json(ROWS).replace("0.3", "NaN")), "n.json"),
        api("params not a dict", good_csv, "params", params="T=3"),
        api("columns not a dict", good_csv, "columns", columns=["shadow_gap"]),
    ]
    for col in ("round", "seed", "shadow_gap"):
        for label, value in (("string", "abc"), ("bool", True), ("list", [1.0]),
                             ("object", {"a": 1}), ("null", None)):
            out.append(api(f"{label} in {col} (json)",
                           file(f"t-{col}-{label}.json", _json(_edit(col, 1, value))), col))
        out.append(api(f"string in {col} (csv)", file(f"t-{col}.csv", _csv(
            _edit(col, 1, "abc"))), col))
        out.append(api(f"string in {col} (dict)", _edit(col, 1, "x1"), col))
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    out += [
        api("code in a measured value", file("c1.csv", _csv(_edit("shadow_gap", 1, code)
                                                           ).replace(code, f'"{code}"')),
            "shadow_gap"),
        api("code as a column name", file("c2.json", _json({**ROWS, code: [1, 2, 3, 4]})),
            expect="ok", check=_holds_mean()),
        api("file-writing names in a row", file("c3.json", _json(
            {**ROWS, "__class__": ["toys.engine.checkpoint:atomic_write_bytes"] * 4,
             "path": [str(marker)] * 4})), expect="ok", check=_holds_mean()),
    ]
    return out


@pytest.fixture(scope="module")
def all_cases(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("logs")
    return tmp, cases(tmp, tmp / "EXECUTED")


def test_every_log_case_is_refused_clearly_or_judged_on_the_whole_data(all_cases):
    tmp, cs = all_cases
    bad = [(c.name, *classify(c)) for c in cs]
    bad = [b for b in bad if b[1] not in GOOD]
    assert not bad, bad
    assert not (tmp / "EXECUTED").exists()


def test_a_parquet_bomb_is_refused_from_its_metadata(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "bomb.parquet"  # 68 M rows announced in about 100 kB
    pq.write_table(pa.table({"round": pa.nulls(68_000_000, pa.int8())}), path,
                   compression="none", write_statistics=False, use_dictionary=False)
    assert path.stat().st_size < 1_000_000
    c = Case("bomb", lambda: verify.check_log(BOUND, path, PRM), mention="cells")
    assert classify(c)[0] == "clear"


def test_counts_are_all_good(all_cases):
    tally = counts(all_cases[1])
    assert tally["tried"] == tally["clear"] + tally["ok"] >= 60, tally


@fuzz_settings(max_examples=30)
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".csv", ".json", ".parquet"]))
def test_any_bytes_give_an_error_or_a_judged_log(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("any") / f"log{suffix}"
    path.write_bytes(data)
    try:
        df = verify.check_log(BOUND, path, PRM)
    except BoundlabError:
        return
    assert np.all(np.isfinite(df["measured"])) or set(df["verdict"]) == {"diverged"}


@fuzz_settings(max_examples=30)
@given(i=st.integers(0, len(_csv(ROWS)) - 1), ch=st.sampled_from(list("0,\n.-eE\"x ")))
def test_one_character_edits_of_a_valid_csv(tmp_path_factory, i, ch):
    text = _csv(ROWS)
    path = tmp_path_factory.mktemp("edit") / "log.csv"
    path.write_text(text[:i] + ch + text[i + 1:])
    try:
        df = verify.check_log(BOUND, path, PRM)
    except BoundlabError:
        return
    assert np.all(np.isfinite(df["measured"])) and len(df) == 1
