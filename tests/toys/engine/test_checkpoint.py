"""Checkpoint and resume: every built-in algorithm resumed mid-run is bit-identical."""

import numpy as np
import pytest

import toys
from boundlab.errors import IntegrityError

EXTRA = {"fedprox": {"prox": 0.2}, "fedprox-bc": {"prox": 0.1}, "fedmax-k": {"k": 2},
         "fedbetter-k": {"k": 2}, "beta": {"beta": 0.5}, "fedau": {"K": 3},
         "hybrid": {"rules": ("fedsoftbetter", "fedavg"), "switch_round": 4},
         "fedsoftmax": {"loss_offset": "running_min", "score_point": "local_end"},
         "poc": {"k": 2, "candidates": 3}, "fednova": {"min_steps": 1, "straggler_prob": 0.5},
         "scaffold": {"straggler_prob": 0.5}, "fedavg-hetero": {"min_steps": 1}}


def _same(a, b):
    np.testing.assert_array_equal(a.final_model, b.final_model)
    np.testing.assert_array_equal(a.participation, b.participation)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    for k in a.state:
        np.testing.assert_array_equal(a.state[k], b.state[k])
    for k in a.per_round:
        np.testing.assert_array_equal(a.per_round[k], b.per_round[k])
    for k in a.steps or {}:
        np.testing.assert_array_equal(a.steps[k], b.steps[k])
    if a.omega is not None:
        np.testing.assert_array_equal(a.omega, b.omega)


@pytest.mark.parametrize("name", sorted(toys.ALGORITHMS))
def test_resume_is_bit_identical(tmp_path, name):
    prob = toys.logistic_synthetic(n_clients=5, dim=3, seed=1)
    kw = dict(rounds=8, seed=3, participation="markov:p=0.5", record="step", lr=0.3,
              local_steps=2, batch_size=4, **EXTRA.get(name, {}))
    full = toys.run(prob, name, **kw)
    path = tmp_path / "ck.npz"
    # an interrupted run: checkpoints every 3 rounds, killed (stopped) after round 4
    toys.run(prob, name, checkpoint=path, checkpoint_every=3,
             callbacks=[lambda info: info.round == 4], **kw)
    resumed = toys.run(prob, name, resume=path, **kw)
    _same(full, resumed)


def test_on_demand_checkpoint_and_torch_resume(tmp_path):
    pytest.importorskip("torch")
    prob = toys.quadratic(n_clients=4, dim=3, seed=0, noise_std=0.1)
    kw = dict(rounds=6, seed=2, backend="torch", device="cpu", lr=0.1, local_steps=2,
              batch_size=1, participation="bernoulli:p=0.5")
    full = toys.run(prob, "fedau", **kw)
    path = tmp_path / "t.npz"

    def save_at_2(info):
        if info.round == 2:
            info.checkpoint(path)
            return True

    toys.run(prob, "fedau", callbacks=[save_at_2], **kw)
    _same(full, toys.run(prob, "fedau", resume=path, **kw))


def test_resume_refuses_another_run_and_bad_files(tmp_path):
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    path = tmp_path / "ck.npz"
    toys.run(prob, "fedavg", rounds=4, seed=0, lr=0.1, checkpoint=path, checkpoint_every=2)
    # IntegrityError (issue 20): the file and the first field that differs are named
    with pytest.raises(IntegrityError, match="ck.npz: does not belong here: seed is 0 in the "
                                             "file, 1 expected"):
        toys.run(prob, "fedavg", rounds=4, seed=1, lr=0.1, resume=path)
    with pytest.raises(IntegrityError, match="does not belong here: hyper.lr"):
        toys.run(prob, "fedavg", rounds=4, seed=0, lr=0.2, resume=path)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(IntegrityError, match="bad.npz: checkpoint is not valid"):
        toys.run(prob, "fedavg", rounds=4, seed=0, lr=0.1, resume=bad)
    from boundlab.io import record_path

    hidden = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert hidden == [record_path(path)]  # no temp files; the record of what boundlab wrote
