"""Seed 000's Gamma = 0 recursion checks (verify.checks.skew_error_free): the measured Delta_t
sequence equals a plain FedAvg loop, and a wrong recursion is VIOLATED on it."""

from __future__ import annotations

import dataclasses

import numpy as np

import boundlab
from verify.checks import skew_error_free as sef
from verify.compare import compare
from verify.suite import Context


def _reference_dist2(prob, rounds, E, gamma, mu):
    """FedAvg written out: full participation, weights p, E local GD steps with
    eta_t = 1/(mu (t + gamma)); ||virtual average - x*||^2 after every step."""
    A, c = prob.arrays()["A"], prob.arrays()["c"]
    x, out, t = np.asarray(prob.x0, dtype=float), [], 0
    for _ in range(rounds):
        W = np.tile(x, (prob.n_clients, 1))
        for _k in range(E):
            eta = 1.0 / (mu * (t + gamma))
            for i in range(prob.n_clients):
                W[i] = W[i] - eta * A[i] @ (W[i] - c[i])
            out.append(float(np.sum((prob.p @ W - prob.x_star) ** 2)))
            t += 1
        x = prob.p @ W
    return np.array(out)


def test_measured_dist2_is_the_virtual_sequence():
    from verify.checks.skew import E, _gamma

    prob, consts = sef._problem()
    gamma = _gamma(consts.L.value, consts.mu.value, prob.p.min(), E)
    tr = sef._trace("fedavg", {}, 6, gamma, Context(quick=True))
    ref = _reference_dist2(prob, 6, E, gamma, consts.mu.value)
    np.testing.assert_allclose(tr.steps["dist2"].ravel(), ref, rtol=1e-10, atol=1e-14)


def test_checks_hold_and_cover_low_rho():
    rs = sef.skew_error_free_recursion(Context(quick=True))
    assert {r.verdict for r in rs} == {"holds"}
    assert {r.case for r in rs} >= {"fedbetter", "fedavg"}


def test_a_recursion_ten_times_too_strong_is_violated():
    b = boundlab.get("skew.error_free_recursion")
    wrong = dataclasses.replace(b, id="skew.error_free_recursion.wrong", stable=None,
                                terms={}, expr=b.expr / 10)
    prm = dict(Delta=1.0, eta=0.01, mu=1.0, E=2, G=1.0, sigma=0.0, rho_bar=1.0, L=4.0)
    # one GD step on a mu-strongly convex quadratic keeps (1 - eta L)^2 Delta >= 0.92 Delta
    after = (1 - 0.01 * 4.0) ** 2 * 1.0
    assert compare(wrong, [after], params=prm, deterministic=True).verdict == "VIOLATED"
    assert compare(b, [after], params=prm, deterministic=True).verdict == "holds"
