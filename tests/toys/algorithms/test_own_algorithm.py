"""A user's own pieces through the documented protocols (toys.algorithms), on numpy and torch."""

import dataclasses

import numpy as np
import pytest
from array_api_compat import array_namespace

import toys
from boundlab.errors import DomainError, UnknownNameError


class LossProportional:
    """Weights ∝ p_i * F_i(x) over the participants (a new rule: no built-in does this)."""

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        xp = array_namespace(losses)
        w = xp.where(mask, p * losses, 0.0)
        return w / xp.sum(w), state


class CountingFedAvg:
    """FedAvg's weights, written by a user, with a round counter as explicit state."""

    def init(self, n_clients):
        return 0

    def update(self, state, *, losses, p, mask, round):
        assert state == round  # the engine calls update once per round, in order
        xp = array_namespace(p)
        w = xp.where(mask, p, 0.0)
        return w / xp.sum(w), state + 1


@pytest.fixture(scope="module")
def prob():
    return toys.logistic_synthetic(n_clients=6, dim=3, seed=2)


def _own(weights, name="mine"):
    return dataclasses.replace(toys.algorithms.get("fedavg"), name=name, weights=weights)


def test_own_rule_runs_and_is_what_it_says(prob):
    tr = toys.run(prob, _own(LossProportional()), rounds=4, seed=0, lr=0.5, local_steps=2,
                  participation="bernoulli:p=0.7")
    assert tr.algorithm == "mine"
    # independent recomputation of round 0's weights from the problem's own losses
    L0 = prob.losses(np.zeros(prob.dim))
    m0 = tr.participation[0]
    expect = np.where(m0, prob.p * L0, 0.0) / (prob.p * L0)[m0].sum()
    np.testing.assert_allclose(tr.alpha[0], expect, rtol=1e-14, atol=0)


def test_own_fedavg_equals_builtin_bit_for_bit(prob):
    kw = dict(rounds=5, seed=3, lr=0.4, local_steps=3, batch_size=8,
              participation="bernoulli:p=0.6")
    a = toys.run(prob, _own(CountingFedAvg()), **kw)
    b = toys.run(prob, "fedavg", **kw)
    np.testing.assert_array_equal(a.final_model, b.final_model)
    np.testing.assert_array_equal(a.alpha, b.alpha)


def test_own_rule_on_torch_agrees_with_numpy(prob):
    pytest.importorskip("torch")
    kw = dict(rounds=4, seed=1, lr=0.5, local_steps=2, participation="bernoulli:p=0.7")
    a = toys.run(prob, _own(LossProportional()), **kw)
    b = toys.run(prob, _own(LossProportional()), backend="torch", device="cpu", **kw)
    assert b.backend == "torch"
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b.alpha, a.alpha, rtol=1e-12, atol=1e-14)


def test_bad_pieces_and_names_are_refused(prob):
    with pytest.raises(DomainError, match="algorithm.weights"):
        toys.run(prob, _own(object()), rounds=1, seed=0, lr=0.1)
    with pytest.raises(UnknownNameError, match="valid: lr, local_steps, server_lr"):
        toys.run(prob, _own(LossProportional()), rounds=1, seed=0, lr=0.1, temperature=2.0)
    with pytest.raises(UnknownNameError, match="algorithm"):
        toys.algorithms.get("fedsgd")


def test_every_builtin_is_a_composition():
    for name in toys.algorithms.names():
        algo = toys.algorithms.get(name)
        assert isinstance(algo, toys.Algorithm) and algo.name == name
        for piece in algo.pieces:
            assert callable(piece.init) and callable(piece.update)
