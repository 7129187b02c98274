"""`boundlab verify --executor dask`: the checks' seeds run on a Dask cluster with the same
results as the local executor."""

import json

import pytest

from verify.cli import main

pytest.importorskip("distributed", reason="the [dask] extra is not installed")


def _results(capsys, tmp_path, *extra):
    argv = ["verify", "--only", "drift_theorem_minibatch", "--quick", "--json",
            "--no-tightness", "--out", str(tmp_path / "out"), *extra]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    for r in out:
        r.pop("seconds", None)
    return out


def test_dask_executor_gives_the_local_results(capsys, tmp_path, monkeypatch):
    import importlib

    sweep_mod = importlib.import_module("verify.sweep")
    seen = []
    real = sweep_mod.sweep

    def spy(*a, **kw):
        seen.append((kw.get("executor"), kw.get("scheduler")))
        return real(*a, **kw)

    monkeypatch.setattr(sweep_mod, "sweep", spy)
    local = _results(capsys, tmp_path)
    assert seen and all(e == "local" for e, _ in seen)
    seen.clear()
    dask = _results(capsys, tmp_path, "--executor", "dask")
    assert seen and all(e == "dask" and str(s).startswith("tcp://") for e, s in seen)
    assert local and dask == local


def test_scheduler_without_dask_executor_is_refused(capsys, tmp_path):
    code = main(["verify", "--only", "drift_plateau", "--scheduler", "tcp://127.0.0.1:1",
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--scheduler" in err
