"""FedNova (toys.algorithms.fednova): against a per-client reference loop (fixed and drawn
local steps, stragglers, FedProx's local solver, partial participation), FedAvg when the
work is equal, the objective inconsistency it removes, torch and the errors."""

import numpy as np
import pytest
from comparison_reference import PAIRS, masks_of, reference

import toys
from boundlab.errors import MissingParameterError
from toys.participation import make as make_process

TOL = {"rtol": 1e-12, "atol": 1e-12}
WORK = {
    "fixed": {"client_steps": (1, 5, 2, 3, 8)},
    "drawn-prox": {"local_steps": 6, "min_steps": 2, "prox": 0.5},
    "stragglers": {"client_steps": (4, 4, 6, 2, 5), "straggler_prob": 0.5, "server_lr": 0.7},
}


@pytest.mark.parametrize("work", sorted(WORK))
@pytest.mark.parametrize("pname", sorted(PAIRS))
def test_fednova_matches_reference(pname, work):
    prob, cl = PAIRS[pname]()
    proc = make_process("bernoulli", 5, p=[0.9, 0.5, 0.8, 0.6, 0.7])
    h = {"lr": 0.08, **WORK[work]}
    tr = toys.run(prob, "fednova", rounds=7, seed=8, participation=proc, **h)
    masks = masks_of(proc, 7, 8, 5)
    x, alpha = reference(cl, "fednova", 7, 8, masks, **h)
    np.testing.assert_allclose(tr.alpha, alpha, **TOL)
    np.testing.assert_allclose(tr.final_model, x, **TOL)


def test_equal_work_is_fedavg():
    prob = toys.logistic_synthetic(n_clients=5, dim=3, seed=3)
    kw = dict(rounds=6, seed=1, lr=0.3, local_steps=3, participation="bernoulli:p=0.6")
    a, b = toys.run(prob, "fednova", **kw), toys.run(prob, "fedavg", **kw)
    np.testing.assert_allclose(a.final_model, b.final_model, rtol=1e-12, atol=1e-13)


def test_fednova_removes_the_objective_inconsistency():
    """Unequal tau_i, full participation, small lr: FedAvg drifts to the minimiser of
    sum_i p_i tau_i F_i (the surrogate objective), FedNova stays near x*."""
    prob, _ = PAIRS["quadratic"]()
    kw = dict(rounds=400, seed=0, lr=0.005, client_steps=(1, 1, 1, 1, 12), record="sync")
    nova, avg = toys.run(prob, "fednova", **kw), toys.run(prob, "fedavg-hetero", **kw)
    # the surrogate's minimiser, solved here from the raw A_i, c_i
    q = prob.p * np.array([1, 1, 1, 1, 12])
    A = np.einsum("n,nij->ij", q, prob.A)
    x_sur = np.linalg.solve(A, np.einsum("n,nij,nj->i", q, prob.A, prob.c))
    assert np.linalg.norm(avg.final_model - x_sur) < 0.2 * np.linalg.norm(x_sur - prob.x_star)
    assert np.linalg.norm(nova.final_model - prob.x_star) < \
        0.2 * np.linalg.norm(avg.final_model - prob.x_star)


def test_torch_agrees_with_numpy(one_torch_thread):
    pytest.importorskip("torch")
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=5, seed=2, lr=0.2, local_steps=4, min_steps=1, straggler_prob=0.3,
              participation="bernoulli:p=0.7", prox=0.1)
    a = toys.run(prob, "fednova", **kw)
    b = toys.run(prob, "fednova", backend="torch", device="cpu", **kw)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)


def test_fednova_needs_lr():
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(MissingParameterError, match="lr"):
        toys.run(prob, "fednova", rounds=1, seed=0)
