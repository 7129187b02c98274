"""``boundlab tightness``: JSON keys (the schema's names and orientation, the old keys for one
release), exit statuses."""

import json

import pytest

from verify.cli import main

KEYS = {"bound_id", "bound_value", "worst_case_upper", "worst_case_lower", "ratio_lo",
        "ratio_hi", "exact", "relaxed", "solver", "gap", "seconds"}
OLD = {"id", "bound", "ratio_low", "ratio_high"}
PLATEAU = ["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1", "zeta=1"]


def test_json_output(capsys):
    assert main(PLATEAU + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert KEYS <= set(out) and out["bound_id"] == "drift.plateau"
    assert out["exact"] is False and out["relaxed"]
    assert out["worst_case_lower"] <= out["worst_case_upper"] * (1 + 1e-3)
    # measured / bound, as every ratio: the bracket relative to the bound, <= 1 holds
    b, ub, lb = out["bound_value"], out["worst_case_upper"], out["worst_case_lower"]
    assert b == pytest.approx(18 * 2**2 * 0.1**2 * 1 * 1**2)  # 18 tau^2 eta^2 L zeta^2
    assert out["ratio_hi"] == pytest.approx(ub / b) and out["ratio_lo"] == pytest.approx(lb / b)
    assert out["ratio_hi"] <= 1
    # the old keys, in their old orientation (bound / worst case), until the next release
    assert set(out["deprecated"]) == OLD
    assert out["id"] == out["bound_id"] and out["bound"] == b
    assert out["ratio_low"] == pytest.approx(b / ub) and out["ratio_high"] == pytest.approx(b / lb)


def test_rounds_option(capsys):
    argv = ["tightness", "drift.fedavg_convex", "D=1", "eta=0.2", "tau=2", "sigma=0", "M=2",
            "L=1", "zeta=0.5", "--rounds", "2", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["params"]["T"] == 2


def test_table_output(capsys):
    assert main(PLATEAU) == 0
    out = capsys.readouterr().out
    assert "UB/B" in out and "LB/B" in out and "B/UB" not in out


@pytest.mark.parametrize("argv", [
    ["tightness", "drift.nope"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1"],            # zeta missing
    ["tightness", "drift.plateau", "eta=abc", "tau=2", "L=1", "zeta=1"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=0", "L=1", "zeta=1"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1", "zeta=1", "nope=3"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1", "zeta=1", "--rounds", "3"],
    ["tightness", "drift.fedavg_convex", "D=1", "eta=0.2", "tau=2", "T=2", "sigma=0.5",
     "M=2", "L=1", "zeta=0.5"],
    ["tightness", "contraction.fedavg_factor", "mu=0.1", "L=1"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1", "zeta=1", "--plot", "x.png"],
])
def test_bad_input_exits_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_cache_only_and_list(capsys):
    argv = ["tightness", "drift.plateau", "eta=0.11", "tau=2", "L=1", "zeta=1", "--json",
            "--cache-only"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) is None
    assert main(["tightness", "list", "--json"]) == 0
    ids = {r["id"] for r in json.loads(capsys.readouterr().out)}
    assert {"drift.plateau", "contraction.beta_sc", "skew.recursion"} <= ids


def test_vary_and_plot(tmp_path, capsys):
    png = tmp_path / "b.png"
    argv = ["tightness", "drift.plateau", "eta=0.1", "L=1", "zeta=1", "--vary", "tau=1,2",
            "--plot", str(png), "--json"]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["params"]["tau"] for r in rows] == [1, 2] and png.exists()
    assert png.with_suffix(".svg").exists()  # 300 dpi PNG + SVG, as every figure


def test_plot_never_replaces_a_users_file_and_replaces_its_own(tmp_path, capsys):
    png = tmp_path / "b.png"
    argv = ["tightness", "drift.plateau", "eta=0.1", "L=1", "zeta=1", "--vary", "tau=1,2",
            "--plot", str(png), "--json"]
    png.write_bytes(b"my own figure")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--plot" in err and "b.png" in err and png.read_bytes() == b"my own figure"
    png.unlink()
    assert main(argv) == 0 and png.exists()
    assert main(argv) == 0  # boundlab's own figure, unchanged: replaced
