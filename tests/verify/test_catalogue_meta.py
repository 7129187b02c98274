"""Catalogue metadata (algorithm, function class, run) read like a user registration."""

import dataclasses

import pytest

import boundlab
import toys
from boundlab.registry import FUNCTION_CLASSES, meta
from verify.check import rhs_params, symbols


def test_every_catalogue_id_declares_an_algorithm_and_a_class():
    for bid in boundlab.ids():
        m = meta(bid)
        assert m["algorithm"] in toys.ALGORITHMS, bid
        assert m["function_class"] in FUNCTION_CLASSES, bid
        assert set(m) >= {"algorithm", "function_class", "run", "symbols", "plugin"}


@pytest.mark.parametrize("bid, algorithm, fclass", [
    ("drift.fedavg_convex", "fedavg", "smooth-convex"),        # DKR assumption 5: convex
    ("skew.corollary_gamma", "fedavg", "smooth-strongly-convex"),  # BM A2: mu-strongly convex
    ("skew.lemma1", "fedavg", "smooth-nonconvex"),  # spec 3.2: convexity not needed
    ("contraction.fedprox_sc", "fedprox", "smooth-strongly-convex"),  # BC Theorem 1
    ("contraction.beta_nc", "beta", "smooth-nonconvex"),  # BC Theorem 4
    ("weight_error.theorem2_explicit", "fedau", "smooth-nonconvex"),  # FedAU Theorem 2
])
def test_metadata_follows_the_papers(bid, algorithm, fclass):
    m = meta(bid)
    assert (m["algorithm"], m["function_class"]) == (algorithm, fclass)


def test_meta_of_a_registered_bound_is_its_registration_and_a_copy():
    b = dataclasses.replace(boundlab.get("drift.plateau_finite"), id="mine.meta_demo", terms={})
    run = {"problem": "seed004-toy", "rounds": 3, "hyper": {"lr": 0.1}}
    boundlab.register(b, algorithm="fedavg", function_class="smooth-convex", run=run)
    try:
        m = meta("mine.meta_demo")
        assert (m["algorithm"], m["function_class"], m["run"]) == ("fedavg", "smooth-convex",
                                                                   run)
        m["run"]["rounds"] = 99
        assert meta("mine.meta_demo")["run"]["rounds"] == 3
    finally:
        boundlab.unregister("mine.meta_demo")
    cat = meta("drift.plateau")
    cat["algorithm"] = "beta"
    assert meta("drift.plateau")["algorithm"] == "fedavg"


def test_what_a_bound_is_given_follows_its_algorithm_not_its_id():
    # the same Theorem 1 of BC under a family name that is no paper's: gamma = lr, Delta = gap_0
    b = dataclasses.replace(boundlab.get("contraction.fedprox_sc"), id="anyname.sc", terms={})
    boundlab.register(b, algorithm="fedprox", function_class="smooth-strongly-convex")
    try:
        table = symbols(b)
        assert table["gamma"] == "lr" and table["Delta"] == "gap_0"
        got = rhs_params(b, {"lr": 0.05, "local_steps": 2}, {"L": 1.0})
        assert got["gamma"] == 0.05
    finally:
        boundlab.unregister("anyname.sc")
    # a DKR bound under a contraction-like name but declared FedAvg: eta = lr, no gamma
    d = dataclasses.replace(boundlab.get("drift.plateau"), id="contraction_like.x", terms={})
    boundlab.register(d, algorithm="fedavg", function_class="smooth-convex")
    try:
        assert rhs_params(d, {"lr": 0.2, "local_steps": 3}, {"L": 1.0, "zeta": 1.0})["eta"] == 0.2
    finally:
        boundlab.unregister("contraction_like.x")


def test_bm_T_counts_sgd_iterations_from_the_metadata():
    b = boundlab.get("skew.error_free")
    assert rhs_params(b, {"rounds": 30, "local_steps": 2})["T"] == 60
    assert rhs_params(boundlab.get("drift.plateau_finite"), {"rounds": 30,
                                                            "local_steps": 2})["T"] == 30
