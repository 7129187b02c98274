"""Verdict rules of verify.compare, on hand-made numbers."""

import json
import math

import numpy as np
import pytest
from scipy import stats

import boundlab
import toys
from verify.compare import (
    BOUND_COLUMNS,
    CLAIM_COLUMNS,
    DIVERGENCE_THRESHOLD,
    GROWTH_THRESHOLD,
    claim_result,
    compare,
    errored,
    mean_ci,
    trace_diverged,
)

PLATEAU = boundlab.get("drift.plateau")
# eta <= 1/(4L) holds (0.2 <= 1.25); the bound is 18 * 0.2 * 0.04 * 100 * 0.43^2 = 2.66256
OK = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)
RHS = 18 * 0.2 * 0.2**2 * 10**2 * 0.43**2


def test_mean_ci_is_the_student_t_interval():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    m, lo, hi = mean_ci(x)
    half = stats.t.ppf(0.975, 3) * x.std(ddof=1) / 2.0
    assert (m, lo, hi) == pytest.approx((3.5, 3.5 - half, 3.5 + half))
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)


def test_rhs_is_evaluated_from_params():
    r = compare(PLATEAU, [1.0, 1.1, 0.9], params=OK)
    assert r.bound == pytest.approx(RHS, rel=1e-12)
    assert r.verdict == "holds" and r.ratio == pytest.approx(1.0 / RHS)  # measured / bound


def test_judged_against_ucl_not_the_mean():
    # mean 2.5 < bound 2.66, but the upper 95 % limit exceeds it: not "holds" -- and not
    # "VIOLATED" either, since the interval contains the bound: inconclusive, with the reason
    r = compare(PLATEAU, [1.5, 3.5, 2.5], params=OK)
    assert r.measured == pytest.approx(2.5) and r.measured_lo < RHS < r.measured_hi
    assert r.verdict == "inconclusive"
    assert "contains the bound" in r.reason and "more seeds" in r.reason


def test_violated_when_the_whole_interval_is_above_the_bound():
    r = compare(PLATEAU, [2.9, 3.0, 3.1], params=OK)
    assert r.measured_lo > RHS and r.verdict == "VIOLATED"


def test_more_seeds_decide_an_inconclusive_case():
    rng = np.random.default_rng(0)
    few = compare(PLATEAU, 2.0 + rng.normal(0, 1.0, 2), params=OK)
    many = compare(PLATEAU, 2.0 + rng.normal(0, 0.2, 400), params=OK)
    assert few.verdict == "inconclusive" and many.verdict == "holds"


def test_one_lucky_run_does_not_pass_a_violation():
    assert compare(PLATEAU, [3.0], params=OK).verdict == "VIOLATED"


def test_violated_precondition_is_found_without_the_callers_help():
    # eta = 2.0 > 1/(4L) = 1.25: nobody passes the violation in
    r = compare(PLATEAU, [0.001], params={**OK, "eta": 2.0})
    assert r.verdict == "not-applicable"
    assert r.preconditions_violated == ["eta <= 1/(4*L)"]
    assert "eta <= 1/(4*L)" in r.reason


def test_unevaluable_precondition_is_not_applicable_with_the_reason():
    r = compare(PLATEAU, [0.01], RHS)  # L and eta not given: the precondition is not checked
    assert r.verdict == "not-applicable"
    assert "cannot be evaluated" in r.reason and "L" in r.reason
    r = compare(PLATEAU, [0.01], RHS, params={**OK, "L": float("nan")})
    assert r.verdict == "not-applicable" and "not finite" in r.reason


def test_extra_assumption_failures_make_not_applicable():
    r = compare(PLATEAU, [3.0], params=OK, preconditions_violated=["full participation"])
    assert r.verdict == "not-applicable" and r.preconditions_violated == ["full participation"]


@pytest.mark.parametrize("rhs", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_rhs_is_an_error_never_a_verdict(rhs):
    r = compare(PLATEAU, [0.01], rhs, params=OK)
    assert r.verdict == "error" and "bound value" in r.reason


def test_bound_not_evaluable_is_an_error():
    r = compare(PLATEAU, [0.01], params={"eta": 0.2})
    assert r.verdict == "error" and r.reason


def test_order_bounds_are_never_judged():
    r = compare(boundlab.get("skew.rate_order"), [100.0], params={"T": 10})
    assert r.verdict == "order-only"


def test_diverged_runs_are_not_compared():
    assert compare(PLATEAU, [np.nan], params=OK).verdict == "diverged"
    assert compare(PLATEAU, [1.0], params=OK, diverged=True).verdict == "diverged"
    r = compare(PLATEAU, [2 * DIVERGENCE_THRESHOLD], params=OK)
    assert r.verdict == "diverged" and "beyond" in r.reason
    r = compare(PLATEAU, [1.0], params=OK, diverged="dist2 grew")
    assert r.verdict == "diverged" and r.reason == "dist2 grew"


def test_trace_diverged_flags_growth_and_non_finite_runs():
    prob = toys.quadratic(2, 2, L=1.0, mu=0.5, seed=0)
    calm = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.1)
    assert trace_diverged(calm) == ""
    wild = toys.run(prob, "fedavg", rounds=60, seed=0, lr=5.0)  # |1 - 5 L| = 4 per step
    why = trace_diverged(wild)
    assert "grew past" in why or "not finite" in why
    assert float(np.nanmax(wild.dist2)) > GROWTH_THRESHOLD or wild.diverged_at is not None


def test_identity_kind_compares_equality():
    b = boundlab.get("weight_error.interval_mean")
    p, K = 0.3, 5
    exact = (1 - (1 - p) ** K) / p
    assert compare(b, [exact], params={"p": p, "K": K}).verdict == "holds"
    assert compare(b, [exact * 1.01], params={"p": p, "K": K}).verdict == "VIOLATED"


def test_identical_seeds_count_as_one_effective_sample():
    r = compare(PLATEAU, [1.0, 1.0, 1.0], params=OK)
    assert r.effective_samples == 1 and r.n_seeds == 3
    assert r.measured_lo == r.measured_hi == 1.0 and "one effective sample" in r.note
    r = compare(PLATEAU, [1.0, 1.2, 0.9], params=OK)
    assert r.effective_samples == 3 and r.measured_hi > r.measured
    with pytest.raises(ValueError):
        compare(PLATEAU, [1.0, 1.2], params=OK, deterministic=True)


def test_errored_record():
    r = errored("c", "drift.plateau", ValueError("bad"))
    assert r.verdict == "error" and "ValueError: bad" in r.error and r.paper and r.reason


def test_ratio_is_measured_over_bound_zero_for_a_zero_measurement():
    assert compare(PLATEAU, [0.0, 0.0], params=OK).ratio == 0.0
    assert math.isinf(compare(PLATEAU, [1.0], 0.0).ratio)


def test_claim_and_bound_rows_use_separate_columns():
    b = compare(PLATEAU, [1.0], params=OK, check="c", case="tau=10").row()
    c = claim_result("k", "seed 000, Fig. 6", "toy", statement="slope -1", statistic=-1.1,
                     interval=(-1.3, -0.9), threshold=-1.0, outcome="supported").row()
    assert b["kind"] == "bound" and c["kind"] == "claim"
    assert all(b[k] is None for k in CLAIM_COLUMNS)
    assert all(c[k] is None for k in BOUND_COLUMNS)
    assert b["measured"] == 1.0 and c["statistic"] == -1.1 and c["outcome"] == "supported"
    # one table: the claim's row has every column but the bound's own term_* / param_*
    assert set(c) <= set(b) and all(k.startswith(("term_", "param_")) for k in set(b) - set(c))
    json.dumps(b)  # compact fields are JSON
    with pytest.raises(ValueError):
        claim_result("k", "p", "toy", statement="s", statistic=0, threshold=0, outcome="holds")


def test_non_numeric_input_is_a_clear_error():
    from boundlab.errors import DomainError

    with pytest.raises(DomainError, match="lhs_samples"):
        compare(PLATEAU, ["a"], params=OK)
    with pytest.raises(DomainError, match="rhs"):
        compare(PLATEAU, [1.0], "x", params=OK)
