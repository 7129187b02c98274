"""toys.problems.stacked for logistic regression: a population of binary or softmax problems
(unequal client sizes per instance, padded) runs in toys.run_many bit for bit as each problem's
own toys.run, minibatch local steps and partial participation included; shapes that do not
stack are refused by name."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.problems.stacked import StackedLogistic, pad_rows, stack


def _prob(seed, classes=3, N=5, f=4, l2=0.1):
    r = np.random.default_rng(seed)
    sizes = r.integers(3, 25, size=N)
    Xs = [r.normal(size=(k, f)) for k in sizes]
    ys = [r.integers(0, classes, k) for k in sizes]
    if classes == 2:
        return toys.logistic(Xs, [y.astype(float) for y in ys], l2=l2)
    return toys.logistic(Xs, ys, l2=l2, classes=classes)


def _padded(probs):
    n = max(q.X.shape[1] for q in probs)
    return [pad_rows(q, n) for q in probs]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("part", ["full", "bernoulli:p=0.3"])
@pytest.mark.parametrize("batch", [None, 6])
def test_each_instance_is_its_own_run_bit_for_bit(classes, part, batch):
    probs = [_prob(s, classes) for s in range(4)]
    assert len({q.X.shape[1] for q in probs}) > 1
    seeds = [4, 0, 9, 2]
    kw = dict(rounds=5, lr=0.2, local_steps=3, batch_size=batch, participation=part)
    pop = toys.run_many(StackedLogistic(_padded(probs)), "fedavg", seeds=seeds, **kw)
    for b, q in enumerate(probs):  # the reference: the unpadded problem's own run
        tr = toys.run(q, "fedavg", seed=seeds[b], **kw)
        assert np.array_equal(tr.final_model, pop.final_model[b]), (b, "model")
        for k in ("gap", "loss", "grad_norm2"):
            if classes == 2 and k != "grad_norm2":  # toys.run's F: the losses_at kernel
                assert np.allclose(tr.state[k], pop[b].state[k], rtol=0, atol=1e-15), (b, k)
            else:
                assert np.array_equal(tr.state[k], pop[b].state[k], equal_nan=True), (b, k)
        assert np.array_equal(tr.participation, pop.participation[b])


def test_minibatches_differ_between_seeds_and_repeat_with_the_same_seed():
    probs = _padded([_prob(0)] * 2)
    kw = dict(rounds=3, lr=0.2, local_steps=2, batch_size=4, record="none")
    a = toys.run_many(StackedLogistic(probs), "fedavg", seeds=[1, 2], **kw).final_model
    b = toys.run_many(StackedLogistic(probs), "fedavg", seeds=[1, 2], **kw).final_model
    assert np.array_equal(a, b) and not np.array_equal(a[0], a[1])


def test_pad_rows_keeps_the_problem():
    q = _prob(1)
    big = pad_rows(q, q.X.shape[1] + 7)
    W = np.random.default_rng(0).normal(size=(q.n_clients, q.dim))
    assert np.array_equal(big.p, q.p) and big.X.shape[1] == q.X.shape[1] + 7
    assert np.allclose(big.losses(W), q.losses(W), rtol=1e-13, atol=0)
    assert np.allclose(big.grads(W), q.grads(W), rtol=1e-12, atol=1e-15)
    assert pad_rows(q, q.X.shape[1]) is q
    with pytest.raises(DomainError, match="n_max"):
        pad_rows(q, q.X.shape[1] - 1)


def test_stack_takes_logistic_problems_and_refuses_what_does_not_stack():
    assert isinstance(stack(_padded([_prob(0), _prob(1)])), StackedLogistic)
    with pytest.raises(DomainError, match="X shape.*pad_rows"):
        stack([_prob(0), _prob(1)])  # unequal padded lengths
    with pytest.raises(DomainError, match="logistic problems with one X shape"):
        stack(_padded([_prob(0, classes=2, f=6), _prob(0, classes=3, f=2)]))  # both d = 6
    with pytest.raises(DomainError, match="l2"):
        stack(_padded([_prob(0, l2=0.1), _prob(0, l2=0.2)]))
    with pytest.raises(DomainError, match="one family"):
        stack([_prob(0), toys.quadratic(5, 12, seed=0)])


@pytest.mark.parametrize("classes", [2, 3])
def test_on_torch_each_instance_is_its_own_torch_run(classes):
    pytest.importorskip("torch")
    probs = [_prob(s, classes) for s in range(3)]
    seeds = [4, 0, 9]
    kw = dict(rounds=4, lr=0.2, local_steps=3, batch_size=6, participation="bernoulli:p=0.4",
              record="none", backend="torch", device="cpu")
    pop = toys.run_many(StackedLogistic(_padded(probs), optima=False), "fedavg", seeds=seeds,
                        **kw)
    for b, q in enumerate(probs):  # the same draws (its own torch.Generator), the same steps
        tr = toys.run(q, "fedavg", seed=seeds[b], **kw)
        assert np.allclose(tr.final_model, pop.final_model[b], rtol=1e-12, atol=1e-14), b


@pytest.mark.gpu
def test_on_cuda_each_instance_is_its_own_cuda_run():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    probs = [_prob(s) for s in range(3)]
    kw = dict(rounds=4, lr=0.2, local_steps=3, batch_size=6, record="none", backend="torch",
              device="cuda")
    pop = toys.run_many(StackedLogistic(_padded(probs), optima=False), "fedavg",
                        seeds=[1, 2, 3], **kw)
    for b, q in enumerate(probs):  # CUDA's batched kernels: equal to round-off
        tr = toys.run(q, "fedavg", seed=b + 1, **kw)
        assert np.allclose(tr.final_model, pop.final_model[b], rtol=1e-10, atol=1e-12), b
