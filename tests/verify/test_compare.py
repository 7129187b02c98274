"""Verdict rules of verify.compare, on hand-made numbers."""

import math

import numpy as np
import pytest
from scipy import stats

import boundlab
from verify.compare import compare, errored, mean_ci

PLATEAU = boundlab.get("drift.plateau")


def test_mean_ci_is_the_student_t_interval():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    m, lo, hi = mean_ci(x)
    half = stats.t.ppf(0.975, 3) * x.std(ddof=1) / 2.0
    assert (m, lo, hi) == pytest.approx((3.5, 3.5 - half, 3.5 + half))
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0)


def test_holds_when_upper_confidence_limit_below_bound():
    r = compare(PLATEAU, [1.0, 1.1, 0.9], 2.0)
    assert r.verdict == "holds" and r.ratio == pytest.approx(2.0)
    assert r.measured_hi < 2.0


def test_judged_against_ucl_not_the_mean():
    # mean 1.0 < bound 1.05, but the upper 95 % limit exceeds it: not "holds"
    r = compare(PLATEAU, [0.5, 1.5, 1.0], 1.05)
    assert r.measured == pytest.approx(1.0) and r.measured_hi > 1.05
    assert r.verdict == "VIOLATED"


def test_one_lucky_run_does_not_pass_a_violation():
    r = compare(PLATEAU, [3.0], 2.0)
    assert r.verdict == "VIOLATED"


def test_precondition_failure_is_not_applicable_and_named():
    r = compare(PLATEAU, [3.0], 2.0, preconditions_violated=["eta <= 1/(4*L)"])
    assert r.verdict == "not-applicable" and r.preconditions_violated == ["eta <= 1/(4*L)"]


def test_order_bounds_are_never_judged():
    r = compare(boundlab.get("skew.rate_order"), [100.0], 0.01)
    assert r.verdict == "order-only"


def test_diverged_runs_are_not_compared():
    assert compare(PLATEAU, [np.nan], 2.0).verdict == "diverged"
    assert compare(PLATEAU, [1.0], 2.0, diverged=True).verdict == "diverged"


def test_identity_kind_compares_equality():
    b = boundlab.get("weight_error.interval_mean")
    p, K = 0.3, 5
    exact = (1 - (1 - p) ** K) / p
    assert compare(b, [exact], exact).verdict == "holds"
    assert compare(b, [exact * 1.01], exact).verdict == "VIOLATED"


def test_errored_record():
    r = errored("c", "drift.plateau", ValueError("bad"))
    assert r.verdict == "error" and "ValueError: bad" in r.error and r.paper


def test_ratio_infinite_for_zero_measurement():
    assert math.isinf(compare(PLATEAU, [0.0, 0.0], 1.0).ratio)
