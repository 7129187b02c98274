"""``boundlab run`` (verify/cli/run_cmd.py) and the engine benchmark's smoke run."""

import numpy as np
import pandas as pd

from verify.cli import main
from verify.cli.run_cmd import parse_lr


def test_run_prints_summary_and_saves(tmp_path, capsys):
    out = tmp_path / "trace.csv"
    rc = main(["run", "fedsoftmax", "--problem", "seed004-toy", "--problem-opt", "n_clients=5",
               "--rounds", "4", "--participation", "anchored:m=1", "lr=0.2", "local_steps=5",
               "inv_temperature=5", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "fedsoftmax on 'seed004-toy': 4 rounds x 5 local steps, N = 5" in text
    assert "avg shadow gap" in text and "participants per round: mean 2" in text
    frame = pd.read_csv(out)
    assert len(frame) == 5 and frame["n_participants"].iloc[0] == 2


def test_run_hyper_forms(capsys):
    assert main(["run", "hybrid", "--problem", "quadratic", "--problem-opt", "n_clients=4",
                 "--rounds", "5", "lr=1/(t+20)", "rules=fedsoftbetter,fedavg,fedmax",
                 "switch_round=2,4", "--record", "step"]) == 0
    assert main(["run", "fedau", "--problem", "quadratic", "--rounds", "3", "lr=0.05",
                 "K=inf", "--participation", "bernoulli:p=0.5"]) == 0
    assert "fedau on 'quadratic'" in capsys.readouterr().out


def test_run_bad_input_exit_2(capsys):
    assert main(["run", "nope", "--problem", "quadratic", "lr=0.1"]) == 2
    assert "valid: anneal" in capsys.readouterr().err
    assert main(["run", "fedavg", "--problem", "quadratic", "tau=3", "lr=0.1"]) == 2
    assert "local_steps" in capsys.readouterr().err
    assert main(["run", "fedavg", "--problem", "quadratic", "lr=-1"]) == 2
    assert main(["run", "fedavg", "--problem", "quadratic", "lr=1/(q+1)"]) == 2
    assert "unknown symbols" in capsys.readouterr().err
    assert main(["run", "fedavg", "--problem", "nope", "lr=0.1"]) == 2


def test_parse_lr_round_and_iteration():
    f = parse_lr("0.1*0.5**r + 0*t", local_steps=3)
    np.testing.assert_allclose(f(np.arange(6)), [0.1] * 3 + [0.05] * 3)
    assert parse_lr("0.25") == 0.25


def test_engine_benchmark_smoke(capsys):
    from benchmarks.engine import main as bench

    assert bench(["--quick", "--backends", "numpy", "--repeat", "1", "--rounds", "1",
                  "--clients", "10"]) == 0
    text = capsys.readouterr().out
    assert "ms/client-update" in text and "x read-once floor" in text and "peak" in text
    assert "participants only" in text and "client optima" in text
