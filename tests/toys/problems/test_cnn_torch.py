"""The CNN's torch oracle (torch.func: functional_call + one vmap(grad) over the clients)
against an independent per-client ``nn.Module`` + ``loss.backward()`` reference (full batch,
minibatch rows, hidden layer and l2), float32 vs float64, and participants-only subsets."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundlab.errors import DomainError  # noqa: E402
from toys.engine.backends.torch import TorchOps  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402

# float64 round-off of convolution sums (reassociated by the batched grouped convolution)
REF = {"rtol": 1e-11, "atol": 1e-13}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def prob():
    rng = np.random.default_rng(0)
    mask = np.ones((3, 5), bool)
    mask[0, 3:] = False  # ragged clients
    return CNNProblem(rng.normal(size=(3, 5, 8, 8)), rng.integers(0, 4, size=(3, 5)), mask,
                      classes=4, hidden=6, l2=0.01, seed=0)


def _reference(prob, W, rows=None):
    """Client by client: a fresh ``nn.Module`` with client i's parameters, mean cross-entropy
    on its rows plus l2/2 ||theta||^2, ``loss.backward()``."""
    L, G = [], []
    for i in range(prob.n_clients):
        net = prob.network().double()
        torch.nn.utils.vector_to_parameters(torch.as_tensor(W[i]), net.parameters())
        r = np.flatnonzero(prob.mask[i]) if rows is None else rows[i]
        x = torch.as_tensor(prob.images[i][r][:, None])
        y = torch.as_tensor(prob.labels[i][r])
        theta = torch.cat([p.reshape(-1) for p in net.parameters()])
        loss = torch.nn.functional.cross_entropy(net(x), y) + 0.5 * prob.l2 * (theta ** 2).sum()
        loss.backward()
        L.append(loss.item())
        G.append(torch.cat([p.grad.reshape(-1) for p in net.parameters()]).numpy())
    return np.array(L), np.stack(G)


def _points(prob, seed=1):
    return prob.x0[None] + 0.02 * np.random.default_rng(seed).normal(size=(prob.n_clients,
                                                                           prob.dim))


def test_torch_oracle_matches_per_client_autograd(prob):
    W = _points(prob)
    L_ref, G_ref = _reference(prob, W)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    np.testing.assert_allclose(ops.to_numpy(orc.losses(ops.asarray(W))), L_ref, **REF)
    np.testing.assert_allclose(ops.to_numpy(orc.grads(ops.asarray(W))), G_ref, **REF)


def test_torch_minibatch_is_the_gradient_on_the_drawn_rows(prob):
    W = _points(prob, seed=2)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    b = 2
    G = orc.minibatch_grads(ops.asarray(W), torch.Generator().manual_seed(11), b)
    keys = torch.rand(prob.mask.shape, generator=torch.Generator().manual_seed(11),
                      dtype=torch.float64).numpy()
    keys = np.where(prob.mask, keys, np.inf)
    rows = [np.argsort(keys[i])[:b] for i in range(prob.n_clients)]
    np.testing.assert_allclose(ops.to_numpy(G), _reference(prob, W, rows)[1], **REF)


def test_float32_oracle_is_close_to_float64(prob):
    W = _points(prob, seed=3)
    o64, o32 = TorchOps("cpu", "float64"), TorchOps("cpu", "float32")
    g64 = o64.to_numpy(prob.torch_oracle(o64).grads(o64.asarray(W)))
    g32 = prob.torch_oracle(o32).grads(o32.asarray(W))
    assert g32.dtype == torch.float32
    np.testing.assert_allclose(o32.to_numpy(g32), g64, rtol=0, atol=1e-5 * np.abs(g64).max())


def test_subset_is_bit_identical_to_the_full_rows(prob):
    W = _points(prob, seed=4)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    idx = torch.tensor([0, 2])
    sub = orc.subset(idx)
    assert sub.n_clients == 2
    Wt = ops.asarray(W)
    assert torch.equal(sub.grads(Wt[idx]), orc.grads(Wt)[idx])
    assert torch.equal(sub.losses(Wt[idx]), orc.losses(Wt)[idx])
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert torch.equal(sub.minibatch_grads(Wt[idx], g1, 2),
                       orc.minibatch_grads(Wt, g2, 2)[idx])
    assert torch.equal(g1.get_state(), g2.get_state())


def test_negative_client_weights_are_refused_by_name():
    rng = np.random.default_rng(0)
    with pytest.raises(DomainError, match="weights .*positive finite"):
        CNNProblem(rng.normal(size=(2, 3, 8, 8)), rng.integers(0, 4, size=(2, 3)),
                   np.ones((2, 3), bool), classes=4, hidden=6, weights=[1.0, -1.0])
