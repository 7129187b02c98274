"""Numbers quoted in the spec, reproduced through toys.run."""

import numpy as np
import pytest

import toys
from toys.local import inverse_time


def test_bm13_rho_bar_all_iterations_vs_sync():
    """Spec seeds-000-001-004 BM-13 / appendix V.9 (bm_quad.py): on its quadratic (N = 5,
    d = 2, seed 0), FedSoftMax T = 1, E = 5, eta_t = 1/(mu (t + gamma)), gamma = 4L/mu, 200
    rounds: "rho_bar(sync)=1.563 rho_bar(all t)=0.544"."""
    N, d, L, mu, E = 5, 2, 4.0, 1.0, 5
    rng = np.random.default_rng(0)
    diag = rng.uniform(mu, L, (N, d))
    diag[:, 0] = mu
    diag[0, 1] = L
    c = rng.normal(0, 3, (N, d))
    prob = toys.Quadratic(np.stack([np.diag(a) for a in diag]), c)
    tr = toys.run(prob, "fedsoftmax", rounds=200, seed=0, x0=np.zeros(d), temperature=1.0,
                  lr=inverse_time(mu, max(4 * L / mu, E - 1)), local_steps=E)
    assert np.nanmin(tr.rho_sync) == pytest.approx(1.563, abs=5e-4)
    assert tr.rho_bar == pytest.approx(0.544, abs=5e-4)
    fedavg = toys.run(prob, "fedavg", rounds=20, seed=0, x0=np.zeros(d), local_steps=E,
                      lr=inverse_time(mu, 16.0))
    np.testing.assert_allclose(fedavg.rho_min, 1.0, rtol=1e-10)  # alpha = p  =>  rho = 1


def test_fedau_omega_long_run_under_cyclic_and_bernoulli():
    """Spec seeds-002-003 §5.1.4: cyclic-100 with p = 0.1 and K = 50 gives intervals
    {50, 41, 1 x 9} per cycle, omega = 100/11 = 9.09; Bernoulli(p) with cutoff K gives
    p omega -> p E[S] = 1 - (1 - p)^K (Lemma B.6.1)."""
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    tr = toys.run(prob, "fedau", rounds=3000, seed=0, participation="cyclic:p=0.1,cycle=100",
                  lr=0.01, K=50, record="none")
    np.testing.assert_allclose(tr.omega[-1], 100 / 11, atol=0.1)  # first cycle is partial
    tr = toys.run(prob, "fedau", rounds=20000, seed=0, participation="bernoulli:p=0.1",
                  lr=0.01, K=50, record="none")
    np.testing.assert_allclose(0.1 * tr.omega[-1], 1 - 0.9 ** 50, atol=0.07)  # ~3 std errors
