"""The comparison algorithms end to end: ``toys.run(problem, name)`` and ``boundlab run NAME``
for each (tiny size), their registry entries, and CUDA against the CPU (marked ``gpu``)."""

import json

import numpy as np
import pytest

import toys
from toys.algorithms import COMPARISONS
from verify.cli import main

HYPER = {
    "poc": {"k": 2, "candidates": 3},
    "fedavg-hetero": {"client_steps": (1, 2, 3, 2), "straggler_prob": 0.3},
    "scaffold": {"local_steps": 3, "min_steps": 1},
    "fednova": {"local_steps": 3, "min_steps": 1, "straggler_prob": 0.5},
    "fedadagrad": {"server_lr": 0.05},
    "fedadam": {"server_lr": 0.05, "beta1": 0.9, "beta2": 0.99, "eps": 1e-3},
    "fedyogi": {"server_lr": 0.05, "eps": 1e-2},
}


def _words(h):
    return [f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in h.items()]


def test_registry_lists_them():
    assert set(COMPARISONS) <= set(toys.ALGORITHMS)
    assert len(toys.ALGORITHMS) == 25
    assert set(HYPER) == set(COMPARISONS)
    doc = toys.algorithms.__doc__ + toys.algorithms.registry.__doc__
    assert "25 named compositions" in doc and "25 names in all" in doc
    for name in COMPARISONS:
        assert name in toys.algorithms.registry.__doc__


@pytest.mark.parametrize("name", COMPARISONS)
def test_toys_run_end_to_end(name):
    prob = toys.make("quadratic", n_clients=4, dim=3, seed=0)
    tr = toys.run(prob, name, rounds=4, seed=1, lr=0.05, participation="bernoulli:p=0.8",
                  record="step", **HYPER[name])
    assert tr.algorithm == name and tr.diverged_at is None
    assert np.all(np.isfinite(tr.final_model)) and np.isfinite(tr.gap[-1])
    frame = tr.to_frame()
    assert len(frame) == 5


@pytest.mark.parametrize("name", COMPARISONS)
def test_cli_run_accepts_them(name, capsys, tmp_path):
    out = tmp_path / "t.csv"
    rc = main(["run", name, "--problem", "logistic-synthetic", "--problem-opt", "n_clients=4",
               "--rounds", "3", "--participation", "bernoulli:p=0.8", "lr=0.1",
               *_words(HYPER[name]), "--out", str(out), "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["algorithm"] == name
    assert out.exists()


def test_cli_reports_bad_comparison_settings(capsys):
    assert main(["run", "poc", "--problem", "quadratic", "lr=0.1", "k=2"]) == 2
    assert "candidates" in capsys.readouterr().err
    assert main(["run", "fednova", "--problem", "quadratic", "lr=0.1",
                 "--problem-opt", "n_clients=3", "client_steps=1,2"]) == 2
    assert "client_steps" in capsys.readouterr().err


@pytest.mark.gpu
@pytest.mark.parametrize("name", COMPARISONS)
def test_cuda_agrees_with_cpu(name):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available on this machine")
    prob = toys.logistic_synthetic(n_clients=6, dim=4, seed=0)
    kw = dict(rounds=4, seed=2, lr=0.2, participation="bernoulli:p=0.7", backend="torch",
              **HYPER[name] if name != "fedavg-hetero" else
              {"client_steps": (1, 2, 3, 2, 1, 3), "straggler_prob": 0.3})
    cpu = toys.run(prob, name, device="cpu", **kw)
    gpu = toys.run(prob, name, device="cuda", **kw)
    np.testing.assert_array_equal(cpu.participation, gpu.participation)
    np.testing.assert_allclose(gpu.alpha, cpu.alpha, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gpu.final_model, cpu.final_model, rtol=1e-10, atol=1e-12)
