"""toys.Trace.rho_max: per round the largest skew rho(t, w_t) over the round's iterations, and
its column in the per-round log (what verify.measures' ``rho`` reads)."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError


def test_rho_max_is_the_rounds_largest_step_value():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    tr = toys.run(prob, "fedsoftmax", rounds=3, seed=0, lr=0.05, local_steps=4, record="step")
    steps = np.asarray(tr.steps["rho"], dtype=float)
    ref = [max(float(x) for x in row if not np.isnan(x)) for row in steps]  # plain Python
    assert tr.rho_max.tolist() == ref
    log = tr.to_log(p=prob.p)
    assert log["rho_max"].iloc[:-1].tolist() == ref and np.isnan(log["rho_max"].iloc[-1])


def test_rho_max_is_one_for_fedavg_and_nan_where_nothing_is_defined():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    tr = toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.05, local_steps=2, record="step")
    assert np.allclose(tr.rho_max, 1.0, rtol=0, atol=1e-12)  # alpha = p: rho = 1 (BM)
    tr.steps["rho"][1] = np.nan
    assert np.isnan(tr.rho_max[1]) and tr.rho_max[0] == pytest.approx(1.0, abs=1e-12)


def test_rho_max_needs_a_step_run():
    tr = toys.run(toys.quadratic(n_clients=3, dim=2, seed=0), "fedavg", rounds=2, seed=0,
                  lr=0.05, local_steps=2)
    with pytest.raises(DomainError, match="record"):
        _ = tr.rho_max
    assert "rho_max" not in tr.to_log().columns
