"""The beta algorithm's per-step quantities recorded only when asked (seed 003, BC):
``perturbed_divergence`` (column k-1: max over participants of ||wbar_{r,k-1} - w~^i_{r,k-1}||^2
at the perturbed point where step k takes its gradient, Lemma B.2) and
``neighbour_avg_deviation`` (max over pairs of clients of ||u_i - u_j||^2, Lemma B.1), against
a per-client loop written here from the quadratics' raw arrays, toys.run_many against toys.run
bit for bit, the default outputs without them, and NaN for a piece without a perturbation."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from toys.algorithms.beta import graph, messages
from toys.engine.population import run_many

N, D, TAU, LR, R, BETA = 4, 3, 3, 0.05, 4, 0.4
BETA_EXTRA = ("perturbed_divergence", "neighbour_avg_deviation")


def _problem(seed=0):
    return toys.quadratic(n_clients=N, dim=D, L=4.0, mu=0.5, heterogeneity=2.0, seed=seed)


def _sq(v):
    return float(v @ v)


def _reference(prob, masks, alpha):
    """(perturbed, neighbour) (rounds, tau): the beta algorithm one client at a time (spec
    §5.2.2): the gradient of step k at beta w + (1 - beta) u_i, u_i = p_i^-1 sum_n p_in w^n after
    the round (absent clients contribute x), the server step x + sum_i alpha_i (w_i - x) with
    the run's recorded coefficients ``alpha``; wbar the participants' p-weighted average."""
    a, g = prob.arrays(), graph(messages(prob))
    A, c, P, deg, p = a["A"], a["c"], g["P"], g["degree"], g["p"]
    x = np.asarray(prob.x0 if prob.x0 is not None else np.zeros(D), dtype=float)
    U = [x.copy() for _ in range(N)]
    pert, nbr = np.zeros((len(masks), TAU)), np.zeros((len(masks), TAU))
    for r, mask in enumerate(masks):
        S = [i for i in range(N) if mask[i]]
        w = {i: x.copy() for i in S}
        nbr[r] = max(_sq(U[i] - U[j]) for i in range(N) for j in range(N))
        for k in range(TAU):
            wbar = sum(p[i] * w[i] for i in S) / sum(p[i] for i in S)
            tilde = {i: BETA * w[i] + (1 - BETA) * U[i] for i in S}
            pert[r, k] = max(_sq(wbar - tilde[i]) for i in S)
            w = {i: w[i] - LR * (A[i] @ (tilde[i] - c[i])) for i in S}
        last = [w[i] if i in w else x for i in range(N)]
        U = [sum(P[i, n] * last[n] for n in range(N)) / deg[i] for i in range(N)]
        x = x + sum(alpha[r, i] * (w[i] - x) for i in S)
    return pert, nbr


@pytest.mark.parametrize("full", [True, False])
def test_beta_extra_steps_match_a_per_client_loop(full):
    prob = _problem()
    masks = np.ones((R, N), dtype=bool) if full else np.array(
        [[1, 1, 1, 1], [1, 0, 1, 0], [0, 1, 1, 1], [1, 1, 0, 1]], dtype=bool)
    tr = toys.run(prob, "beta", rounds=R, seed=0, lr=LR, local_steps=TAU, beta=BETA,
                  participation=masks, record="step", extra_steps=BETA_EXTRA)
    pert, nbr = _reference(prob, masks, tr.alpha)
    np.testing.assert_allclose(tr.steps["perturbed_divergence"], pert, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tr.steps["neighbour_avg_deviation"], nbr, rtol=1e-12, atol=0)
    assert (pert[:, 1:] > 0).all() and (nbr[1:] > 0).all() and (nbr[0] == 0).all()  # exercised


def test_run_many_records_them_as_each_instances_own_run():
    probs = [_problem(seed=s) for s in range(3)]
    kw = dict(rounds=R, lr=LR, local_steps=TAU, beta=BETA, participation="uniform:m=3",
              record="step")
    pop = run_many(probs, "beta", seeds=[0, 1, 2], measure=["gap", *BETA_EXTRA], **kw)
    for b in range(3):
        ref = toys.run(probs[b], "beta", seed=b, extra_steps=BETA_EXTRA, **kw)
        for k in BETA_EXTRA:
            np.testing.assert_array_equal(pop.steps[k][b], ref.steps[k], err_msg=k)
    one = run_many(probs, "beta", seeds=[0, 1, 2], measure=["neighbour_avg_deviation"], **kw)
    assert "perturbed_divergence" not in one.steps
    np.testing.assert_array_equal(one.steps["neighbour_avg_deviation"],
                                  pop.steps["neighbour_avg_deviation"])


def test_default_outputs_are_unchanged():
    prob = _problem()
    kw = dict(rounds=R, seed=0, lr=LR, local_steps=TAU, beta=BETA, record="step")
    plain = toys.run(prob, "beta", **kw)
    extra = toys.run(prob, "beta", extra_steps=BETA_EXTRA, **kw)
    assert set(extra.steps) - set(plain.steps) == set(BETA_EXTRA)
    for k, v in plain.steps.items():
        np.testing.assert_array_equal(extra.steps[k], v, err_msg=k)
    for k, v in plain.state.items():
        np.testing.assert_array_equal(extra.state[k], v, err_msg=k)
    np.testing.assert_array_equal(extra.final_model, plain.final_model)
    pop = run_many([prob], "beta", seeds=0, rounds=R, lr=LR, local_steps=TAU, beta=BETA,
                   record="step")
    assert not set(BETA_EXTRA) & set(pop.steps)
    np.testing.assert_array_equal(pop.steps["g2_max"][0], plain.steps["g2_max"])


def test_a_piece_without_a_perturbation_leaves_them_nan():
    tr = toys.run(_problem(), "fedavg", rounds=2, seed=0, lr=LR, local_steps=TAU,
                  record="step", extra_steps=BETA_EXTRA)
    assert all(np.isnan(tr.steps[k]).all() for k in BETA_EXTRA)
    assert np.isfinite(tr.steps["drift_max"]).all()
