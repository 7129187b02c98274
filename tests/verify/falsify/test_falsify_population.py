"""A search family's population on the toys engine (verify/falsify/population.py) against
toys.run on each instance built on its own, and against the tight worst case of gradient
descent (a closed form)."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from verify.falsify.families import Spec, get_family
from verify.falsify.population import quantities


@pytest.mark.parametrize("name", ["quadratic", "huber", "softplus"])
@pytest.mark.parametrize("N,tau,mu", [(1, 1, 0.0), (3, 3, 0.3)])
def test_population_matches_toys_run(name, N, tau, mu, run_population):
    spec = Spec(L=2.0, mu=mu, D=1.5, n_clients=N, dim=2)
    fam = get_family(name)
    Z = np.random.default_rng(7).uniform(-1, 1, (4, fam.n_vars(spec)))
    eta = np.array([0.1, 0.3, 0.5, 0.9])
    st = fam.stack(Z, spec)
    q = run_population(st, eta, rounds=5, tau=tau)
    for k in range(4):
        prob, x0 = fam.build(Z[k], spec)
        tr = toys.run(prob, "fedavg", rounds=5, seed=0, lr=float(eta[k]), local_steps=tau, x0=x0)
        ref = quantities(tr)
        for key, v in ref.items():
            np.testing.assert_allclose(q[key][k], v[0], rtol=1e-12, atol=1e-14, err_msg=key)


def test_gd_on_huber_reaches_the_drori_teboulle_worst_case(run_population):
    """f = L huber_delta with delta = D/(2T+1), x0 = D, step 1/L: f(x_T) - f* = L D^2/(4T+2)
    (Drori and Teboulle 2014, the tight worst case of GD on smooth convex functions)."""
    L, D, T = 2.0, 1.5, 5
    arr = {"profile": "huber", "a": np.ones((1, 1, 1, 1)), "b": np.zeros((1, 1, 1)),
           "w": np.full((1, 1, 1), L), "delta": np.full((1, 1, 1), D / (2 * T + 1)),
           "c": np.zeros((1, 1, 1)), "mu": 0.0, "u": np.ones((1, 1)), "common": True, "D": D}
    from verify.falsify.families._ridge import StackedRidge

    st = StackedRidge(arr, np.ones(1))
    q = run_population(st, np.array([1 / L]), rounds=T, tau=1)
    assert q["gap"][0, -1] == pytest.approx(L * D**2 / (4 * T + 2), rel=1e-12)
