"""The power benchmark's truth and layers (verify.falsify.power) on cases with known answers,
and a smoke run of ``python -m benchmarks power --quick``."""

import json

import pytest

import boundlab
from boundlab import Bound, make_params, sym
from verify.falsify.mutants import mutants
from verify.falsify.power import above, evaluate, summarize, truth

L, D, T = sym("L"), sym("D"), sym("T")


@pytest.fixture
def gd_exact():
    """GD's exact last-iterate worst case at eta = 1/L: L D^2 / (4T + 2) (Drori-Teboulle)."""
    b = Bound(id="mine.gd_exact", source="Drori & Teboulle 2014", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    yield b
    boundlab.unregister(b.id)


def test_above_symbolic_and_grid():
    b = Bound(id="mine.a", source="n", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    ms = {m.id.split("~")[1]: m for m in mutants(b, ["const", "exponent"])}
    assert above(b, ms["term[expr]*2"]) [0] is True
    assert above(b, ms["term[expr]*2"])[1].startswith("symbolic")
    assert above(b, ms["term[expr]/2"])[0] is False
    # D**3 is below D**2 for D < 1 and above for D > 1: not >= everywhere
    ok, how = above(b, ms["exp[D**2]+1"])
    assert not ok and "below" in how


def test_truth_needs_a_certificate_to_be_false():
    b = Bound(id="mine.b", source="n", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    half = next(m for m in mutants(b, ["const"]) if m.id.endswith("term[expr]/2"))
    assert truth(b, half, {}).status == "unknown"  # below the original, but nothing shown


def test_gd_pep_certificate_half_false_double_true(gd_exact):
    res, runs = evaluate(gd_exact.id, layers=("exact",), operators=["const"])
    by = {r.id.split("~")[1]: r for r in res}
    assert by["term[expr]*2"].truth == "true" and by["term[expr]*2"].flags["exact"] is False
    half = by["term[expr]/2"]
    assert half.truth == "false" and half.flags["exact"] is True
    w = half.witness["exact"]  # the PEP's worst case is the bound itself: twice the mutant
    assert w["worst_case"] == pytest.approx(2 * w["bound"], rel=1e-4)
    assert by["const[4]*2"].truth == "false"  # L D^2 / (8T + 2): below the worst case
    s = summarize(res, {gd_exact.id: runs})
    assert s["layers"]["exact"]["false_alarms"] == 0
    assert s["layers"]["exact"]["caught"] == s["false"] > 0
    assert runs["exact"].evaluations > 0


def test_fixed_layer_rejudges_the_main_jobs_measurements():
    res, runs = evaluate("skew.rho_range", quick=True, layers=("fixed",))
    by = {r.id.split("~")[1]: r for r in res}
    # rho <= 1/p_min: the check measures rho on a run; 10x larger stays true, unflagged
    assert by["term[expr]*10"].truth == "true" and by["term[expr]*10"].flags["fixed"] is False
    assert runs["fixed"].evaluations >= 1 and not runs["fixed"].reason


def test_out_of_reach_layers_say_why():
    _, runs = evaluate("contraction.fedavg_factor", quick=True, operators=["const"])
    assert "contraction_factor" in runs["search"].reason
    assert "no PEP model" in runs["exact"].reason


def test_benchmark_json_smoke(capsys):
    from benchmarks.power import main

    assert main(["--only", "skew.rho_range", "--quick", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    s = data["summary"]
    assert s["mutants"] == s["true"] + s["false"] + s["unknown"] > 0
    assert set(s["layers"]) == {"fixed", "search", "exact", "overall"}
    assert "load average" in data["load"]


def test_benchmark_only_one_bound_table(capsys):
    from benchmarks.power import main

    assert main(["--only", "skew.rho_range", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "skew.rho_range" in out and "false alarms" in out and "overall" in out
    assert main(["--only", "skew.rho_range", "--budget", "3"]) == 2
