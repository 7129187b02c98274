"""FedAU in verify.falsify (verify/falsify/fedau_paths.py): toys' FedAU on the population
axis against toys.run path by path, Algorithm 2's weights against their closed form and W, Q
against hand computations, the parameters held by construction (delta, G), a provably wrong
variant caught VIOLATED, and the catalogue bound holding at a small budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, make_params, sym
from verify.falsify import fedau_paths as fa
from verify.falsify.families import Spec, get_family
from verify.falsify.plan import make_plan
from verify.falsify.population import FamilyPopulation, quantities


def _instance(fam_name, spec, seed=0):
    fam = get_family(fam_name)
    z = np.random.default_rng(seed).uniform(-1, 1, fam.n_vars(spec))
    return fam, z


def _omega_closed_form(masks, K):
    """omega_t = (t - S_t) / M_t (M_t intervals completed before round t, S_t rounds of the
    open one: the completed intervals cover the other t - S_t rounds), 1 before the first."""
    chi = np.asarray(masks, dtype=bool)
    out = np.ones(chi.shape)
    for idx in np.ndindex(chi.shape[0], chi.shape[2]):
        b, n = idx
        M = S = 0
        for t in range(1, chi.shape[1]):
            S += 1
            if chi[b, t - 1, n] or S == K:
                M, S = M + 1, 0
            out[b, t, n] = (t - S) / M if M else 1.0
    return out


@pytest.mark.parametrize("fam_name,K", [("huber", 2.0), ("softplus", math.inf),
                                        ("quadratic", 1.0)])
def test_population_matches_toys_run_on_every_path(fam_name, K):
    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=2, dim=2, zeta=0.4)
    fam, z = _instance(fam_name, spec)
    T, tau, gamma, eta = 3, 2, 0.07, 1.7
    masks, _ = fa.paths(np.full((1, 2), 0.5), T)
    B = masks.shape[0]
    om = fa.omegas(masks, K)
    np.testing.assert_array_equal(om, _omega_closed_form(masks, K))
    kw = {"K": None if math.isinf(K) else int(K)}
    pop = FamilyPopulation(fam.stack(np.repeat(z[None], B, axis=0), spec))
    res = toys.run_many(pop, "fedau", rounds=T, seeds=0, participation=masks, local_steps=tau,
                        server_lr=eta, vary={"lr": np.full(B, gamma)}, **kw)
    q = quantities(res)
    prob, x0 = fam.build(z, spec)
    for b in range(B):
        tr = toys.run(prob, "fedau", rounds=T, seed=0, lr=gamma, server_lr=eta,
                      local_steps=tau, x0=x0, participation=masks[b], **kw)
        np.testing.assert_allclose(tr.omega, om[b], rtol=0, atol=0)
        for key in ("grad_norm2", "gap", "dist2", "loss"):
            np.testing.assert_allclose(q[key][b], getattr(tr, key), rtol=1e-12, atol=1e-15)


def test_weight_error_and_Q_by_hand():
    """One client, T = 3: omega_0 = omega_1 = 1; omega_2 = 2 when chi_0 = 0 and chi_1 = 1
    (K = inf) or when chi_0 = 0 (K = 2: the open interval is cut at 2), else 1."""
    p = 0.3
    for K, p2 in ((math.inf, (1 - p) * p), (2.0, 1 - p)):
        masks, prob = fa.paths(np.array([[p]]), 3)
        W, Q = fa.weight_stats(np.array([[p]]), fa.omegas(masks, K), prob)
        e2 = (1 - p2) * (p - 1) ** 2 + p2 * (2 * p - 1) ** 2
        assert W[0] == pytest.approx(((p - 1) ** 2 * 2 + e2) / 3, rel=1e-14)
        assert Q[0] == pytest.approx(4 * p, rel=1e-14)
    assert np.isclose(fa.paths(np.array([[0.2, 0.9]]), 4)[1].sum(), 1.0, rtol=1e-14)


def test_delta_and_G_hold_by_construction():
    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=3, dim=2, zeta=0.4)
    fam, z = _instance("huber", spec, seed=3)
    prob, x0 = fam.build(z, spec)
    X = np.random.default_rng(1).normal(0, 50, (200, 2))
    g = np.array([prob.grads(np.repeat(x[None], 3, 0)) for x in X])  # (200, N, d)
    dev = np.linalg.norm(g - g.mean(axis=1, keepdims=True), axis=2)
    assert dev.max() == pytest.approx(0.4, rel=1e-12)  # = zeta at every x
    from verify.falsify.families import _ridge

    arr = {k: (v[None] if isinstance(v, np.ndarray) else v) for k, v in prob.base.arr.items()}
    G2 = float(_ridge.grad_sup2(arr, prob.p)[0])
    a, dl = arr["a"][0, 0], arr["delta"][0, 0]
    top = 0.0
    for s in ([1, 1], [1, -1], [-1, 1], [-1, -1]):  # both ridges saturated (Huber: attained)
        x = np.linalg.solve(a, 10 * dl * np.array(s))
        top = max(top, float(np.sum(prob.grad_F(x) ** 2)))
    assert G2 == pytest.approx(top, rel=1e-12)
    assert float(np.max(np.sum(g.mean(axis=1) ** 2, axis=1))) <= G2 * (1 + 1e-12)


def test_search_and_replay_agree():
    b = boundlab.get("weight_error.theorem2_opt2")
    plan = make_plan(b, {"T": 3, "I": 2, "K": 2, "n_clients": 2}).with_hyper({"K": 2.0})
    fam = get_family("softplus")
    Z = np.random.default_rng(2).uniform(-1, 1, (3, fam.n_vars(plan.spec) + 3))
    lo, hi = plan.eta_range(3, 2)
    gamma = np.array([lo, hi, hi])
    r, lhs, rhs = fa.evaluate(plan, fam, Z, 3, 2, gamma)
    for i in range(3):
        prob, x0 = fam.build(Z[i], plan.spec)
        rr = fa.replay(plan, prob, x0, 3, 2, gamma[i], Z[i])
        np.testing.assert_allclose(rr, (r[i], lhs[i], rhs[i]), rtol=1e-12)
    assert np.all(np.isfinite(r))


def test_a_provably_wrong_variant_is_violated():
    """lhs <= L F / 10 + W (delta^2 + PsiG) / 100 + L Q eta gamma / (100 N) is false: at
    T = 1 the lhs is ||grad f(x0)||^2 (no participation involved). A Huber ridge sum whose
    ridges hold x0 in their quadratic zone, x0 - x* along the top eigenvector of the Hessian
    (eigenvalue L), has F = L D^2 / 2 and ||grad f(x0)||^2 = L^2 D^2 = 2 L F; with every
    p_n = 1, W = mean (p_n - 1)^2 = 0 and Q = 1, and gamma eta <= 1/(2 L I) (Theorem 2's
    precondition) gives rhs <= L F / 10 + 1/(200 N I) = 0.05 + 0.0025 < 1 = lhs at L = D = 1,
    N = 2, I = 1."""
    F, L, W, d, Ps, Q, e, g, N = (sym(n) for n in
                                  ("F", "L", "W", "delta", "PsiG", "Q", "eta", "gamma", "N"))
    base = boundlab.get("weight_error.theorem2_opt2")
    wrong = Bound(id="mine.fedau_wrong", source="test", kind="upper", lhs="avg_grad_norm2",
                  expr=L * F / 10 + W * (d ** 2 + Ps) / 100 + L * Q * e * g / (100 * N),
                  params=make_params("F", "L", "W", "delta", "PsiG", "Q", "eta", "gamma",
                                     "N"),
                  extra_params=make_params("I"), preconditions=base.preconditions)
    boundlab.register(wrong, algorithm="fedau", function_class="smooth-nonconvex")
    try:
        res = verify.falsify("mine.fedau_wrong", budget=30, seed=0, T=2, I=1, n_clients=2,
                             L=1.0, D=1.0)
    finally:
        boundlab.unregister("mine.fedau_wrong")
    assert res.verdict == "VIOLATED", res.reason
    assert res.instance.replay() > 1 and res.worst_ratio > 1


def test_catalogue_theorem_holds_at_a_small_budget():
    res = verify.falsify("weight_error.theorem2_opt2", budget=20, seed=0, n_clients=2)
    assert res.verdict == "holds", res.reason
    assert 0 < res.worst_ratio < 1 and res.instance.replay() == pytest.approx(res.worst_ratio)
    assert set(res.per_family) == {"huber", "softplus"}  # quadratics: no G


def test_not_applicable_reasons():
    b = boundlab.get("weight_error.theorem2_explicit")
    with pytest.raises(Exception, match="2\\^9"):
        make_plan(b, {"T": 8, "n_clients": 3})
    with pytest.raises(Exception, match="global step"):
        make_plan(b, {"eta": 0.5})
