"""DKR's pairwise drift d_k (verify.checks.drift_pairs) against a plain two-client reference,
and a wrong recursion caught on the same measurements."""

from __future__ import annotations

import dataclasses

import numpy as np

import boundlab
from verify.checks import drift as dr
from verify.checks import drift_pairs as dp
from verify.compare import compare


def _reference(tau: int, rounds: int) -> np.ndarray:
    """FedAvg on the paper protocol written out: two participants, weights 1/2, full-gradient
    local steps, d_k = ||x_i - x_j||^2 after each step."""
    prob, _ = dr._toy()
    chi = np.asarray(dr._paper_participation(prob.n_clients, rounds, seed=1), dtype=bool)
    x = np.asarray(prob.x0, dtype=float)
    out = np.zeros((rounds, tau + 1))
    for r in range(rounds):
        who = np.flatnonzero(chi[r])
        assert who.size == 2
        xs = [x.copy(), x.copy()]
        for k in range(1, tau + 1):
            for j, i in enumerate(who):
                W = np.tile(xs[j], (prob.n_clients, 1))
                xs[j] = xs[j] - dr.ETA * prob.grads(W)[i]
            out[r, k] = float(np.sum((xs[0] - xs[1]) ** 2))
        x = (xs[0] + xs[1]) / 2
    return out


def test_pairwise_drift_equals_a_two_client_reference():
    got = dp.pairwise_drift(tau=6, rounds=5)
    ref = _reference(6, 5)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-15)


def test_a_recursion_without_its_heterogeneity_terms_is_violated():
    d = dp.pairwise_drift(tau=10, rounds=4)
    rec = boundlab.get("drift.drift_recursion")
    dk, tau = rec.params["d_k"].symbol, rec.params["tau"].symbol
    # the dropped-term typo d_{k+1} <= (1 + 1/tau) d_k: false at k = 0, where d_0 = 0 < d_1
    wrong = dataclasses.replace(rec, id="drift.drift_recursion.wrong", stable=None, terms={},
                                expr=dk * (1 + 1 / tau), preconditions=(),
                                params={k: rec.params[k] for k in ("d_k", "tau")})
    r = compare(wrong, [d[0, 1]], params={"tau": 10, "d_k": d[0, 0]}, deterministic=True)
    assert r.verdict == "VIOLATED", (r.measured, r.bound_value)
    right = compare(rec, [d[0, 1]], params={"tau": 10, "d_k": d[0, 0], "eta": dr.ETA,
                                            "sigma": 0.0, "zeta": 0.43, "L": 0.2},
                    deterministic=True)
    assert right.verdict == "holds"
