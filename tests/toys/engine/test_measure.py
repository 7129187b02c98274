"""The engine's measurements (toys.engine.measure): batched shadow losses, stashed steps,
gradients read from the first local step; none of them changes what a run computes."""

import mpmath
import numpy as np
import pytest

import toys
from toys.engine import measure, settle
from toys.problems.logistic import Logistic


def _logistic(N=7, n=9, d=4, seed=0, offset=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n, d))
    y = (rng.random((N, n)) < 0.5).astype(float)
    mask = np.ones((N, n), dtype=bool)
    mask[0, -3:] = False  # a smaller client (padding rows)
    off = rng.standard_normal((N, n)) if offset else None
    return Logistic(X, y, mask, l2=0.05, offset=off)


def _mp_loss(prob, i, w):
    """Client i's loss at w in 50-digit arithmetic (an independent reference)."""
    mpmath.mp.dps = 50
    total = mpmath.mpf(0)
    off = prob.offset if prob.offset is not None else np.zeros(prob.mask.shape)
    for k in np.flatnonzero(prob.mask[i]):
        z = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(prob.X[i, k], w))
        z += mpmath.mpf(off[i, k])
        total += mpmath.mpf(prob.row_w[i, k]) * (mpmath.log1p(mpmath.exp(z))
                                                 - mpmath.mpf(prob.y[i, k]) * z)
    return total + mpmath.mpf(prob.l2) / 2 * mpmath.fsum(mpmath.mpf(v) ** 2 for v in w)


@pytest.mark.parametrize("offset", [False, True])
def test_losses_at_matches_a_high_precision_reference(offset):
    prob = _logistic(offset=offset)
    P = np.random.default_rng(3).standard_normal((5, prob.dim)) * 3
    L = prob.losses_at(P)
    assert L.shape == (5, prob.n_clients)
    for j in range(5):
        for i in range(prob.n_clients):
            ref = _mp_loss(prob, i, P[j])
            assert abs(L[j, i] - float(ref)) <= 1e-14 * abs(float(ref)) + 1e-300
        # and the single-point loss, to the same few ulps
        np.testing.assert_allclose(L[j], prob.losses(P[j]), rtol=1e-14, atol=0)


def test_losses_at_chunks_do_not_change_the_bits():
    from toys.problems._logistic_losses import binary_losses_at

    prob = _logistic(N=11)
    P = np.random.default_rng(4).standard_normal((3, prob.dim))
    args = (prob.X, 1.0 - 2.0 * prob.y, prob.mask, None, prob.l2, P)
    np.testing.assert_array_equal(binary_losses_at(*args, chunk_bytes=1),
                                  binary_losses_at(*args))


def test_fallback_losses_at_is_one_call_per_point():
    quad = toys.quadratic(n_clients=4, dim=3, seed=0)
    P = np.random.default_rng(0).standard_normal((3, 3))
    np.testing.assert_array_equal(measure.losses_at(quad, P),
                                  np.stack([quad.losses(p) for p in P]))


@pytest.mark.parametrize("algo,kw", [("fedavg", {}), ("fedprox", {"prox": 0.1}),
                                     ("fedau", {"participation": "bernoulli:p=0.5"}),
                                     ("fedavg", {"batch_size": 3})])
def test_measurements_do_not_change_the_run(algo, kw):
    prob = _logistic()
    runs = {rec: toys.run(prob, algo, rounds=4, seed=1, lr=0.2, local_steps=3, record=rec, **kw)
            for rec in ("none", "round", "step")}
    for rec in ("round", "step"):
        np.testing.assert_array_equal(runs[rec].final_model, runs["none"].final_model)
        np.testing.assert_array_equal(runs[rec].alpha, runs["none"].alpha)


def test_stashed_and_streamed_steps_agree(monkeypatch):
    prob = _logistic()
    kw = dict(rounds=3, seed=0, lr=0.3, local_steps=4, record="step")
    stashed = toys.run(prob, "fedavg", **kw)
    monkeypatch.setattr(measure, "STASH_BYTES", 0)  # measure every step as it happens
    streamed = toys.run(prob, "fedavg", batch_size=100, **kw)  # unfused path, same steps
    for k in ("drift_max", "disc", "g2_max", "dist2"):
        np.testing.assert_array_equal(stashed.steps[k], streamed.steps[k], err_msg=k)
    for k in ("shadow_gap", "rho"):
        np.testing.assert_allclose(stashed.steps[k], streamed.steps[k], rtol=1e-13, atol=1e-15)


def test_state_metrics_read_from_the_first_step_are_those_at_x():
    prob = _logistic()
    tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.2, local_steps=2, record="round")
    xs = [prob.x0]
    for _ in range(3):
        xs.append(toys.run(prob, "fedavg", rounds=1, seed=0, x0=xs[-1], lr=0.2, local_steps=2,
                           record="none").final_model)
    for r, x in enumerate(xs):
        # the loss at x is settled with the shadow points (losses_at): ~eps absolute per
        # client, its documented accuracy
        assert abs(tr.state["loss"][r] - float(prob.p @ prob.losses(x))) <= 8 * np.finfo(
            float).eps
        G = prob.grads(x)
        gF = prob.p @ G
        assert tr.state["grad_norm2"][r] == float(gF @ gF)
        assert tr.state["grad_dissim"][r] == float(np.sqrt(np.max(
            np.einsum("ij,ij->i", G - gF, G - gF))))


def test_the_kernel_saves_the_separate_passes(monkeypatch):
    prob = _logistic()
    _ = prob.F_star_i, prob.F_star  # solved before counting
    calls = {"losses": 0, "grads": 0}
    for name in calls:
        real = getattr(Logistic, name)

        def spy(self, W, real=real, name=name):
            calls[name] += 1
            return real(self, W)

        monkeypatch.setattr(Logistic, name, spy)
    toys.run(prob, "fedavg", rounds=6, seed=0, lr=0.2, local_steps=2, record="round")
    # the run's setup and the final state only, not one per round
    assert calls["losses"] <= 2 and calls["grads"] <= 1


def test_round_summaries_see_the_deferred_sync_measurements():
    # FedAvg, full batch, full participation: the losses at x come after the local steps;
    # rho_min (which includes rho at x_r) must still see them
    prob = _logistic()
    tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.2, local_steps=1, record="round")
    assert np.all(np.isfinite(tr.per_round["rho_sync"]))
    np.testing.assert_array_equal(tr.per_round["rho_min"], tr.per_round["rho_sync"])


def _trace_arrays(tr):
    out = {f"state.{k}": v for k, v in tr.state.items()}
    out.update({f"round.{k}": v for k, v in tr.per_round.items()})
    out.update({f"step.{k}": v for k, v in (tr.steps or {}).items()})
    out["final"] = tr.final_model
    return out


@pytest.mark.parametrize("record", ["round", "step"])
@pytest.mark.parametrize("algo,kw", [("fedavg", {}),
                                     ("fedau", {"participation": "bernoulli:p=0.5"})])
def test_shadow_batches_across_rounds_do_not_change_the_bits(monkeypatch, tmp_path, record,
                                                             algo, kw):
    prob = _logistic()
    args = dict(rounds=7, seed=2, lr=0.2, local_steps=3, record=record, **kw)
    batched = toys.run(prob, algo, **args)  # 21 shadow points: settled once, at the end
    assert batched.per_round["shadow_gap"].shape == (7,)
    assert np.all(np.isfinite(batched.per_round["shadow_gap"]))
    # a checkpoint after every round settles every round on its own
    each = toys.run(prob, algo, checkpoint=tmp_path / "c.npz", checkpoint_every=1, **args)
    monkeypatch.setattr(settle, "PENDING_POINTS", 4)  # batches of one or two rounds
    pairs = toys.run(prob, algo, **args)
    monkeypatch.setattr(settle, "PENDING_POINTS", 64)
    monkeypatch.setattr(settle, "PENDING_BYTES", 8 * 5 * prob.n_clients)  # by memory: 5 points
    by_bytes = toys.run(prob, algo, **args)
    ref = _trace_arrays(batched)
    for other in (each, pairs, by_bytes):
        got = _trace_arrays(other)
        for k, v in ref.items():
            np.testing.assert_array_equal(got[k], v, err_msg=k)


def test_a_resumed_run_settles_what_was_pending(tmp_path):
    prob = _logistic()
    args = dict(seed=0, lr=0.2, local_steps=2, record="round")
    full = toys.run(prob, "fedavg", rounds=6, **args)

    def save_at_2(info):  # mid-run, with rounds 0..2 pending
        if info.round == 2:
            info.checkpoint(tmp_path / "c.npz")

    toys.run(prob, "fedavg", rounds=6, callbacks=[save_at_2], **args)
    resumed = toys.run(prob, "fedavg", rounds=6, resume=tmp_path / "c.npz", **args)
    for k, v in _trace_arrays(full).items():
        np.testing.assert_array_equal(_trace_arrays(resumed)[k], v, err_msg=k)


@pytest.mark.parametrize("N,d", [(7, 3), (50, 20), (1000, 20)])
def test_stacked_virtual_averages_have_the_per_step_bits(N, d):
    rng = np.random.default_rng(N)
    a, Ws, dn = rng.random(N), rng.standard_normal((5, N, d)), rng.random((5, N))
    from toys._array import wdot, wsum

    # the steps of a round share a; the instances of a population have their own rows of A
    np.testing.assert_array_equal(wsum(a, Ws), np.stack([a @ W for W in Ws]))
    np.testing.assert_array_equal(wdot(a, dn), np.stack([a @ v for v in dn]))
    A = rng.random((5, N))
    np.testing.assert_array_equal(wsum(A, Ws), np.stack([A[j] @ Ws[j] for j in range(5)]))
    np.testing.assert_array_equal(wdot(A, dn), np.stack([A[j] @ dn[j] for j in range(5)]))


def test_a_batch_is_full_by_points_or_by_bytes(monkeypatch):
    B, a_v = np.zeros((9, 5)), np.ones(1000) / 1000
    segs = [(0, 5, np.zeros((5, 3)))]
    pend = settle.Pending()
    pend.add(0, B, a_v, segs)
    assert pend.n_points == 5 and not pend.full()
    monkeypatch.setattr(settle, "PENDING_BYTES", 8 * 5 * 1000)  # 5 points x 1000 clients
    assert pend.full()
    monkeypatch.setattr(settle, "PENDING_BYTES", 1 << 40)
    for r in range(1, 12):
        pend.add(r, B, a_v, segs, x=np.zeros(3))  # 6 points a round
    assert pend.n_points == 71 and pend.full() and len(pend) == 12
