"""verify.falsify on BM's Corollary 4 constants (verify.falsify.constants_route): V, V_min,
V_FedAvg and the E-term, measured by the corollary's induction on skew.recursion and judged as
identities."""

import dataclasses
from fractions import Fraction as Fr

import mpmath
import numpy as np
import pytest

import boundlab
import verify
from boundlab import Bound, make_params
from boundlab.errors import DomainError
from verify.falsify import Falsification, routes
from verify.falsify import constants_route as cr
from verify.falsify.mutants import mutants

IDS = ("skew.speed", "skew.error", "skew.error.printed", "skew.vmin", "skew.fedavg_speed",
       "skew.fedavg_speed.printed")
HOW = {"algorithm": "fedsoftmax", "function_class": "smooth-strongly-convex"}
PT = dict(L=2.0, mu=1.0, E=2.0, G=0.5, sigma=0.3, Gamma=0.2, rho_bar=1.5, rho_tilde=2.5, D0=1.0)


def _user(bid, mutation):
    b = boundlab.get(bid)
    m = next(m for m in mutants(b) if m.id == f"{bid}~{mutation}")
    return dataclasses.replace(m, id="mine.typo")


def test_the_route_judges_the_corollary_constants():
    for bid in IDS:
        assert routes.route_for(boundlab.get(bid)) is cr
    names = [cr.quantity_of(boundlab.get(b)).name for b in IDS]
    assert names == ["V", "E_term", "E_term", "V_min", "V_fedavg", "V_fedavg"]


def test_hand_computed_constants():
    """By hand from the recursion (1 - eta mu B) Delta + eta^2 C + eta D with B = 1 + 3 rho/8,
    C = 32 E^2 G^2 + 6 Gamma L rho + sigma^2, D = 2 Gamma (rho_tilde - rho), beta = 1/mu:
    V = (L/2)(gamma D0^2 + C/(mu^2 (B - 1))), E-term = (L/2) D/(mu (B - 1))."""
    L, mu, E, G, s, Gm, rb, rt, D0 = (Fr(PT[k]) for k in
                                      ("L", "mu", "E", "G", "sigma", "Gamma", "rho_bar",
                                       "rho_tilde", "D0"))

    def parts(rho, rho_t):
        B = 1 + Fr(3, 8) * rho
        C = 32 * E**2 * G**2 + 6 * Gm * L * rho + s**2
        return B, C, 2 * Gm * (rho_t - rho)

    B, C, D = parts(rb, rt)
    g = max(4 * L / mu, B, E - 1)
    V = L / 2 * (g * D0**2 + C / (mu**2 * (B - 1)))
    assert cr.measure(cr.QUANTITIES["V"], PT) == pytest.approx(float(V), rel=1e-15)
    assert cr.measure(cr.QUANTITIES["E_term"], PT) == pytest.approx(
        float(L / 2 * D / (mu * (B - 1))), rel=1e-15)
    assert cr.measure(cr.QUANTITIES["E_term"], {**PT, "rho_tilde": 0.5}) == 0.0  # clipped
    B1, C1, _ = parts(Fr(1), Fr(1))
    V1 = L / 2 * (max(4 * L / mu, B1, E - 1) * D0**2 + C1 / (mu**2 * (B1 - 1)))
    assert cr.measure(cr.QUANTITIES["V_fedavg"], PT) == pytest.approx(float(V1), rel=1e-15)
    # rho -> inf at gamma = 4L/mu: C/(B - 1) -> 6 Gamma L / (3/8) = 16 Gamma L
    vmin = L / 2 * (4 * L / mu * D0**2 + 16 * Gm * L / mu**2)
    assert cr.measure(cr.QUANTITIES["V_min"], PT) == pytest.approx(float(vmin), rel=1e-15)
    hi = cr.measure(cr.QUANTITIES["V"], PT, dps=70, exact=True)
    with mpmath.workdps(80):  # the 70-digit value against the exact rational
        assert abs(hi - mpmath.mpf(V.numerator) / V.denominator) < 1e-60


@pytest.mark.parametrize("bid", ["skew.speed", "skew.error", "skew.vmin", "skew.fedavg_speed"])
def test_the_catalogue_constants_hold_tight(bid):
    res = verify.falsify(bid, budget=40, seed=0)
    assert res.verdict == "holds" and res.certificate == "mpmath-50"
    assert abs(res.worst_ratio - 1) <= res.certified_error < 1e-40
    assert "tight" in res.reason


def test_the_printed_forms_are_violated_where_their_errata_bite():
    """BM-5: the unclipped E-term is negative where rho_tilde < rho_bar and Gamma > 0; BM-3:
    the printed 4L - 32 E^2 G^2 for 4L (32 E^2 G^2 ...)."""
    res = verify.falsify("skew.error.printed", budget=60, seed=0)
    p = res.instance.data["params"]
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert p["rho_tilde"] < p["rho_bar"] and p["Gamma"] > 0
    res = verify.falsify("skew.fedavg_speed.printed", budget=40, seed=0)
    assert res.verdict == "VIOLATED" and res.worst_ratio - 1 > res.certified_error


@pytest.mark.parametrize("bid, mutation", [("skew.speed", "const[32]*2"),
                                           ("skew.vmin", "const[8]/2"),
                                           ("skew.error", "exp[L]+1")])
def test_typo_mutants_are_violated_with_their_certificate(bid, mutation):
    res = verify.falsify(_user(bid, mutation), budget=60, seed=1, **HOW)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error
    assert res.certified_error < 1e-30 * res.worst_ratio


def test_a_saved_result_replays(tmp_path):
    res = verify.falsify(_user("skew.speed", "const[4/3]*2"), budget=40, seed=2,
                         save=tmp_path / "r.json", **HOW)
    back = Falsification.load(tmp_path / "r.json")
    assert back.verdict == res.verdict == "VIOLATED"
    assert back.instance.family == cr.FAMILY
    assert back.instance.replay() == pytest.approx(res.instance.ratio, rel=1e-12)


def test_same_seed_same_result():
    a = verify.falsify("skew.vmin", budget=30, seed=5)
    b = verify.falsify("skew.vmin", budget=30, seed=5)
    assert a.instance.data == b.instance.data and a.worst_ratio == b.worst_ratio


def test_bad_instance_data_are_refused():
    b = boundlab.get("skew.error")
    good = {"quantity": "E_term", "params": dict(PT)}
    assert cr.measure_instance(b, good)[0] == pytest.approx(1.0, abs=1e-12)
    for bad in ({"quantity": "V", "params": PT},  # not this bound's constant
                {"quantity": "other", "params": PT},
                {"quantity": "E_term", "params": {**PT, "mu": -1.0}},
                {"quantity": "E_term", "params": {k: v for k, v in PT.items() if k != "L"}},
                {"quantity": "E_term", "params": {**PT, "E": 2.5}},
                {"quantity": "E_term", "params": {**PT, "L": "2"}},
                {"quantity": "E_term", "params": list(PT.values())}):
        with pytest.raises(DomainError):
            cr.measure_instance(b, bad)


def test_a_parameter_the_induction_lacks_is_not_applicable():
    L, T = boundlab.sym("L"), boundlab.sym("T")
    mine = Bound(id="mine.speed", source="my note", expr=L * T,
                 params=make_params("L", "T"), kind="identity", lhs="speed_constant")
    res = verify.falsify(mine, budget=20, **HOW)
    assert res.verdict == "not-applicable" and "T" in res.reason


def test_points_outside_the_corollarys_class_are_never_judged():
    """mu > L is outside the class the constants are defined on: a stated V that differs from
    the induction only there holds (the user bound has no precondition of its own)."""
    b = boundlab.get("skew.speed")
    mine = dataclasses.replace(b, id="mine.speed_nopre", preconditions=())
    r, _, _ = cr.evaluate(mine, cr.QUANTITIES["V"], {k: np.array([v]) for k, v in
                                                     {**PT, "mu": 3.0}.items()})
    assert r.tolist() == [-np.inf]
    res = verify.falsify(mine, budget=40, seed=0, **HOW)
    assert res.verdict == "holds" and res.instance.data["params"]["mu"] <= \
        res.instance.data["params"]["L"]
