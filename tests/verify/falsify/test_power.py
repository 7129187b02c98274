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
    assert set(s["layers"]) == {"fixed", "search", "exact", "user", "overall"}
    assert "load average" in data["load"]


def test_benchmark_only_one_bound_table(capsys):
    from benchmarks.power import main

    assert main(["--only", "skew.rho_range", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "skew.rho_range" in out and "false alarms" in out and "overall" in out
    assert main(["--only", "skew.rho_range", "--budget", "3"]) == 2


def test_a_printed_original_is_judged_against_its_corrected_form():
    import dataclasses

    from verify.falsify.power import Judge

    j = Judge(boundlab.get("drift.plateau_finite.printed"))
    assert j.ref.id == "drift.plateau_finite"
    corrected = boundlab.get("drift.plateau_finite")
    twice = dataclasses.replace(j.original, id="drift.plateau_finite.printed~x", terms={},
                                expr=2 * corrected.expr, stable=None)
    assert j.above(twice)[0] is True  # 2x the corrected form is a valid bound
    # the printed form itself is not >= the corrected one (18 tau^2 vs 18 L eta^2 tau^2 zeta^2)
    assert j.above(j.original)[0] is False
    # contraction.lemma_a4.printed allows gamma <= 1/L, the corrected form only gamma <= 1/(2L):
    # between the two the corrected form says nothing, so no mutant is proved valid
    a4 = Judge(boundlab.get("contraction.lemma_a4.printed"))
    ok, how = a4.above(a4.original)
    assert a4.outside > 0 and not ok and "preconditions fail" in how


def test_identity_mutants_false_where_they_differ_true_where_equal():
    from boundlab import Precondition
    from verify.falsify.power import Judge

    b = Bound(id="mine.ident", source="n", expr=sp_max(L, D), params=make_params("L", "D"),
              kind="identity", lhs="final_gap",
              preconditions=(Precondition(L, ">=", D, "L >= D"),))
    j = Judge(b)
    same = Bound(id="mine.ident~a", source="n", expr=L, params=make_params("L"),
                 extra_params=make_params("D"), kind="identity", lhs="final_gap",
                 preconditions=b.preconditions)  # Max(L, D) = L wherever L >= D
    double = Bound(id="mine.ident~b", source="n", expr=2 * L, params=make_params("L"),
                   extra_params=make_params("D"), kind="identity", lhs="final_gap",
                   preconditions=b.preconditions)
    assert j.truth(same, {}).status == "true"
    assert j.truth(double, {}).status == "false"


def sp_max(a, b):
    import sympy as sp

    return sp.Max(a, b)


def test_feasible_grid_meets_an_equality_written_as_two_inequalities():
    import numpy as np

    from boundlab import Precondition
    from verify.falsify._power_truth import feasible_grid

    g = sym("gamma")
    b = Bound(id="mine.eq", source="n", expr=L * g, params=make_params("L", "gamma"),
              kind="upper", lhs="final_gap",
              preconditions=(Precondition(g, "<=", 1 / (2 * L), "gamma <= 1/(2L)"),
                             Precondition(g, ">=", 1 / (2 * L), "gamma >= 1/(2L)")))
    pts, ok = feasible_grid(b, 2000, seed=0)
    assert ok.all() and ok.size >= 500
    assert np.allclose(2 * pts["L"] * pts["gamma"], 1.0, rtol=1e-9)


def test_order_bounds_are_not_judged_and_unrepaired_gaps_are_said():
    res, runs = evaluate("weight_error.theorem3")
    assert res == [] and all("order" in r.reason for r in runs.values())
    b = boundlab.get("weight_error.round")
    m = next(x for x in mutants(b) if x.id.endswith("term[bias]*2"))
    t = truth(b, m, {})
    assert t.status == "true" and "FedAU-F5" in t.how


def test_scaled_points_move_one_parameter_at_a_time():
    from verify.falsify._power_exact import scaled_points

    b = boundlab.get("drift.fedavg_convex")
    base = {"D": 3.0, "eta": 0.08, "tau": 2, "T": 3, "sigma": 0.0, "M": 3.0, "L": 0.2,
            "zeta": 0.4}
    pts = scaled_points(b, [base])
    assert {**base, "D": 0.03} in pts and {**base, "D": 300.0} in pts
    assert {**base, "T": 1.0} in pts and not any(p["sigma"] != 0.0 for p in pts)
    assert all(sum(p[k] != base[k] for k in base) == 1 for p in pts)
    assert not any(p["tau"] != 2 for p in pts)  # local steps stay (the SDP's size)


def test_layer_runs_merge_flagging_where_either_flags():
    from verify.falsify._power_layers import Flag, LayerRun

    a = LayerRun({"m1": Flag(False), "m2": Flag(True, "a")}, 3, 1.0)
    b = LayerRun({"m1": Flag(True, "b"), "m3": Flag(False)}, 2, 0.5)
    m = a.merge(b)
    assert {k: f.flagged for k, f in m.flags.items()} == {"m1": True, "m2": True, "m3": False}
    assert (m.evaluations, m.seconds) == (5, 1.5) and m.flags["m1"].why == "b"


def test_benchmark_generation_mode_and_argument_domains(capsys, tmp_path):
    from benchmarks.power import main

    assert main(["--only", "drift.plateau", "--generation", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = data["bounds"]["drift.plateau"]
    assert row["mutants"] == len(mutants("drift.plateau")) and row["seconds"] >= 0
    assert data["slowest"] == "drift.plateau"
    assert main(["--only", "drift.plateau", "--jobs", "0"]) == 2
    assert "--jobs = 0" in capsys.readouterr().err
    out = tmp_path / "p.json"
    assert main(["--only", "skew.rho_range", "--quick", "--save", str(out)]) == 0
    assert json.loads(out.read_text())["summary"]["mutants"] > 0


def test_a_mutant_falsify_refuses_is_not_flagged_and_the_others_go_on():
    """contraction.corollary1's exponent mutant is not real at beta = 1/4 (a DomainError from
    verify.falsify): the oracle's loop records it unflagged instead of losing the bound."""
    from verify.falsify._power_layers import falsify_flags

    original = boundlab.get("contraction.corollary1")
    ms = {m.id: m for m in mutants(original)}
    bad = ms["contraction.corollary1~exp[(1-1/beta)**2]-1"]
    other = next(m for k, m in ms.items() if k != bad.id and "~const" in k)
    run = falsify_flags(original, [bad, other], budget=10)
    assert run.flags[bad.id].flagged is False
    assert "refused" in run.flags[bad.id].why and "DomainError" in run.flags[bad.id].why
    assert "beta" in run.flags[bad.id].why
    assert other.id in run.flags and "refused" not in run.flags[other.id].why
