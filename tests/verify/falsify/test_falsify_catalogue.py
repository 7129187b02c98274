"""verify.falsify of catalogue bounds: planned from their metadata, never an unexplained crash."""

import dataclasses

import boundlab
import verify
from verify.falsify.plan import make_plan


def test_a_catalogue_bound_is_planned_from_its_metadata():
    # FedAvg, convex, from its metadata; zeta held fixed by tilted clients (0.5 L D default)
    plan = make_plan(boundlab.get("drift.plateau_finite"), {})
    assert (plan.algorithm, plan.function_class) == ("fedavg", "smooth-convex")
    assert plan.spec.zeta == 0.5 and plan.scalars(2, 1)["zeta"] == 0.5
    assert make_plan(boundlab.get("drift.plateau_finite"), {"zeta": 2.0}).spec.zeta == 2.0


def test_a_search_that_cannot_evaluate_a_bound_says_why():
    # an unregistered copy of skew.pi_bound (no algorithm: the quadratic fallback, which does
    # not measure pi and Pi) was a RuntimeError from scipy
    copy = dataclasses.replace(boundlab.get("skew.pi_bound"), id="mine.pi_bound_copy")
    res = verify.falsify(copy, budget=10)
    assert res.verdict == "not-applicable" and "pi" in res.reason


def test_an_algorithm_the_search_does_not_run_is_named():
    # every catalogue algorithm is run now (FedAU since issue 21): an unregistered copy
    # declared with one that is not (the quadratic fallback does not measure its lhs)
    copy = dataclasses.replace(boundlab.get("weight_error.theorem2_explicit"),
                               id="mine.fedau_copy")
    res = verify.falsify(copy, budget=10, algorithm="fedsgd",
                         function_class="smooth-nonconvex")
    assert res.verdict == "not-applicable" and "'fedsgd'" in res.reason
    # an algorithm of toys.algorithms is run (issue 30); this statement names two steps
    res = verify.falsify(copy, budget=10, algorithm="fedau-known",
                         function_class="smooth-nonconvex")
    assert res.verdict == "not-applicable" and "several step sizes" in res.reason


def test_a_catalogue_search_that_runs_replays_its_worst_instance():
    res = verify.falsify("drift.plateau_finite", budget=12)
    assert res.verdict == "holds" and res.instance is not None
    assert res.instance.replay() == res.worst_ratio <= 1
