"""Report schema: bound checks and claims apart (results.csv, report.md, terminal), names that
--only accepts, figures coloured by verdict, worst instances saved."""

import io

import numpy as np
import pandas as pd
import pytest

import boundlab
from verify import report, suite
from verify.checks._common import claim
from verify.compare import BOUND_COLUMNS, CLAIM_COLUMNS, compare
from verify.figures.report_figures import _COLORS, figures
from verify.report.tables import informativeness, markdown_tables

OK = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)


def _results():
    b = compare(boundlab.get("drift.plateau"), [0.01], params=OK, check="drift_plateau",
                case="tau=10", deterministic=True)
    b.tightness = {"ratio_lo": 1 / 450, "ratio_hi": 1 / 400}  # LB/B, UB/B
    na = compare(boundlab.get("drift.plateau"), [0.01], params={**OK, "eta": 2.0},
                 check="drift_plateau", case="eta too large")
    c = claim("drift_plateau", "seed 004, Sec. 3", "toy", case="grows with tau",
              statement="plateau grows with tau", statistic=0.02, threshold=0.0, outcome=True)
    w = compare(boundlab.get("drift.plateau"), [3.0], params=OK, check="drift_worst_instance",
                case="drift.plateau", deterministic=True)
    w.worst = {"ratio": 3.0 / w.bound, "evaluations": 12, "record": {"bound_id": "x", "A": [1]}}
    return [b, na, c, w]


def test_results_csv_keeps_bound_checks_and_claims_apart(tmp_path):
    report.write_report(_results(), tmp_path)
    frame = pd.read_csv(tmp_path / "results.csv")
    assert set(BOUND_COLUMNS) | set(CLAIM_COLUMNS) | {"kind", "case", "reason"} <= set(frame)
    bounds, claims = frame[frame["kind"] == "bound"], frame[frame["kind"] == "claim"]
    assert len(claims) == 1 and len(bounds) == 3
    assert claims[list(BOUND_COLUMNS[:5])].isna().all().all()
    assert bounds[["statement", "statistic", "threshold", "outcome"]].isna().all().all()
    assert claims["outcome"].tolist() == ["supported"]
    na = bounds[bounds["verdict"] == "not-applicable"]
    assert na["reason"].str.contains("eta <= 1/\\(4\\*L\\)").all()


def test_report_has_separate_tables_and_saves_violating_instances(tmp_path):
    rs = _results()
    report.write_report(rs, tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "## Bound checks" in md and "## Claims" in md and "How informative" in md
    claims_part = md.split("## Claims")[1].split("## How informative")[0]
    assert "plateau grows with tau" in claims_part and "0.02" in claims_part
    bounds_part = md.split("## Bound checks")[1].split("## Claims")[0]
    assert "plateau grows with tau" not in bounds_part
    assert "precondition violated: eta <= 1/(4*L)" in bounds_part
    saved = tmp_path / "worst" / "drift.plateau.json"
    assert saved.exists() and rs[3].worst["path"] == "worst/drift.plateau.json"
    assert report.exit_status(rs) == 1  # the worst instance VIOLATES


def test_terminal_shows_both_tables_and_reasons():
    from rich.console import Console

    buf = io.StringIO()
    report.print_table(_results(), Console(file=buf, width=250))
    out = buf.getvalue()
    assert "bound checks" in out and "claims" in out and "how informative" in out
    # issue 22: one line a row on the terminal; the reasons are in the report
    assert "not-applicable" in out and "reasons in report.md" in out
    assert "precondition violated" not in out
    assert "precondition violated" in "\n".join(markdown_tables(_results()))


def test_informativeness_puts_fixed_worst_and_pep_side_by_side():
    rows = {d["bound"]: d for d in informativeness(_results())}
    d = rows["drift.plateau"]
    assert d["fixed"] == pytest.approx(0.01 / 2.66256, rel=1e-4)
    assert d["worst"] == pytest.approx(3.0 / 2.66256, rel=1e-4) and d["worst_evals"] == 12
    assert d["pep_lo"] == pytest.approx(1 / 450) and d["pep_hi"] == pytest.approx(1 / 400)


def test_ratio_figure_shows_bound_checks_only_coloured_by_verdict(tmp_path, monkeypatch):
    import matplotlib.axes

    seen = {}
    orig = matplotlib.axes.Axes.barh

    def spy(self, y, width, *a, color=None, **kw):
        seen["widths"], seen["colors"] = list(width), list(color)
        return orig(self, y, width, *a, color=color, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "barh", spy)
    rs = _results()
    figures(rs, tmp_path)
    judged = [r for r in rs if r.kind == "bound" and r.verdict != "not-applicable"]
    assert seen["widths"] == [r.ratio for r in judged]  # no claim, no not-applicable bar
    # hue = verdict; a bound that holds is shaded by how loose it is (issue 22: not all green)
    # (ratio = measured / bound: tight >= 0.1, loose >= 1e-3, vacuous below)
    band = [_COLORS[r.verdict] if r.verdict != "holds" else "tab:green" if r.ratio >= 0.1
            else "#98df8a" if r.ratio >= 1e-3 else "tab:olive" for r in judged]
    assert seen["colors"] == band


def test_every_check_name_is_accepted_by_only():
    for spec in suite.checks():
        assert spec in suite.select(spec.name)


def test_runner_shows_the_registered_name(monkeypatch):
    suite._load()
    saved = dict(suite._REGISTRY)
    suite._REGISTRY.clear()
    try:
        @suite.register("drift", "drift.plateau")
        def named_check(ctx):
            return [compare(boundlab.get("drift.plateau"), [0.01], params=OK,
                            check="some_other_label")]

        rs = suite.run_suite("named_check", suite.Context(quick=True), progress=False)
        assert rs[0].check == "named_check" and rs[0].case == "some_other_label"
        assert suite.select(rs[0].check)
    finally:
        suite._REGISTRY.clear()
        suite._REGISTRY.update(saved)


def test_no_numpy_object_leaks_into_rows():
    for r in _results():
        row = r.row()
        assert not any(isinstance(v, np.ndarray) for v in row.values())
