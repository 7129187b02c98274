"""The seeds of an arm as one population (verify.reproduce.batch): every instance's held-out
metrics, alphas and replayed callbacks equal those of its own ``toys.run`` (bit for bit, numpy),
on the reproductions' own problems (softmax regression on digits, unequal client sizes per
seed, minibatch local steps, Bernoulli participation with rounds without participants)."""

import numpy as np
import pytest

import toys
from toys.engine import TestMetrics
from verify.reproduce.batch import batched_metrics, batched_sweep, stackable
from verify.reproduce.common import (
    Alphas,
    Factory,
    HeldOut,
    LastProcess,
    federate,
    pool,
    sweep_runs,
)
from verify.reproduce.registry import Config
from verify.sweep import sweep

KW = dict(rounds=6, lr=0.1, local_steps=3, batch_size=8)


@pytest.fixture(scope="module")
def probs():
    X, y, _ = pool("digits", max_samples=500, seed=0)
    out = [federate(X, y, "dirichlet", 5, s, alpha=0.5) for s in range(4)]
    assert len({q.X.shape[1] for q in out}) > 1  # the seeds' row lengths differ: padded
    return out


def _own(q, seed, part, cbs=()):
    return toys.run(q, "fedavg", seed=seed, participation=part, record="none",
                    callbacks=[TestMetrics(q), *cbs], **KW)


@pytest.mark.parametrize("part", ["full", "bernoulli:p=0.3"])
def test_each_instance_is_its_own_run_bit_for_bit(probs, part):
    seeds = [3, 0, 7, 1]
    got = batched_metrics(probs, "fedavg", seeds=seeds, participation=part,
                          callbacks=lambda b: [Alphas()], **KW)
    for b, q in enumerate(probs):
        tr = _own(q, seeds[b], part, [Alphas()])
        for k in ("test_accuracy", "test_loss", "alpha_0", "alpha_4"):
            assert np.array_equal(tr.metrics[k], got[k][b]), (part, b, k)


def test_the_same_seeds_give_the_same_bits_and_other_seeds_differ(probs):
    a = batched_metrics(probs, "fedavg", seeds=[0, 1, 2, 3], **KW)["test_loss"]
    b = batched_metrics(probs, "fedavg", seeds=[0, 1, 2, 3], **KW)["test_loss"]
    c = batched_metrics(probs, "fedavg", seeds=[5, 1, 2, 3], **KW)["test_loss"]
    assert np.array_equal(a, b) and not np.array_equal(a[0], c[0])
    assert np.array_equal(a[1:], c[1:])  # an instance does not see the others' seeds


def test_mlp_seeds_batch_on_torch_each_its_own_run():
    pytest.importorskip("torch")
    X, y, _ = pool("digits", max_samples=400, seed=0)
    mlp = [federate(X, y, "dirichlet", 5, s, model="mlp", hidden=4, alpha=0.5)
           for s in range(3)]
    assert len({q.X.shape[1] for q in mlp}) > 1 and stackable(mlp, backend="torch")
    seeds, part = [2, 0, 5], "bernoulli:p=0.5"
    dev = dict(backend="torch", device="cpu")
    got = batched_metrics(mlp, "fedavg", seeds=seeds, participation=part, **dev, **KW)
    for b, q in enumerate(mlp):  # its own torch run's draws and steps, to round-off
        tr = toys.run(q, "fedavg", seed=seeds[b], participation=part, record="none",
                      callbacks=[TestMetrics(q)], **dev, **KW)
        assert np.allclose(tr.metrics["test_loss"], got["test_loss"][b], rtol=1e-12, atol=0)
        assert np.array_equal(tr.metrics["test_accuracy"], got["test_accuracy"][b])
    # on numpy the MLP's seeds loop: a population of it is slower there (measured)
    assert not stackable(mlp) and batched_metrics(mlp, "fedavg", seeds=seeds, **KW) is None


def test_models_that_do_not_stack_are_left_to_the_loop(probs):
    X, y, _ = pool("digits", max_samples=300, seed=0)
    mlp = [federate(X, y, "iid", 5, s, model="mlp", hidden=4) for s in range(2)]
    assert not stackable([probs[0], mlp[0]])  # two families
    assert batched_metrics([probs[0], mlp[0]], "fedavg", seeds=[0, 1], **KW) is None
    wide = federate(X, y, "iid", 5, 0, model="mlp", hidden=5)
    assert not stackable([mlp[0], wide], backend="torch")  # another hidden width


def test_on_torch_the_seeds_batch_too(probs):
    pytest.importorskip("torch")
    got = batched_metrics(probs[:2], "fedavg", seeds=[0, 1], backend="torch", device="cpu",
                          participation="bernoulli:p=0.5", **KW)
    for b, q in enumerate(probs[:2]):  # its own torch run's draws and steps
        tr = toys.run(q, "fedavg", seed=b, participation="bernoulli:p=0.5", record="none",
                      backend="torch", device="cpu", callbacks=[TestMetrics(q)], **KW)
        assert np.allclose(tr.metrics["test_loss"], got["test_loss"][b], rtol=1e-12, atol=0)


def test_a_sweep_of_a_factory_with_its_processes_equals_the_sweep(probs):
    X, y, _ = pool("digits", max_samples=400, seed=1)

    def build(data_seed):
        q = federate(X, y, "dirichlet", 5, data_seed, alpha=0.5)
        q.process = toys.participation.resolve(f"bernoulli:p={0.3 + 0.1 * data_seed}", 5, 6)
        return q

    fac = Factory(build, "t")
    got = batched_sweep(fac, "fedavg", grid={"data_seed": [0, 1, 2]}, rounds=6, seeds=[0, 1],
                        callbacks=[Alphas()], metrics=("test_accuracy", "alpha_2"),
                        participation=LastProcess(fac), lr=0.1, local_steps=2, batch_size=8)
    fac3 = Factory(build, "t")
    df = sweep(fac3, "fedavg", grid={"data_seed": [0, 1, 2]}, seeds=[0, 1], rounds=6,
               record="none", callbacks=[HeldOut(fac3), Alphas()],
               participation=LastProcess(fac3), lr=0.1, local_steps=2, batch_size=8)
    for m in ("test_accuracy", "alpha_2"):
        want = df[m].to_numpy(dtype=float).reshape(3, 2, 7)[..., 1:]
        assert np.array_equal(got[m], want), m
    assert fac.last is not None  # the factory's last problem, as after the sweep


def test_sweep_runs_takes_the_batched_path_on_the_local_executor(probs, monkeypatch):
    import importlib

    def refuse(*a, **k):
        raise AssertionError("the seeds should have run as one population")

    monkeypatch.setattr(importlib.import_module("verify.sweep"), "sweep", refuse)
    X, y, _ = pool("digits", max_samples=300, seed=2)
    fac = Factory(lambda data_seed: federate(X, y, "iid", 4, data_seed), "iid")
    res = sweep_runs(Config(), fac, "fedavg", grid={"data_seed": [0, 1, 2]}, rounds=3,
                     label="t", lr=0.1, local_steps=2, batch_size=8)
    assert res["test_accuracy"].shape == (3, 1, 3)
    assert np.isfinite(res["test_accuracy"]).all()


def test_an_instance_that_diverges_ends_as_its_own_run(probs):
    kw = dict(rounds=20, lr=3000.0, local_steps=1, batch_size=8)  # lr * l2 = 3: diverges
    got = batched_metrics(probs[:2], "fedavg", seeds=[0, 1], callbacks=lambda b: [Alphas()],
                          **kw)
    for b, q in enumerate(probs[:2]):
        tr = toys.run(q, "fedavg", seed=b, record="none",
                      callbacks=[TestMetrics(q), Alphas()], **kw)
        assert tr.diverged_at is not None  # the case under test
        for k in ("test_accuracy", "test_loss", "alpha_0"):
            assert np.array_equal(tr.metrics[k], got[k][b], equal_nan=True), (b, k)


@pytest.mark.parametrize("slack", [0.0, 1e9])
def test_grouping_by_row_length_keeps_every_instance_its_own_run(probs, slack, monkeypatch):
    import importlib

    batch = importlib.import_module("verify.reproduce.batch")

    lengths = [q.X.shape[1] for q in probs]
    want_groups = 1 if slack else len(set(lengths))  # no slack: one population per length
    calls = []
    real = toys.run_many

    def counting(pop, *a, **k):
        calls.append(pop.n_instances)
        return real(pop, *a, **k)

    monkeypatch.setattr(batch, "PAD_SLACK", slack)
    monkeypatch.setattr(toys, "run_many", counting)
    seeds = [2, 0, 5, 1]
    got = batched_metrics(probs, "fedavg", seeds=seeds, participation="bernoulli:p=0.4",
                          callbacks=lambda b: [Alphas()], **KW)
    assert len(calls) == want_groups and sum(calls) == len(probs)
    for b, q in enumerate(probs):
        tr = _own(q, seeds[b], "bernoulli:p=0.4", [Alphas()])
        for k in ("test_accuracy", "test_loss", "alpha_1"):
            assert np.array_equal(tr.metrics[k], got[k][b]), (slack, b, k)


def test_row_groups_bound_the_padding():
    from verify.reproduce.batch import row_groups

    lengths = [57, 300, 61, 140, 59, 150, 310]
    groups = row_groups(lengths, slack=0.25)
    assert sorted(b for g in groups for b in g) == list(range(7))
    assert groups == [[0, 4, 2], [3, 5], [1, 6]]  # by hand: 57/59/61, 140/150, 300/310
    for g in groups:  # padded rows within 25 % of the group's own
        assert len(g) * max(lengths[b] for b in g) <= 1.25 * sum(lengths[b] for b in g)
    assert row_groups(lengths, slack=0.0) == [[b] for b in (0, 4, 2, 3, 5, 1, 6)]
    assert row_groups([5, 5, 5], slack=0.0) == [[0, 1, 2]]


def test_full_batch_steps_group_only_about_equal_row_lengths(probs, monkeypatch):
    import importlib

    batch = importlib.import_module("verify.reproduce.batch")
    lengths = [q.X.shape[1] for q in probs]
    full = batch.row_groups(lengths, batch.FULL_BATCH_SLACK)
    assert len(full) > len(batch.row_groups(lengths, batch.PAD_SLACK))  # the case under test
    calls, real = [], toys.run_many
    monkeypatch.setattr(toys, "run_many",
                        lambda pop, *a, **k: calls.append(pop.n_instances) or real(pop, *a, **k))
    kw = dict(rounds=4, lr=0.1, local_steps=2)  # no batch_size: full-batch local steps
    got = batched_metrics(probs, "fedavg", seeds=[0, 1, 2, 3], **kw)
    assert calls == [len(g) for g in full]
    for b, q in enumerate(probs):
        tr = toys.run(q, "fedavg", seed=b, record="none", callbacks=[TestMetrics(q)], **kw)
        assert np.array_equal(tr.metrics["test_loss"], got["test_loss"][b]), b
