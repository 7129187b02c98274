"""``boundlab verify``: report files, exit status, crash isolation, bad input."""

import json

import pandas as pd
import pytest

from verify import suite
from verify.cli import main
from verify.compare import compare


def test_quick_drift_suite_writes_report(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["verify", "--quick", "--only", "drift.client_drift", "--no-tightness",
               "--out", str(out), "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert rc == 0, rows
    assert rows and all(r["verdict"] in ("holds", "not-applicable") for r in rows)
    assert (out / "report.md").exists() and (out / "results.csv").exists()
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["bound_id"]) >= {"drift.client_drift"}
    assert {"measured", "bound", "ratio", "verdict", "constants"} <= set(frame.columns)
    md = (out / "report.md").read_text()
    assert "drift.client_drift" in md and "Verdicts" in md
    assert not list(out.rglob(".*.tmp")) and not [p for p in out.rglob(".*") if p.is_file()]


@pytest.fixture
def fake_checks(monkeypatch):
    import boundlab

    suite._load()
    saved = dict(suite._REGISTRY)
    suite._REGISTRY.clear()

    @suite.register("drift", "drift.plateau")
    def fake_violated(ctx):
        return [compare(boundlab.get("drift.plateau"), [5.0], check="fake_violated",
                        params={"eta": 0.2, "tau": 10, "L": 0.2, "zeta": 0.43})]  # bound 2.66

    @suite.register("drift", "drift.plateau")
    def fake_crash(ctx):
        raise RuntimeError("boom")

    @suite.register("skew", "skew.recursion")
    def fake_ok(ctx):
        return [compare(boundlab.get("skew.recursion"), [1.0], 2.0, check="fake_ok",
                        params={"eta": 0.1, "L": 1.0, "mu": 0.5})]  # preconditions evaluable

    yield
    suite._REGISTRY.clear()
    suite._REGISTRY.update(saved)


def test_violation_and_crash_give_exit_1_and_suite_goes_on(fake_checks, tmp_path, capsys):
    rc = main(["verify", "--out", str(tmp_path), "--json", "--no-tightness"])
    rows = {r["check"]: r for r in json.loads(capsys.readouterr().out)}
    assert rc == 1
    assert rows["fake_violated"]["verdict"] == "VIOLATED"
    assert rows["fake_crash"]["verdict"] == "error" and "boom" in rows["fake_crash"]["error"]
    assert rows["fake_ok"]["verdict"] == "holds"


def test_only_ok_family_exit_0(fake_checks, tmp_path, capsys):
    assert main(["verify", "--only", "skew", "--out", str(tmp_path), "--no-tightness"]) == 0
    assert "fake_ok" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["verify", "--only", "nonsense"], "nonsense"),
    (["verify", "--backend", "jax"], "invalid choice"),
    (["verify", "--seeds", "0"], "--seeds"),
])
def test_bad_input_exit_2_one_line(argv, needle, capsys, tmp_path):
    assert main(argv + ["--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_list_checks(capsys):
    assert main(["verify", "--list", "--only", "contraction"]) == 0
    out = capsys.readouterr().out
    assert "contraction_theorems" in out and "drift" not in out
