"""The torch path on CUDA (marked ``gpu``; skipped cleanly without CUDA): every problem kind
in float64 agrees with torch CPU, float32 is close to float64, participants-only subsets stay
on the device without host copies and agree with the full computation.

On CUDA, batched kernels may be chosen by batch size, so subset rows are required equal to the
full rows to float64 round-off (1e-12) rather than bit for bit (bit-identity is tested on the
CPU in test_torch_participants.py)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toys  # noqa: E402
from toys.engine.backends import torch as tb  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402
from toys.problems.mlp import MLPProblem  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(),
                                                  reason="CUDA is not available on this machine")]
AGREE, F32, ROUNDOFF = 1e-10, 1e-5, 1e-12


def _problems():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(n, 3)) for n in (9, 14, 6, 11, 4)]
    mask = np.ones((5, 6), bool)
    mask[0, 4:] = False
    return {
        "binary": toys.logistic_synthetic(n_clients=5, dim=3, seed=0),
        "multinomial": toys.logistic(Xs, [rng.integers(0, 3, size=len(x)) for x in Xs],
                                     l2=0.05),
        "quadratic": toys.quadratic(n_clients=5, dim=3, seed=0, noise_std=0.3),
        "mlp": MLPProblem(rng.normal(size=(5, 6, 4)), rng.integers(0, 3, (5, 6)), mask,
                          classes=3, hidden=5, l2=1e-2),
        "cnn": CNNProblem(rng.normal(size=(5, 6, 8, 8)), rng.integers(0, 3, (5, 6)), mask,
                          classes=3, seed=0),
    }


PROBLEMS = _problems()


def _close(a, b, tol):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_cuda_float64_agrees_with_cpu_and_float32_is_close(name, device="cuda"):
    prob = PROBLEMS[name]
    kw = {"rounds": 3, "seed": 1, "lr": 0.05, "local_steps": 2, "backend": "torch",
          "participation": "bernoulli:p=0.6", "record": "sync"}
    a = toys.run(prob, "fedau", device="cpu", dtype="float64", **kw)
    b = toys.run(prob, "fedau", device=device, dtype="float64", **kw)
    c = toys.run(prob, "fedau", device=device, dtype="float32", **kw)
    assert b.info["device"].startswith(device) and c.info["dtype"] == "float32"
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=AGREE, atol=AGREE)
    np.testing.assert_allclose(b.loss, a.loss, rtol=AGREE, atol=AGREE)
    _close(c.final_model, b.final_model, F32)
    _close(c.loss, b.loss, F32)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_cuda_subset_stays_on_device(name, monkeypatch, device="cuda"):
    prob = PROBLEMS[name]
    ops, orc, _ = tb.setup(prob, device, None, 0)
    x0 = np.zeros(prob.dim) if getattr(prob, "x0", None) is None else prob.x0
    W = ops.asarray(x0[None, :] + 0.1 * np.random.default_rng(1).normal(
        size=(prob.n_clients, prob.dim)))
    full_g = orc.grads(W)
    full_mb = orc.minibatch_grads(W, torch.Generator(device=ops.device).manual_seed(4), 2)

    def refuse(*a, **k):
        raise AssertionError("host round trip")

    for attr in ("numpy", "__array__", "tolist"):
        monkeypatch.setattr(torch.Tensor, attr, refuse)
    idx = ops.asbool(np.array([True, False, True, True, False])).nonzero()[:, 0]
    sub = orc.subset(idx)
    Ws = W.index_select(0, idx)
    gen = torch.Generator(device=ops.device).manual_seed(4)
    torch.testing.assert_close(sub.grads(Ws), full_g[idx], rtol=ROUNDOFF, atol=ROUNDOFF)
    torch.testing.assert_close(sub.minibatch_grads(Ws, gen, 2), full_mb[idx], rtol=ROUNDOFF,
                               atol=ROUNDOFF)
    monkeypatch.undo()
    ref = torch.Generator(device=ops.device).manual_seed(4)
    orc.minibatch_grads(W, ref, 2)
    assert torch.equal(gen.get_state(), ref.get_state())


@pytest.mark.parametrize("name", ["binary", "mlp", "cnn"])
def test_cuda_runs_with_and_without_participants_only(name, monkeypatch, device="cuda"):
    prob = PROBLEMS[name]
    kw = {"rounds": 4, "seed": 3, "lr": 0.05, "local_steps": 2, "backend": "torch",
          "device": device, "participation": "bernoulli:p=0.5", "batch_size": 2}
    a = toys.run(prob, "fedavg", **kw)
    monkeypatch.setattr(tb.ClientSubset, "subset", None)
    b = toys.run(prob, "fedavg", **kw)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=ROUNDOFF, atol=ROUNDOFF)
    np.testing.assert_array_equal(b.participation, a.participation)
