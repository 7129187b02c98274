"""boundlab.testing: strategies inside every domain and precondition, monotonicity search."""

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import boundlab
from boundlab import Bound, Precondition, make_params, sym
from boundlab.errors import DomainError, PreconditionError, UnknownNameError
from boundlab.testing import assert_monotone, params

CATALOGUE = boundlab.ids()


def _inside(bound, p):
    """Every value in its domain, every precondition judged and holding, value finite."""
    names = {**bound.params, **bound.extra_params}
    assert set(p) == set(names)
    for n, v in p.items():
        assert not names[n].domain.bad_mask(np.asarray(v, dtype=float)).any(), (n, v)
    assert bound.violated_preconditions(**p) == []
    assert bound.unchecked_preconditions(**p) == []
    value = np.asarray(bound.evaluate(**p), dtype=float)
    assert np.all(np.isfinite(value)), (p, value)


@pytest.mark.parametrize("bound_id", CATALOGUE)
def test_params_inside_domains_and_preconditions(bound_id):
    bound = boundlab.get(bound_id)

    # health checks on (only too_slow is suppressed, by the project profile and here)
    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(params(bound))
    def run(p):
        _inside(bound, p)

    run()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("BOUNDLAB_SLOW_TESTS") != "1",
                    reason="1000 examples x every catalogue bound takes 5-15 min on 2 cores; "
                           "set BOUNDLAB_SLOW_TESTS=1 (the default run draws 60 per bound)")
@pytest.mark.parametrize("bound_id", CATALOGUE)
def test_params_1000_examples_every_bound(bound_id):
    bound = boundlab.get(bound_id)
    count = [0]

    @settings(max_examples=1000, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(params(bound))
    def run(p):
        count[0] += 1
        _inside(bound, p)

    run()
    assert count[0] >= 1000


def test_step_sizes_are_drawn_by_construction_up_to_their_limits():
    # eta as a fraction of 1/(4L): the limit itself is drawn, and so are small fractions;
    # contraction.fedprox_sc pins gamma = 1/(2 E (L + alpha)) with a <= and a >= precondition
    drift, prox = boundlab.get("drift.fedavg_convex"), boundlab.get("contraction.fedprox_sc")
    fractions = []

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(params(drift), params(prox))
    def run(p, q):
        fractions.append(p["eta"] * 4 * p["L"])
        assert q["gamma"] == pytest.approx(1 / (2 * q["E"] * (q["L"] + q["alpha"])), rel=1e-12)

    run()
    assert max(fractions) == pytest.approx(1.0, rel=1e-15) and min(fractions) < 0.01


def test_fixed_values_are_kept_and_others_adapt():
    b = boundlab.get("drift.plateau")

    @settings(max_examples=40, deadline=None, database=None)
    @given(params(b, eta=0.2, tau=10))
    def run(p):
        assert p["eta"] == 0.2 and p["tau"] == 10
        assert p["L"] <= 1 / (4 * 0.2) * (1 + 1e-12)  # L adapts to the fixed step size
        _inside(b, p)

    run()


def test_bad_fixed_values_get_clear_errors():
    b = boundlab.get("skew.corollary")
    with pytest.raises(DomainError, match="mu = -1"):
        params(b, mu=-1)
    with pytest.raises(UnknownNameError, match="parameter of skew.corollary 'eta'"):
        params(b, eta=0.1)
    with pytest.raises(PreconditionError, match="mu <= L"):
        params(b, mu=2.0, L=1.0)


def test_user_bound_with_a_nonlinear_precondition():
    x, y = sym("x"), sym("y")
    b = Bound(id="mine.nonlinear", source="test", expr=x * y + 1, params=make_params("x", "y"),
              kind="upper", lhs="final_gap",
              preconditions=(Precondition(x**2 + x * y, "<=", 1, "x^2 + x y <= 1"),))

    @settings(max_examples=50, deadline=None, database=None)
    @given(params(b))
    def run(p):
        _inside(b, p)

    run()


def test_assert_monotone_passes_for_true_claims():
    assert_monotone(boundlab.get("drift.plateau"), "eta", "increasing", max_examples=40)
    assert_monotone(boundlab.get("drift.fedavg_convex"), "T", "decreasing", max_examples=40)


def test_assert_monotone_reports_the_counterexample_with_the_point():
    b = boundlab.get("drift.fedavg_convex")  # D^2/(2 eta tau T) decreases in eta
    with pytest.raises(AssertionError) as info:
        assert_monotone(b, "eta", "increasing", max_examples=60)
    msg = str(info.value)
    assert msg.startswith("drift.fedavg_convex is not increasing in eta: at {")
    for name in ("'D'", "'L'", "'tau'", "'T'"):
        assert name in msg


def test_assert_monotone_validates_its_arguments():
    b = boundlab.get("drift.plateau")
    with pytest.raises(UnknownNameError, match="direction"):
        assert_monotone(b, "eta", "up")
    with pytest.raises(UnknownNameError, match="parameter of drift.plateau 'T'"):
        assert_monotone(b, "T", "increasing")
    with pytest.raises(DomainError, match="eta"):
        assert_monotone(b, "eta", "increasing", eta=0.1)
