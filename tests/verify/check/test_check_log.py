"""verify.check_log on damaged and contradicting logs: refused by name, or judged whole."""

import math

import numpy as np
import pytest

import toys
import verify
from boundlab.errors import DomainError
from toys.engine.trace_io import write_log

PRM = dict(D=1.0, eta=0.1, tau=2, T=3, L=1.0, zeta=0.5)
LOG = {"round": [0, 1, 2, 3], "shadow_gap": [0.5, 0.3, 0.2, math.nan]}


def _with(col, i, value, log=LOG):
    out = {k: list(v) for k, v in log.items()}
    out[col][i] = value
    return out


@pytest.mark.parametrize("log, params, words", [
    ({"round": [0, 1, 3], "shadow_gap": [0.5, 0.3, math.nan]}, PRM, ["round", "2 is missing"]),
    (LOG, {**PRM, "T": 7}, ["T = 7", "3, the last round"]),
    (_with("shadow_gap", 3, math.inf), PRM, ["shadow_gap", "inf", "round 3"]),
    ({**LOG, "seed": [math.nan] * 4}, PRM, ["seed", "nan"]),
    (_with("round", 3, 1e300), PRM, ["round", "1e+300"]),
    (_with("round", 3, 2), PRM, ["round 2", "twice"]),
    ({**LOG, "seed": ["a", "a", "a", "a"]}, PRM, ["seed", "'a'"]),
])
def test_the_holes_of_issue_20_are_refused_by_name(log, params, words):
    with pytest.raises(DomainError) as info:
        verify.check_log("drift.plateau_finite", log, params)
    for w in words:
        assert w in str(info.value)


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "flower.csv"
    path.write_text("round,shadow_gap\n0,0.5\n1,abc\n2,0.1\n3,\n")
    with pytest.raises(DomainError, match=r"flower\.csv: column 'shadow_gap' = 'abc'"):
        verify.check_log("drift.plateau_finite", path, PRM)
    path.write_text("round,shadow_gap\n")
    with pytest.raises(DomainError, match=r"flower\.csv.*no rows"):
        verify.check_log("drift.plateau_finite", path, PRM)


def test_t_defaults_to_the_last_round_and_skew_t_counts_local_steps():
    no_t = {k: v for k, v in PRM.items() if k != "T"}
    a = verify.check_log("drift.plateau_finite", LOG, no_t)
    b = verify.check_log("drift.plateau_finite", LOG, PRM)
    assert a["param_T"].iloc[0] == 3 and a["bound_value"].iloc[0] == b["bound_value"].iloc[0]
    skew = {"round": [0, 1, 2], "gap": [1.0, 0.5, 0.25]}
    prm = dict(L=1.0, mu=0.1, E=4, G=1.0, sigma=0.0, Gamma=0.1, rho_bar=1.0, rho_tilde=1.0,
               D0=1.0)
    assert verify.check_log("skew.corollary", skew, {**prm, "T": 8})["param_T"].iloc[0] == 8
    assert verify.check_log("skew.corollary", skew, prm)["param_T"].iloc[0] == 8  # 2 rounds x E
    with pytest.raises(DomainError, match="T = 2 .*rounds x local steps"):
        verify.check_log("skew.corollary", skew, {**prm, "T": 2})


def test_measured_parameters_must_not_contradict_the_log():
    log = {**LOG, "dist2": [4.0, 3.0, 2.0, 1.0]}  # ||x0 - x*|| = 2
    with pytest.raises(DomainError, match=r"D = 1.0 .*>= 2.0.*'dist2'"):
        verify.check_log("drift.plateau_finite", log, PRM)
    assert verify.check_log("drift.plateau_finite", log, {**PRM, "D": 2.0})["measured"].iloc[0] \
        == pytest.approx(1 / 3)
    skew = {"round": [0, 1, 2], "gap": [1.0, 0.5, 0.25], "rho_min": [0.5, 0.4, math.nan]}
    prm = dict(T=4, L=1.0, mu=0.1, E=2, G=1.0, sigma=0.0, Gamma=0.1, rho_tilde=1.0, D0=1.0)
    with pytest.raises(DomainError, match=r"rho_bar = 0.9 .*<= 0.4"):
        verify.check_log("skew.corollary", skew, {**prm, "rho_bar": 0.9})


def test_a_diverged_run_is_judged_diverged_like_check(tmp_path):
    prob = toys.quadratic(n_clients=3, dim=2, L=4.0, mu=1.0, seed=0)
    kw = dict(rounds=12, lr=3.0)
    ref = verify.check("skew.lemma1", prob, "fedavg", seeds=1, **kw)
    path = write_log(toys.run(prob, "fedavg", seed=0, **kw), tmp_path / "div.csv", p=prob.p)
    got = verify.check_log("skew.lemma1", path, ref.attrs["params"])
    assert set(ref["verdict"]) == set(got["verdict"]) == {"diverged"}


def test_two_seeds_agree_with_check(tmp_path):
    toy = toys.make("seed004-toy")
    kw = dict(rounds=5, lr=0.2, local_steps=3)
    ref = verify.check("drift.fedavg_convex", toy, "fedavg", seeds=[0, 1], **kw)
    import pandas as pd

    logs = [toys.engine.trace_io.to_log(toys.run(toy, "fedavg", seed=s, **kw)) for s in (0, 1)]
    path = tmp_path / "two.parquet"
    write_log(pd.concat(logs), path)
    got = verify.check_log("drift.fedavg_convex", path, ref.attrs["params"])
    cols = ["seed", "measured", "verdict"]
    assert got[cols].to_dict("records") == ref[cols].to_dict("records")


def test_size_limit_and_column_mapping_clash(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("round,shadow_gap\n0,0.5\n1,0.3\n2,0.2\n3,\n")
    with pytest.raises(DomainError, match="at most 10 bytes"):
        verify.check_log("drift.plateau_finite", path, PRM, max_bytes=10)
    assert np.isfinite(verify.check_log("drift.plateau_finite", path, PRM,
                                        max_bytes=1000)["measured"]).all()
    clash = {**LOG, "train_gap": [1.0, 1.0, 1.0, math.nan]}
    with pytest.raises(DomainError, match="columns"):
        verify.check_log("drift.plateau_finite", clash, PRM,
                         columns={"shadow_gap": "train_gap"})
