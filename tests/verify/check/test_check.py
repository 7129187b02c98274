"""verify.check and verify.check_log: any bound whose left side is a run quantity."""

import dataclasses
import importlib
import re

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, Precondition, make_params, sym
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError
from toys.engine.trace_io import write_log
from verify.check import LHS, NOT_MEASURABLE, rhs_params


@pytest.fixture(scope="module")
def toy():
    return toys.make("seed004-toy")


@pytest.fixture
def registered():
    ids = []

    def add(bound, **kw):
        boundlab.register(bound, **kw)
        ids.append(bound.id)
        return bound

    yield add
    for bid in ids:
        boundlab.unregister(bid)


def _avg_gap_bound(bid, factor):
    """factor * (DKR Theorem 2.1 at sigma = 0) as a user bound."""
    D, eta, tau, T, L, zeta = (sym(n) for n in "D eta tau T L zeta".split())
    return Bound(id=bid, source="test", kind="upper", lhs="avg_shadow_gap",
                 expr=factor * (D**2 / (2 * eta * tau * T) + 18 * tau**2 * eta**2 * L * zeta**2),
                 params=make_params("D", "eta", "tau", "T", "L", "zeta"),
                 preconditions=(Precondition(eta, "<=", 1 / (4 * L), "eta <= 1/(4*L)"),))


def test_registered_true_bound_holds_and_false_bound_is_violated(toy, registered):
    true = registered(_avg_gap_bound("mine.dkr_true", 1))
    false = registered(_avg_gap_bound("mine.dkr_false", sym("L") * 0 + 1e-3))
    kw = dict(rounds=20, seeds=2, lr=0.2, local_steps=10)
    ok = verify.check(true, toy, "fedavg", **kw)
    bad = verify.check("mine.dkr_false", toy, "fedavg", **kw)
    assert ok["verdict"].tolist() == ["holds", "holds"]
    assert bad["verdict"].tolist() == ["VIOLATED", "VIOLATED"]
    # same runs, so the same measurement; the false bound is the true one / 1000
    assert np.array_equal(ok["measured"], bad["measured"])
    np.testing.assert_allclose(bad["bound_value"] * 1e3, ok["bound_value"], rtol=1e-12)
    assert set(ok.columns) >= {"seed", "measured", "bound_value", "ratio", "verdict", "reason",
                               "param_eta", "param_tau", "param_T", "param_L", "param_zeta",
                               "param_D"}
    assert false.lhs == "avg_shadow_gap"


def test_measured_side_is_the_trace_quantity(toy):
    df = verify.check("drift.fedavg_convex", toy, "fedavg", rounds=12, seeds=[3], lr=0.2,
                      local_steps=5)
    tr = toys.run(toy, "fedavg", rounds=12, seed=3, lr=0.2, local_steps=5)
    consts = toys.constants(toy).as_params()
    assert df["measured"].iloc[0] == tr.avg_shadow_gap
    expect = boundlab.get("drift.fedavg_convex").evaluate(
        D=consts["D"], eta=0.2, tau=5, T=12, sigma=consts["sigma"], M=toy.n_clients,
        L=consts["L"], zeta=consts["zeta"])
    assert df["bound_value"].iloc[0] == expect and df["seed"].iloc[0] == 3


def test_precondition_always_checked_and_named(toy):
    df = verify.check("drift.fedavg_convex", toy, "fedavg", rounds=5, seeds=1, lr=2.0,
                      local_steps=2)
    assert df["verdict"].iloc[0] == "not-applicable"
    assert "eta <= 1/(4*L)" in df["reason"].iloc[0]


def test_per_round_bound_gives_a_row_per_seed_and_round():
    prob = toys.quadratic(n_clients=4, dim=3, L=4.0, mu=1.0, heterogeneity=1.0, seed=0)
    E, prox = 2, 0.1
    df = verify.check("contraction.fedprox_sc", prob, "fedprox", rounds=6, seeds=2,
                      lr=1 / (2 * E * (4.0 + prox)), prox=prox, local_steps=E)
    assert len(df) == 2 * 7 and sorted(set(df["round"])) == list(range(7))
    assert (df["param_t"] == df["round"]).all() and set(df["verdict"]) == {"holds"}
    tr = toys.run(prob, "fedprox", rounds=6, seed=1, lr=1 / (2 * E * (4.0 + prox)), prox=prox,
                  local_steps=E)
    np.testing.assert_array_equal(df[df["seed"] == 1]["measured"], tr.gap)


def test_unknown_lhs_lists_the_measurable_ones(toy):
    with pytest.raises(UnknownNameError) as info:
        verify.check("drift.plateau", toy, "fedavg", rounds=2, lr=0.2)
    msg = str(info.value)
    assert "'plateau_gap'" in msg and "a limit T -> inf" in msg
    assert "avg_shadow_gap" in msg and "gap_t" in msg


def test_every_catalogue_lhs_is_documented():
    doc = importlib.import_module("verify.check.api").__doc__  # verify.check is the function
    for b in boundlab.catalogue():
        assert b.lhs in LHS or b.lhs in NOT_MEASURABLE, b.lhs
        assert re.search(rf"``{re.escape(b.lhs)}``", doc), b.lhs
    assert not set(LHS) & set(NOT_MEASURABLE)


def test_hyper_parameter_mapping_per_family():
    setting = {"lr": 0.1, "local_steps": 3, "rounds": 7, "n_clients": 5, "server_lr": 2.0,
               "prox": 0.5}
    drift = rhs_params("drift.fedavg_convex", setting, {"D": 1.0})
    assert (drift["eta"], drift["tau"], drift["T"], drift["M"]) == (0.1, 3, 7, 5)
    skew = rhs_params("skew.corollary", setting, {"D": 1.0})
    assert skew["T"] == 21 and skew["E"] == 3 and skew["D0"] == 1.0  # BM's T counts steps
    fedau = rhs_params("weight_error.theorem2", setting)
    assert (fedau["gamma"], fedau["eta"], fedau["I"], fedau["N"]) == (0.1, 2.0, 3, 5)
    bc = rhs_params("contraction.lemma_a3", setting)
    assert (bc["gamma"], bc["alpha"], bc["E"]) == (0.1, 0.5, 3) and "eta" not in bc
    schedule = rhs_params("drift.plateau", {"lr": lambda t: 0.1})
    assert "eta" not in schedule  # only a scalar lr maps


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_check_log_reproduces_check(toy, tmp_path, suffix):
    kw = dict(rounds=10, lr=0.2, local_steps=5)
    df = verify.check("drift.fedavg_convex", toy, "fedavg", seeds=[0], **kw)
    path = write_log(toys.run(toy, "fedavg", seed=0, **kw), tmp_path / f"run{suffix}")
    logged = verify.check_log("drift.fedavg_convex", path, df.attrs["params"])
    cols = ["seed", "measured", "bound_value", "verdict", "reason"]
    assert logged[cols].to_dict("records") == df[cols].to_dict("records")


def test_check_log_per_round_and_precondition(toy, tmp_path):
    kw = dict(rounds=6, lr=0.2, local_steps=3)
    df = verify.check("drift.round_progress", toy, "fedavg", seeds=[1], **kw)
    path = write_log(toys.run(toy, "fedavg", seed=1, **kw), tmp_path / "run.csv")
    logged = verify.check_log("drift.round_progress", path, df.attrs["params"])
    cols = ["round", "measured", "bound_value", "verdict"]
    assert logged[cols].to_dict("records") == df[cols].to_dict("records")
    wrong = {**df.attrs["params"], "eta": 5.0}
    assert set(verify.check_log("drift.round_progress", path, wrong)["verdict"]) == \
        {"not-applicable"}


def test_check_log_of_another_simulator_with_a_column_mapping():
    log = {"round": [0, 1, 2, 3], "train_gap": [0.5, 0.3, 0.2, np.nan]}
    prm = dict(D=1.0, eta=0.1, tau=2, T=3, L=1.0, zeta=0.5)
    df = verify.check_log("drift.plateau_finite", log, prm, columns={"shadow_gap": "train_gap"})
    assert df["measured"].iloc[0] == pytest.approx(1 / 3) and df["verdict"].iloc[0] == "holds"
    with pytest.raises(UnknownNameError, match="column of the log for 'avg_shadow_gap'"):
        verify.check_log("drift.plateau_finite", {"round": [0, 1], "gap": [1.0, 0.5]}, prm)
    with pytest.raises(MissingParameterError, match="missing parameter zeta"):
        verify.check_log("drift.plateau_finite", log, {k: v for k, v in prm.items()
                                                       if k != "zeta"},
                         columns={"shadow_gap": "train_gap"})
    with pytest.raises(DomainError, match="round"):
        verify.check_log("drift.plateau_finite", {"round": [0.5], "shadow_gap": [1.0]}, prm)


def test_diverged_run_is_not_judged():
    prob = toys.quadratic(n_clients=3, dim=2, L=4.0, mu=1.0, seed=0)
    df = verify.check("skew.lemma1", prob, "fedavg", rounds=60, seeds=1, lr=3.0)
    assert "diverged" in set(df["verdict"])


def test_user_bound_from_replace_checks_with_no_check_function(toy, registered):
    fc = boundlab.get("drift.plateau_finite")
    b = registered(dataclasses.replace(fc, id="mine.finite_copy", terms={}))
    a = verify.check(b, toy, "fedavg", rounds=8, seeds=1, lr=0.2, local_steps=4)
    c = verify.check(fc, toy, "fedavg", rounds=8, seeds=1, lr=0.2, local_steps=4)
    assert a["verdict"].tolist() == c["verdict"].tolist() == ["holds"]
    assert a["bound_value"].tolist() == c["bound_value"].tolist()
