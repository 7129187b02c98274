"""PEP worst case of gradient descent and the THG interpolation turned into a run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toys
from verify.falsify.interpolate import Interpolated
from verify.falsify.pep import gd_worst_case


def _pep(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gd_worst_case(**kw)


@pytest.mark.parametrize("T", [1, 3, 6])
def test_gd_last_iterate_pep_is_the_known_worst_case(T):
    """Drori and Teboulle (2014): sup f(x_T) - f* = L D^2 / (4T + 2) for step 1/L."""
    L, D = 2.0, 1.5
    w = _pep(lhs="final_gap", T=T, eta=1 / L, L=L, mu=0.0, D=D)
    exact = L * D**2 / (4 * T + 2)
    assert w["lower"] <= w["upper"] * (1 + 1e-7)
    assert w["upper"] == pytest.approx(exact, rel=1e-6)
    assert w["lower"] == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_interpolated_worst_case_replays_on_the_engine(mu):
    """GD run by toys.run on the interpolating function measures the PEP value."""
    L, D, T = 2.0, 1.5, 4
    w = _pep(lhs="final_gap", T=T, eta=1 / L, L=L, mu=mu, D=D)
    prob = Interpolated(w["points"], w["grads"], w["values"], L=L, mu=mu)
    tr = toys.run(prob, "fedavg", rounds=T, seed=0, lr=1 / L, local_steps=1, x0=w["points"][1])
    assert tr.gap[-1] == pytest.approx(w["lower"], rel=1e-6)
    if mu == 0:
        assert tr.gap[-1] == pytest.approx(L * D**2 / (4 * T + 2), rel=1e-6)


def test_interpolant_is_smooth_convex_and_through_the_data():
    """Data of a known L-smooth convex function (log-sum-exp scaled to L): the interpolant
    passes through it and satisfies the L-smooth convex inequality at random points."""
    L = 3.0
    rng = np.random.default_rng(0)

    def f(x):
        return L * np.log(np.sum(np.exp(x)))

    def g(x):
        e = np.exp(x)
        return L * e / e.sum()

    X = rng.normal(size=(6, 3))
    X[0] = np.zeros(3)  # the data need a minimiser first: shift g there to zero
    G = np.array([g(x) - g(X[0]) for x in X])
    F = np.array([f(x) - f(X[0]) - g(X[0]) @ x for x in X])
    prob = Interpolated(X, G, F, L=L)
    np.testing.assert_allclose(prob.losses(X[2:3]), F[2:3], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(prob.grads(X[3:4]), G[3:4], rtol=1e-9, atol=1e-10)
    Y = rng.normal(size=(12, 3))
    fy = np.array([prob.losses(y[None])[0] for y in Y])
    gy = np.array([prob.grads(y[None])[0] for y in Y])
    for i in range(12):
        for j in range(12):
            lhs = fy[i] - fy[j] - gy[j] @ (Y[i] - Y[j]) - np.sum((gy[i] - gy[j]) ** 2) / (2 * L)
            assert lhs >= -1e-8


@pytest.mark.parametrize("T,tau", [(1, 3), (2, 2), (3, 1)])
def test_fedavg_identical_clients_model_is_gd_with_t_tau_steps(T, tau):
    from verify.falsify.pep import worst_case

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = worst_case("final_gap", "fedavg", T=T, tau=tau, eta=0.5, L=2.0, mu=0.0, D=1.5)
    # Drori-Teboulle: L D^2 / (4 N + 2) after N = T tau steps of 1/L
    assert w["upper"] == pytest.approx(2.0 * 1.5**2 / (4 * T * tau + 2), rel=1e-6)
    assert w["identical_clients"] and (w["rounds"], w["local_steps"]) == (T, tau)
    with pytest.raises(ValueError, match="tau = 2"):
        worst_case("final_gap", "gd", T=1, tau=2, eta=1.0, L=1.0, mu=0.0, D=1.0)


def test_a_users_fedavg_last_iterate_bound_gets_a_pep_counterexample():
    import boundlab
    import verify
    from boundlab import Bound, make_params, sym

    L, D, T, tau = sym("L"), sym("D"), sym("T"), sym("tau")
    b = Bound(id="mine.fedavg_last_pep", source="test", expr=L * D**2 / (8 * T * tau),
              params=make_params("L", "D", "T", "tau"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="fedavg", function_class="smooth-convex")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = verify.falsify(b.id, budget=10, seed=0, families=["quadratic"], T=4, tau=2)
    finally:
        boundlab.registry.unregister(b.id)
    # identical clients, 8 steps of 1/L: the exact worst case L D^2/34 is 64/34 of the bound
    assert r.exact["lower"] == pytest.approx(64 / 34, rel=1e-5)
    assert r.exact["upper"] is None and "identical clients" in r.exact["model"]
    assert r.verdict == "VIOLATED" and r.instance.family == "pep-interpolation"
    assert r.instance.replay() == pytest.approx(64 / 34, rel=1e-5)
