"""Participation option strings are data: clear errors naming the option and the value."""

import pytest

import toys
from boundlab.errors import BoundlabError, DomainError
from toys import participation


@pytest.mark.parametrize("text, match", [
    ("bernoulli:p=abc", "participation option p = 'abc'"),
    ("bernoulli:p", "name:key=value"),
    ("bernoulli:p=0.2,p=0.3", "given twice"),
    ("bernoulli:p=__import__('os')", "participation option p"),
])
def test_bad_option_strings(text, match):
    with pytest.raises(DomainError, match=match):
        participation.parse(text)


def test_run_refuses_bad_participation_before_work():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    for spec in ("bernoulli:p=abc", "bernoulli:p=2", "nope", "uniform:m=9"):
        with pytest.raises(BoundlabError):
            toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, participation=spec)


def test_impossible_sizes_are_refused_up_front():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    with pytest.raises(DomainError, match="rounds"):
        toys.run(prob, "fedavg", rounds=10**12, seed=0, lr=0.1)
    with pytest.raises(DomainError, match="local_steps"):
        toys.run(prob, "fedavg", rounds=10, seed=0, lr=0.1, local_steps=10**12)
