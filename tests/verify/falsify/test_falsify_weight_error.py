"""verify.falsify on FedAU's weight-error bounds (lhs avg_weight_error / round_weight_error):
the exact expectation over every participation path, the search, the exact certificate and
the saved, replayable result."""

import dataclasses
import json
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

import boundlab
import verify
from boundlab.errors import DomainError
from verify import measures
from verify.falsify.fedau_paths import omegas, paths
from verify.falsify.mutants import mutants
from verify.falsify.weight_error_exact import dp_errors, exact_errors, expected_errors, rational
from verify.falsify.weight_error_search import corollary4_k, measure_instance

FEDAU = {"algorithm": "fedau", "function_class": "smooth-nonconvex"}
CERTS = ("exact-rational", "fixed-point-256")  # exact fractions (T <= 14), else fixed point


def _hand_T3_K2(p):
    """By hand, T = 3, K = 2: omega_0 = omega_1 = 1 (no interval reaches K = 2 before round
    2); omega_2 = 2 when chi_0 = 0 (the interval 0..1 closes at length 2 whether chi_1 is 1
    or the cutoff), else 1. Errors (1-p)^2, (1-p)^2, p (1-p)^2 + (1-p) (2p-1)^2."""
    q = 1 - p
    return [q * q, q * q, p * q * q + q * (2 * p - 1) ** 2]


def test_exact_expectation_equals_the_hand_computed_small_cases():
    p = Fraction(1, 3)
    assert exact_errors(p, 2, 3) == _hand_T3_K2(p) == [Fraction(4, 9), Fraction(4, 9),
                                                       Fraction(2, 9)]
    assert exact_errors(Fraction(1, 3), 1, 2) == [Fraction(4, 9)] * 2  # K = 1: omega = 1
    got = expected_errors(np.array([1 / 3, 0.8]), 2, 3)
    want = np.array([[float(v) for v in _hand_T3_K2(Fraction(x))] for x in (1 / 3, 0.8)])
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_exact_fractions_equal_the_float_expectation():
    rng = np.random.default_rng(3)
    for p, K, T in ((rng.random(), 3, 9), (0.07, 5, 12), (0.93, 2, 7), (1.0, 4, 6)):
        ex = np.array([float(v) for v in exact_errors(p, K, T)])
        np.testing.assert_allclose(expected_errors([p], K, T)[0], ex, rtol=1e-12, atol=1e-15)
    assert rational(0.1 + 0.2, 10) == Fraction(3, 10)
    with pytest.raises(ArithmeticError):
        rational(0.123456789, 5)


def test_the_dynamic_programme_equals_the_enumeration_of_every_path():
    """dp_errors sums the paths by Algorithm 2's state; enumeration runs every path."""
    p = np.array([0.04, 0.3, 0.77, 1.0])
    for K in (1, 2, 3, 6, 50):
        for T in (1, 2, 5, 10, 14):
            np.testing.assert_allclose(dp_errors(p, K, T), expected_errors(p, K, T),
                                       rtol=1e-12, atol=1e-15)
    for p, K, T in ((0.3, 3, 12), (0.9e-3, 5, 14), (0.999, 14, 14)):
        exact = exact_errors(p, K, T)
        fixed, err = dp_errors([p], K, T, bits=128)  # rounded down, within err
        assert 0 < err < 2.0 ** -90
        assert all(0 <= e - f <= err for e, f in zip(exact, fixed))


def test_exact_expectation_agrees_with_monte_carlo_paths():
    """verify.checks.weight_error_paths samples M Bernoulli paths through toys.run: each
    round's mean lies within 5 standard errors of the exact expectation."""
    from verify.checks.weight_error_paths import omega_paths

    p, K, T, M = 0.3, 3, 40, 20000
    err = (p * omega_paths(p, K, T, M, seed=7) - 1.0) ** 2  # (T, M)
    exact = dp_errors([p], K, T)[0]
    se = err.std(axis=1) / math.sqrt(M)
    assert np.all(np.abs(err.mean(axis=1) - exact) <= 5 * se + 1e-12)
    assert exact[-1] > 0.05  # not a trivially small quantity


def test_a_cutoff_of_at_least_T_never_acts_within_T_rounds():
    masks, _ = paths(np.array([[0.5]]), 7)
    np.testing.assert_array_equal(omegas(masks, 7.0), omegas(masks, 1000.0))
    np.testing.assert_array_equal(expected_errors([0.2], 10 ** 6, 7), expected_errors([0.2], 7, 7))


def test_the_measures_read_the_expectation_array():
    E = np.array([[0.5, 0.25, 0.125]])
    assert measures.measure("avg_weight_error", {"weight_error": E})[0].tolist() == [[0.875 / 3]]
    v, per = measures.measure("round_weight_error", {"weight_error": E})
    assert v.tolist() == E.tolist() and per["t"].tolist() == [[0.0, 1.0, 2.0]]
    assert "avg_weight_error" not in measures.NOT_MEASURED


@pytest.mark.parametrize("bid", ["weight_error.average", "weight_error.round",
                                 "weight_error.round_envelope"])
def test_the_catalogue_bounds_hold(bid):
    res = verify.falsify(bid, budget=150, seed=1)
    assert res.verdict == "holds" and res.certificate in CERTS, res.reason
    assert 0 < res.worst_ratio <= 1 and res.evaluations == 150
    assert res.instance.family == "fedau.weight_error"


def test_the_tight_var_form_is_held_within_its_certified_error():
    """round_var_form at K = 1: omega = 1 and Var[S] = 0, so lhs = (1-p)^2 = the bound."""
    res = verify.falsify("weight_error.round_var_form", budget=100, seed=0, K=1)
    assert res.verdict == "holds" and "tight" in res.reason
    assert abs(res.worst_ratio - 1) <= 1e-12


def _mutant(bid, tag):
    return next(m for m in mutants(boundlab.get(bid)) if m.id.endswith(tag))


@pytest.mark.parametrize("tag", ["~drop[variance]", "~const[1]/10"])
def test_a_false_mutant_is_violated_with_an_exact_certificate(tag):
    m = dataclasses.replace(_mutant("weight_error.average", tag), id="mine.we_avg")
    res = verify.falsify(m, budget=200, seed=0, **FEDAU)
    assert res.verdict == "VIOLATED" and res.certificate in CERTS, res.reason
    d = res.instance.data
    # independent of the search: the expectation at the instance exceeds the mutant
    lhs = np.mean(dp_errors([d["p"]], min(d["K"], d["T"]), d["T"]))
    rhs = m.evaluate(**{k: d[k] for k in m.params})  # drop[variance] has no T
    assert float(lhs) > rhs and res.worst_ratio > 1
    if rhs > 1e-300:  # else the bound underflows in float64 (its exact value is > 0)
        assert res.worst_ratio == pytest.approx(float(lhs) / rhs, rel=1e-12)
    else:  # a positive bound is never reported as <= 0; the reason gives the exact ratio
        assert "<= 0" not in res.reason and "beyond the float range" in res.reason, res.reason
    assert res.instance.replay() > 1


def test_a_mutant_false_only_beyond_14_rounds_is_caught_by_the_programme():
    """(1 - 2p)^(2K) + (3K + 2K ln T)/T (const[-1]*2 of weight_error.average): its ratio
    stays below 1 for every T <= 14; the certificate is the fixed-point programme's."""
    m = dataclasses.replace(_mutant("weight_error.average", "~const[-1]*2"), id="mine.we_long")
    short = verify.falsify(m, budget=150, seed=0, T=14, **FEDAU)
    assert short.verdict == "holds"
    res = verify.falsify(m, budget=200, seed=0, **FEDAU)
    assert res.verdict == "VIOLATED" and res.certificate == "fixed-point-256", res.reason
    assert res.instance.data["T"] > 14 and 0 < res.certified_error < 1e-30


def test_a_round_mutant_is_violated_at_an_admissible_round():
    b = boundlab.get("weight_error.round")
    p, K = (boundlab.sym(n) for n in ("p", "K"))
    m = boundlab.Bound(id="mine.we_round", source="test: (B.6.8) without its variance term",
                       expr=(1 - p) ** (2 * K), kind="upper",
                       params={k: v for k, v in b.params.items() if k != "t"},
                       extra_params={"t": b.params["t"]},  # its precondition t >= K
                       lhs="round_weight_error", preconditions=b.preconditions)
    res = verify.falsify(m, budget=200, seed=0, T=12, **FEDAU)  # rounds 1..11 judged
    assert res.verdict == "VIOLATED" and res.certificate == "exact-rational"
    d = res.instance.data
    assert d["T"] == 12
    assert res.instance.replay() > 1
    errs = dp_errors([d["p"]], min(d["K"], d["T"]), d["T"])[0]  # a round t >= K is above it
    assert max(float(e) for e in errs[d["K"]:]) > (1 - d["p"]) ** (2 * d["K"])


def test_lemma_b71_uses_corollary_4s_integer_cutoff():
    assert corollary4_k(np.array([0.5, 0.1, 1.0]), np.array([16, 10, 5])).tolist() == \
        [2, math.ceil(math.log(10) / (-2 * math.log(0.9))), 1]
    res = verify.falsify("weight_error.lemma_b71_ceil", budget=80, seed=0)
    d = res.instance.data
    assert res.verdict == "holds" and d["K_rule"] == "corollary4"
    assert d["K"] == corollary4_k(np.array([d["p"]]), np.array([d["T"]]))[0]


def test_same_seed_same_bits():
    a = verify.falsify("weight_error.average_refined", budget=60, seed=4)
    b = verify.falsify("weight_error.average_refined", budget=60, seed=4)
    assert a.instance.data == b.instance.data and a.worst_ratio == b.worst_ratio


def test_bad_settings_and_instances_are_refused_by_name():
    with pytest.raises(DomainError, match="T"):
        verify.falsify("weight_error.average", budget=20, T=101)
    with pytest.raises(DomainError, match="instance p"):
        measure_instance(boundlab.get("weight_error.average"), {"p": 1.5, "K": 1, "T": 2})
    with pytest.raises(DomainError, match="T"):
        expected_errors([0.5], 2, 15)
    from verify.falsify.plan import NotApplicable, make_plan

    with pytest.raises(NotApplicable, match="weight_error_search"):
        make_plan(boundlab.get("weight_error.average"), {})


def test_a_saved_result_replays_in_a_new_process(tmp_path):
    m = dataclasses.replace(_mutant("weight_error.average", "~const[1]/10"), id="mine.we_save")
    res = verify.falsify(m, budget=100, seed=0, save=tmp_path / "r.json", T=10, **FEDAU)
    assert res.verdict == "VIOLATED"
    code = ("import sys, json; from verify.falsify import Falsification; "
            "r = Falsification.load(sys.argv[1]); "
            "print(json.dumps([r.verdict, r.certificate, r.instance.replay()]))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120, check=True)
    verdict, cert, ratio = json.loads(out.stdout.strip().splitlines()[-1])
    assert verdict == "VIOLATED" and cert == res.certificate in CERTS
    assert ratio == res.instance.replay() and math.isfinite(ratio) and ratio > 1
    assert res.worst_ratio == pytest.approx(ratio, rel=1e-12)  # the exact certificate's
