"""verify.measures' per-round and per-step lemma quantities (seed 003's Lemmas A.1 / A.4 / B.4,
seed 004's Lemma 2.3) on a toys.run trace, against a per-client loop written here from the
quadratics' raw arrays: the values and the parameters each gives the bound."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from verify.falsify.population import extra_steps, quantities
from verify.measures import NOT_MEASURED, measure, names

N, D, TAU, LR, R = 3, 2, 3, 0.05, 4
P = np.array([0.2, 0.3, 0.5])
NEW = ("round_avg_grad_norm2", "pairwise_drift", "pairwise_drift_next", "local_deviation",
       "local_divergence")


def _problem():
    return toys.quadratic(n_clients=N, dim=D, L=4.0, mu=1.0, heterogeneity=1.0, seed=0,
                          weights=P)


def _loop(prob, alpha, prox=0.0):
    """Per round: ||grad F||^2 at wbar_{t,k}, k = 0..tau-1 (wbar_{t,0} = x_t), F(x_t), the
    pairwise drift, the deviation from x_t and the divergence from wbar_{t,k} after each step
    k = 1..tau; FedProx with
    full participation, one client at a time, the server step with the run's ``alpha``."""
    a = prob.arrays()
    A, c, b = a["A"], a["c"], a["b"]
    x = np.asarray(prob.x0 if prob.x0 is not None else np.zeros(D), dtype=float)

    def grad_F(w):
        return sum(P[i] * (A[i] @ (w - c[i])) for i in range(N))

    def F(w):
        return sum(P[i] * (0.5 * (w - c[i]) @ A[i] @ (w - c[i]) + b[i]) for i in range(N))

    g2, loss = np.zeros((R, TAU)), [F(x)]
    pair, dev, div = np.zeros((R, TAU)), np.zeros((R, TAU)), np.zeros((R, TAU))
    for r in range(R):
        W = [x.copy() for _ in range(N)]
        wbar = x
        for k in range(TAU):
            g = grad_F(wbar)
            g2[r, k] = g @ g
            W = [W[i] - LR * (A[i] @ (W[i] - c[i]) + prox * (W[i] - x)) for i in range(N)]
            wbar = sum(P[i] * W[i] for i in range(N))
            pair[r, k] = max((W[i] - W[j]) @ (W[i] - W[j]) for i in range(N) for j in range(N))
            dev[r, k] = max((W[i] - x) @ (W[i] - x) for i in range(N))
            div[r, k] = max((W[i] - wbar) @ (W[i] - wbar) for i in range(N))
        x = x + sum(alpha[r, i] * (W[i] - x) for i in range(N))
        loss.append(F(x))
    return g2, np.array(loss), pair, dev, div


@pytest.fixture(scope="module")
def run():
    prob = _problem()
    tr = toys.run(prob, "fedprox", rounds=R, seed=0, lr=LR, local_steps=TAU, prox=0.3,
                  record="step", extra_steps=("pairwise_drift", "local_deviation"))
    return tr, quantities(tr, prob.p), _loop(prob, tr.alpha, prox=0.3)


def test_the_lemma_quantities_are_measured():
    assert set(NEW) <= set(names()) and not set(NEW) & set(NOT_MEASURED)


def test_round_avg_grad_norm2_and_its_parameters(run):
    _, q, (g2, loss, _, _, _) = run
    v, per = measure("round_avg_grad_norm2", q)
    np.testing.assert_allclose(v[0], g2.mean(axis=1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(per["decrease"][0], loss[:-1] - loss[1:], rtol=1e-10, atol=1e-15)
    assert per["gamma_prev"][0].tolist() == [0.0] + [LR] * (R - 1)


def test_pairwise_drift_per_step_with_k(run):
    _, q, (_, _, pair, _, _) = run
    v, per = measure("pairwise_drift", q)
    np.testing.assert_allclose(v[0], pair.ravel(), rtol=1e-12, atol=0)
    assert per["k"][0].tolist() == [1.0, 2.0, 3.0] * R
    nxt, per = measure("pairwise_drift_next", q)
    np.testing.assert_array_equal(nxt, v)
    before = np.concatenate([np.zeros((R, 1)), pair[:, :-1]], axis=1)
    np.testing.assert_allclose(per["d_k"][0], before.ravel(), rtol=1e-12, atol=0)


def test_local_deviation_is_the_rounds_largest(run):
    _, q, (_, _, _, dev, div) = run
    v, per = measure("local_deviation", q)
    np.testing.assert_allclose(v[0], dev.max(axis=1), rtol=1e-12, atol=0)
    assert per == {} and v.shape == (1, R)
    v, per = measure("local_divergence", q)
    np.testing.assert_allclose(v[0], div.max(axis=1), rtol=1e-12, atol=0)
    assert per == {} and not np.allclose(v[0], dev.max(axis=1))


def test_a_run_without_the_extra_steps_is_refused_by_name():
    tr = toys.run(_problem(), "fedavg", rounds=2, seed=0, lr=LR, local_steps=TAU,
                  record="step")
    with pytest.raises(DomainError, match="step_pairwise_drift"):
        measure("pairwise_drift", quantities(tr))
    assert extra_steps("local_deviation") == {"extra_steps": ("local_deviation",)}
