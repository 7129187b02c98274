"""The reproductions run their seed / grid loops on verify.sweep: finished points are kept under
``out/.sweeps`` (an interrupted item resumes point by point), the Dask executor gives the same
numbers, and the FedAU CNN item runs on generated 3-channel images."""

import json

import numpy as np
import pytest

import verify
from verify.reproduce.common import Factory, HeldOut, federate, pool, sweep_dir, sweep_runs
from verify.reproduce.registry import OUTCOMES, Config

TINY = Config(tiny=True, backend="numpy")


def _factory():
    X, y, _ = pool(None, max_samples=300, seed=0)
    return Factory(lambda s: federate(X, y, "iid", 4, s), "iid-4")


def test_sweep_runs_matches_direct_runs():
    import toys

    fac = _factory()
    got = sweep_runs(TINY, fac, "fedavg", grid={"data_seed": [0, 1]}, rounds=3, label="t",
                     lr=0.05, local_steps=2)["test_accuracy"]
    assert got.shape == (2, 1, 3)
    for s in (0, 1):  # same data seed, run seed 0: the same accuracies as a direct run
        prob = fac(s)
        tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.05, local_steps=2, record="none",
                      callbacks=[HeldOut(prob)])
        assert np.array_equal(got[s, 0], tr.metrics["test_accuracy"])


def test_runs_use_one_blas_thread(monkeypatch):
    """run_acc and sweep_runs (local executor) run every toys.run on one BLAS thread (small
    products: a second thread only spins, and stalls on a busy machine); the limit is lifted
    after them."""
    from threadpoolctl import threadpool_info

    import toys
    from verify.reproduce.common import run_acc

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before, seen, real, real_many = blas_threads(), [], toys.run, toys.run_many

    def spy(*args, **kw):
        seen.append(blas_threads())
        return real(*args, **kw)

    def spy_many(*args, **kw):  # sweep_runs' seeds as one population (verify.reproduce.batch)
        seen.append(blas_threads())
        return real_many(*args, **kw)

    monkeypatch.setattr(toys, "run", spy)
    monkeypatch.setattr(toys, "run_many", spy_many)
    fac = _factory()
    sweep_runs(TINY, fac, "fedavg", grid={"data_seed": [0]}, rounds=1, label="t", lr=0.05)
    run_acc(fac(0), "fedavg", rounds=1, seed=0, lr=0.05)
    assert len(seen) == 2 and all(n == [1] * len(before) for n in seen)
    assert blas_threads() == before


def test_points_are_kept_and_reused(tmp_path):
    fac = _factory()
    kw = dict(grid={"data_seed": [0, 1, 2]}, rounds=3, label="keep", lr=0.05)
    with sweep_dir(tmp_path):
        first = sweep_runs(TINY, fac, "fedavg", **kw)["test_accuracy"]
    (d,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    points = sorted(d.glob("point-*"))
    assert len(points) == 3 and (d / "sweep.json").exists()
    points[1].unlink()  # an interrupted sweep: point 1 missing
    stamps = {p.name: p.stat().st_mtime_ns for p in points if p.exists()}
    calls = []
    fac2 = Factory(lambda s: calls.append(s) or fac.build(s), "iid-4")
    with sweep_dir(tmp_path):
        again = sweep_runs(TINY, fac2, "fedavg", **kw)["test_accuracy"]
    assert calls == [1]  # only the missing point ran
    assert {p.name: p.stat().st_mtime_ns for p in points if p.name in stamps} == stamps
    assert np.array_equal(first, again)
    # a different size (another configuration) is another sweep, in its own directory
    with sweep_dir(tmp_path):
        sweep_runs(Config(tiny=True, backend="numpy", seeds=3), fac, "fedavg", **kw)
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2


def test_item_resumes_from_its_sweeps(tmp_path):
    res = verify.reproduce("002:fig1", out=tmp_path, config=TINY)
    sweeps = list((tmp_path / ".sweeps").glob("*/point-*"))
    assert sweeps and res.outcome in OUTCOMES
    stamps = {p: p.stat().st_mtime_ns for p in sweeps}
    again = verify.reproduce("002:fig1", out=tmp_path, config=TINY)  # force: item reruns
    assert {p: p.stat().st_mtime_ns for p in sweeps} == stamps  # from the kept points
    assert again.rows == res.rows
    meta = json.loads((tmp_path / "002-fig1" / "done.json").read_text())
    assert "executor" not in meta["config"]


def test_dask_executor_gives_the_same_numbers(tmp_path):
    pytest.importorskip("distributed")
    local = verify.reproduce("002:fig1", config=TINY)
    dask = verify.reproduce("002:fig1", out=tmp_path, config=Config(
        tiny=True, backend="numpy", executor="dask"))
    assert dask.rows == local.rows
    # finished under dask, skipped when asked again with the local executor
    assert verify.reproduce("002:fig1", out=tmp_path, config=TINY, force=False) is None
    # a factory-built problem with its data-dependent participation (Factory / LastProcess)
    local = verify.reproduce("002:tableD6", config=TINY)
    dask = verify.reproduce("002:tableD6", config=Config(tiny=True, backend="numpy",
                                                         executor="dask"))
    assert dask.rows == local.rows


def test_fedau_cnn_item_on_generated_3_channel_images():
    pytest.importorskip("torch")
    from verify.reproduce.seed002_cnn import images, setting

    X, y, what = images(TINY)
    assert X.shape[1:] == (3, 8, 8) and "generated" in what
    assert not np.allclose(X[:, 0], X[:, 1])  # a real 3-channel input, not a grey copy
    prob, probs = setting(TINY, 0)
    assert prob.arch == "fedau" and prob.channels == 3 and probs.shape == (prob.n_clients,)
    res = verify.reproduce("002:cnn", config=TINY)
    assert res.outcome in OUTCOMES
    assert {r["method"] for r in res.rows} == {"FedAU K=50", "Avg all"}
