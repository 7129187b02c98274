"""toys.problems.stacked for the MLP: a population of MLP problems (unequal client sizes per
instance, padded) runs in toys.run_many bit for bit as each problem's own toys.run on numpy,
minibatch local steps and partial participation included, and to round-off on torch; shapes
that do not stack are refused by name."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.problems.mlp import MLPProblem
from toys.problems.stacked import StackedMLP, pad_rows, stack


def _prob(seed, N=4, f=5, classes=3, hidden=6, l2=1e-3, n_max=None):
    r = np.random.default_rng(seed)
    sizes = r.integers(3, 20, size=N)
    n = int(sizes.max()) if n_max is None else n_max
    X = r.normal(size=(N, n, f))
    y = r.integers(0, classes, (N, n))
    mask = np.arange(n)[None, :] < sizes[:, None]
    return MLPProblem(X, y, mask, classes=classes, hidden=hidden, l2=l2, seed=seed)


def _padded(probs):
    n = max(q.X.shape[1] for q in probs)
    return [pad_rows(q, n) for q in probs]


@pytest.mark.parametrize("part", ["full", "bernoulli:p=0.4"])
@pytest.mark.parametrize("batch", [None, 5])
def test_each_instance_is_its_own_run_bit_for_bit(part, batch):
    probs = [_prob(s) for s in range(4)]
    assert len({q.X.shape[1] for q in probs}) > 1
    seeds = [3, 0, 7, 1]
    kw = dict(rounds=4, lr=0.1, local_steps=3, batch_size=batch, participation=part)
    pop = toys.run_many(StackedMLP(_padded(probs)), "fedavg", seeds=seeds, **kw)
    for b, q in enumerate(probs):
        ref = q if batch is not None else _padded(probs)[b]  # full batch: the padded rows' sums
        tr = toys.run(ref, "fedavg", seed=seeds[b], **kw)
        assert np.array_equal(tr.final_model, pop.final_model[b]), (b, "model")
        assert np.array_equal(tr.state["loss"], pop[b].state["loss"]), (b, "loss")
        assert np.array_equal(tr.state["grad_norm2"], pop[b].state["grad_norm2"]), b
        assert np.array_equal(tr.participation, pop.participation[b])


def test_padding_keeps_the_problem_and_the_draws_of_the_unpadded_one():
    q = _prob(2)
    big = pad_rows(q, q.X.shape[1] + 6)
    W = np.random.default_rng(0).normal(size=(q.n_clients, q.dim))
    assert np.array_equal(big.p, q.p) and np.array_equal(big.x0, q.x0)
    assert np.allclose(big.losses(W), q.losses(W), rtol=1e-13, atol=0)
    assert np.allclose(big.grads(W), q.grads(W), rtol=1e-12, atol=1e-15)
    assert big.draw_len == q.X.shape[1]
    assert pad_rows(q, q.X.shape[1]) is q
    with pytest.raises(DomainError, match="n_max"):
        pad_rows(q, q.X.shape[1] - 1)


def test_stack_takes_mlp_problems_and_refuses_what_does_not_stack():
    assert isinstance(stack(_padded([_prob(0), _prob(1)])), StackedMLP)
    with pytest.raises(DomainError, match="X shape.*pad_rows"):
        StackedMLP([_prob(0, n_max=20), _prob(1, n_max=21)])
    with pytest.raises(DomainError, match="hidden"):
        StackedMLP([_prob(0, n_max=20), _prob(1, n_max=20, hidden=7)])
    with pytest.raises(DomainError, match="l2"):
        StackedMLP([_prob(0, n_max=20), _prob(1, n_max=20, l2=0.5)])
    with pytest.raises(DomainError, match="one family"):
        stack([_prob(0), toys.quadratic(4, 3, seed=0)])


def test_minibatches_differ_between_seeds_and_repeat_with_the_same_seed():
    probs = _padded([_prob(0)] * 2)
    kw = dict(rounds=3, lr=0.1, local_steps=2, batch_size=4, record="none")
    a = toys.run_many(StackedMLP(probs), "fedavg", seeds=[1, 2], **kw).final_model
    b = toys.run_many(StackedMLP(probs), "fedavg", seeds=[1, 2], **kw).final_model
    assert np.array_equal(a, b) and not np.array_equal(a[0], a[1])


def test_on_torch_each_instance_is_its_own_torch_run():
    pytest.importorskip("torch")
    probs = [_prob(s) for s in range(3)]
    seeds = [4, 0, 9]
    kw = dict(rounds=3, lr=0.1, local_steps=2, batch_size=5, participation="bernoulli:p=0.5",
              record="none", backend="torch", device="cpu")
    pop = toys.run_many(StackedMLP(_padded(probs)), "fedavg", seeds=seeds, **kw)
    for b, q in enumerate(probs):  # the same draws (its own torch.Generator), the same steps
        tr = toys.run(q, "fedavg", seed=seeds[b], **kw)
        assert np.allclose(tr.final_model, pop.final_model[b], rtol=1e-12, atol=1e-14), b


@pytest.mark.gpu
def test_on_cuda_each_instance_is_its_own_cuda_run():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    probs = [_prob(s) for s in range(3)]
    kw = dict(rounds=3, lr=0.1, local_steps=2, batch_size=5, record="none", backend="torch",
              device="cuda")
    pop = toys.run_many(StackedMLP(_padded(probs)), "fedavg", seeds=[1, 2, 3], **kw)
    for b, q in enumerate(probs):  # CUDA's batched kernels: equal to round-off
        tr = toys.run(q, "fedavg", seed=b + 1, **kw)
        assert np.allclose(tr.final_model, pop.final_model[b], rtol=1e-10, atol=1e-12), b
