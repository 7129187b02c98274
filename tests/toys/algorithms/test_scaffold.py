"""SCAFFOLD (toys.algorithms.scaffold, option II): against a per-client reference loop on a
quadratic and a logistic problem (partial participation, server step size, local work), its
fixed point, torch, checkpoints and the errors."""

import numpy as np
import pytest
from comparison_reference import PAIRS, masks_of, reference

import toys
from boundlab.errors import UnknownNameError
from toys.participation import make as make_process

TOL = {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("work", [{"local_steps": 4},
                                  {"client_steps": (1, 4, 2, 3, 4), "straggler_prob": 0.4}])
@pytest.mark.parametrize("pname", sorted(PAIRS))
def test_scaffold_matches_reference(pname, work):
    prob, cl = PAIRS[pname]()
    proc = make_process("bernoulli", 5, p=[0.9, 0.4, 0.8, 0.6, 0.7])
    h = {"lr": 0.1, "server_lr": 0.8, **work}
    tr = toys.run(prob, "scaffold", rounds=8, seed=6, participation=proc, **h)
    masks = masks_of(proc, 8, 6, 5)
    assert masks.sum(axis=1).min() < 5  # partial participation: stale c_i matter
    x, alpha = reference(cl, "scaffold", 8, 6, masks, **h)
    np.testing.assert_allclose(tr.alpha, alpha, **TOL)
    np.testing.assert_allclose(tr.final_model, x, **TOL)


def test_scaffold_removes_client_drift():
    """Full participation, many local steps: FedAvg stalls at a biased point, SCAFFOLD goes to
    x* (its fixed point is x* for any number of local steps)."""
    prob, _ = PAIRS["quadratic"]()
    kw = dict(rounds=60, seed=0, lr=0.05, local_steps=10)
    sc, avg = toys.run(prob, "scaffold", **kw), toys.run(prob, "fedavg", **kw)
    assert sc.gap[-1] < 1e-9 < 1e-3 < avg.gap[-1]


def test_scaffold_with_one_local_step_is_fedavg():
    """K = 1 with full participation: c_i = grad F_i(x_{r-1}), c = sum p_i c_i; one step from
    x gives Delta_i = -lr (g_i(x) - c_i + c), whose p-average is -lr grad F(x): FedAvg's step."""
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=6, seed=0, lr=0.2)
    a, b = toys.run(prob, "scaffold", **kw), toys.run(prob, "fedavg", **kw)
    np.testing.assert_allclose(a.final_model, b.final_model, rtol=1e-12, atol=1e-13)


def test_torch_agrees_with_numpy(one_torch_thread):
    pytest.importorskip("torch")
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=5, seed=1, lr=0.2, local_steps=3, participation="bernoulli:p=0.6",
              record="step", min_steps=1)
    a = toys.run(prob, "scaffold", **kw)
    b = toys.run(prob, "scaffold", backend="torch", device="cpu", **kw)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.to_frame().to_numpy(), a.to_frame().to_numpy(), rtol=1e-10,
                               atol=1e-12)


def test_resume_keeps_the_control_variates(tmp_path):
    prob, _ = PAIRS["quadratic"]()
    kw = dict(rounds=6, seed=2, lr=0.1, local_steps=3, participation="bernoulli:p=0.6")
    full = toys.run(prob, "scaffold", **kw)
    path = tmp_path / "ck.npz"
    toys.run(prob, "scaffold", checkpoint=path, checkpoint_every=2,
             callbacks=[lambda info: info.round == 3], **kw)
    np.testing.assert_array_equal(toys.run(prob, "scaffold", resume=path, **kw).final_model,
                                  full.final_model)


def test_scaffold_takes_no_prox():
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(UnknownNameError, match="unknown hyper-parameter of scaffold.*'prox'"):
        toys.run(prob, "scaffold", rounds=1, seed=0, lr=0.1, prox=0.1)
    with pytest.raises(UnknownNameError, match="paper symbol 'eta_g' is server_lr"):
        toys.run(prob, "scaffold", rounds=1, seed=0, lr=0.1, eta_g=0.5)
