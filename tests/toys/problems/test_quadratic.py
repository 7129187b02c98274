"""Quadratic toys: closed-form optima and constants (spec seeds-000-001-004 §2.1, §7.8)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toys
from boundlab.errors import DomainError
from toys.constants._math import sup_norm_affine_ball


def _closed_form(prob):
    """Independent reference: the formulas of spec §2.1 written out with numpy."""
    A, c, b, p = prob.A, prob.c, prob.b, prob.p
    A_bar = np.einsum("n,nij->ij", p, A)
    x_star = np.linalg.solve(A_bar, np.einsum("n,nij,nj->i", p, A, c))
    diffs = x_star - c
    F_star = float(p @ (0.5 * np.einsum("ni,nij,nj->n", diffs, A, diffs) + b))
    eig = np.linalg.eigvalsh(A)
    return {"x_star": x_star, "F_star": F_star, "Gamma": F_star - float(p @ b),
            "L": eig.max(), "mu": eig.min(), "L_F": np.linalg.eigvalsh(A_bar).max()}


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 6), d=st.integers(1, 5), mu=st.floats(0.05, 5.0),
       ratio=st.floats(1.0, 50.0), h=st.floats(0.0, 3.0), seed=st.integers(0, 10_000))
def test_constants_match_closed_form(N, d, mu, ratio, h, seed):
    L = mu * ratio
    if N == 1 and d == 1:
        L = mu
    prob = toys.quadratic(n_clients=N, dim=d, L=L, mu=mu, heterogeneity=h, seed=seed)
    ref = _closed_form(prob)
    c = toys.constants(prob)
    # the construction attains the requested extremes exactly
    assert c.L.value == pytest.approx(L, rel=1e-10, abs=1e-10)
    assert c.mu.value == pytest.approx(mu, rel=1e-10, abs=1e-10)
    assert ref["L"] == pytest.approx(L, rel=1e-10)
    assert c.L_F.value == pytest.approx(ref["L_F"], rel=1e-10, abs=1e-10)
    assert c.Gamma.value == pytest.approx(ref["Gamma"], rel=1e-10, abs=1e-10)
    assert c.Gamma.value >= 0.0
    assert np.allclose(prob.x_star, ref["x_star"], rtol=1e-10, atol=1e-10)
    assert c.D.value == pytest.approx(np.linalg.norm(prob.x0 - ref["x_star"]), rel=1e-10,
                                      abs=1e-12)
    assert {c[k].how for k in ("L", "L_F", "mu", "Gamma", "zeta", "sigma2", "G2", "D")} == {
        "exact"}
    # optima: gradient norms
    assert np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10 * max(1.0, L)
    assert np.all(np.linalg.norm(prob.grads(prob.x_star_i), axis=1) <= 1e-12)
    assert np.allclose(prob.F_star_i, prob.losses(prob.x_star_i))


@settings(max_examples=20, deadline=None)
@given(N=st.integers(2, 5), d=st.integers(1, 4), seed=st.integers(0, 1000),
       h=st.one_of(st.just(0.0), st.floats(1e-3, 2.0)))
def test_gamma_zero_iff_centres_equal(N, d, seed, h):
    prob = toys.quadratic(n_clients=N, dim=d, L=5.0, mu=0.5, heterogeneity=h, seed=seed)
    equal = bool(np.all(prob.c == prob.c[0]))
    assert equal == (h == 0.0)
    if equal:
        assert prob.Gamma == 0.0
    else:
        assert prob.Gamma > 0.0


def test_zeta_and_G2_closed_form_in_one_dimension():
    # d = 1: sup_{|u| <= R} |r + m u| = |r| + |m| R exactly
    prob = toys.quadratic(n_clients=4, dim=1, L=3.0, mu=0.5, heterogeneity=1.0, seed=3)
    R = 1.7
    c = toys.constants(prob, radius=R)
    a = prob.A[:, 0, 0]
    a_bar = float(prob.p @ a)
    r = a * (prob.x_star[0] - prob.c[:, 0])  # grad F_i(x*), grad F(x*) = 0
    assert c.zeta.value == pytest.approx(np.max(np.abs(r) + np.abs(a - a_bar) * R), rel=1e-12)
    assert c.G2.value == pytest.approx(np.max(np.abs(r) + a * R) ** 2, rel=1e-12)
    assert c.region["radius"] == R


def test_trust_region_sup_against_brute_force():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((6, 2, 2))
    M = B + B.transpose(0, 2, 1)
    M[0] = np.diag([2.0, -2.0])  # equal |eigenvalues| with opposite signs
    M[1] = np.diag([3.0, 1.0])
    r = rng.standard_normal((6, 2))
    r[1] = [0.0, 0.5]  # hard case: r orthogonal to the top eigenvector
    R = 1.3
    exact = sup_norm_affine_ball(M, r, R)
    th = np.linspace(0, 2 * np.pi, 200_001)
    U = R * np.stack([np.cos(th), np.sin(th)], axis=1)
    brute = np.linalg.norm(r[:, None, :] + np.einsum("bij,gj->bgi", M, U), axis=2).max(axis=1)
    assert np.all(exact >= brute - 1e-12)
    assert np.allclose(exact, brute, rtol=1e-8)


def test_minibatch_noise_unbiased_and_variance_exact():
    prob = toys.quadratic(n_clients=3, dim=4, L=2.0, mu=1.0, heterogeneity=1.0, seed=0,
                          noise_std=0.3)
    w = np.ones(4)
    rng = np.random.default_rng(1)
    b, R = 4, 20_000
    G = prob.grads(w)
    draws = np.stack([prob.minibatch_grads(w, rng, b) for _ in range(R)])
    err = draws - G
    sq = (err ** 2).sum(axis=2)  # (R, N)
    exact = prob.minibatch_variance(w, b)
    assert np.allclose(exact, 4 * 0.3 ** 2 / b)
    se = sq.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(sq.mean(axis=0) - exact) <= 3 * se)
    mean_se = err.std(axis=0, ddof=1) / np.sqrt(R)
    assert np.all(np.abs(err.mean(axis=0)) <= 4 * mean_se)
    c = toys.constants(prob, batch_size=b)
    assert c.sigma2.value == pytest.approx(4 * 0.09 / b, rel=1e-12)
    assert c.as_params()["sigma"] == pytest.approx(np.sqrt(4 * 0.09 / b), rel=1e-12)
    # full batch: no randomness, rng untouched
    state = rng.bit_generator.state
    assert np.array_equal(prob.minibatch_grads(w, rng, None), G)
    assert rng.bit_generator.state == state


def test_batched_methods_agree_with_per_client_formulas():
    prob = toys.quadratic(n_clients=3, dim=3, L=4.0, mu=1.0, heterogeneity=1.0, seed=2)
    rng = np.random.default_rng(0)
    W, V = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    for i in range(3):
        d = W[i] - prob.c[i]
        assert prob.losses(W)[i] == pytest.approx(0.5 * d @ prob.A[i] @ d + prob.b[i])
        assert np.allclose(prob.grads(W)[i], prob.A[i] @ d)
        assert np.allclose(prob.hvps(W, V)[i], prob.A[i] @ V[i])
    Ws = rng.standard_normal((5, 3))
    assert np.allclose(prob.Fs(Ws), [prob.F(w) for w in Ws])


def test_quadratic_rejects_bad_input():
    with pytest.raises(DomainError, match="mu"):
        toys.quadratic(n_clients=2, dim=2, L=1.0, mu=2.0, heterogeneity=1.0, seed=0)
    with pytest.raises(DomainError, match="n_clients"):
        toys.quadratic(n_clients=0, dim=2, L=1.0, mu=1.0, heterogeneity=1.0, seed=0)
    with pytest.raises(DomainError, match="heterogeneity"):
        toys.quadratic(n_clients=2, dim=2, L=1.0, mu=1.0, heterogeneity=-1.0, seed=0)
    with pytest.raises(DomainError, match="mu"):
        toys.quadratic(n_clients=1, dim=1, L=2.0, mu=1.0, heterogeneity=0.0, seed=0)
    with pytest.raises(DomainError, match="weights"):
        toys.quadratic(n_clients=2, dim=2, L=2.0, mu=1.0, heterogeneity=0.0, seed=0,
                       weights=[1.0, -1.0])


def test_same_seed_bit_identical_and_weights_normalised():
    a = toys.quadratic(3, 2, 4.0, 1.0, 1.0, seed=5, weights=[1, 2, 1])
    b = toys.quadratic(3, 2, 4.0, 1.0, 1.0, seed=5, weights=[1, 2, 1])
    assert np.array_equal(a.A, b.A) and np.array_equal(a.c, b.c)
    assert np.array_equal(a.x_star, b.x_star)
    assert a.p.tolist() == [0.25, 0.5, 0.25]


def test_trajectory_values_do_not_exceed_region_values():
    prob = toys.quadratic(n_clients=4, dim=3, L=6.0, mu=0.5, heterogeneity=1.5, seed=4)
    rng = np.random.default_rng(0)
    traj = prob.x_star + rng.standard_normal((30, 3))
    c = toys.constants(prob, trajectory=traj)
    assert c.region["radius"] >= np.linalg.norm(traj - prob.x_star, axis=1).max()
    assert c["zeta_traj"].value <= c.zeta.value + 1e-12
    assert c["G2_traj"].value <= c.G2.value + 1e-9
