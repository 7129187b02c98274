"""The constants no theorem run measures, judged on what defines them
(verify.checks.contraction_constants, weight_error_cutoff, skew_constants, _derive).

Every expected value here is worked out by hand in the comments, never by the code under test;
each module is also shown to catch a wrong closed form (a mutant judged VIOLATED)."""

import dataclasses
import math

import pytest

import boundlab
from verify.checks._common import judge
from verify.checks.contraction_constants import contraction_constants, e_opt, measured_kappa
from verify.checks.skew_constants import corollary_constants, recursion_coefficients, vmin
from verify.checks.weight_error_cutoff import cutoff_cor4, cutoff_opt, weight_error_cutoffs
from verify.suite import Context


def _mutant(bid, factor):
    b = boundlab.get(bid)
    return dataclasses.replace(b, id=bid + ".mutant", expr=factor * b.expr, terms={})


def test_fedprox_kappa_measured_on_one_round():
    # FedProx alpha = 1, mu = 1, gamma = 0.25, E = 2 on (1/2)(x - c)^2: each local step maps
    # e -> (1 - gamma (alpha + mu)) e + gamma alpha e0 = e/2 + e0/4 (e = x - c), so e0 -> 3/4 e0
    # -> 3/8 + 1/4 = 5/8 e0: kappa = 0.625
    assert measured_kappa("fedprox", {"prox": 1.0}, 1.0, 0.25, 2) == pytest.approx(0.625,
                                                                                   abs=1e-14)
    # FedAvg overshooting: (1 - 1.5 * 1)^3 = -0.125
    assert measured_kappa("fedavg", {}, 1.0, 1.5, 3) == pytest.approx(-0.125, abs=1e-14)


def test_beta_kappa_measured_on_one_round():
    # beta = 0.5, mu = 1, gamma = 0.5, E = 2: steps e -> (1 - gamma mu beta) e - gamma mu
    # (1 - beta) e0 = 3/4 e - 1/4 e0: e0 -> 1/2 e0 -> 3/8 - 1/4 = 1/8 e0
    assert measured_kappa("beta", {"beta": 0.5}, 1.0, 0.5, 2) == pytest.approx(0.125, abs=1e-14)


def test_e_opt_is_the_minimiser_of_theorem_4():
    # L = Delta = S = G = beta = T = 1, sigma = 0: A_c = 4, A(1) = 4, r(E) = 4/sqrt(E) + 4 E,
    # r'(E) = -2 E^(-3/2) + 4 = 0 at E = 2^(-2/3)
    assert e_opt(1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1) == pytest.approx(2 ** (-2 / 3), rel=1e-12)


def test_cutoffs_by_hand():
    # (1 - 1/2)^(2K) = 1/16 at K = 2
    assert cutoff_cor4(0.5, 16) == pytest.approx(2.0, rel=1e-12)
    # 1 - p = e^(-1/2): avg = (3 + 2 ln T) K/T + e^(-K); its derivative vanishes at
    # e^(-K) = (3 + 2 ln T)/T, i.e. K = ln(T/(3 + 2 ln T)); at T = 1 the slope 3 - e^(-K) > 0
    p = 1 - math.exp(-0.5)
    assert cutoff_opt(p, 100) == pytest.approx(math.log(100 / (3 + 2 * math.log(100))),
                                               rel=1e-10)
    assert cutoff_opt(p, 1) == 1.0


def test_corollary_induction_by_hand():
    # skew.recursion with L = mu = 1, E = 1, G = sigma = 0, Gamma = 1, rho_bar = 8/3,
    # rho_tilde = 11/3: B = 1 + 3/8 * 8/3 = 2, C = 6 rho_bar L Gamma = 16, D = 2 Gamma = 2
    B, C, D = (float(v) for v in recursion_coefficients(1, 1, 1, 0, 0, 1, 8 / 3, 11 / 3))
    assert (B, C, D) == pytest.approx((2.0, 16.0, 2.0), rel=1e-14)
    # gamma = max(4, 2, 0) = 4, beta mu B - 1 = 1: V = (4 D0^2 + 16)/2 = 10 (D0 = 1), E-term 1
    V, err, raw = corollary_constants(1, 1, 1, 0, 0, 1, 8 / 3, 11 / 3, 1.0)
    assert (V, err, raw) == pytest.approx((10.0, 1.0, 1.0), rel=1e-14)
    # rho_tilde < rho_bar: D < 0, the clipped E-term is 0, the raw one -1
    assert corollary_constants(1, 1, 1, 0, 0, 1, 8 / 3, 5 / 3, 1.0)[1:] == pytest.approx(
        (0.0, -1.0), abs=1e-14)
    # V_min at gamma = 4: C/(B - 1) -> 6 L Gamma/(3/8) = 16: V_min = (4 + 16)/2 = 10
    assert vmin(1, 1, 1, 0.3, 0.2, 1, 1.0) == pytest.approx(10.0, rel=1e-14)


# skew.speed at G = 1/2: C = 32 * 1/4 + 16 = 24, V = (4 + 24)/2 = 14 (by the induction above)
@pytest.mark.parametrize("bid, prm, value", [
    ("contraction.fedprox_kappa", {"alpha": 1.0, "mu": 1.0, "gamma": 0.25, "E": 2}, 0.625),
    ("weight_error.cutoff_cor4", {"p": 0.5, "T": 16}, 2.0),
    ("skew.speed", {"L": 1, "mu": 1, "E": 1, "G": 0.5, "sigma": 0, "Gamma": 1,
                    "rho_bar": 8 / 3, "D0": 1.0}, 14.0)])
def test_a_wrong_closed_form_is_violated(bid, prm, value):
    ok = judge(boundlab.get(bid), [value], prm, check="t", problem="t", deterministic=True)
    assert ok.verdict == "holds"
    for factor in (2, 0.5):
        bad = judge(_mutant(bid, factor), [value], prm, check="t", problem="t",
                    deterministic=True)
        assert bad.verdict == "VIOLATED"


def test_checks_run_and_hold():
    rows = contraction_constants(Context(quick=True)) + weight_error_cutoffs(Context(quick=True))
    assert {r.verdict for r in rows} == {"holds"}
    assert {r.bound_id for r in rows} == {
        "contraction.fedprox_kappa", "contraction.beta_kappa", "contraction.corollary1_e_opt",
        "weight_error.cutoff_cor4", "weight_error.cutoff_opt"}
