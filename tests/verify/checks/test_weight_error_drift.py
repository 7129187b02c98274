"""FedAU Lemma B.3.2 (verify.checks.weight_error_drift): delta is exact on the one-Hessian
problem, the drift is the plain local-GD distance, and a bound 100x too small is VIOLATED."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import boundlab
from verify.checks import weight_error_drift as wd
from verify.checks.contraction_local import recorded_run
from verify.compare import compare


def test_delta_is_the_sup_of_the_gradient_divergence():
    prob, delta, L = wd.shared_hessian_problem()
    rng = np.random.default_rng(0)
    for x in rng.normal(scale=10.0, size=(5, prob.dim)):
        G = prob.grads(np.tile(x, (prob.n_clients, 1)))
        assert abs(np.linalg.norm(G - prob.p @ G, axis=1).max() - delta) < 1e-9 * delta
    assert abs(L - 2.0) < 1e-12


def test_local_drift_is_plain_local_gd_and_a_tiny_bound_fails():
    prob, delta, L = wd.shared_hessian_problem()
    gamma, I = 0.015, wd.I_STEPS
    tr, W, _ = recorded_run(prob, "fedau", 1, lr=gamma, local_steps=I, x0=prob.x_star + 3.0)
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    y = np.tile(prob.x_star + 3.0, (prob.n_clients, 1))
    drift = 0.0
    for _ in range(I):  # plain local GD, client by client
        for n in range(prob.n_clients):
            y[n] = y[n] - gamma * A[n] @ (y[n] - c[n])
        drift = max(drift, float(np.max(np.sum((y - (prob.x_star + 3.0)) ** 2, axis=1))))
    got = float(np.max(np.sum((W[0] - W[0, :1]) ** 2, axis=-1)))
    assert abs(got - drift) < 1e-12 * drift
    b = boundlab.get("weight_error.lemma_b32")
    tiny = dataclasses.replace(b, id="mine.b32_tiny", expr=b.expr / 100, stable=None, terms={})
    prm = {"I": I, "gamma": gamma, "sigma": 0.0, "deltat": delta,
           "grad_norm2": float(tr.grad_norm2[0]), "L": L}
    assert gamma <= 1 / (math.sqrt(30) * L * I)
    assert compare(b, [got], params=prm, deterministic=True).verdict == "holds"
    assert compare(tiny, [got], params=prm, deterministic=True).verdict == "VIOLATED"
