"""A report that says what it found (issue 22, item 3): the summary and the versions at the top
of report.md and of the terminal output, tables that fit 100 columns, integers as integers."""

from __future__ import annotations

import io
import re

import boundlab
from verify.compare import claim_result, compare
from verify.report import print_table, write_report
from verify.report import summary as _summary

PRM = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)  # drift.plateau = 2.66 at this point
LONG = "solve with: boundlab tightness drift.plateau " + " ".join(f"x{i}=1.0" for i in range(40))


def _results():
    plateau = boundlab.get("drift.plateau")
    vacuous = compare(plateau, [0.001], params=PRM, check="vac", case="tau=10",
                      terms={"drift": 2.6, "other": 0.06}, setting={"E": 2.0, "eta": 0.0625})
    vacuous.tightness = {"status": "not cached (takes minutes); " + LONG}
    risky = compare(boundlab.get("skew.rho_range"), [2.0], params={"p_min": 0.25},
                    check="risky")  # bound 1 / p_min = 4: ratio 0.5
    bad = compare(plateau, [9.0, 9.1], params=PRM, check="bad")
    na = compare(plateau, [0.1], params={**PRM, "eta": 2.0}, check="na")
    unsure = compare(plateau, [1.0, 4.0, 2.5], params=PRM, check="unsure")
    claim = claim_result("cl", "seed 000, Fig. 6", "toy", statement="slope = -1",
                         statistic=-1.02, threshold=-1.0, outcome="supported")
    return [vacuous, risky, bad, na, unsure, claim]


def test_summary_counts_risk_vacuity_term_and_next_steps():
    s = _summary.summarize(_results())
    assert s["counts"] == {"holds": 2, "VIOLATED": 1, "not-applicable": 1, "inconclusive": 1,
                           "supported": 1}
    at_risk = [v["bound_id"] for v in s["at_risk"]]
    assert at_risk == ["drift.plateau", "skew.rho_range"]  # 9 / 2.66 > 0.5
    assert s["at_risk"][1]["ratio"] == 0.5
    assert s["vacuous"] == []  # drift.plateau's largest ratio (the violation) decides
    s = _summary.summarize(_results()[:1])
    assert [(v["bound_id"], v["term"]) for v in s["vacuous"]] == [("drift.plateau", "drift")]
    assert s["next"][0]["command"] == "boundlab falsify drift.plateau --budget 2000"
    unsure = _summary.summarize(_results())["next"]
    assert {"command": "boundlab verify --only unsure --seeds 20",
            "why": "inconclusive: more seeds decide it"} in unsure


def test_report_md_opens_with_the_summary_and_versions(tmp_path):
    out = write_report(_results(), tmp_path / "out")
    md = (out / "report.md").read_text()
    head = md[:md.index("## Bound checks")]
    assert "## Summary" in head and "## Versions" in head
    assert re.search(r"6 results: 1 \*\*VIOLATED\*\*, 1 \*\*inconclusive\*\*, 2 \*\*holds\*\*",
                     head)
    assert "At risk (ratio >= 0.1): 2" in head
    assert "`boundlab falsify drift.plateau --budget 2000` (at risk)" in head
    v = _summary.versions()
    for key in ("boundlab", "code", "python", "numpy", "sympy", "pepit", "cvxpy"):
        assert f"- {key}: `{v[key]}`" in head
    assert v["code"] == boundlab.integrity.code_version()
    assert LONG in md  # the long text lives in the report
    assert "E=2, eta=0.0625" in md and "2.0" not in md.split("## Details")[1].split("\n")[2]
    assert "## References" in md and "seed 000: Ben Mansour" in md


def test_terminal_output_fits_100_columns_and_leaves_long_texts_out():
    buf = io.StringIO()
    from rich.console import Console

    print_table(_results(), Console(file=buf, width=100, color_system=None))
    text = buf.getvalue()
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 100
    assert lines[0].startswith("6 results: 1 VIOLATED")
    assert any(line.startswith("versions: boundlab ") for line in lines[:20])
    assert "boundlab tightness" not in text and "not cached" in text
    assert "VIOLATED" in text and "not-applicable" in text  # verdicts never cut


def test_integers_print_as_integers():
    from verify.report.tables import _fmt, setting_text

    assert _fmt(10.0) == "10" and _fmt(2.5) == "2.5" and _fmt(1e7) == "1e+07"
    assert setting_text({"T": 20.0, "lr": 0.1}) == "T=20, lr=0.1"


def test_results_csv_counts_are_integers(tmp_path):
    out = write_report(_results(), tmp_path / "out")
    import csv

    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["n_seeds"] for r in rows] == ["1", "1", "2", "1", "3", ""]  # claim: none
    assert rows[0]["param_tau"] == "10" and rows[0]["seed"] == ""
