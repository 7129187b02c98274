"""toys.run_many(..., measure=...): only the named quantities are measured, each with the bits
of the unrestricted run; the others stay NaN; bad names are refused by name.

The reference is the same population run without ``measure`` (itself checked instance by
instance against toys.run in test_population.py)."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.engine.population import MEASURABLE, run_many

B, N, D, R = 3, 4, 2, 5
STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
SUMMARY = ("shadow_gap", "drift_max", "drift_mean", "drift_sum", "disc_max", "g2_max")


def _problems():
    return [toys.quadratic(n_clients=N, dim=D, L=2.0, mu=0.1, seed=s) for s in range(B)]


def _run(record="round", participation="full", **kw):
    return run_many(_problems(), "fedavg", rounds=R, seeds=[0, 1, 2], lr=0.2, local_steps=3,
                    participation=participation, record=record, **kw)


def _eq(a, b):
    return np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("participation", ["full", "bernoulli:p=0.5"])
@pytest.mark.parametrize("names", [(), ("shadow_gap",), ("drift_mean", "g2_max"),
                                   ("grad_norm2", "disc_max", "loss"), ("drift_sum", "dist2"),
                                   ("grad_dissim",)])
def test_measured_quantities_have_the_full_runs_bits(names, participation):
    full = _run(participation=participation)
    part = _run(participation=participation, measure=names)
    want = set(names) | {"gap"}
    for k in STATE:
        if k in want:
            assert _eq(part.state[k], full.state[k]), k
        else:
            assert np.isnan(part.state[k]).all(), k
    for k in SUMMARY:
        if k in want:
            assert _eq(part.per_round[k], full.per_round[k]), k
        else:
            assert np.isnan(part.per_round[k]).all(), k
    # what is not a measurement is untouched: the models, weights, participation and steps
    assert _eq(part.final_model, full.final_model)
    assert _eq(part.alpha, full.alpha) and _eq(part.participation, full.participation)
    assert _eq(part.per_round["lr"], full.per_round["lr"])
    assert _eq(part.diverged_at, full.diverged_at)


def test_step_record_virtual_gradients_alone():
    full = _run(record="step")
    part = _run(record="step", measure=["grad_norm2_virtual"])
    assert _eq(part.grad_norm2_virtual, full.grad_norm2_virtual)
    assert _eq(part.steps["grad_norm2"], full.steps["grad_norm2"])
    assert np.isnan(part.steps["drift_max"]).all() and np.isnan(part.shadow_gap).all()
    # dist2 with record="step" is also the per-step distance of the virtual averages
    d = _run(record="step", measure=["dist2"])
    assert _eq(d.steps["dist2"], full.steps["dist2"]) and _eq(d.dist2, full.dist2)


def test_state_record_takes_state_names():
    full = _run(record="state")
    part = _run(record="state", measure={"dist2"})
    assert _eq(part.dist2, full.dist2) and _eq(part.gap, full.gap)
    assert np.isnan(part.loss).all() and np.isnan(part.grad_norm2).all()


@pytest.mark.parametrize("algo, hyper", [("scaffold", {}), ("fedprox", {"prox": 0.3}),
                                         ("fedsoftmax", {"temperature": 0.7})])
def test_other_algorithms_measure_alike(algo, hyper):
    kw = dict(rounds=R, seeds=[0, 1, 2], lr=0.2, local_steps=3, participation="uniform:m=2",
              **hyper)
    full = run_many(_problems(), algo, **kw)
    part = run_many(_problems(), algo, measure=("shadow_gap", "grad_norm2"), **kw)
    for k in ("gap", "grad_norm2", "shadow_gap"):
        assert _eq(getattr(part, k), getattr(full, k)), k
    assert _eq(part.final_model, full.final_model)


def test_a_run_that_diverges_ends_where_the_full_run_ends():
    probs = _problems()
    full = run_many(probs, "fedavg", rounds=R, seeds=0, lr=3.0, local_steps=3,
                    vary={"lr": [3.0, 0.1, 40.0]})
    part = run_many(probs, "fedavg", rounds=R, seeds=0, lr=3.0, local_steps=3,
                    vary={"lr": [3.0, 0.1, 40.0]}, measure=["shadow_gap"])
    assert (full.diverged_at >= 0).any()  # the case is exercised
    assert _eq(part.diverged_at, full.diverged_at) and _eq(part.gap, full.gap)
    assert _eq(part.shadow_gap, full.shadow_gap)


def test_names_are_the_documented_ones():
    assert set(MEASURABLE) == {*STATE, *SUMMARY, "grad_norm2_virtual", "rho_max", "pairwise_drift",
                               "local_deviation", "perturbed_divergence",
                               "neighbour_avg_deviation"}


@pytest.mark.parametrize("record, measure, bad", [
    ("round", ["gap", "rho_min"], "rho_min"),
    ("round", [3], "3"),
    ("round", 7, "7"),
    ("state", ["shadow_gap"], "shadow_gap"),
    ("round", ["grad_norm2_virtual"], "grad_norm2_virtual"),
    ("none", ["gap"], "gap"),
])
def test_bad_measure_is_refused_by_name(record, measure, bad):
    with pytest.raises(DomainError, match="measure") as e:
        _run(record=record, measure=measure)
    assert bad in str(e.value)
