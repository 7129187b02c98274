"""FedSoftMax on the population axis (toys.run_many) against toys.run (BM's decaying step,
data weights), the plans and searches of seeds 000/001's pi / Pi bounds, and two false variants
caught on the real engine (each proved false here by hand first)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, make_params, sym
from verify.falsify.families import Spec, get_family
from verify.falsify.plan import NotApplicable, make_plan
from verify.falsify.population import quantities
from verify.falsify.toys_map import bm_gamma, schedule, toys_call

SKEW = (0.6, 0.3, 0.1)


def _falsify(bid, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify.falsify(bid, seed=0, **kw)


@pytest.mark.parametrize("name", ["quadratic", "huber", "softplus"])
@pytest.mark.parametrize("weights", [None, SKEW])
def test_population_fedsoftmax_matches_toys_run(name, weights, run_population):
    spec = Spec(L=2.0, mu=0.3, D=1.5, n_clients=3, dim=2, weights=weights)
    fam = get_family(name)
    Z = np.random.default_rng(11).uniform(-1, 1, (3, fam.n_vars(spec)))
    R, tau, temp = 4, 3, 0.4
    g = bm_gamma(spec.L, spec.mu, min(spec.p), tau)
    eta = np.tile(schedule(spec.mu, g, R, tau), (3, 1))
    st = fam.stack(Z, spec)
    q = run_population(st, eta, rounds=R, tau=tau, algo="fedsoftmax",
                       hyper={"temperature": temp})
    algo, kw = toys_call("fedsoftmax", {"temperature": temp}, 3)
    for k in range(3):
        prob, x0 = fam.build(Z[k], spec)
        tr = toys.run(prob, algo, rounds=R, seed=0, lr=eta[k], local_steps=tau, x0=x0, **kw)
        assert tr.diverged_at is None and np.allclose(prob.p, spec.p, rtol=1e-15)
        ref = quantities(tr, prob.p)
        assert {"kappa_min", "kappa_max"} <= set(ref)
        for key, v in ref.items():
            np.testing.assert_allclose(q[key][k], v[0], rtol=1e-12, atol=1e-14, err_msg=key)


def test_fedsoftmax_weights_follow_the_formula(run_population):
    """Independent reference: alpha_i = p_i exp(x_i / T) / sum_j p_j exp(x_j / T) with
    x_i = F_i(x0) - F_i* (F_i* = 0 for the quadratic family), kappa = alpha / p."""
    spec = Spec(L=1.0, mu=0.1, D=1.0, n_clients=3, dim=2, weights=SKEW)
    fam = get_family("quadratic")
    z = np.random.default_rng(3).uniform(-1, 1, (1, fam.n_vars(spec)))
    st = fam.stack(z, spec)
    q = run_population(st, np.array([0.1]), rounds=1, tau=1, algo="fedsoftmax",
                       hyper={"temperature": 0.5})
    r = st.x0[0] - st.c[0]  # (N, d): F_i(x0) = 1/2 r_i^T A_i r_i
    x = 0.5 * np.einsum("ni,nij,nj->n", r, st.A[0], r)
    a = np.array(SKEW) * np.exp(x / 0.5)
    kappa = a / a.sum() / np.array(SKEW)
    assert q["kappa_min"][0, 0] == pytest.approx(kappa.min(), rel=1e-12)
    assert q["kappa_max"][0, 0] == pytest.approx(kappa.max(), rel=1e-12)


def test_plans_of_the_skew_bounds():
    p = make_plan(boundlab.get("skew.pi_bound"), {})
    assert (p.algorithm, p.schedule, p.measured) == ("fedsoftmax", "bm", ("Gamma", "pi", "Pi"))
    assert p.scalars(T=4, tau=5)["T"] == 20 and p.scalars(4, 5)["E"] == 5  # BM's T: iterations
    assert p.hyper_grid == ({"temperature": 0.1}, {"temperature": 1.0}, {"temperature": 10.0})
    # gamma = max(4L/mu, 1 + 3/(8 p_min), E - 1) = 40 at mu = L/10: eta_0 = 1/(4L)
    assert p.eta_range(4, 5) == (0.25, 0.25)
    assert p.steps(np.zeros(2), 2, 3).shape == (2, 6)
    np.testing.assert_allclose(p.steps(np.zeros(1), 2, 3)[0], 1 / (0.1 * (np.arange(6) + 40)))
    up = make_plan(boundlab.get("skew.Pi_upper"), {})  # names p_min: the weights are searched
    assert {h["p_skew"] for h in up.hyper_grid} == {1.0, 0.5, 0.2}
    sub = up.with_hyper({"temperature": 1.0, "p_skew": 0.5})
    assert sub.spec.weights == pytest.approx((4 / 7, 2 / 7, 1 / 7), rel=1e-15)
    assert sub.scalars(1, 1)["p_min"] == pytest.approx(1 / 7, rel=1e-15)
    assert sub.hyper == {"temperature": 1.0}
    assert all("p_skew" not in h for h in make_plan(boundlab.get("skew.pi_bound_uniform"),
                                                    {}).hyper_grid)  # uniform p only


def test_fedsoftmax_needs_the_clients_minima():
    b = Bound(id="mine.softmax_convex", source="test", expr=sym("L") * sym("D") ** 2,
              params=make_params("L", "D"), kind="upper", lhs="final_gap")
    with pytest.raises(NotApplicable, match="strongly convex"):
        make_plan(b, {}, algorithm="fedsoftmax", function_class="smooth-convex")


@pytest.mark.parametrize("bid", ["skew.pi_bound", "skew.pi_bound_pmin",
                                 "skew.pi_bound_uniform", "skew.Pi_upper"])
def test_catalogue_skew_bound_holds_with_a_replayed_instance(bid):
    res = _falsify(bid, budget=48)
    assert res.verdict == "holds" and res.instance.run["algorithm"] == "fedsoftmax"
    assert "lr_schedule" in res.instance.run
    assert 0 < res.worst_ratio <= 1 + 1e-6 and res.instance.replay() == res.worst_ratio


def test_Pi_upper_with_the_N_minus_1_factor_doubled_is_caught():
    """Pi <= (1 - 2 (N-1) pi p_min)/p_min is false. By hand: N = 2, p = (1/2, 1/2),
    FedSoftMax with excess losses (0, T log 3) gives alpha = (1/4, 3/4), kappa = (1/2, 3/2):
    Pi = 3/2 > (1 - 2 * 1/2 * 1/2)/(1/2) = 1."""
    pi, p_min, N = sym("pi"), sym("p_min"), sym("N")
    good = boundlab.get("skew.Pi_upper")
    wrong = Bound(id="mine.Pi_upper_doubled", source="test",
                  expr=(1 - 2 * (N - 1) * pi * p_min) / p_min,
                  params=make_params("pi", "p_min", "N"), kind="upper", lhs="Pi",
                  preconditions=good.preconditions)
    a = np.array([0.5, 0.5]) * np.exp(np.array([0.0, np.log(3.0)]))
    kappa = a / a.sum() / 0.5
    assert kappa.tolist() == pytest.approx([0.5, 1.5], rel=1e-15)
    assert kappa.max() > wrong.evaluate(pi=kappa.min(), p_min=0.5, N=2) == pytest.approx(1.0)
    assert kappa.max() <= good.evaluate(pi=kappa.min(), p_min=0.5, N=2) + 1e-15  # 3/2 <= 3/2
    boundlab.register(wrong, algorithm="fedsoftmax", function_class="smooth-strongly-convex")
    try:  # the hand's setting: two clients of weight 1/2 (p_min given: no skewed weights)
        res = _falsify(wrong.id, budget=24, families=["quadratic"], M=2, p_min=0.5)
    finally:
        boundlab.unregister(wrong.id)
    assert res.verdict == "VIOLATED" and res.instance.replay() == res.worst_ratio > 1
    assert res.instance.plan.spec.weights is None and res.instance.plan.spec.n_clients == 2
    assert res.instance.lhs > res.instance.rhs  # Pi > 2 - 2 pi on two clients of weight 1/2


def test_pi_bound_with_the_horizon_squared_is_caught():
    """(C0 + lambda1/pi)/(T + gamma)^2 + lambda2 (Pi - pi)/pi is false. By hand: identical
    clients F_i = mu/2 ||x - c||^2 (Gamma = 0, alpha = p, pi = Pi = 1), L = 1, mu = 0.1, E = 1,
    D0 = 1, eta_t = 1/(mu (t + gamma)), gamma = 40: x_{t+1} - c = (1 - 1/(t + gamma))(x_t - c),
    so F(x_T) - F* = mu/2 ((gamma - 1)/(T + gamma - 1))^2 and G = mu D0; then
    (T + gamma)^2 (F(x_T) - F*) >= 0.05 * 39^2 = 76.05 > C0 + lambda1 = 20 + 128/3."""
    good = boundlab.get("skew.pi_bound")
    T, gm = sym("T"), sp_gamma()
    wrong = Bound(id="mine.pi_bound_T_squared", source="test",
                  expr=good.terms["speed"] * (T + gm) / (T + gm) ** 2 + good.terms["error"],
                  params=good.params, kind="upper", lhs="final_gap",
                  preconditions=good.preconditions)
    vals = {"L": 1.0, "mu": 0.1, "E": 1, "G": 0.1, "sigma": 0.0, "Gamma": 0.0, "D0": 1.0,
            "pi": 1.0, "Pi": 1.0}
    for t in (1, 2, 8, 64):
        gap = 0.05 * (39 / (t + 39)) ** 2
        assert gap > wrong.evaluate(T=t, **vals) and gap <= good.evaluate(T=t, **vals)
    boundlab.register(wrong, algorithm="fedsoftmax", function_class="smooth-strongly-convex")
    try:
        res = _falsify(wrong.id, budget=40, families=["quadratic"], tau=1)
    finally:
        boundlab.unregister(wrong.id)
    assert res.verdict == "VIOLATED" and res.instance.replay() == res.worst_ratio > 1


def sp_gamma():
    """The pi_bound's gamma = max(4L/mu, 1 + 3 Pi/8, E - 1) as a sympy expression."""
    import sympy as sp

    L, mu, Pi, E = sym("L"), sym("mu"), sym("Pi"), sym("E")
    return sp.Max(4 * L / mu, 1 + sp.Rational(3, 8) * Pi, E - 1)

