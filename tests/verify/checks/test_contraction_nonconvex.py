"""Seed 003's non-convex theorems on the MLP (verify.checks.contraction_nonconvex): the server
models the check reads are the run's, the step is the theorem's for the L used, and the torch
path (CUDA when present) gives the numpy verdicts."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from verify.checks import contraction_nonconvex as cn


def test_recorded_server_models_are_the_runs():
    prob = cn.mlp_problem()
    tr, models = cn._run(prob, "fedavg", rounds=3, lr=0.05)
    assert models.shape == (4, prob.dim)
    assert np.array_equal(models[-1], tr.final_model)
    one = toys.run(prob, "fedavg", rounds=1, seed=0, lr=0.05, local_steps=cn.E)
    assert np.array_equal(models[1], one.final_model)


def test_the_step_is_the_theorems_for_the_L_used():
    # gamma = 1/(2 (L + alpha) sqrt(T E)) (Theorem 2) and 1/(2 L sqrt(T E)) (Theorem 4)
    assert cn._gamma("fedprox", {"prox": 0.5}, 3.5, 20) == pytest.approx(1 / (2 * 4.0 * 10.0))
    assert cn._gamma("beta", {"beta": 0.5}, 4.0, 20) == pytest.approx(1 / (2 * 4.0 * 10.0))


@pytest.mark.gpu
def test_the_torch_path_on_cuda_agrees_with_numpy():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from verify.suite import Context

    cpu = cn.contraction_nonconvex_mlp(Context(quick=True))
    gpu = cn.contraction_nonconvex_mlp(Context(quick=True, backend="torch", device="cuda"))
    assert [r.verdict for r in gpu] == [r.verdict for r in cpu]
    np.testing.assert_allclose([r.measured for r in gpu], [r.measured for r in cpu], rtol=1e-8)


def test_the_measured_value_averages_the_virtual_iterates():
    """(1/(T E)) sum_t sum_{k<E} ||grad f(wbar_{t,k})||^2, from a per-client loop of FedAvg's
    full-batch local steps (wbar_{t,0} = x_t), not the server models' mean."""
    prob, T, lr = cn.mlp_problem(), 2, 0.05
    tr, _ = cn._run(prob, "fedavg", rounds=T, lr=lr, record="step")
    p = np.asarray(prob.p, dtype=float)

    def sq_grad_f(w):
        g = p @ prob.grads(w)
        return float(g @ g)

    x, total = np.asarray(prob.x0, dtype=float), 0.0
    for _ in range(T):
        W = [x.copy() for _ in p]
        for k in range(cn.E):
            total += sq_grad_f(x if k == 0 else sum(p[i] * W[i] for i in range(len(p))))
            W = [W[i] - lr * prob.grads(W[i])[i] for i in range(len(p))]
        x = sum(p[i] * W[i] for i in range(len(p)))
    ref = total / (T * cn.E)
    r = cn._judge_run("contraction.fedprox_nc", "fedavg", "fedavg", {}, prob, tr, (1.0, 1.0),
                      lr, T)
    assert r.measured == pytest.approx(ref, rel=1e-12, abs=0)
    assert r.measured != pytest.approx(float(np.mean(tr.grad_norm2[:-1])), rel=1e-6)


def test_corollary1_is_theorem_4_at_its_optimal_e():
    import boundlab
    from verify.checks.contraction_nonconvex import contraction_nonconvex_mlp
    from verify.suite import Context

    rows = {r.bound_id: r for r in contraction_nonconvex_mlp(Context(quick=True))}
    thm4, cor1 = rows["contraction.beta_nc"], rows["contraction.corollary1"]
    assert cor1.verdict == "holds" and cor1.measured == thm4.measured
    G = cor1.setting["G"]
    assert G >= thm4.setting["G"]  # a larger second-moment bound is still a valid one
    prm = {k: cor1.setting[k] for k in ("T", "L", "Delta", "S", "sigma", "beta")}
    # E_opt at the raised G is the run's E, and there Corollary 1 is Theorem 4 (two entries
    # typed apart: 3 2^(-2/3) A^(2/3) B^(1/3) T^(-2/3) and the sum of Theorem 4's terms)
    e_opt = boundlab.get("contraction.corollary1_e_opt").evaluate(G=G, **prm)
    assert e_opt == pytest.approx(cor1.setting["E"], rel=1e-9)
    assert cor1.bound == pytest.approx(float(boundlab.get("contraction.beta_nc").evaluate(
        G=G, E=cor1.setting["E"], **prm)), rel=1e-9)
