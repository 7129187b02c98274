"""verify.falsify of catalogue bounds: planned from their metadata, never an unexplained crash."""

import boundlab
import verify
from verify.falsify.plan import NotApplicable, make_plan


def test_a_catalogue_bound_is_planned_from_its_metadata():
    try:
        make_plan(boundlab.get("drift.plateau_finite"), {})
    except NotApplicable as exc:  # FedAvg, convex: refused for zeta, not for a missing algorithm
        assert "zeta" in str(exc) and "algorithm" not in str(exc)
    else:  # pragma: no cover - the families do not hold zeta fixed yet
        raise AssertionError("expected NotApplicable (heterogeneity constant)")


def test_a_search_that_cannot_evaluate_a_bound_says_why():
    res = verify.falsify("skew.pi_bound", budget=10)  # was a RuntimeError from scipy
    assert res.verdict == "not-applicable" and "pi" in res.reason


def test_an_algorithm_the_search_does_not_run_is_named():
    res = verify.falsify("contraction.lemma_a3", budget=10)
    assert res.verdict == "not-applicable" and "'fedprox'" in res.reason


def test_a_catalogue_search_that_runs_replays_its_worst_instance():
    res = verify.falsify("drift.plateau_finite", budget=12)
    assert res.verdict == "holds" and res.instance is not None
    assert res.instance.replay() == res.worst_ratio <= 1
