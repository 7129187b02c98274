"""``Trace.steps["grad_norm2"]`` (record="step"): ||grad F||^2 at the virtual average after
every local step, against a per-client loop written here from the problem's raw arrays
(grad F_i(x) = A_i (x - c_i)); the stashed and streamed paths and the torch backend give the
same values."""

import numpy as np
import pytest

import toys
from toys.engine import measure

P = np.array([0.2, 0.3, 0.5])
LR, TAU, ROUNDS = 0.05, 3, 4


def _problem():
    return toys.quadratic(n_clients=3, dim=2, L=4.0, mu=1.0, heterogeneity=1.0, seed=0,
                          weights=P)


def _reference(prob, rounds=ROUNDS, tau=TAU, lr=LR, prox=0.0):
    """(||grad F(x_r)||^2 (rounds + 1,), ||grad F(wbar_{r,k})||^2 (rounds, tau)): FedAvg /
    FedProx with full participation, one client and one step at a time."""
    a = prob.arrays()
    A, c, p = a["A"], a["c"], np.asarray(prob.p, dtype=float)
    N = len(p)

    def grad_i(i, w):
        return A[i] @ (w - c[i])

    def sq_grad_F(w):
        g = sum(p[i] * grad_i(i, w) for i in range(N))
        return float(g @ g)

    x = np.asarray(prob.x0 if getattr(prob, "x0", None) is not None else np.zeros(prob.dim),
                   dtype=float)
    server, steps = [sq_grad_F(x)], np.zeros((rounds, tau))
    for r in range(rounds):
        W = [x.copy() for _ in range(N)]
        for k in range(tau):
            for i in range(N):
                W[i] = W[i] - lr * (grad_i(i, W[i]) + prox * (W[i] - x))
            wbar = sum(p[i] * W[i] for i in range(N))
            steps[r, k] = sq_grad_F(wbar)
        x = wbar  # FedAvg's server step with alpha = p, server_lr = 1
        server.append(sq_grad_F(x))
    return np.array(server), steps


@pytest.mark.parametrize("algo,kw", [("fedavg", {}), ("fedprox", {"prox": 0.3})])
def test_step_grad_norm2_matches_a_per_client_loop(algo, kw):
    prob = _problem()
    tr = toys.run(prob, algo, rounds=ROUNDS, seed=0, lr=LR, local_steps=TAU, record="step",
                  **kw)
    server, steps = _reference(prob, prox=kw.get("prox", 0.0))
    assert tr.steps["grad_norm2"].shape == (ROUNDS, TAU)
    np.testing.assert_allclose(tr.steps["grad_norm2"], steps, rtol=1e-12, atol=0)
    np.testing.assert_allclose(tr.grad_norm2, server, rtol=1e-12, atol=0)
    assert "grad_norm2" in tr.steps_frame().columns


def test_only_a_step_record_measures_it():
    prob = _problem()
    for rec in ("none", "sync", "round"):
        tr = toys.run(prob, "fedavg", rounds=2, seed=0, lr=LR, local_steps=TAU, record=rec)
        assert tr.steps is None


def test_partial_participation_averages_over_the_participants():
    """The virtual average's weights are the round's alpha normalised over the participants:
    one round with clients 0 and 2 only (FedAvg: alpha_i ~ p_i)."""
    prob = _problem()
    mask = np.array([[True, False, True]])
    tr = toys.run(prob, "fedavg", rounds=1, seed=0, lr=LR, local_steps=2, record="step",
                  participation=mask)
    a = prob.arrays()
    x = np.zeros(prob.dim) if getattr(prob, "x0", None) is None else np.asarray(prob.x0)
    W = {0: x.copy(), 2: x.copy()}
    w_av = {i: P[i] / (P[0] + P[2]) for i in W}
    for k in range(2):
        for i in W:
            W[i] = W[i] - LR * a["A"][i] @ (W[i] - a["c"][i])
        wbar = sum(w_av[i] * W[i] for i in W)
        g = sum(P[i] * a["A"][i] @ (wbar - a["c"][i]) for i in range(3))  # all clients' F
        assert tr.steps["grad_norm2"][0, k] == pytest.approx(float(g @ g), rel=1e-12, abs=0)


def test_stashed_and_streamed_steps_have_the_same_bits(monkeypatch):
    prob = _problem()
    kw = dict(rounds=ROUNDS, seed=0, lr=LR, local_steps=TAU, record="step")
    stashed = toys.run(prob, "fedavg", **kw)
    monkeypatch.setattr(measure, "STASH_BYTES", 0)  # measured step by step
    streamed = toys.run(prob, "fedavg", **kw)
    np.testing.assert_array_equal(stashed.steps["grad_norm2"], streamed.steps["grad_norm2"])


@pytest.mark.parametrize("device, rtol", [
    ("cpu", 1e-12), pytest.param("cuda", 1e-10, marks=pytest.mark.gpu)])
def test_torch_agrees_with_numpy(device, rtol):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA is not available on this machine")
    prob = _problem()
    kw = dict(rounds=ROUNDS, seed=0, lr=LR, local_steps=TAU, record="step")
    a = toys.run(prob, "fedavg", **kw)
    b = toys.run(prob, "fedavg", backend="torch", device=device, dtype="float64", **kw)
    np.testing.assert_allclose(b.steps["grad_norm2"], a.steps["grad_norm2"], rtol=rtol, atol=0)
