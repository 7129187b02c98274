"""One result schema (issue 22, item 1): every producer names a result's columns alike, the
ratio is measured / bound everywhere, and the old names still read with a DeprecationWarning."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import boundlab
import toys
import verify
from verify import schema
from verify.compare import compare
from verify.report import to_json, write_report

BOUND = "drift.fedavg_convex"
RUN = dict(rounds=6, lr=0.2, local_steps=3)


def _schema_cols(columns) -> set:
    """The schema's columns (a JSON ``<key>_status`` sibling of a null says which non-finite
    number it was, boundlab.io.json_safe: not a column of its own)."""
    return {c for c in columns if (c in schema.CORE or c.startswith(("term_", "param_")))
            and not c.endswith("_status")}


@pytest.fixture(scope="module")
def producers(tmp_path_factory):
    """The six producers' columns for one bound on one tiny run."""
    prob = toys.make("seed004-toy")
    checked = verify.check(BOUND, prob, "fedavg", seeds=2, **RUN)
    tr = toys.run(prob, "fedavg", seed=0, **RUN)
    from toys.engine.trace_io import to_log

    logged = verify.check_log(BOUND, to_log(tr, p=prob.p), checked.attrs["params"])
    swept = verify.sweep(prob, "fedavg", grid={}, seeds=2, bound=BOUND, **RUN)
    res = verify.falsify(BOUND, budget=12)
    prm = checked.attrs["params"]
    r = compare(boundlab.get(BOUND), checked["measured"], params=prm, check="c",
                terms=boundlab.get(BOUND).evaluate_terms(**{k: prm[k] for k in
                                                            boundlab.get(BOUND).params}))
    out = write_report([r], tmp_path_factory.mktemp("rep") / "out")
    csv = pd.read_csv(out / "results.csv")
    return {"check": checked, "check_log": logged, "sweep": swept,
            "falsify": res.to_frame(), "results.csv": csv,
            "--json": pd.DataFrame(json.loads(to_json([r]))),
            "falsify --json": pd.DataFrame([res.to_dict()]), "result": r, "prm": prm}


def test_all_six_producers_emit_the_same_columns_for_the_same_bound(producers):
    want = set(schema.columns(boundlab.get(BOUND)))
    assert {"bound_id", "bound_value", "ratio", "term_drift_het", "param_tau"} <= want
    for name in ("check", "check_log", "sweep", "falsify", "results.csv", "--json",
                 "falsify --json"):
        got = _schema_cols(producers[name].columns)
        assert got == want, (name, sorted(got ^ want))
        old = {"bound", "lhs_value", "tau", "eta"} | {c for c in producers[name].columns
                                                       if c.startswith("rhs_")}
        assert not old & set(producers[name].columns), name


def test_ratio_is_measured_over_bound_in_every_producer(producers):
    for name in ("check", "check_log", "sweep", "falsify", "results.csv", "--json"):
        df = producers[name].dropna(subset=["ratio"])
        assert len(df), name
        m, b = df["measured"].to_numpy(float), df["bound_value"].to_numpy(float)
        np.testing.assert_allclose(df["ratio"].to_numpy(float), m / b, rtol=1e-12,
                                   err_msg=name)
    r = producers["result"]
    assert r.verdict == "holds" and r.ratio == pytest.approx(r.measured / r.bound) and r.ratio < 1


def test_rows_are_complete(producers):
    # every row of a run carries the bound, its terms and parameters, not only the judged row
    swept = producers["sweep"]
    cols = ["bound_id", "lhs", *[c for c in swept.columns if c.startswith(("term_", "param_"))]]
    assert swept[cols].notna().all().all() and len(swept) == 2 * (RUN["rounds"] + 1)
    assert swept["verdict"].notna().sum() == 2  # a per-run quantity: judged on the final row
    for name in ("check", "results.csv", "--json"):
        df = producers[name]
        terms = [c for c in df.columns if c.startswith("term_")]
        np.testing.assert_allclose(df[terms].sum(axis=1), df["bound_value"], rtol=1e-9,
                                   err_msg=name)
        prm = [c for c in df.columns if c.startswith("param_")]
        assert df[prm].notna().all().all(), name
    assert producers["check"]["param_tau"].iloc[0] == RUN["local_steps"]


@pytest.mark.parametrize("old, new", [("bound", "bound_id"), ("rhs_tau", "param_tau"),
                                      ("tau", "param_tau")])
def test_old_names_still_read_with_a_deprecation_warning(producers, old, new):
    for name in ("check", "check_log", "sweep"):
        df = producers[name]
        with pytest.warns(DeprecationWarning, match=f"'{old}'.*'{new}'"):
            got = df[old]
        pd.testing.assert_series_equal(got, df[new])
        with pytest.warns(DeprecationWarning):
            assert list(df[[old, "verdict"]].columns) == [new, "verdict"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        producers["check"]["bound_id"]  # a new name never warns
    with pytest.raises(KeyError):
        producers["check"]["no_such_column"]


def test_read_results_maps_the_old_csv_names(tmp_path, producers):
    new = tmp_path / "new.csv"
    producers["results.csv"].to_csv(new, index=False)
    df = schema.read_results(new)
    with pytest.warns(DeprecationWarning, match="'bound'"):
        assert df["bound"].iloc[0] == df["bound_value"].iloc[0]
    old = tmp_path / "old.csv"  # before the schema: bound = the value, ratio = bound / measured
    pd.DataFrame({"bound_id": ["x"], "measured": [2.0], "bound": [8.0], "ratio": [4.0]}
                 ).to_csv(old, index=False)
    with pytest.warns(DeprecationWarning, match="older results.csv"):
        df = schema.read_results(old)
    assert df["bound_value"].iloc[0] == 8.0 and df["ratio"].iloc[0] == 0.25


def test_ratio_helper_and_verdict_meanings_cover_every_verdict():
    from verify.compare import OUTCOMES, VERDICTS

    assert schema.ratio(1.0, 4.0) == 0.25 and np.isnan(schema.ratio(float("nan"), 1.0))
    assert set(schema.VERDICT_MEANINGS) == set(VERDICTS) | set(OUTCOMES)


def test_the_readme_lists_every_verdict_and_schema_column():
    import pathlib

    from verify.compare import OUTCOMES, VERDICTS

    text = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    for v in (*VERDICTS, *OUTCOMES):
        assert f"| `{v}` |" in text, v
    for c in schema.CORE:
        assert f"`{c}`" in text, c


def test_the_readme_and_the_schema_document_the_tightness_bracket():
    import pathlib

    text = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    for c in (*schema.BRACKET, *schema.BRACKET_RENAMED):
        assert f"`{c}`" in text, c
    for c in schema.BRACKET:
        assert f"``{c}``" in schema.__doc__, c


def test_a_tightness_record_reads_its_old_keys_in_the_old_orientation():
    """LB/B = 0.02, UB/B = 0.025 were B/LB = 50 and B/UB = 40 (hand-derived)."""
    r = schema.ResultDict({"bound_id": "drift.plateau", "bound_value": 2.0, "ratio_lo": 0.02,
                           "ratio_hi": 0.025, "worst_case_upper": 0.05})
    with pytest.warns(DeprecationWarning, match="'ratio_low'"):
        assert r["ratio_low"] == pytest.approx(40.0)
    with pytest.warns(DeprecationWarning, match="'ratio_high'"):
        assert r.get("ratio_high") == pytest.approx(50.0)
    assert "ratio_low" not in r and set(r) == {"bound_id", "bound_value", "ratio_lo",
                                                 "ratio_hi", "worst_case_upper"}
    zero = schema.ResultDict({"ratio_hi": float("inf"), "ratio_lo": 0.0})  # B = 0; LB = 0
    with pytest.warns(DeprecationWarning):
        assert zero["ratio_low"] == 0.0 and zero["ratio_high"] is None  # B/UB = 0; B/0: none
