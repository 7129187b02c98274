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
    assert {"measured", "bound_value", "ratio", "verdict", "constants"} <= set(frame.columns)
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
    (["verify", "--backend", "jax"], "unknown value 'jax'"),
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


# ------------------------------------------------------------------------------ bounds: speed path
def test_help_lists_every_group_without_importing_them(capsys):
    """`boundlab --help` lists every command group from the one-line help kept in verify.cli,
    and each line is the group's own help."""
    import argparse

    from verify import cli

    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert all(name in out for name in cli._GROUPS)
    full = cli.build_parser()  # every group imported: their own help lines
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    own = {a.dest: a.help for a in sub._choices_actions}
    assert own == {name: cli._HELP[name] for name in cli._GROUPS}
    lazy = cli.build_parser(["bounds", "list"])
    sub = next(a for a in lazy._actions if isinstance(a, argparse._SubParsersAction))
    assert {a.dest: a.help for a in sub._choices_actions} == own


def test_bounds_commands_with_a_warm_cache_load_neither_sympy_nor_toys(tmp_path):
    """A fresh `boundlab bounds eval|list` process with a warm evaluator cache imports no
    sympy, toys, pandas or other command group, and prints what the sympy path prints."""
    import os
    import subprocess
    import sys

    from boundlab._cache_build import store_catalogue

    assert store_catalogue(str(tmp_path))
    code = ("import sys; from verify.cli import main; rc = main(sys.argv[1:]); "
            "print(sorted(m for m in ('sympy', 'toys', 'pandas', 'verify.cli.toys_cmd', "
            "'verify.cli.run_cmd', 'boundlab.core') if m in sys.modules), rc, file=sys.stderr)")
    base = {k: v for k, v in os.environ.items() if k != "BOUNDLAB_NO_CACHE"}
    for argv in (["bounds", "eval", "drift.fedavg_convex", "D=2", "eta=0.01", "tau=10", "T=50",
                  "sigma=0.1", "M=20", "L=0.19", "zeta=0.407", "--json"],
                 ["bounds", "list", "--json"]):
        warm = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, env={**base, "BOUNDLAB_CACHE_DIR": str(tmp_path)})
        cold = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, env={**base, "BOUNDLAB_NO_CACHE": "1"})
        assert warm.stderr.strip().splitlines()[-1] == "[] 0", warm.stderr
        assert "sympy" in cold.stderr and "boundlab.core" in cold.stderr
        assert warm.stdout == cold.stdout and warm.stdout.strip()
