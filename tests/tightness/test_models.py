"""PEP models against closed forms, the spec's measured figures and an independent SDP."""

import math

import numpy as np
import pytest

from boundlab.errors import DomainError
from verify.tightness import (
    fedavg_round_gram_sdp,
    fixed_point_floor,
    wc_beta_round,
    wc_fedavg_round,
    wc_fedprox_gap,
    wc_fedprox_round,
    wc_gradient_descent,
    wc_skew_step,
)
from verify.tightness._solve import solve_pep, solve_with_pepit
from verify.tightness.pep_models import _build_rounds


@pytest.mark.parametrize("eta", [0.3, 1.0, 1.8, 2 / 1.1, 1.95, 2.2])
@pytest.mark.parametrize("n", [1, 3])
def test_gradient_descent_matches_closed_form(eta, n):
    # L = 1, mu = 0.1; 2/(L + mu) = 1.818..., eta = 2.2 > 2/L diverges
    r = wc_gradient_descent(L=1.0, mu=0.1, eta=eta, n=n, cache=False)
    exact = max(abs(1 - eta * 0.1), abs(1 - eta)) ** (2 * n)
    assert r.ok
    assert r.value == pytest.approx(exact, rel=1e-7)
    assert r.lower == pytest.approx(exact, rel=1e-7)
    assert r.theoretical == pytest.approx(exact, rel=1e-15)


def test_gradient_descent_scale_free():
    # the worst contraction factor does not depend on L once eta L and mu/L are fixed
    a = wc_gradient_descent(L=4.0, mu=0.4, eta=0.25, n=2, cache=False)  # eta L = 1
    assert a.value == pytest.approx(0.9**4, rel=1e-7)


# the spec's table (tightness-pep.md): L = 1, mu = 0.1, eta = 0.1, ||x0 - x*|| <= 1
SPEC = {(1, 0.0): 0.980100, (1, 1.0): 0.980100, (2, 0.0): 0.960596, (2, 0.5): 0.960708,
        (2, 1.0): 0.961041, (5, 0.0): 0.904382, (5, 0.5): 0.907137, (5, 1.0): 0.915233}


@pytest.mark.parametrize("tau,zeta", sorted(SPEC))
def test_fedavg_round_reproduces_spec_table(tau, zeta):
    r = wc_fedavg_round(L=1.0, mu=0.1, eta=0.1, tau=tau, zeta=zeta)
    assert r.ok
    assert r.value == pytest.approx(SPEC[tau, zeta], abs=1e-5)
    if zeta == 0:  # (1 - eta mu)^(2 tau) at eta <= 1/L
        assert r.theoretical == pytest.approx(0.99 ** (2 * tau), rel=1e-12)
        assert r.value == pytest.approx(r.theoretical, rel=1e-7)


@pytest.mark.parametrize("zeta", [0.0, 0.5, 1.0])
def test_hand_written_gram_sdp_agrees_with_pepit(zeta):
    hand = fedavg_round_gram_sdp(L=1.0, mu=0.1, eta=0.1, tau=2, zeta=zeta)
    pep = wc_fedavg_round(L=1.0, mu=0.1, eta=0.1, tau=2, zeta=zeta, cache=False)
    assert hand["status"] == "optimal"
    assert pep.value == pytest.approx(hand["value"], abs=1e-6)


def test_hand_sdp_checks_homogeneity_of_the_normalized_model():
    # the model normalizes to L = 1, r = 1; the hand SDP is solved in the original units
    hand = fedavg_round_gram_sdp(L=2.0, mu=0.3, eta=0.05, tau=3, zeta=1.5, r=2.0)
    pep = wc_fedavg_round(L=2.0, mu=0.3, eta=0.05, tau=3, zeta=1.5, r=2.0, cache=False)
    assert pep.value == pytest.approx(hand["value"], rel=1e-6)


def test_direct_solve_path_agrees_with_pepit_public_solve():
    norm = {"mu": 0.1, "eta": 0.1, "tau": 3, "n": 2, "zeta_at": "x*", "p": [0.5, 0.5],
            "scen": [[1.0, [0.5, 0.5]]], "prox": 0.0, "beta": 1.0, "zeta": 0.5, "rounds": 1}
    direct = solve_pep(_build_rounds(norm), solver="CLARABEL")
    public = solve_with_pepit(_build_rounds(norm))
    assert direct["value"] == pytest.approx(public, abs=1e-9)


@pytest.mark.parametrize("R", [2, 3])
def test_chained_rounds_bound_the_full_pep(R):
    full = wc_fedavg_round(1.0, 0.1, 0.1, 2, 1.0, rounds=R, mode="full")
    chain = wc_fedavg_round(1.0, 0.1, 0.1, 2, 1.0, rounds=R, mode="chain")
    exact_chain = wc_fedavg_round(1.0, 0.1, 0.1, 2, 1.0, rounds=R, mode="chain", chain_grid=0)
    assert full.ok and chain.ok and chain.lower is None
    assert full.lower <= full.value + 1e-7
    assert exact_chain.value >= full.value - 1e-7  # a chain is an upper bound
    assert chain.value >= exact_chain.value - 1e-9  # rounding the grid up only loosens it
    assert chain.value / full.value < 1.001  # and it is nearly tight (spec: 1.0000 at R = 2)


def test_zeta_at_visited_is_a_smaller_class_than_zeta_at_xstar():
    a = wc_fedavg_round(1.0, 0.1, 0.2, 3, 1.0, zeta_at="x*")
    b = wc_fedavg_round(1.0, 0.1, 0.2, 3, 1.0, zeta_at="visited")
    assert b.value <= a.value + 1e-7 and b.relaxed and not a.relaxed


def test_partial_participation_scenarios():
    # one client at a time, each with probability 1/2 (unbiased: c_i = p_i / q_i = 1)
    scen = [(0.5, [1.0, 0.0]), (0.5, [0.0, 1.0])]
    part = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, scenarios=scen)
    full = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5)
    assert part.ok and part.value >= full.value - 1e-7  # averaging later cannot help
    with pytest.raises(DomainError):
        wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, rounds=2, scenarios=scen, mode="full")


def test_weighted_aggregation():
    # zeta = 0: every client is minimized at x*, so any convex aggregation has GD's worst case
    r = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.0, weights=[0.3, 0.7], aggregation=[0.9, 0.1])
    assert r.theoretical == pytest.approx(0.99**4) and r.value == pytest.approx(0.99**4, 1e-7)
    # zeta > 0 and aggregation alpha != p: the server targets the wrong point (skew), the
    # worst case exceeds that of alpha = p
    skew = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, weights=[0.3, 0.7], aggregation=[0.9, 0.1])
    fair = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, weights=[0.3, 0.7])
    assert skew.theoretical is None and skew.value > fair.value


def test_fedprox_and_beta_reduce_to_fedavg():
    avg = wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5)
    assert wc_fedprox_round(1.0, 0.1, 0.1, 2, 0.0, 0.5).value == pytest.approx(avg.value, 1e-7)
    assert wc_beta_round(1.0, 0.1, 0.1, 2, 1.0, 0.5).value == pytest.approx(avg.value, 1e-7)
    # beta full vs chained over 2 rounds: the chain is an upper bound
    full = wc_beta_round(1.0, 0.1, 0.1, 2, 0.5, 0.5, rounds=2, mode="full")
    chain = wc_beta_round(1.0, 0.1, 0.1, 2, 0.5, 0.5, rounds=2, mode="chain")
    assert chain.value >= full.value - 1e-7


def test_skew_step_gamma_zero_is_gradient_descent_on_F():
    # Gamma = 0: every client is minimized at w*; one step of the virtual sequence from a
    # synchronised point is GD on F: worst factor max(|1 - eta mu|, |1 - eta L|)^2
    r = wc_skew_step(Delta=1.0, eta=0.2, mu=0.1, L=1.0, E=1, G=100.0, Gamma=0.0)
    assert r.value == pytest.approx(0.98**2, rel=1e-6)


def test_fedprox_gap_one_gd_step_function_value_closed_form():
    # alpha = 0, E = 1, Gamma = 0: one GD step on F; the exact worst case of the gap ratio
    # (de Klerk, Glineur, Taylor 2017) is max((1 - eta mu)^2, (1 - eta L)^2)
    r = wc_fedprox_gap(t=1, L=1.0, mu=0.1, alpha=0.0, Delta=1.0, Gamma=0.0, G=1e3, E=1,
                       gamma=0.5)
    assert r.value == pytest.approx(0.95**2, rel=1e-6)
    assert r.detail["lower_quadratic"] == pytest.approx(0.95**2, rel=1e-6)


def test_fixed_point_floor_is_a_fixed_point():
    f = fixed_point_floor("fedavg_round", L=1.0, mu=0.1, eta=0.1, tau=2, zeta=1.0, rtol=1e-5)
    again = wc_fedavg_round(1.0, 0.1, 0.1, 2, 1.0, r=math.sqrt(f.value))
    assert f.ok and 0 < f.value < 1
    assert again.value == pytest.approx(f.value, rel=1e-4)


@pytest.mark.parametrize("kw", [{"eta": 0.0}, {"eta": -1.0}, {"tau": 0}, {"tau": 1.5},
                                {"mu": 1.0}, {"zeta": -0.1}, {"n_clients": 1},
                                {"zeta": float("nan")}, {"eta": "a"}])
def test_bad_input_raises_domain_error(kw):
    args = {"L": 1.0, "mu": 0.1, "eta": 0.1, "tau": 2, "zeta": 0.5}
    with pytest.raises(DomainError) as exc:
        wc_fedavg_round(**{**args, **kw})
    assert next(iter(kw)) in str(exc.value)


def test_bad_weights_and_modes():
    with pytest.raises(DomainError):
        wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, weights=[0.7, 0.7])
    with pytest.raises(DomainError):
        wc_fedavg_round(1.0, 0.1, 0.1, 2, 0.5, zeta_at="everywhere")
    with pytest.raises(DomainError):
        wc_gradient_descent(1.0, 0.1, 0.5, 0)
    assert np.isfinite(wc_fedavg_round(1.0, 0.1, 0.1, 1, 0.5, weights=[0.3, 0.7]).value)
