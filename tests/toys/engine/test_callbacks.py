"""Round callbacks: record metrics, stop a run, test accuracy; results unchanged by them."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.engine import TestMetrics


@pytest.fixture(scope="module")
def data_prob():
    return toys.from_dataset("breast_cancer", n_clients=5, seed=0, test_fraction=0.25)


def test_test_metrics_and_rounds_to(data_prob):
    kw = dict(rounds=6, seed=0, lr=0.5, local_steps=2, participation="bernoulli:p=0.8")
    plain = toys.run(data_prob, "fedau", **kw)
    tr = toys.run(data_prob, "fedau", callbacks=[TestMetrics(data_prob)], **kw)
    np.testing.assert_array_equal(plain.final_model, tr.final_model)  # callbacks draw nothing
    np.testing.assert_array_equal(plain.omega, tr.omega)
    acc = tr.metrics["test_accuracy"]
    t = data_prob.test
    expect = np.mean((t["X"] @ tr.final_model > 0) == (t["y"] > 0.5))
    assert acc[-1] == pytest.approx(expect, abs=1e-12)
    # one evaluation gives both (test_metrics): the values of accuracy and pooled_loss
    assert (acc[-1], tr.metrics["test_loss"][-1]) == (
        data_prob.accuracy(tr.final_model, t["X"], t["y"]),
        data_prob.pooled_loss(tr.final_model, t["X"], t["y"]))
    frame = tr.to_frame()
    assert frame["test_accuracy"].iloc[-1] == acc[-1] and np.isnan(frame["test_accuracy"][0])
    r90 = tr.rounds_to(0.9)
    assert r90 is None or (acc[r90 - 1] >= 0.9 and np.all(acc[:r90 - 1] < 0.9))
    with pytest.raises(DomainError, match="metric"):
        plain.rounds_to(0.9)


def test_test_metrics_of_a_model_without_test_metrics(data_prob):
    """A dict test set with a ``model=`` that has only ``accuracy`` and ``pooled_loss``."""

    class Model:
        def accuracy(self, w, X, y, offset=None):
            return 0.25

        def pooled_loss(self, w, X, y, offset=None):
            return float(len(y))

    t = data_prob.test
    tr = toys.run(data_prob, "fedavg", rounds=2, seed=0, lr=0.5,
                  callbacks=[TestMetrics({"X": t["X"], "y": t["y"]}, model=Model())])
    assert tr.metrics["test_accuracy"].tolist() == [0.25, 0.25]
    assert tr.metrics["test_loss"].tolist() == [float(len(t["y"]))] * 2


def test_custom_metric_and_stop():
    prob = toys.quadratic(n_clients=4, dim=2, seed=0)
    seen = []

    def cb(info):
        seen.append(info.round)
        info.record("dist_to_origin", np.linalg.norm(info.model))
        return info.round == 3

    tr = toys.run(prob, "fedavg", rounds=10, seed=0, lr=0.1, callbacks=[cb])
    assert seen == [0, 1, 2, 3] and tr.info["stopped_at"] == 3
    np.testing.assert_allclose(tr.metrics["dist_to_origin"][3], np.linalg.norm(tr.final_model))
    assert np.all(np.isnan(tr.metrics["dist_to_origin"][4:]))
    assert np.isfinite(tr.gap[4]) and np.all(np.isnan(tr.gap[5:]))
    with pytest.raises(DomainError, match="callbacks"):
        toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, callbacks=[42])
    with pytest.raises(DomainError, match="held-out"):
        TestMetrics(prob)


def test_callbacks_see_the_problem():
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    seen = []
    toys.run(prob, "fedavg", rounds=2, seed=0, lr=0.1, callbacks=[lambda info: seen.append(
        info.problem)])
    assert len(seen) == 2 and all(p is prob for p in seen)
