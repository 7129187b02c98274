"""``boundlab bounds ...``: output formats and one-line errors with exit status 2."""

import json
import subprocess
import sys

import pytest

import boundlab
from verify.cli import main


def test_list_json_has_every_id(capsys):
    assert main(["bounds", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == set(boundlab.ids())


def test_list_table(capsys):
    assert main(["bounds", "list", "--family", "drift"]) == 0
    out = capsys.readouterr().out
    assert "drift.fedavg_convex" in out and "skew.corollary" not in out


def test_show_json_and_text(capsys):
    assert main(["bounds", "show", "drift.round_progress", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["id"] == "drift.round_progress" and "DKR-5" in d["errata"]
    assert d["preconditions"] == ["eta <= 1/(4*L)"]
    assert main(["bounds", "show", "skew.corollary"]) == 0
    out = capsys.readouterr().out
    assert "LaTeX" in out and "rho_bar" in out


def test_eval_json_matches_hand_value(capsys):
    # 18 tau^2 eta^2 L zeta^2 with the paper's constants (spec §3.13: 2.266 at tau = 10)
    assert main(["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.190",
                 "zeta=0.407", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d) >= {"id", "kind", "value", "terms", "preconditions_violated"}
    assert d["value"] == pytest.approx(18 * 100 * 0.04 * 0.190 * 0.407**2)
    assert d["preconditions_violated"] == []


@pytest.mark.parametrize("argv, needle", [
    (["bounds", "eval", "drift.nope"], "drift.nope"),
    (["bounds", "eval", "drift.plateau", "eta=abc", "tau=1", "L=1", "zeta=1"], "eta"),
    (["bounds", "eval", "drift.plateau", "eta=-1", "tau=1", "L=1", "zeta=1"], "positive real"),
    (["bounds", "eval", "drift.plateau", "eta=0.1", "tau=1.5", "L=1", "zeta=1"], "integer >= 1"),
    (["bounds", "eval", "drift.plateau", "eta=0.1"], "missing"),
    (["bounds", "eval", "drift.plateau", "foo=1"], "foo"),
    (["bounds", "eval", "drift.plateau", "eta"], "name=value"),
    (["bounds", "eval", "drift.plateau", "eta=1", "tau=1", "L=1", "zeta=1", "--strict"],
     "precondition"),
    (["bounds", "frobnicate"], "unknown command 'frobnicate'"),
])
def test_bad_input_one_line_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_console_script_exit_status():
    out = subprocess.run([sys.executable, "-m", "verify", "bounds", "eval", "x.y"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
