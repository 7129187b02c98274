"""The accuracy-triggered hybrid switch (spec §5.4) as a weight rule plus a callback."""

import dataclasses
import os

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.algorithms.switch import AccuracySwitch, SwitchOnAccuracy
from toys.algorithms.weights import FedAvgWeights, LossWeighted
from toys.engine import TestMetrics


@pytest.fixture(scope="module")
def prob():
    return toys.from_dataset("breast_cancer", n_clients=5, seed=0, test_fraction=0.3,
                             partition="shards")


def _algo(threshold):
    rule = AccuracySwitch((LossWeighted("fedmax"), FedAvgWeights()), (threshold,))
    return dataclasses.replace(toys.algorithms.get("fedavg"), name="switch", weights=rule), rule


def test_switches_the_round_after_the_threshold(prob):
    def progress(info):  # a metric we control: the number of finished rounds
        info.record("progress", info.round + 1)

    j = 3
    rule = AccuracySwitch((LossWeighted("fedmax"), FedAvgWeights()), (j,), metric="progress")
    algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="switch", weights=rule)
    kw = dict(rounds=8, seed=0, lr=0.02, loss_offset="zero")
    tr = toys.run(prob, algo, callbacks=[progress, SwitchOnAccuracy(rule)], **kw)
    ref = toys.run(prob, "fedmax", **kw)
    # the metric reaches 3 after round index 2: stage 1 from there, FedAvg from round 3 on
    assert tr.metrics["switch_stage"].tolist() == [0.0] * (j - 1) + [1.0] * (8 - j + 1)
    assert np.array_equal(tr.alpha[:j], ref.alpha[:j])  # FedMax's coefficients, same path
    p = np.asarray(prob.p)
    assert np.allclose(tr.alpha[j:], p / p.sum(), rtol=1e-12)
    assert not np.allclose(ref.alpha[j:], p / p.sum())  # FedMax would have differed


def test_never_switches_below_threshold(prob):
    algo, rule = _algo(1.01)
    tr = toys.run(prob, algo, rounds=3, seed=0, lr=0.05, loss_offset="zero",
                  callbacks=[TestMetrics(prob), SwitchOnAccuracy(rule)])
    ref = toys.run(prob, "fedmax", rounds=3, seed=0, lr=0.05, loss_offset="zero")
    assert np.array_equal(tr.final_model, ref.final_model)


def test_checkpoint_resume_keeps_the_stage(prob, tmp_path):
    algo, rule = _algo(0.9)
    cbs = [TestMetrics(prob), SwitchOnAccuracy(rule)]
    kw = dict(rounds=8, seed=0, lr=0.05, loss_offset="zero")
    path = os.path.join(tmp_path, "ck.npz")
    toys.run(prob, algo, callbacks=cbs, checkpoint=path, checkpoint_every=4, **kw)
    full = toys.run(prob, algo, callbacks=cbs, **kw)
    # resume from the round-8 file is trivial; write a mid-run one and resume from it
    mid = os.path.join(tmp_path, "mid.npz")

    def stop_at_5(info):
        if info.round == 4:
            info.checkpoint(mid)

    toys.run(prob, algo, callbacks=[*cbs, stop_at_5], **kw)
    res = toys.run(prob, algo, callbacks=cbs, resume=mid, **kw)
    assert np.array_equal(res.final_model, full.final_model)
    assert np.array_equal(res.metrics["switch_stage"][5:], full.metrics["switch_stage"][5:])


def test_bad_construction():
    with pytest.raises(DomainError, match="thresholds"):
        AccuracySwitch((FedAvgWeights(),), ())
    with pytest.raises(DomainError, match="rules"):
        AccuracySwitch((FedAvgWeights(), "fedavg"), (0.5,))
    with pytest.raises(DomainError, match="rule"):
        SwitchOnAccuracy(FedAvgWeights())


def test_needs_the_metric(prob):
    algo, rule = _algo(0.9)
    with pytest.raises(DomainError, match="test_accuracy"):
        toys.run(prob, algo, rounds=2, seed=0, lr=0.05, loss_offset="zero",
                 callbacks=[SwitchOnAccuracy(rule)])
