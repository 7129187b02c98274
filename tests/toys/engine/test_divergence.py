"""Divergence is recognised past toys.engine.DIVERGENCE, not only at NaN/inf."""

import numpy as np

import toys
from toys.engine import DIVERGENCE
from verify.cli import main


def test_blow_up_is_marked_diverged():
    prob = toys.quadratic(n_clients=4, dim=3, L=10.0, mu=1.0, seed=0)
    tr = toys.run(prob, "fedavg", rounds=60, seed=0, lr=1.0)
    assert tr.diverged_at is not None and tr.diverged_at < 20
    assert np.all(np.isfinite(tr.final_model))
    scale = max(1.0, np.linalg.norm(prob.x0))
    assert np.linalg.norm(tr.final_model) <= DIVERGENCE["norm"] * scale
    assert np.all(np.isnan(tr.gap[tr.diverged_at + 1:]))


def test_converging_run_is_not_marked():
    prob = toys.quadratic(n_clients=4, dim=3, L=10.0, mu=1.0, seed=0)
    tr = toys.run(prob, "fedavg", rounds=60, seed=0, lr=0.05)
    assert tr.diverged_at is None and tr.gap[-1] < tr.gap[0]


def test_cli_run_exits_1_when_diverged(capsys):
    argv = ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "L=10", "--rounds",
            "40"]
    assert main(argv + ["lr=1.0"]) == 1
    assert "DIVERGED" in capsys.readouterr().out
    assert main(argv + ["lr=0.01"]) == 0
