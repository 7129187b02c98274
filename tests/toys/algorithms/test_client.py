"""Client updates: participants-only compute equals computing every client (bit for bit)."""

import numpy as np
import pytest

import toys
from toys.algorithms.client import local_update, participants_update


class NoSubset:
    """The problem's oracle without ``subset``: forces the compute-everyone path."""

    def __init__(self, prob):
        self._p = prob
        self.n_clients = prob.n_clients

    def grads(self, W):
        return self._p.grads(W)

    def minibatch_grads(self, W, rng, b):
        return self._p.minibatch_grads(W, rng, b)


@pytest.mark.parametrize("batch_size", [None, 3])
@pytest.mark.parametrize("which", ["logistic", "quadratic"])
def test_participants_only_equals_everyone(which, batch_size):
    prob = (toys.logistic_synthetic(n_clients=7, dim=3, seed=4) if which == "logistic"
            else toys.quadratic(n_clients=7, dim=3, seed=4, noise_std=0.2))
    mask = np.array([1, 0, 0, 1, 1, 0, 1], bool)
    x = np.linspace(-1, 1, prob.dim)
    lrs = [0.2, 0.1, 0.05]
    seen_a, seen_b = [], []
    a = participants_update(prob, x, lrs, np.random.default_rng(5), mask, batch_size, 0.1,
                            observer=lambda k, W, G, lr: seen_a.append(W[mask].copy()))
    rng_b = np.random.default_rng(5)
    b = local_update(NoSubset(prob), x, lrs, rng_b, batch_size, 0.1,
                     observer=lambda k, W, G, lr: seen_b.append(W[mask].copy()))
    np.testing.assert_array_equal(a[mask], b[mask])
    np.testing.assert_array_equal(a[~mask], np.broadcast_to(x, a[~mask].shape))
    for u, v in zip(seen_a, seen_b):
        np.testing.assert_array_equal(u, v)
    # the random stream advanced exactly as for all clients
    rng_a = np.random.default_rng(5)
    participants_update(prob, x, lrs, rng_a, mask, batch_size, 0.1)
    assert rng_a.random() == rng_b.random()


def test_participants_only_on_torch():
    pytest.importorskip("torch")
    prob = toys.logistic_synthetic(n_clients=6, dim=3, seed=2)
    kw = dict(rounds=5, seed=1, lr=0.3, local_steps=2, batch_size=4,
              participation="bernoulli:p=0.4", backend="torch", device="cpu")
    a = toys.run(prob, "fedau", **kw)
    b = toys.run(prob, "fedau", **{**kw, "backend": "numpy", "device": None})
    assert a.participation.sum() < a.participation.size  # partial participation happened
    np.testing.assert_array_equal(a.participation, b.participation)
    assert np.all(np.isfinite(a.final_model))
