"""Seed 003's arms run on verify.sweep (one point per data seed): an item keeps its points under
``out/.sweeps``, a rerun reads them back without running anything, an interrupted one runs only
the missing points, and run seed 0 gives the bits of the former run seed = data seed."""

import math

import numpy as np
import pytest

import verify
from verify.reproduce import seed003, seed003_sweeps
from verify.reproduce.data import NotedCache
from verify.reproduce.registry import Config

TINY = Config(tiny=True, backend="numpy")


@pytest.fixture
def fresh(monkeypatch):
    """An empty in-memory cache of problems and runs (as in a new process)."""
    def clear():
        monkeypatch.setattr(seed003, "_CACHE", NotedCache())
    clear()
    return clear


def _spy(monkeypatch):
    """The run seeds of every toys.run and of every instance of a toys.run_many (the seeds of
    an arm as one population, verify.reproduce.batch); ``calls.fail = True``: any run is an
    error."""
    import toys

    class Calls(list):
        fail = False

    calls, real, real_many = Calls(), toys.run, toys.run_many

    def run(*args, **kw):
        if calls.fail:
            raise AssertionError("toys.run called: a kept point was recomputed")
        calls.append(kw["seed"])
        return real(*args, **kw)

    def run_many(*args, **kw):
        if calls.fail:
            raise AssertionError("toys.run_many called: a kept point was recomputed")
        calls.extend(kw["seeds"])
        return real_many(*args, **kw)

    monkeypatch.setattr(toys, "run", run)
    monkeypatch.setattr(toys, "run_many", run_many)
    return calls


def test_003_item_keeps_its_points_and_resumes(tmp_path, monkeypatch, fresh):
    calls = _spy(monkeypatch)
    first = verify.reproduce("003:fig8", out=tmp_path, config=TINY)
    csv = (tmp_path / "003-fig8" / "results.csv").read_bytes()
    points = sorted((tmp_path / ".sweeps").glob("003-imbalanced-logistic-*/point-*"))
    # E in (1, 5) x (FedAvg, β .7, β .5): 6 sweeps of one point per data seed (2), run seed 0
    assert len(points) == 12 == len(calls) and set(calls) == {0}
    assert len({p.parent for p in points}) == 6
    stamps = {p: p.stat().st_mtime_ns for p in points}

    fresh()  # nothing in memory (a new process): every number from the kept points
    calls.fail = True
    again = verify.reproduce("003:fig8", out=tmp_path, config=TINY)
    assert (tmp_path / "003-fig8" / "results.csv").read_bytes() == csv
    assert again.rows == first.rows and {p: p.stat().st_mtime_ns for p in points} == stamps

    fresh()
    points[3].unlink()  # an interrupted item: one point missing
    calls.fail = False
    verify.reproduce("003:fig8", out=tmp_path, config=TINY)
    assert calls == [0] * 13 and points[3].exists()  # only the missing point ran
    assert (tmp_path / "003-fig8" / "results.csv").read_bytes() == csv


@pytest.mark.parametrize("model, data, beta, clip", [("logistic", "imbalanced", 1.0, 1.0),
                                                     ("mlp", "balanced", 0.5, math.inf)])
def test_run_seed_0_gives_the_bits_of_run_seed_equal_data_seed(fresh, model, data, beta, clip):
    """The former runs used run seed = data seed; the runs draw nothing (full participation,
    full-batch steps; the MLP's initial point is the data seed's), so run seed 0 is the same."""
    from verify.reproduce.common import run_acc

    got = seed003.acc(TINY, data, model, beta, local_steps=2, clip=clip, rounds=3, seed=1)
    algo, hyper = seed003.algorithm(beta, clip)
    ref = run_acc(seed003.problem(TINY, data, model, 1), algo, rounds=3, seed=1,
                  lr=seed003.GAMMA, local_steps=2, clip=clip, **hyper)
    assert np.array_equal(got, ref.metrics["test_accuracy"])


def test_acc_refuses_a_seed_outside_the_items_seeds(fresh):
    from boundlab.errors import DomainError

    with pytest.raises(DomainError, match="seed"):
        seed003.acc(TINY, "balanced", "logistic", 1.0, seed=seed003.n_seeds(TINY))


def test_sgd_arms_run_minibatch_epochs(fresh):
    """003's '-sgd' items: E epochs of minibatches of SGD_BATCH on a client of the mean size
    (ceil by hand), run by toys.run with that batch_size and run seed 0 (a draw: the curve
    differs from the full-batch one; the same call twice gives the same bits)."""
    from verify.reproduce.common import run_acc

    counts = np.asarray(seed003.problem(TINY, "imbalanced", "logistic", 0).counts, dtype=float)
    steps = 2 * int(np.ceil(counts.mean() / seed003.SGD_BATCH))
    assert seed003.sgd_steps(TINY, "imbalanced", "logistic", 2) == steps
    got = seed003.acc(TINY, "imbalanced", "logistic", 0.5, local_steps=2, rounds=3, seed=1,
                      batch=seed003.SGD_BATCH)
    algo, hyper = seed003.algorithm(0.5)
    ref = run_acc(seed003.problem(TINY, "imbalanced", "logistic", 1), algo, rounds=3, seed=0,
                  lr=seed003.GAMMA, local_steps=steps, batch_size=seed003.SGD_BATCH, **hyper)
    assert np.array_equal(got, ref.metrics["test_accuracy"])
    full = seed003.acc(TINY, "imbalanced", "logistic", 0.5, local_steps=steps, rounds=3, seed=1)
    assert not np.array_equal(got, full)


def test_sgd_items_say_their_local_steps():
    from verify.reproduce import seed003_sgd

    r = seed003_sgd.fig12_sgd(TINY)
    text = " ".join(r.notes)
    assert f"minibatch SGD with batch {seed003.SGD_BATCH}" in text
    assert "full-batch" not in " ".join(c.how for c in r.claims)


def test_sgd_sections_say_the_runs_draw_their_minibatches():
    from verify.reproduce import seed003_sgd

    setup = seed003_sgd.fig3_sgd(TINY).setup
    assert "draws the minibatches of 32" in setup and "draw nothing" not in setup
    assert "the runs draw nothing" in seed003_sweeps.fig3(TINY).setup
