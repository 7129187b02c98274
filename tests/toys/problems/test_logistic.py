"""Logistic problems: optima (Newton vs cvxpy), derivatives, minibatches, constants."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError

_TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10}


def _small_binary(seed=0, l2=0.1, N=3, f=3, intercept=False):
    rng = np.random.default_rng(seed)
    n = rng.integers(8, 20, size=N)
    Xs = [rng.normal(size=(k, f)) + i for i, k in enumerate(n)]
    ys = [(rng.random(k) < 0.5).astype(float) for k in n]
    return toys.logistic(Xs, ys, l2=l2, fit_intercept=intercept), Xs, ys


def _small_multi(seed=0, l2=0.1, N=3, f=2, C=3):
    rng = np.random.default_rng(seed)
    n = rng.integers(10, 20, size=N)
    Xs = [rng.normal(size=(k, f)) for k in n]
    ys = [rng.integers(0, C, size=k) for k in n]
    return toys.logistic(Xs, ys, l2=l2), Xs, ys


def _cvx_binary(Xs, ys, p, l2):
    import cvxpy as cp

    th = cp.Variable(Xs[0].shape[1])
    obj = sum(pi * cp.sum(cp.logistic(X @ th) - cp.multiply(y, X @ th)) / len(y)
              for pi, X, y in zip(p, Xs, ys))
    cp.Problem(cp.Minimize(obj + l2 / 2 * cp.sum_squares(th))).solve(solver="CLARABEL", **_TIGHT)
    return th.value


def _cvx_multi(Xs, ys, p, l2, C):
    import cvxpy as cp

    f = Xs[0].shape[1]
    Th = cp.Variable((f, C))
    terms = []
    for pi, X, y in zip(p, Xs, ys):
        Z = X @ Th
        Y = np.eye(C)[y]
        terms.append(pi * (cp.sum(cp.log_sum_exp(Z, axis=1)) - cp.sum(cp.multiply(Y, Z))) / len(y))
    objective = cp.Minimize(sum(terms) + l2 / 2 * cp.sum_squares(Th))
    cp.Problem(objective).solve(solver="CLARABEL", **_TIGHT)
    return Th.value.reshape(-1)


def test_binary_optima_match_cvxpy():
    prob, Xs, ys = _small_binary(intercept=True)
    Xs1 = [np.hstack([x, np.ones((len(x), 1))]) for x in Xs]
    ref = _cvx_binary(Xs1, ys, prob.p, prob.l2)
    assert np.allclose(prob.x_star, ref, atol=1e-6)
    for i in range(prob.n_clients):
        ref_i = _cvx_binary([Xs1[i]], [ys[i]], [1.0], prob.l2)
        assert np.allclose(prob.x_star_i[i], ref_i, atol=1e-6)
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10
    assert np.all(np.linalg.norm(prob.grads(prob.x_star_i), axis=1) <= 1e-10)
    assert prob.Gamma >= 0


def test_multinomial_optima_match_cvxpy():
    prob, Xs, ys = _small_multi()
    assert prob.kind == "multinomial" and prob.dim == 6
    ref = _cvx_multi(Xs, ys, prob.p, prob.l2, 3)
    assert np.allclose(prob.x_star, ref, atol=1e-6)
    ref_0 = _cvx_multi([Xs[0]], [ys[0]], [1.0], prob.l2, 3)
    assert np.allclose(prob.x_star_i[0], ref_0, atol=1e-6)
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10
    assert np.all(np.linalg.norm(prob.grads(prob.x_star_i), axis=1) <= 1e-10)


@pytest.mark.parametrize("maker", [_small_binary, _small_multi])
def test_derivatives_against_finite_differences(maker):
    prob = maker(seed=3)[0]
    rng = np.random.default_rng(0)
    W = rng.normal(size=(prob.n_clients, prob.dim))
    V = rng.normal(size=(prob.n_clients, prob.dim))
    h = 1e-6
    fd_g = np.stack([(prob.losses(W + h * e) - prob.losses(W - h * e)) / (2 * h)
                     for e in np.eye(prob.dim)], axis=1)
    assert np.allclose(prob.grads(W), fd_g, atol=1e-7)
    fd_h = (prob.grads(W + h * V) - prob.grads(W - h * V)) / (2 * h)
    assert np.allclose(prob.hvps(W, V), fd_h, atol=1e-6)
    H = prob.hessians(W)
    assert np.allclose(np.einsum("nij,nj->ni", H, V), prob.hvps(W, V), atol=1e-12)
    Ws = rng.normal(size=(4, prob.dim))
    assert np.allclose(prob.Fs(Ws), [prob.F(w) for w in Ws], rtol=1e-12)


@pytest.mark.parametrize("maker", [_small_binary, _small_multi])
def test_minibatch_unbiased_and_variance_formula(maker):
    """Spec §7.8.3: exact without-replacement variance vs Monte Carlo within 3 standard errors."""
    prob = maker(seed=1)[0]
    rng = np.random.default_rng(2)
    w = rng.normal(size=prob.dim) * 0.5
    b, R = 5, 10_000
    G = prob.grads(w)
    draws = np.stack([prob.minibatch_grads(w, rng, b) for _ in range(R)])
    err = draws - G
    sq = (err ** 2).sum(axis=2)
    exact = prob.minibatch_variance(w, b)
    se = sq.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(sq.mean(axis=0) - exact) <= 3 * se)
    mean_se = err.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(err.mean(axis=0)) <= 4 * mean_se + 1e-15)
    # brute-force population variance (independent reference, one client at a time)
    i = 0
    rows = np.flatnonzero(prob.mask[i])
    per = []
    for j in rows:
        one = np.zeros_like(prob.mask)
        one[i, j] = True
        sub = toys.problems.logistic.Logistic(prob.X, prob.y, one | ~one.any(axis=1)[:, None]
                                              & prob.mask, l2=prob.l2,
                                              classes=None if prob.kind == "logistic"
                                              else prob.classes)
        per.append(sub.grads(w)[i])
    per = np.array(per)
    n = len(rows)
    pop = ((per - per.mean(axis=0)) ** 2).sum(axis=1).mean()
    assert exact[i] == pytest.approx((n - b) / (b * (n - 1)) * pop, rel=1e-10)


@pytest.mark.parametrize("maker", [_small_binary, _small_multi])
def test_minibatch_larger_than_some_clients_uses_all_their_rows(maker):
    prob = maker(seed=0)[0]
    b = int(np.median(prob.counts))
    small = prob.counts <= b
    assert small.any() and (~small).any()
    w = np.random.default_rng(0).normal(size=prob.dim)
    for s in range(20):
        g = prob.minibatch_grads(w, np.random.default_rng(s), b)
        assert np.allclose(g[small], prob.grads(w)[small], rtol=1e-12, atol=1e-14)
    assert np.all(prob.minibatch_variance(w, b)[small] == 0.0)


def test_minibatch_deterministic_and_full_batch_cases():
    prob = _small_binary()[0]
    w = np.zeros(prob.dim)
    g1 = prob.minibatch_grads(w, np.random.default_rng(7), 4)
    g2 = prob.minibatch_grads(w, np.random.default_rng(7), 4)
    assert np.array_equal(g1, g2)
    assert np.array_equal(prob.minibatch_grads(w, np.random.default_rng(0), 10_000),
                          prob.grads(w))
    assert np.all(prob.minibatch_variance(w, 10_000) == 0.0)


def test_unregularised_separable_data_has_no_optimum():
    """Construction and running need no optimum (issue 9); the missing ones say why."""
    X = [np.array([[1.0, 0.0], [2.0, 1.0], [-1.0, 0.5], [-2.0, -1.0]]),
         np.array([[0.5, 1.0], [-0.3, 2.0], [1.0, -1.0]])]
    y = [np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0])]
    sep = toys.logistic(X, y, l2=0.0)
    with pytest.raises(DomainError, match="l2 = 0.*separable"):
        _ = sep.F_star_i
    with pytest.raises(DomainError, match="l2 = 0.*separable"):
        _ = sep.x_star  # the pooled data are separable too
    assert np.all(np.isfinite(toys.run(sep, "fedavg", rounds=3, seed=0, lr=0.1).loss))
    prob = toys.logistic(X, y, l2=0.5)  # any l2 > 0 has a unique optimum
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10


def test_unregularised_overlapping_data_is_solved():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(40, 2)) for _ in range(3)]
    ys = [(rng.random(40) < 0.5).astype(float) for _ in range(3)]
    prob = toys.logistic(Xs, ys, l2=0.0)
    assert np.all(np.linalg.norm(prob.grads(prob.x_star_i), axis=1) <= 1e-10)
    with pytest.raises(DomainError, match="l2"):
        toys.logistic(Xs, [rng.integers(0, 3, size=40) for _ in ys], l2=0.0)  # softmax needs l2 > 0


def test_bad_labels_and_shapes_rejected():
    with pytest.raises(DomainError, match="y"):
        toys.logistic([np.ones((2, 1))], [np.array([1.0, 2.0])], l2=0.1, multiclass=False)
    with pytest.raises(DomainError):
        toys.logistic([np.ones((2, 1)), np.ones((2, 2))], [np.zeros(2), np.zeros(2)], l2=0.1)
    with pytest.raises(DomainError, match="l2"):
        toys.logistic([np.ones((2, 1))], [np.array([1.0, 0.0])], l2=-1.0)


def test_logistic_constants_bounds_and_estimates():
    prob = toys.make("logistic-synthetic", n_clients=4, dim=3, seed=1)
    rng = np.random.default_rng(0)
    traj = prob.x_star + 0.3 * rng.normal(size=(10, prob.dim))
    c = toys.constants(prob, trajectory=traj, batch_size=5)
    # no offsets: the curvature 1/4 is attained at theta = 0, so L is exact; check by brute force
    lam = max(np.linalg.eigvalsh(prob.X[i][prob.mask[i]].T @ prob.X[i][prob.mask[i]]
                                 / prob.counts[i]).max() for i in range(4)) / 4 + prob.l2
    assert c.L.value == pytest.approx(lam, rel=1e-12)
    assert c["L_est"].value <= c.L.value * (1 + 1e-9)
    assert c["L_est"].value >= 0.99 * c.L.value  # x_ref = 0 is where the sup is attained
    assert c.mu.value == prob.l2
    assert c["zeta_est"].value <= c.zeta.value
    assert c["zeta_traj"].value <= c.zeta.value
    assert c.sigma2.value > 0 and c.sigma2.how.startswith("estimate(")
    assert c.G2.value >= c.sigma2.value


def test_multinomial_L_bound_dominates_power_iteration():
    prob = _small_multi(seed=2)[0]
    c = toys.constants(prob)
    assert c.L.how == "bound"
    assert c["L_est"].value <= c.L.value
    assert c["L_F_est"].value <= c.L_F.value


def test_leaf_synthetic_small():
    prob = toys.leaf_synthetic(alpha=0.5, beta=0.5, n_clients=5, dim=4, classes=3, seed=0,
                               max_samples=60)
    assert prob.kind == "multinomial" and prob.dim == (4 + 1) * 3
    assert np.all(prob.counts <= 60) and np.all(prob.counts >= 50)
    assert np.all(np.linalg.norm(prob.grads(prob.x_star_i), axis=1) <= 1e-10)
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10
    again = toys.leaf_synthetic(alpha=0.5, beta=0.5, n_clients=5, dim=4, classes=3, seed=0,
                                max_samples=60)
    assert np.array_equal(prob.X, again.X) and np.array_equal(prob.x_star, again.x_star)
    # heterogeneity grows with alpha, beta (on average): Gamma of iid-like data is small
    assert prob.Gamma >= 0
