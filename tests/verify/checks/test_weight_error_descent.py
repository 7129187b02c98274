"""FedAU Theorem B.4.1 and Lemma B.5.1 (verify.checks.weight_error_descent): the measured
quantities equal plain per-client references (Algorithm 1 written out, h from the spec's argmin
formula, the exact conditional mean of a quadratic under Bernoulli participation), the checks
give finite rows, and deliberately wrong bounds are VIOLATED."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import boundlab
import toys
from toys import participation
from verify.checks import weight_error_descent as wd
from verify.checks.weight_error_drift import shared_hessian_problem
from verify.compare import compare
from verify.suite import Context

TINY = Context(quick=True, seeds=4)


@pytest.fixture(scope="module")
def prob():
    return shared_hessian_problem()[0]


def _local_gd(prob, x, gamma, steps):
    """Delta_n of every client: plain full-batch local GD, client by client."""
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    out = []
    for n in range(prob.n_clients):
        y = np.array(x, dtype=float)
        for _ in range(steps):
            y = y - gamma * A[n] @ (y - c[n])
        out.append(y - x)
    return np.array(out)


def _grad_h(prob, pi, omega, x):
    """grad h(x) = (1/P) sum_n omega_n pi_n A_n (x - c_n), summed client by client."""
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    P = sum(omega[n] * pi[n] for n in range(prob.n_clients))
    return sum(omega[n] * pi[n] * A[n] @ (x - c[n]) for n in range(prob.n_clients)) / P


def test_avg_grad_h_and_the_constants_equal_a_plain_algorithm_1(prob):
    pi, omega = wd.PI, wd.cutoff_mean(wd.PI, 3)
    N, T, gamma, eta = prob.n_clients, 25, 0.004, 3.0
    chi = participation.sample(participation.Bernoulli(pi), T, np.random.default_rng(5))
    x0 = prob.x_star + 3.0
    rw = wd.reweighted(prob, pi, omega)
    got = wd.avg_grad_h(prob, wd.constant_omega(omega), rw, chi, x0=x0, gamma=gamma, eta=eta)
    x, total = x0.copy(), 0.0
    for t in range(T):  # Algorithm 1: x + (eta/N) sum_n chi omega Delta, client by client
        g = _grad_h(prob, pi, omega, x)
        total += g @ g
        D = _local_gd(prob, x, gamma, wd.I_STEPS)
        x = x + eta / N * sum(chi[t, n] * omega[n] * D[n] for n in range(N))
    assert got == pytest.approx(total / T, rel=1e-10)
    # the constants: E[S] by summing the cutoff pmf, argmin h by the spec's formula (3.1.4)
    es = [sum(k * p * (1 - p) ** (k - 1) for k in range(1, 3)) + 3 * (1 - p) ** 2 for p in pi]
    assert np.allclose(omega, es, rtol=1e-12)
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    wts = omega * pi
    x_h = np.linalg.solve(np.einsum("n,nij->ij", wts, A), np.einsum("n,nij,nj->i", wts, A, c))
    h = toys.Quadratic(A, c, weights=wts)  # h = (1/P) sum omega_n pi_n F_n
    assert np.linalg.norm(_grad_h(prob, pi, omega, x_h)) < 1e-10
    assert rw.h_star == pytest.approx(h.F(x_h), rel=1e-12)
    assert rw.P == pytest.approx(sum(wts)) and rw.Q == pytest.approx(np.mean(pi * omega ** 2))
    for y in np.random.default_rng(0).normal(scale=5.0, size=(4, prob.dim)):
        div = max(np.linalg.norm(A[n] @ (y - c[n]) - _grad_h(prob, pi, omega, y))
                  for n in range(N))
        assert div == pytest.approx(rw.deltat, rel=1e-10)


def test_the_step_sizes_meet_the_theorems_preconditions(prob):
    _, _, L = shared_hessian_problem()
    b = boundlab.get("weight_error.theorem_b41")
    for *_, omega, _, _ in wd._b41_cases():
        rw = wd.reweighted(prob, wd.PI, omega)
        gamma, eta = wd.b41_steps(rw, prob.n_clients, L)
        I, P, Q, N = wd.I_STEPS, rw.P, rw.Q, prob.n_clients
        assert gamma <= 1 / (4 * math.sqrt(15) * L * I)
        assert gamma * eta * P / N <= 1 / (2 * L * I)
        assert 15 * L**2 * I**2 * gamma**2 + 27 * gamma * eta * L * I * Q / (16 * P) <= 1 / 8
        prm = {"H": 1.0, "N": N, "gamma": gamma, "eta": eta, "P": P, "I": I, "T": 10,
               "L": L, "sigma": 0.0, "deltat": rw.deltat, "Q": Q}
        r = compare(b, [0.0], params=prm, deterministic=True)
        assert not r.preconditions_violated and r.verdict == "holds"


def test_one_round_descent_matches_the_exact_conditional_mean(prob):
    _, delta, L = shared_hessian_problem()
    gamma, eta = 0.003, 4.0
    [st] = wd.run_states(prob, "fedau", 6, [5], gamma=gamma, eta=eta, K=3)
    D = wd.local_updates(prob, st.x, gamma)
    assert np.allclose(D, _local_gd(prob, st.x, gamma, wd.I_STEPS), rtol=0, atol=1e-13)
    # the server step is the engine's: one round on a given participation row
    chi = np.array([[True, False, True, True, False, False, True, False]])
    x1 = toys.run(prob, wd.constant_omega(st.omega), rounds=1, seed=0, participation=chi,
                  x0=st.x, lr=gamma, local_steps=wd.I_STEPS, server_lr=eta,
                  record="none").final_model
    N = prob.n_clients
    assert np.allclose(x1, st.x + eta / N * (chi[0] * st.omega) @ D, rtol=1e-13, atol=1e-13)
    # E_t f(x_{t+1}) in closed form: f(mean) + 1/2 tr(A Cov), Cov of the Bernoulli sum
    U = D * (eta / N * st.omega)[:, None]
    mean = st.x + wd.PI @ U
    cov = sum(p * (1 - p) * np.outer(u, u) for p, u in zip(wd.PI, U))
    exact = prob.F(mean) + 0.5 * np.trace(prob.A_bar @ cov) - prob.F(st.x)
    s = wd.descent_samples(prob, st, D, eta=eta, M=20000, seed=3)
    assert abs(s.mean() - exact) < 4 * s.std(ddof=1) / math.sqrt(s.size)
    prm = wd.lemma_params(prob, st, gamma=gamma, eta=eta, L=L, delta=delta)
    g = sum(prob.A[n] @ (st.x - prob.c[n]) for n in range(N)) / N
    assert prm["grad_norm2"] == pytest.approx(g @ g, rel=1e-12)
    assert prm["werr_t"] == pytest.approx(
        sum((wd.PI[n] * st.omega[n] - 1) ** 2 for n in range(N)) / N, rel=1e-12)
    assert prm["q_t"] == pytest.approx(
        sum(wd.PI[n] * st.omega[n] ** 2 for n in range(N)) / N, rel=1e-12)


def test_the_checks_give_finite_rows_at_tiny_size():
    rs = wd.weight_error_reweighted_objective(TINY)
    assert {r.bound_id for r in rs} == set(wd.B41_IDS) and len(rs) == 8
    assert all(np.isfinite([r.measured, r.bound, r.ratio]).all() for r in rs)
    fedau = [r for r in rs if r.case.startswith("FedAU")]
    assert {r.verdict for r in fedau} == {"not-applicable"}
    assert {r.verdict for r in rs if r not in fedau} == {"holds"}
    ls = wd.weight_error_one_round_descent(TINY)
    assert {r.bound_id for r in ls} == {"weight_error.lemma_b51"} and len(ls) == 24
    assert all(np.isfinite([r.measured, r.bound]).all() for r in ls)
    assert {r.verdict for r in ls} <= {"holds", "inconclusive"}
    neg = [r for r in ls if r.bound <= 0]
    assert neg and all(math.isnan(r.ratio) and "slack" in r.setting for r in neg)


def _wrong(monkeypatch, bid, scale):
    real_get = boundlab.get
    b = real_get(bid)
    bad = dataclasses.replace(b, expr=b.expr * scale, terms={}, stable=None)
    monkeypatch.setattr(boundlab, "get", lambda i: bad if i == bid else real_get(i))


def test_a_bound_100_times_too_small_is_violated(monkeypatch):
    _wrong(monkeypatch, "weight_error.theorem_b41", 1 / 100)
    rs = [r for r in wd.weight_error_reweighted_objective(TINY)
          if r.bound_id == "weight_error.theorem_b41" and not r.case.startswith("FedAU")]
    assert rs and {r.verdict for r in rs} == {"VIOLATED"}


def test_a_descent_100_times_too_large_is_violated(monkeypatch):
    # where the lemma promises a descent (bound < 0), 100 x that promise is far beyond it
    _wrong(monkeypatch, "weight_error.lemma_b51", 100)
    rs = wd.weight_error_one_round_descent(TINY)
    neg = [r for r in rs if r.bound < 0]
    assert neg and {r.verdict for r in neg} == {"VIOLATED"}
