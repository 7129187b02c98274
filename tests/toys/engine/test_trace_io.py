"""toys.engine.trace_io: a Trace's per-round log on disk, and logs of other simulators."""

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.engine.trace_io import read_log, to_log, write_log


@pytest.fixture(scope="module")
def run():
    prob = toys.quadratic(n_clients=4, dim=3, seed=1)
    tr = toys.run(prob, "fedsoftmax", rounds=5, seed=2, lr=0.05, local_steps=2,
                  participation="uniform:m=2")
    return prob, tr


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_round_trip_is_exact(run, tmp_path, suffix):
    prob, tr = run
    path = write_log(tr, tmp_path / f"log{suffix}", p=prob.p)
    back = read_log(path)
    ref = to_log(tr, p=prob.p)
    assert list(back.columns) == list(ref.columns)
    for c in ref.columns:
        np.testing.assert_array_equal(back[c].to_numpy(dtype=float),
                                      ref[c].to_numpy(dtype=float), err_msg=c)
    assert not list(tmp_path.glob(".tmp-*"))  # written through a temp file


def test_kappa_columns_are_alpha_over_p_of_the_participants(run):
    prob, tr = run
    log = to_log(tr, p=prob.p)
    ratio = np.where(tr.participation, tr.alpha / prob.p, np.nan)
    np.testing.assert_array_equal(log["kappa_max"].to_numpy()[:-1], np.nanmax(ratio, axis=1))
    np.testing.assert_array_equal(log["kappa_min"].to_numpy()[:-1], np.nanmin(ratio, axis=1))
    assert np.isnan(log["kappa_max"].iloc[-1]) and (log["seed"] == 2).all()


def test_bad_paths_and_tables(run, tmp_path):
    prob, tr = run
    with pytest.raises(DomainError, match="ending in one of"):
        write_log(tr, tmp_path / "log.txt")
    with pytest.raises(DomainError, match="existing directory"):
        write_log(tr, tmp_path / "missing" / "log.csv")
    with pytest.raises(DomainError, match="existing CSV"):
        read_log(tmp_path / "nope.csv")
    with pytest.raises(DomainError, match="positive client weights"):
        to_log(tr, p=[1.0])
    (tmp_path / "bad.json").write_text("{\"round\": 1}")
    with pytest.raises(DomainError, match="readable json"):
        read_log(tmp_path / "bad.json")
    with pytest.raises(DomainError, match="integers >= 0"):
        read_log({"round": [-1, 0]})
