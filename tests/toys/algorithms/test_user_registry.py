"""toys.algorithms.register: a user's composition filed under its own name runs wherever a
name is taken (toys.run, toys.run_many); built-in names and a second object under one name
are refused by name."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, UnknownNameError


@pytest.fixture
def mine():
    algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="mine-avg")
    toys.algorithms.register(algo)
    yield algo
    toys.algorithms.unregister("mine-avg")


def test_a_filed_algorithm_runs_by_name_as_its_object(mine):
    prob = toys.quadratic(3, 2, seed=0)
    by_name = toys.run(prob, "mine-avg", rounds=3, seed=0, lr=0.1)
    by_object = toys.run(prob, mine, rounds=3, seed=0, lr=0.1)
    np.testing.assert_array_equal(by_name.gap, by_object.gap)
    assert "mine-avg" in toys.algorithms.names()
    pop = toys.run_many([prob, toys.quadratic(3, 2, seed=1)], "mine-avg", rounds=3, seeds=0,
                        lr=0.1)
    np.testing.assert_array_equal(pop[0].gap, by_name.gap)


def test_refusals_name_the_parameter(mine):
    with pytest.raises(DomainError, match="algorithm.name"):
        toys.algorithms.register(dataclasses.replace(mine, name="fedavg"))
    with pytest.raises(DomainError, match="algorithm.name"):
        toys.algorithms.register(dataclasses.replace(mine, description="another object"))
    with pytest.raises(DomainError, match="algorithm.weights"):
        toys.algorithms.register(dataclasses.replace(mine, name="broken", weights=object()))
    with pytest.raises(DomainError, match="algorithm"):
        toys.algorithms.register("fedavg")
    with pytest.raises(UnknownNameError):
        toys.algorithms.unregister("never-filed")
    assert toys.algorithms.register(mine) is mine  # the same object again: nothing changes
