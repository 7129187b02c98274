"""Issue 31, interfaces: one JSON schema for every ``--json`` (``bound_id``, ``bound_value``,
``measured``, ``ratio``, ``verdict`` wherever a result is printed; a non-finite number is
null), strict JSON everywhere, ``--list`` and ``--version`` honour ``--json``."""

import json

import pytest

import boundlab
from verify import suite
from verify.cli import main
from verify.compare import compare

OK = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)


def strict(text):
    """One strict JSON document (NaN / Infinity refused)."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def no_nan_strings(obj, where="$"):
    """No value is the string of a non-finite number (a ``*_status`` key may say which)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not k.endswith("_status"):
                no_nan_strings(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            no_nan_strings(v, f"{where}[{i}]")
    else:
        assert obj not in ("nan", "inf", "-inf", "NaN", "Infinity"), where


def run_json(argv, capsys, status=0):
    assert main([*argv, "--quiet"]) == status
    d = strict(capsys.readouterr().out)
    no_nan_strings(d)
    return d


SWEEP = ["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1", "--seeds", "2",
         "--rounds", "3", "n_clients=3", "dim=2", "--json"]


@pytest.mark.parametrize("argv", [
    ["bounds", "list", "--json"],
    ["bounds", "show", "drift.plateau", "--json"],
    ["toys", "list", "--json"],
    ["toys", "constants", "quadratic", "n_clients=3", "dim=2", "--json"],
    ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=3", "--rounds", "3",
     "lr=0.05", "--json"],
    ["tightness", "list", "--json"],
    ["tightness", "drift.plateau", "eta=0.1", "tau=1", "L=1", "zeta=1", "--cache-only",
     "--json"],
    ["verify", "--list", "--json"],
    ["reproduce", "--list", "004", "--json"],
], ids=lambda a: " ".join(a[:2]))
def test_every_json_output_is_one_strict_document(argv, capsys):
    run_json(argv, capsys)


def test_bounds_eval_json_names_the_schema_keys_and_keeps_the_old_ones_deprecated(capsys):
    d = run_json(["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19",
                  "zeta=0.407", "--json"], capsys)
    assert d["bound_id"] == "drift.plateau" and d["bound_value"] == pytest.approx(2.26607832)
    # the old keys still read until the next release, listed under "deprecated" (README)
    assert (d["id"], d["value"]) == (d["bound_id"], d["bound_value"])
    assert set(d["deprecated"]) == {"id", "value"} and "bound_value" in d["deprecated"]["value"]


def test_falsify_json_writes_nan_as_null(capsys, tmp_path):
    """It wrote the string "nan" (skew.rate_order, an O(.) statement, is not judged: no
    ratio); the file of --save writes it the same way."""
    saved = tmp_path / "r.json"
    d = run_json(["falsify", "skew.rate_order", "--budget", "10", "--no-exact", "--json",
                  "--save", str(saved)], capsys)
    assert d["bound_id"] == "skew.rate_order" and d["verdict"] == "not-applicable"
    on_disk = strict(saved.read_text())
    for doc in (d, on_disk):
        for key in ("worst_ratio", "ratio", "measured", "bound_value"):
            assert doc[key] is None and doc[f"{key}_status"] == "nan"
    no_nan_strings(on_disk)


def test_sweep_json_gives_bound_value_measured_and_ratio_per_point(capsys):
    d = run_json([*SWEEP, "--bound", "drift.round_progress"], capsys)
    assert d["algorithm"] == "fedavg" and d["bound_id"] == "drift.round_progress"
    assert [p["lr"] for p in d["points"]] == [0.05, 0.1]
    for p in d["points"]:
        assert p["ratio"] == pytest.approx(p["measured"] / p["bound_value"])
        assert p["verdict"] in p["verdicts"] and isinstance(p["round"], int)


def test_sweep_json_without_a_bound_names_the_algorithm(capsys):
    d = run_json(SWEEP, capsys)
    assert d["algorithm"] == "fedavg" and d["bound_id"] is None and d["rows"] == 16
    assert "ratio" not in d["points"][0] and d["points"][0]["final_gap"] > 0


def test_version_honours_json(capsys):
    for argv in (["--version", "--json"], ["--json", "--version"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        d = strict(capsys.readouterr().out)
        assert d["boundlab"] == boundlab.__version__ and d["code"].startswith(d["boundlab"])
        assert {"python", "numpy", "sympy", "pepit", "cvxpy"} <= set(d)


def test_list_honours_json(capsys):
    checks = run_json(["verify", "--list", "--only", "contraction", "--json"], capsys)
    assert checks and all(c["family"] == "contraction" and c["check"] and c["bound_ids"]
                          for c in checks)
    items = run_json(["reproduce", "--list", "004", "--json"], capsys)
    assert [i["id"] for i in items["items"]][:1] == ["004:fig2"]
    assert all({"paper", "ref", "reason"} <= set(u) for u in items["not_registered"])


@pytest.fixture
def one_check():
    """A registered check, instant: a row with a ratio and one with none (NaN)."""
    suite._load()
    saved = dict(suite._REGISTRY)
    suite._REGISTRY.clear()

    @suite.register("drift", "drift.plateau")
    def instant_check(ctx):
        ok = compare(boundlab.get("drift.plateau"), [0.01], params=OK, check="x", case="tau=10")
        na = compare(boundlab.get("drift.plateau"), [float("nan")], params=OK, check="x",
                     case="not measured")
        return [ok, na]
    yield "instant_check"
    suite._REGISTRY.clear()
    suite._REGISTRY.update(saved)


def test_verify_json_rows_carry_the_schema_keys(one_check, tmp_path, capsys):
    rows = run_json(["verify", "--only", one_check, "--out", str(tmp_path / "o"),
                     "--no-tightness", "--budget", "0", "--json"], capsys)
    assert len(rows) == 2
    for r in rows:
        assert {"bound_id", "bound_value", "measured", "ratio", "verdict"} <= set(r)
    assert rows[0]["ratio"] == pytest.approx(rows[0]["measured"] / rows[0]["bound_value"])
    assert rows[1]["measured"] is None and rows[1]["measured_status"] == "nan"
