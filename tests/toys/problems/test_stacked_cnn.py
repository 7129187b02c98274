"""toys.problems.stacked for the CNN: a population of CNN problems (unequal client sizes per
instance, padded) runs in toys.run_many on torch as each problem's own torch toys.run (the
same draws, values to round-off), minibatch steps and partial participation included; the
numpy side refuses minibatches by name; shapes that do not stack are refused by name."""

import numpy as np
import pytest

pytest.importorskip("torch")

import toys  # noqa: E402
from boundlab.errors import DomainError  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402
from toys.problems.stacked import StackedCNN, pad_rows, stack  # noqa: E402


def _prob(seed, N=3, side=4, classes=3, n_max=None, l2=0.0):
    r = np.random.default_rng(seed)
    sizes = r.integers(2, 7, size=N)
    n = int(sizes.max()) if n_max is None else n_max
    mask = np.arange(n)[None, :] < sizes[:, None]
    return CNNProblem(r.normal(size=(N, n, side, side)), r.integers(0, classes, (N, n)), mask,
                      classes=classes, seed=seed, l2=l2)


def _padded(probs):
    n = max(q.images.shape[1] for q in probs)
    return [pad_rows(q, n) for q in probs]


@pytest.mark.parametrize("part", ["full", "bernoulli:p=0.5"])
def test_on_torch_each_instance_is_its_own_torch_run(part):
    probs = [_prob(s) for s in range(3)]
    assert len({q.images.shape[1] for q in probs}) > 1
    seeds = [4, 0, 9]
    kw = dict(rounds=2, lr=0.05, local_steps=2, batch_size=2, participation=part,
              record="none", backend="torch", device="cpu")
    pop = toys.run_many(StackedCNN(_padded(probs)), "fedavg", seeds=seeds, **kw)
    for b, q in enumerate(probs):  # the same draws (its own torch.Generator), the same steps
        tr = toys.run(q, "fedavg", seed=seeds[b], **kw)
        assert np.allclose(tr.final_model, pop.final_model[b], rtol=1e-12, atol=1e-14), b
        assert np.array_equal(tr.participation, pop.participation[b])


def test_numpy_side_and_padding():
    q = _prob(1)
    big = pad_rows(q, q.images.shape[1] + 3)
    W = np.stack([q.x0] * q.n_clients)
    assert np.array_equal(big.x0, q.x0) and np.array_equal(big.p, q.p)
    assert np.allclose(big.grads(W), q.grads(W), rtol=1e-12, atol=1e-14)
    pop = StackedCNN(_padded([_prob(0), q]))
    assert np.allclose(pop.grads(np.stack([W, W]))[1], q.grads(W), rtol=1e-12, atol=1e-14)
    with pytest.raises(DomainError, match="backend.*torch"):
        pop.minibatch_grads(np.stack([W, W]), None, 1)


def test_stack_takes_cnn_problems_and_refuses_what_does_not_stack():
    assert isinstance(stack(_padded([_prob(0), _prob(1)])), StackedCNN)
    with pytest.raises(DomainError, match="images shape.*pad_rows"):
        StackedCNN([_prob(0, n_max=6), _prob(1, n_max=7)])
    with pytest.raises(DomainError, match="l2"):
        StackedCNN([_prob(0, n_max=6), _prob(1, n_max=6, l2=0.1)])
