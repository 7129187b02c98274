"""toys.run_many on every built-in algorithm the first population tests do not cover: seed
003's beta (each instance's own graph), FedAU and its baselines (omega per instance),
Power-of-Choice and per-client local work (each instance's own draws from its own seed),
SCAFFOLD, FedNova and the adaptive server steps; and the clipped client updates and the
accuracy switch composed by a user. Each instance equals its own toys.run, bit for bit, on
numpy and on torch CPU, with full and partial participation.

The reference is toys.run itself, one instance at a time (as in test_population.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_population import BATCHED, B, N, R, _problems, _same

import toys
from boundlab.errors import DomainError
from toys.algorithms.clipping import ClippedBeta, ClippedSteps
from toys.algorithms.switch import AccuracySwitch
from toys.algorithms.weights import FedAvgWeights, LossWeighted
from toys.engine.population import run_many

# the hyper-parameters each algorithm needs (random local work where it takes it: the draws
# of every instance come from its own seed)
PIECES = {
    "beta": {"beta": 0.4}, "fedau": {"K": 3}, "fedau-known": {}, "average-all": {},
    "poc": {"k": 2, "candidates": 4},
    "fedavg-hetero": {"min_steps": 1, "straggler_prob": 0.3},
    "scaffold": {"min_steps": 1}, "fednova": {"client_steps": (1, 2, 3, 3, 2),
                                              "straggler_prob": 0.4},
    "fedadagrad": {"server_lr": 0.1}, "fedadam": {"server_lr": 0.1},
    "fedyogi": {"server_lr": 0.1},
}
SEEDS = [3, 0, 7, 1]


def _same_all(pop, probs, algo, seeds, backend="numpy", **kw):
    """Every instance of ``pop`` equals its own toys.run (and omega, where recorded)."""
    for b in range(B):
        ref = toys.run(probs[b], algo, rounds=R, seed=seeds[b], backend=backend, **kw)
        _same(pop[b], ref, record="round")
        assert (pop[b].omega is None) == (ref.omega is None)
        if ref.omega is not None:
            np.testing.assert_array_equal(pop[b].omega, ref.omega, err_msg="omega")


def test_every_algorithm_is_covered():
    assert sorted(set(BATCHED) | set(PIECES)) == toys.algorithms.names()


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("participation", ["full", "uniform:m=2"])
@pytest.mark.parametrize("name", sorted(PIECES))
def test_each_instance_is_its_own_run(name, participation, backend, one_torch_thread):
    if backend == "torch":
        pytest.importorskip("torch")
    probs = _problems(seed0=70)
    kw = {"participation": participation, "lr": 0.05, "local_steps": 3, **PIECES[name]}
    if backend == "torch":
        kw["device"] = "cpu"
    pop = run_many(probs, name, rounds=R, seeds=SEEDS, backend=backend, **kw)
    _same_all(pop, probs, name, SEEDS, backend, **kw)


@pytest.mark.parametrize("name", ["fedau", "scaffold", "fedadam", "poc", "beta"])
def test_per_instance_participation_with_empty_rounds(name):
    """Instances whose rounds have no participant keep their state (FedAU's counters,
    SCAFFOLD's c, the server moments), as their own runs."""
    probs = _problems(seed0=80)
    parts = ["full", "bernoulli:p=0.2", "uniform:m=1", "bernoulli:p=0.5"]
    kw = {"lr": 0.05, "local_steps": 2, **PIECES[name]}
    pop = run_many(probs, name, rounds=R, seeds=SEEDS, participation=parts, **kw)
    for b in range(B):
        ref = toys.run(probs[b], name, rounds=R, seed=SEEDS[b], participation=parts[b], **kw)
        _same(pop[b], ref, record="round")
    assert any((pop[b].participation.sum(axis=1) == 0).any() for b in range(B))


def _composed(client=None, weights=None, name="composed"):
    algo = toys.algorithms.get("beta" if isinstance(client, ClippedBeta) else "fedavg")
    return dataclasses.replace(algo, name=name, client=client or algo.client,
                               weights=weights or algo.weights)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("client, extra", [(ClippedSteps(), {}),
                                           (ClippedBeta(), {"beta": 0.5})])
def test_clipped_client_updates(client, extra, backend, one_torch_thread):
    if backend == "torch":
        pytest.importorskip("torch")
    probs = _problems(seed0=90)
    algo = _composed(client=client, name="clipped")
    kw = {"participation": "uniform:m=3", "lr": 0.05, "local_steps": 3, "clip": 0.5, **extra}
    if backend == "torch":
        kw["device"] = "cpu"
    pop = run_many(probs, algo, rounds=R, seeds=SEEDS, backend=backend, **kw)
    _same_all(pop, probs, algo, SEEDS, backend, **kw)


def test_accuracy_switch_without_its_callback_is_its_first_rule():
    rule = AccuracySwitch((LossWeighted("fedsoftbetter"), FedAvgWeights()), (0.9,))
    algo = _composed(weights=rule, name="switch")
    probs = _problems(seed0=100)
    kw = {"participation": "uniform:m=3", "lr": 0.05, "temperature": 0.5}
    pop = run_many(probs, algo, rounds=R, seeds=SEEDS, **kw)
    _same_all(pop, probs, algo, SEEDS, **kw)
    user = _composed(weights=AccuracySwitch((FedAvgWeights(), _Unbatched()), (0.5,)))
    with pytest.raises(DomainError, match=r"algorithm\.weights.*AccuracySwitch"):
        run_many(probs, user, rounds=1, seeds=0, lr=0.1)


class _Unbatched:
    """A user's weight rule without ``batched`` (uniform weights over the participants)."""

    needs_losses = False

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        from array_api_compat import array_namespace

        xp = array_namespace(p)
        w = xp.where(mask, 1.0, 0.0)
        return w / xp.sum(w), state


def test_beta_graph_of_every_instance_and_explicit_messages():
    """Each instance's own graph (from its own problem); explicit messages: one graph."""
    probs = _problems(seed0=110)
    kw = {"lr": 0.05, "local_steps": 2, "beta": 0.3}
    msg = np.random.default_rng(0).standard_normal((N, 4))
    pop = run_many(probs, "beta", rounds=R, seeds=SEEDS, messages=msg, **kw)
    _same_all(pop, probs, "beta", SEEDS, messages=msg, **kw)
    per = run_many(probs, "beta", rounds=R, seeds=SEEDS, **kw)
    assert not np.array_equal(per[0].alpha[0], per[1].alpha[0])  # two graphs, two weights


def test_random_local_work_draws_from_each_instance_seed():
    probs = [_problems(seed0=120)[0]] * B  # one problem: only the seeds differ
    kw = {"lr": 0.05, "local_steps": 4, "min_steps": 1}
    pop = run_many(probs, "fednova", rounds=R, seeds=[5, 5, 6, 7], **kw)
    np.testing.assert_array_equal(pop[0].final_model, pop[1].final_model)
    assert not np.array_equal(pop[0].final_model, pop[2].final_model)
    _same_all(pop, probs, "fednova", [5, 5, 6, 7], **kw)


# Two settings a piece sees only through run_many: the instances' participation processes
# (Setup.processes: FedAU's known omega = 1/P(participate)) and FedNova's server step with the
# per-instance step sizes of ``vary`` (it normalises by them).
def test_known_omega_with_per_instance_participation():
    probs = _problems(seed0=130)
    parts = ["full", "bernoulli:p=0.3", "uniform:m=2", "bernoulli:p=0.7"]
    pop = run_many(probs, "fedau-known", rounds=R, seeds=SEEDS, participation=parts, lr=0.05)
    for b in range(B):
        ref = toys.run(probs[b], "fedau-known", rounds=R, seed=SEEDS[b],
                       participation=parts[b], lr=0.05)
        _same(pop[b], ref, record="round")
        np.testing.assert_array_equal(pop[b].omega, ref.omega)


def test_fednova_with_per_instance_step_sizes():
    probs = _problems(seed0=140)
    lrs = [0.05, np.linspace(0.1, 0.02, R * 3), 0.02, 0.08]
    kw = {"local_steps": 3, "client_steps": (1, 2, 3, 3, 2), "prox": 0.5}
    pop = run_many(probs, "fednova", rounds=R, seeds=SEEDS, vary={"lr": lrs}, **kw)
    for b in range(B):
        ref = toys.run(probs[b], "fednova", rounds=R, seed=SEEDS[b], lr=lrs[b], **kw)
        _same(pop[b], ref, record="round")
