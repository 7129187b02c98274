"""toys.engine.limits (issue 31): memory and time estimated from the sizes, refused before any
allocation with a DomainError naming the parameter, its value and the limit."""

from __future__ import annotations

import sys

import pytest

import toys
from boundlab.errors import DomainError
from toys.engine import limits


def test_available_memory_psutil_and_sysconf(monkeypatch):
    assert limits.available_memory() > 0
    monkeypatch.setitem(sys.modules, "psutil", None)  # import psutil fails: os.sysconf
    assert limits.available_memory() > 0


def test_check_names_the_size_most_responsible(monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 10**6)
    est = lambda s: limits.run_need(record="round", **s)  # noqa: E731
    with pytest.raises(DomainError, match=r"^rounds = 100000 .*fits in memory.*would need"):
        limits.check("toys.run", est, {"rounds": 10**5, "n_clients": 4, "local_steps": 1})
    with pytest.raises(DomainError, match=r"^n_clients = 100000 "):
        limits.check("toys.run", est, {"rounds": 10, "n_clients": 10**5, "local_steps": 1})
    limits.check("toys.run", est, {"rounds": 10, "n_clients": 4, "local_steps": 1})  # fits


def test_time_limit_from_the_environment(monkeypatch):
    est = lambda s: (0.0, s["rounds"] * 1.0)  # noqa: E731 - one second a round
    monkeypatch.setenv("BOUNDLAB_MAX_SECONDS", "100")  # 1.67 minutes
    with pytest.raises(DomainError, match=r"^rounds = 1000 .*at most 1.67 minutes.*at least 16.7 "
                                          r"minutes"):
        limits.check("a run", est, {"rounds": 1000})
    limits.check("a run", est, {"rounds": 50})
    monkeypatch.setenv("BOUNDLAB_MAX_SECONDS", "not a number")
    assert limits.max_seconds() == limits.MAX_SECONDS


def test_run_refuses_before_any_work(monkeypatch):
    prob = toys.quadratic(n_clients=4, dim=2, seed=0)
    monkeypatch.setattr(limits, "available_memory", lambda: 10**6)
    with pytest.raises(DomainError, match=r"^rounds = 100000 .*for which toys.run fits in memory"):
        toys.run(prob, "fedavg", rounds=10**5, seed=0, lr=0.1)
    with pytest.raises(DomainError, match=r"^local_steps = 100000 "):
        toys.run(prob, "fedavg", rounds=10, seed=0, lr=0.1, local_steps=10**5, record="step")
    assert toys.run(prob, "fedavg", rounds=5, seed=0, lr=0.1).rounds == 5


def test_run_time_limit(monkeypatch):
    prob = toys.quadratic(n_clients=4, dim=2, seed=0)
    monkeypatch.setenv("BOUNDLAB_MAX_SECONDS", "1e-3")
    with pytest.raises(DomainError, match=r"takes at most .*BOUNDLAB_MAX_SECONDS"):
        toys.run(prob, "fedavg", rounds=10**4, seed=0, lr=0.1, local_steps=10)


def test_checkpoint_every_needs_checkpoint(tmp_path):
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    with pytest.raises(DomainError, match=r"^checkpoint_every = 1 .*checkpoint="):
        toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.1, checkpoint_every=1)
    tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.1, checkpoint_every=1,
                  checkpoint=tmp_path / "ck.npz")
    assert tr.rounds == 3 and (tmp_path / "ck.npz").exists()


def test_sweep_and_batched_estimates_grow_with_their_sizes():
    base = limits.sweep_need(grid=2, seeds=2, rounds=10, n_clients=3)
    assert limits.sweep_need(grid=20, seeds=2, rounds=10, n_clients=3)[0] > base[0]
    assert limits.sweep_need(grid=2, seeds=2, rounds=10, n_clients=3, record="step",
                             local_steps=50)[0] > base[0]
    one = limits.batched_need(population=8, n_vars=10, n_clients=3, dim=2, rounds=4,
                              local_steps=2)
    big = limits.batched_need(population=8, n_vars=10**9, n_clients=3, dim=2, rounds=4,
                              local_steps=2)
    assert big[0] > 1e10 > one[0] and big[1] > one[1]


@pytest.mark.parametrize("name, options, size", [
    ("quadratic", {"n_clients": 10**9}, "n_clients = 1000000000"),
    ("quadratic", {"dim": 10**5}, "dim = 100000"),
    ("logistic-synthetic", {"n_clients": 10**8}, "n_clients = 100000000"),
])
def test_make_refuses_problems_beyond_the_machine(name, options, size):
    # was: a numpy memory traceback while generating the data (run --problem-opt, sweep grids)
    with pytest.raises(DomainError, match=rf"^{size} .*the problem '{name}' fits in memory"):
        toys.make(name, **options)
    assert toys.make(name, n_clients=3).n_clients == 3
