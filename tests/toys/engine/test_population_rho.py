"""toys.run_many records the skew rho(t, w_t) at every virtual average (record="step"): against a
per-client loop written here from the quadratics' raw arrays, and bit for bit against each
instance's own toys.run (``steps["rho"]`` and ``rho_max``)."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.engine.population import run_many

B, N, D, TAU, LR = 3, 4, 3, 4, 0.05


def _problems():
    return [toys.quadratic(n_clients=N, dim=D, L=4.0, mu=0.5, seed=40 + s,
                           weights=np.array([0.1, 0.2, 0.3, 0.4])) for s in range(B)]


def _first_round_rho(prob, mask):
    """rho after each of the first round's local steps (FedAvg: the participants' gradient
    steps from x_0; the virtual average weighs them by p_i, normalised), client by client."""
    a = prob.arrays()
    A, c, b, p = a["A"], a["c"], a["b"], np.asarray(a["p"], dtype=float)

    def loss(i, w):
        return 0.5 * (w - c[i]) @ A[i] @ (w - c[i]) + b[i]

    x = np.asarray(prob.x0 if prob.x0 is not None else np.zeros(D), dtype=float)
    W = [x.copy() for _ in range(N)]
    out = []
    for _ in range(TAU):
        W = [W[i] - LR * (A[i] @ (W[i] - c[i])) if mask[i] else W[i] for i in range(N)]
        wsum = sum(p[i] for i in range(N) if mask[i])
        wbar = sum(p[i] * W[i] for i in range(N) if mask[i]) / wsum
        excess = [loss(i, wbar) - b[i] for i in range(N)]  # F_i* = b_i (A_i > 0)
        num = sum(p[i] / wsum * excess[i] for i in range(N) if mask[i])
        out.append(num / sum(p[i] * excess[i] for i in range(N)))
    return np.array(out)


def test_step_rho_matches_a_per_client_loop():
    probs = _problems()
    masks = np.zeros((B, 1, N), dtype=bool)
    masks[0, 0] = [True, True, True, True]
    masks[1, 0] = [True, False, True, False]
    masks[2, 0] = [False, False, False, True]
    pop = run_many(probs, "fedavg", rounds=1, seeds=0, lr=LR, local_steps=TAU,
                   participation=masks, record="step")
    for b in range(B):
        ref = _first_round_rho(probs[b], masks[b, 0])
        np.testing.assert_allclose(pop.steps["rho"][b, 0], ref, rtol=1e-12, atol=0)
        assert pop.rho_max[b, 0] == pytest.approx(ref.max(), rel=1e-12)
    assert np.allclose(pop.steps["rho"][0], 1.0, rtol=0, atol=1e-12)  # alpha = p: rho = 1
    assert abs(pop.rho_max[1, 0] - 1.0) > 1e-3  # a partial round skews


@pytest.mark.parametrize("algo,kw,part", [("fedsoftmax", {"temperature": 0.7}, "full"),
                                          ("fedavg", {}, "uniform:m=2"),
                                          ("fedprox", {"prox": 0.3}, "bernoulli:p=0.5")])
def test_step_rho_is_each_instances_own_run(algo, kw, part):
    probs = _problems()
    pop = run_many(probs, algo, rounds=5, seeds=[0, 1, 2], lr=LR, local_steps=TAU,
                   participation=part, record="step", **kw)
    for b in range(B):
        ref = toys.run(probs[b], algo, rounds=5, seed=b, lr=LR, local_steps=TAU,
                       participation=part, record="step", **kw)
        np.testing.assert_array_equal(pop[b].steps["rho"], ref.steps["rho"])
        np.testing.assert_array_equal(pop.rho_max[b], ref.rho_max)
        np.testing.assert_array_equal(pop[b].rho_max, ref.rho_max)
    assert np.isfinite(pop.rho_max).any()


def test_rho_is_measured_only_when_asked():
    probs = _problems()
    kw = dict(rounds=3, seeds=0, lr=LR, local_steps=TAU, participation="uniform:m=2",
              record="step")
    full = run_many(probs, "fedavg", **kw)
    only = run_many(probs, "fedavg", measure=["rho_max"], **kw)
    other = run_many(probs, "fedavg", measure=["grad_norm2_virtual"], **kw)
    np.testing.assert_array_equal(only.rho_max, full.rho_max)
    assert np.isnan(other.rho_max).all() and np.isnan(only.shadow_gap).all()
    assert np.isnan(run_many(probs, "fedavg", **{**kw, "record": "round"}).rho_min).all()
    with pytest.raises(DomainError, match="rho_max"):
        run_many(probs, "fedavg", measure=["rho_max"], **{**kw, "record": "round"})
    with pytest.raises(DomainError, match="record"):
        _ = run_many(probs, "fedavg", **{**kw, "record": "round"}).rho_max
