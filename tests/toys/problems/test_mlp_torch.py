"""The MLP's torch oracle (torch.func: one vmap(grad) over the clients) against an independent
per-client autograd reference, float32 vs float64, and participants-only subsets on torch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from toys.engine.backends.torch import TorchOps  # noqa: E402
from toys.problems.mlp import MLPProblem  # noqa: E402

# float64 round-off of two orders of summation over <= 8 rows and <= 6 hidden units
REF = {"rtol": 1e-12, "atol": 1e-14}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _prob(N=4, n=8, f=5, C=3, h=6, l2=1e-2, seed=0):
    rng = np.random.default_rng(seed)
    mask = np.ones((N, n), bool)
    mask[0, 5:] = False  # ragged clients: padded rows must not count
    mask[2, 2:] = False
    return MLPProblem(rng.normal(size=(N, n, f)), rng.integers(0, C, (N, n)), mask, classes=C,
                      hidden=h, l2=l2, seed=seed)


def _reference(prob, W, rows=None):
    """Client by client: an ordinary autograd graph and ``loss.backward()`` (independent of
    the code under test). ``rows[i]``: the row indices of client i (default: its real rows)."""
    f, h, C = prob.n_features, prob.hidden, prob.classes
    L, G = [], []
    for i in range(prob.n_clients):
        th = torch.tensor(W[i], dtype=torch.float64, requires_grad=True)
        W1 = th[:f * h].reshape(f, h)
        b1 = th[f * h:f * h + h]
        W2 = th[f * h + h:f * h + h + h * C].reshape(h, C)
        b2 = th[f * h + h + h * C:]
        r = np.flatnonzero(prob.mask[i]) if rows is None else rows[i]
        x = torch.as_tensor(prob.X[i][r])
        y = torch.as_tensor(prob.y[i][r])
        z = torch.relu(x @ W1 + b1) @ W2 + b2
        loss = torch.nn.functional.cross_entropy(z, y) + 0.5 * prob.l2 * (th * th).sum()
        loss.backward()
        L.append(loss.item())
        G.append(th.grad.numpy().copy())
    return np.array(L), np.stack(G)


def _points(prob, seed=1, scale=0.5):
    rng = np.random.default_rng(seed)
    return prob.x0[None, :] + scale * rng.normal(size=(prob.n_clients, prob.dim))


def test_torch_oracle_matches_per_client_autograd():
    prob = _prob()
    W = _points(prob)
    L_ref, G_ref = _reference(prob, W)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    np.testing.assert_allclose(ops.to_numpy(orc.losses(ops.asarray(W))), L_ref, **REF)
    np.testing.assert_allclose(ops.to_numpy(orc.grads(ops.asarray(W))), G_ref, **REF)
    # the numpy path (hand-written back-propagation) against the same reference
    np.testing.assert_allclose(prob.losses(W), L_ref, **REF)
    np.testing.assert_allclose(prob.grads(W), G_ref, **REF)
    # one shared model (d,) broadcast to every client
    np.testing.assert_allclose(ops.to_numpy(orc.grads(ops.asarray(W[1]))),
                               _reference(prob, np.stack([W[1]] * prob.n_clients))[1], **REF)


def test_torch_minibatch_is_the_gradient_on_the_drawn_rows():
    """The minibatch of client i is the b real rows of smallest key of a (N, n_max) draw of
    the torch generator (float64 keys, whatever the dtype)."""
    prob = _prob()
    W = _points(prob, seed=2)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    b = 3
    gen = torch.Generator().manual_seed(7)
    G = ops.to_numpy(orc.minibatch_grads(ops.asarray(W), gen, b))
    keys = torch.rand(prob.mask.shape, generator=torch.Generator().manual_seed(7),
                      dtype=torch.float64).numpy()
    keys = np.where(prob.mask, keys, np.inf)
    rows = [np.sort(np.argsort(keys[i])[:min(b, prob.counts[i])])
            for i in range(prob.n_clients)]
    np.testing.assert_allclose(G, _reference(prob, W, rows)[1], **REF)
    # float32 draws the same rows (the keys are float64 in both)
    ops32 = TorchOps("cpu", "float32")
    G32 = prob.torch_oracle(ops32).minibatch_grads(ops32.asarray(W), torch.Generator()
                                                   .manual_seed(7), b)
    np.testing.assert_allclose(ops32.to_numpy(G32), G, rtol=1e-4, atol=1e-5)


def test_float32_oracle_is_close_to_float64():
    prob = _prob()
    W = _points(prob, seed=3)
    o64, o32 = TorchOps("cpu", "float64"), TorchOps("cpu", "float32")
    g64 = o64.to_numpy(prob.torch_oracle(o64).grads(o64.asarray(W)))
    g32 = prob.torch_oracle(o32).grads(o32.asarray(W))
    assert g32.dtype == torch.float32
    # float32 unit round-off 6e-8 times the size of the sums: 1e-5 relative to the largest entry
    np.testing.assert_allclose(o32.to_numpy(g32), g64, rtol=0, atol=1e-5 * np.abs(g64).max())


def test_subset_is_bit_identical_to_the_full_rows():
    prob = _prob()
    W = _points(prob, seed=4)
    ops = TorchOps("cpu", "float64")
    orc = prob.torch_oracle(ops)
    idx = torch.tensor([1, 3])
    sub = orc.subset(idx)
    assert sub.n_clients == 2
    Wt = ops.asarray(W)
    assert torch.equal(sub.grads(Wt[idx]), orc.grads(Wt)[idx])
    assert torch.equal(sub.losses(Wt[idx]), orc.losses(Wt)[idx])
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    assert torch.equal(sub.minibatch_grads(Wt[idx], g1, 2),
                       orc.minibatch_grads(Wt, g2, 2)[idx])
    assert torch.equal(g1.get_state(), g2.get_state())  # the stream advanced as for all N
    # the numpy problem's subset too
    sub_np = prob.subset(np.array([0, 2]))
    assert np.array_equal(sub_np.grads(W[[0, 2]]), prob.grads(W)[[0, 2]])
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(sub_np.minibatch_grads(W[[0, 2]], r1, 2),
                          prob.minibatch_grads(W, r2, 2)[[0, 2]])
    assert r1.random() == r2.random()


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_partial_participation_runs_bit_identical_to_computing_everyone(backend, monkeypatch):
    import toys
    from toys.engine.backends.torch import ClientSubset

    prob = _prob(N=5)
    kw = {"rounds": 3, "seed": 2, "lr": 0.1, "local_steps": 2, "batch_size": 3,
          "participation": "bernoulli:p=0.5", "backend": backend, "record": "round"}
    a = toys.run(prob, "fedavg", **kw)
    assert 0 < a.participation.sum() < a.participation.size
    monkeypatch.setattr(MLPProblem, "subset", lambda self, c: None)
    monkeypatch.setattr(ClientSubset, "subset", None)
    b = toys.run(prob, "fedavg", **kw)
    np.testing.assert_array_equal(b.final_model, a.final_model)
    np.testing.assert_array_equal(b.to_frame().to_numpy(), a.to_frame().to_numpy())
