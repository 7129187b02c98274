"""Seed 003's in-round lemmas (verify.checks.contraction_local): the Recorded client piece sees
exactly the local iterates of a plain FedProx loop, does not change the run, and a lemma with a
wrong constant is VIOLATED on what it measured."""

from __future__ import annotations

import dataclasses

import numpy as np

import boundlab
import toys
from verify.checks import contraction_local as cl
from verify.compare import compare
from verify.suite import Context


def _prob():
    return toys.quadratic(n_clients=4, dim=3, L=2.0, mu=0.5, heterogeneity=1.0, seed=5)


def _plain_fedprox(prob, rounds, E, lr, prox):
    """FedProx written out: every client, E full-gradient steps on f_i + prox/2 ||w - x||^2."""
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    x, out = np.asarray(prob.x0, dtype=float), []
    for _ in range(rounds):
        W = np.tile(x, (prob.n_clients, 1))
        steps = [W.copy()]
        for _k in range(E):
            for i in range(prob.n_clients):
                W[i] = W[i] - lr * (A[i] @ (W[i] - c[i]) + prox * (W[i] - x))
            steps.append(W.copy())
        out.append(np.stack(steps))
        x = prob.p @ W
    return np.stack(out)


def test_recorded_steps_equal_a_plain_fedprox_loop():
    prob = _prob()
    tr, W, U = cl.recorded_run(prob, "fedprox", 4, lr=0.1, local_steps=3, prox=0.5)
    np.testing.assert_allclose(W, _plain_fedprox(prob, 4, 3, 0.1, 0.5), rtol=1e-12,
                               atol=1e-14)
    assert U == [None] * 4


def test_recording_does_not_change_the_run():
    prob = _prob()
    tr, _, U = cl.recorded_run(prob, "beta", 5, lr=0.05, local_steps=2, beta=0.5)
    ref = toys.run(prob, "beta", rounds=5, seed=0, lr=0.05, local_steps=2, beta=0.5)
    assert np.array_equal(tr.final_model, ref.final_model)
    assert np.array_equal(tr.gap, ref.gap)
    assert np.all(U[0] == U[0][0])  # u^i_0 = the start model for every client (Lemma B.1)


def test_lemmas_hold_and_a_quartered_lemma_a1_is_violated():
    rs = cl.contraction_local_lemmas(Context(quick=True))
    assert {r.bound_id for r in rs} == set(cl.A_IDS + cl.B_IDS)
    assert {r.verdict for r in rs} == {"holds"}
    a1 = next(r for r in rs if r.bound_id == "contraction.lemma_a1")
    b = boundlab.get("contraction.lemma_a1")
    wrong = dataclasses.replace(b, id="contraction.lemma_a1.wrong", stable=None, terms={},
                                expr=b.expr / 4)
    assert a1.ratio > 0.25  # so that the quartered constant is below what was measured
    prm = {k: a1.params[k] for k in ("gamma", "E", "G", "alpha")}
    assert compare(wrong, [a1.measured], params=prm, deterministic=True).verdict == "VIOLATED"
