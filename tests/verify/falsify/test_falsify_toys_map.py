"""FedProx and the beta-perturbed steps of the search (toys' own, on the population axis)
against toys.run, beta's graph against its closed form, the clients' exact minima (Gamma)
against scipy, and the plans of the algorithms' bounds."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.optimize import minimize

import boundlab
import toys
from boundlab.errors import DomainError
from verify.falsify.families import Spec, get_family
from verify.falsify.plan import NotApplicable, make_plan
from verify.falsify.population import quantities
from verify.falsify.toys_map import toys_call

SPEC = Spec(L=2.0, mu=0.3, D=1.5, n_clients=3, dim=2)


@pytest.mark.parametrize("name", ["quadratic", "huber", "softplus"])
@pytest.mark.parametrize("algo,hyper", [("fedprox", {"alpha": 0.7}), ("beta", {"beta": 0.4})])
def test_population_algorithm_matches_toys_run(name, algo, hyper, run_population):
    fam = get_family(name)
    Z = np.random.default_rng(11).uniform(-1, 1, (3, fam.n_vars(SPEC)))
    eta = np.array([0.1, 0.25, 0.45])
    st = fam.stack(Z, SPEC)
    q = run_population(st, eta, rounds=4, tau=3, algo=algo, hyper=hyper)
    toys_algo, kw = toys_call(algo, hyper, 3)
    for k in range(3):
        prob, x0 = fam.build(Z[k], SPEC)
        tr = toys.run(prob, toys_algo, rounds=4, seed=0, lr=float(eta[k]), local_steps=3, x0=x0,
                      **kw)
        assert tr.diverged_at is None
        for key, v in quantities(tr).items():
            np.testing.assert_allclose(q[key][k], v[0], rtol=1e-12, atol=1e-14, err_msg=key)


def test_beta_runs_on_the_uniform_graph():
    """Closed form: orthonormal messages give p_in = 1/(N(N-1)) off the diagonal, p_i = 1/N."""
    spec, fam = Spec(L=1.0, mu=0.1, n_clients=4, dim=2), get_family("quadratic")
    prob, x0 = fam.build(np.zeros(fam.n_vars(spec)), spec)
    name, kw = toys_call("beta", {"beta": 0.5}, 4)
    g = toys.run(prob, name, rounds=1, seed=0, lr=0.1, x0=x0, **kw).info["graph"]
    np.testing.assert_allclose(g["p"], 0.25, rtol=1e-15)
    np.testing.assert_allclose(g["P"][~np.eye(4, dtype=bool)], 1 / 12, rtol=1e-15)


def _scipy_client_minima(prob):
    """min_x F_i(x) per client by BFGS from the problem's losses and gradients."""
    out = []
    for i in range(prob.n_clients):
        def f(x, i=i):
            return float(prob.losses(np.broadcast_to(x, (prob.n_clients, prob.dim)))[i])

        def g(x, i=i):
            return prob.grads(np.broadcast_to(x, (prob.n_clients, prob.dim)))[i]

        res = minimize(f, np.zeros(prob.dim), jac=g, method="BFGS", options={"gtol": 1e-11})
        out.append(res.fun)
    return np.array(out)


@pytest.mark.parametrize("name", ["quadratic", "huber", "softplus"])
def test_client_minima_and_gamma_match_scipy(name):
    fam = get_family(name)
    Z = np.random.default_rng(5).uniform(-1, 1, (3, fam.n_vars(SPEC)))
    st = fam.stack(Z, SPEC)
    gamma = st.F_star - st.F_star_i @ st.p
    for k in range(3):
        prob, _ = fam.build(Z[k], SPEC)
        ref = _scipy_client_minima(prob)
        np.testing.assert_allclose(st.F_star_i[k], ref, rtol=1e-9, atol=1e-12)
        assert gamma[k] == pytest.approx(prob.Gamma, rel=1e-10, abs=1e-14)  # replay's Gamma
        assert gamma[k] > 0


def test_logistic_client_minima_match_scipy():
    """The family without a batched form: the replay's Gamma reads toys' own client minima."""
    fam = get_family("logistic")
    prob, _ = fam.build(np.random.default_rng(4).uniform(-1, 1, fam.n_vars(SPEC)), SPEC)
    np.testing.assert_allclose(prob.F_star_i, _scipy_client_minima(prob), rtol=1e-9, atol=1e-12)


def test_plans_of_the_contraction_bounds():
    a3 = make_plan(boundlab.get("contraction.lemma_a3"), {})
    assert (a3.algorithm, a3.measured, a3.hyper_grid[1]) == ("fedprox", ("Gamma",), {"alpha": 1.0})
    assert a3.at_scale(10.0, 1.0).hyper_grid[0] == {"alpha": 1.0}  # alpha in units of L
    b3 = make_plan(boundlab.get("contraction.lemma_b3"), {"beta": 0.3, "gamma": 0.05})
    assert b3.hyper_grid == ({"beta": 0.3},) and b3.scalars(2, 5)["gamma"] == 0.05
    sc = make_plan(boundlab.get("contraction.fedprox_sc"), {"alpha": 0.5, "L": 1.5})
    lo, hi = sc.eta_range(T=3, tau=4)  # the theorem's step, 1/(2 E (L + alpha)), exactly
    assert lo == hi == pytest.approx(1 / (2 * 4 * (1.5 + 0.5)), rel=1e-15)
    with pytest.raises(DomainError):
        make_plan(boundlab.get("contraction.lemma_b3"), {"beta": 1.5})
    cor = make_plan(boundlab.get("contraction.corollary1"), {})  # E = E_opt met at the run's E
    assert cor.step_name == "gamma" and cor.bound.lhs == "avg_grad_norm2"  # (_plan_pins)


def test_gamma_is_measured_only_where_clients_have_minima():
    b = dataclasses.replace(boundlab.get("contraction.lemma_a3"), id="mine.a3_convex")
    with pytest.raises(NotApplicable, match="Gamma"):  # a convex client may have no minimiser
        make_plan(b, {}, algorithm="fedprox", function_class="smooth-convex")
