"""Checks generated from catalogue metadata (verify.checks.generic)."""

import dataclasses
import json

import pytest

import boundlab
import verify
from verify import suite
from verify.check import LHS
from verify.checks import generic
from verify.cli import main
from verify.suite import Context, select
from verify.worst.measures import MEASURES


def _spec(bid):
    return select("generic_" + bid.replace(".", "_"))[0]


def test_one_generated_check_per_catalogue_id():
    names = {c.name for c in suite.checks() if c.name.startswith("generic_")}
    assert names == {"generic_" + b.replace(".", "_") for b in boundlab.ids()}


def test_generic_rows_do_not_duplicate_hand_written_ones():
    fixed, searched = generic.hand_coverage()
    assert "drift.plateau" in fixed and "drift.plateau" in searched
    assert _spec("drift.plateau").fn(Context(quick=True)) == []  # no batched plan: hand only
    # a paper-setting worst-instance search does not replace falsify over the whole class
    assert "drift.fedavg_convex" in fixed and "drift.fedavg_convex" in searched
    rows = _spec("drift.fedavg_convex").fn(Context(quick=True))
    assert [r.case for r in rows] == ["search"] and rows[0].verdict == "holds"
    rows = _spec("skew.corollary.printed").fn(Context(quick=True))  # hand: fixed; no search
    assert [r.case for r in rows] == ["search"]


def test_a_measurable_bound_is_judged_on_its_fixed_instance_and_searched():
    rows = _spec("drift.plateau_finite").fn(Context(quick=True))
    assert [r.case for r in rows] == ["fixed instance", "search"]
    fixed, search = rows
    # DKR's toy at sigma = 0: the finite-T bound equals Theorem 2.1's, loose by ~1e2 (spec 3.12)
    assert fixed.verdict == "holds" and fixed.ratio < 0.1
    assert search.verdict == "holds" and 0 < search.worst_ratio <= 1
    assert search.worst["evaluations"] <= Context(quick=True).search_budget()


def test_an_unmeasurable_lhs_is_listed_with_its_reason(monkeypatch):
    # every catalogue constant is judged by a hand check now (verify.checks.weight_error_cutoff
    # rebuilds this cutoff from its definition): no generated row for it
    assert _spec("weight_error.cutoff_opt").fn(Context(quick=True)) == []
    # without that hand check, the generated row lists the lhs as unmeasured, with the reason
    import verify.checks.generic as generic

    monkeypatch.setattr(generic, "hand_coverage", lambda: (set(), set()))
    [r] = _spec("weight_error.cutoff_opt").fn(Context(quick=True))
    assert r.verdict == "not-applicable" and r.case == "not measurable"
    assert "'cutoff'" in r.reason and "not a run quantity" in r.reason
    monkeypatch.undo()
    # not in a per-round log: judged on runs by verify.checks.weight_error_descent, and by the
    # FedAU path search (verify.falsify.fedau_lhs, issue 30), which adds the search row
    for bid in ("weight_error.theorem_b41", "weight_error.lemma_b51"):
        rows = _spec(bid).fn(Context(quick=True))
        assert [(r.case, r.verdict) for r in rows] == [("search", "holds")]
    # measured per local step by the registry (local_deviation, a record="step" run): its hand
    # check judges the fixed runs, the batched search adds the search row, which holds
    rows = _spec("contraction.lemma_a1").fn(Context(quick=True))
    assert [(r.case, r.verdict) for r in rows] == [("search", "holds")]
    # measured per SGD iteration by the registry (next_sq_dist): its hand check judges the
    # fixed runs, the batched search (FedAvg: rho = 1) adds the search row
    assert [r.case for r in _spec("skew.recursion").fn(Context(quick=True))] == ["search"]


def test_every_measurable_catalogue_id_gets_a_run_judged_row():
    fixed, _ = generic.hand_coverage()
    ctx = Context(quick=True, falsify_budget=0)
    for b in boundlab.catalogue():
        if b.lhs not in LHS or b.id in fixed or b.id.startswith("mine"):
            continue
        rows = _spec(b.id).fn(ctx)
        assert [r.case for r in rows] == ["fixed instance"], b.id
        assert rows[0].verdict in ("holds", "order-only", "not-applicable"), (b.id, rows[0])
        if rows[0].verdict == "not-applicable":  # only a precondition the run cannot meet
            assert "precondition" in rows[0].reason, (b.id, rows[0].reason)


@pytest.fixture
def shrunk(monkeypatch):
    """drift.plateau_finite with its bound divided by 1000: a typo in the catalogue itself
    (answered by boundlab.get and by the registry, so the id and the statement agree)."""
    real_get = boundlab.registry.get
    real = real_get("drift.plateau_finite")
    wrong = dataclasses.replace(real, expr=real.expr / 1000, terms={})

    def get(bid):
        return wrong if bid == "drift.plateau_finite" else real_get(bid)

    monkeypatch.setattr(boundlab, "get", get)
    monkeypatch.setattr(boundlab.registry, "get", get)
    return wrong


def test_a_wrong_bound_is_violated_on_the_fixed_instance_and_by_the_search(shrunk):
    # the true bound holds on DKR's toy by a factor ~100 (spec 3.12: LHS/RHS = 9.4e-3 at
    # tau = 10, T = 50): divided by 1000 it must be reported VIOLATED, with a replayed instance
    fixed, search = _spec("drift.plateau_finite").fn(Context(falsify_budget=20))
    assert fixed.verdict == "VIOLATED" and fixed.ratio > 1
    assert search.verdict == "VIOLATED" and search.worst_ratio > 1
    if search.worst["family"] == "worst.quadratic":  # the quadratic fallback's record
        replayed = MEASURES[shrunk.lhs].replay(shrunk, search.worst["record"])
        assert replayed["ratio"] == pytest.approx(search.worst_ratio, rel=1e-9)
    else:  # the batched search: falsify's worst ratio is its instance's replay on toys.run
        res = verify.falsify(shrunk, budget=20, seed=0, algorithm="fedavg",
                             function_class="smooth-convex")
        assert res.instance.replay() == pytest.approx(search.worst_ratio, rel=1e-9)


def test_cli_budget_option(tmp_path, capsys):
    assert main(["verify", "--only", "generic_skew_lemma1", "--budget", "5",
                 "--out", str(tmp_path / "a")]) == 2
    assert "--budget" in capsys.readouterr().err
    code = main(["verify", "--only", "generic_skew_lemma1", "--budget", "0", "--json",
                 "--no-tightness", "--out", str(tmp_path / "b")])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["case"] for r in rows] == ["fixed instance"]
