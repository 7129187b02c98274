"""Client chunks of the torch.func oracles (VMAP_CHUNK_BYTES): the MLP's and the CNN's losses,
gradients, minibatch gradients and whole runs are the same bits in chunks as in one call."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toys  # noqa: E402
from toys.engine.backends import torch as tb  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402
from toys.problems.mlp import MLPProblem  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _mlp(N=5):
    rng = np.random.default_rng(0)
    mask = np.ones((N, 6), bool)
    mask[1, 4:] = False
    return MLPProblem(rng.normal(size=(N, 6, 4)), rng.integers(0, 3, (N, 6)), mask, classes=3,
                      hidden=5, l2=1e-2, seed=0)


def _cnn(N=4):
    rng = np.random.default_rng(1)
    mask = np.ones((N, 5), bool)
    mask[0, 3:] = False
    return CNNProblem(rng.normal(size=(N, 5, 8, 8)), rng.integers(0, 4, size=(N, 5)), mask,
                      classes=4, hidden=6, l2=0.01, seed=0)


def _calls(prob):
    ops = tb.TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    W = ops.asarray(prob.x0[None] + 0.05 * np.random.default_rng(2).normal(
        size=(prob.n_clients, prob.dim)))
    gen = torch.Generator().manual_seed(3)
    return [orc.losses(W), orc.grads(W), orc.losses(W[0]), orc.minibatch_grads(W, gen, 2)]


@pytest.mark.parametrize("make", [_mlp, _cnn])
def test_chunks_of_clients_give_the_same_bits(monkeypatch, make):
    prob = make()
    whole = _calls(prob)
    # a budget below one client's working set: one client per vmap call
    monkeypatch.setattr(tb, "VMAP_CHUNK_BYTES", 1)
    for a, b in zip(_calls(prob), whole):
        assert torch.equal(a, b)
    kw = dict(rounds=2, seed=0, lr=0.1, local_steps=2, backend="torch", device="cpu",
              batch_size=3)
    chunked = toys.run(prob, "fedavg", **kw).final_model
    monkeypatch.setattr(tb, "VMAP_CHUNK_BYTES", 1 << 40)
    np.testing.assert_array_equal(chunked, toys.run(prob, "fedavg", **kw).final_model)


def test_the_chunk_follows_the_budget(monkeypatch):
    ops = tb.TorchOps("cpu", "float64")
    orc = _mlp(N=6).torch_oracle(ops)
    sizes = []
    real = orc._losses
    orc._losses = lambda W, X, y, w: (sizes.append(W.shape[0]), real(W, X, y, w))[1]
    per = 8 * 3 * (orc.X.shape[1] * orc.row_floats + orc.dim)  # one client's working set
    monkeypatch.setattr(tb, "VMAP_CHUNK_BYTES", 4 * per)
    orc.losses(ops.zeros((6, orc.dim)))
    assert sizes == [4, 2]
