"""verify.falsify on the catalogue's defined quantities (verify.falsify.argmin_route): Corollary
4's cutoff, the minimiser of the (B.6.9) bound over K, and Corollary 1's E_opt, measured by
their defining property and judged as identities."""

import dataclasses
import math

import numpy as np
import pytest

import boundlab
import verify
from boundlab import Bound, make_params
from boundlab.errors import DomainError
from verify.falsify import Falsification, routes
from verify.falsify import argmin_route as ar
from verify.falsify.mutants import mutants

IDS = ("weight_error.cutoff_cor4", "weight_error.cutoff_opt", "contraction.corollary1_e_opt")
HOW = {"weight_error": {"algorithm": "fedau", "function_class": "smooth-nonconvex"},
       "contraction": {"algorithm": "beta", "function_class": "smooth-nonconvex"}}


def _user(bound, mutation):
    """The mutant ``mutation`` of ``bound``, as a user's bound (new id) and its setting."""
    m = next(m for m in mutants(bound) if m.id == f"{bound.id}~{mutation}")
    return dataclasses.replace(m, id="mine.typo"), HOW[bound.family]


def test_the_route_judges_the_defined_quantities():
    for bid in IDS:
        assert routes.route_for(boundlab.get(bid)) is ar
    assert routes.route_for_family("identity.argmin") is ar


def test_hand_computed_roots_and_minimisers():
    # (1/2)^(2K) = 1/16 at K = 2; T = 1: K = 0
    x = ar.solve("cutoff_cor4", {"p": np.array([0.5, 0.5]), "T": np.array([16.0, 1.0])})
    np.testing.assert_allclose(x, [2.0, 0.0], rtol=1e-13, atol=0)
    # r(E) = 4/sqrt(T E) + 4 E / T (L = Delta = S = G = beta = 1, sigma = 0): r'(E) = 0 at
    # E^(3/2) = sqrt(T)/2, E = (T/4)^(1/3) = 2 at T = 32
    e = dict(L=1.0, Delta=1.0, S=1.0, sigma=0.0, G=1.0, beta=1.0, T=32.0)
    assert ar.solve("e_opt", {k: np.array([v]) for k, v in e.items()})[0] == pytest.approx(2.0,
                                                                                           1e-13)
    x, w = ar.solve_mp("e_opt", e, 50, 2.0)
    assert abs(x - 2) < 1e-45 and w < 1e-44
    # no initial gap nor noise: r(E) = B E / T decreases to E -> 0
    zero = {**e, "Delta": 0.0}
    assert ar.solve("e_opt", {k: np.array([v]) for k, v in zero.items()})[0] == 0.0


def test_the_b69_minimiser_equals_a_direct_minimisation():
    """The bisection on the derivative vs golden-section minimisation of the (B.6.9) bound,
    written out here, over K >= 1 (bounded scalar minimisation, an independent method)."""
    from scipy.optimize import minimize_scalar

    for p, T in ((0.1, 2000), (0.02, 50000), (0.6, 30), (0.9, 5)):
        f = (lambda K, p=p, T=T: (3 * K + 2 * K * math.log(T)) / T + (1 - p) ** (2 * K))
        ref = minimize_scalar(f, bounds=(1.0, 1e4), method="bounded",
                              options={"xatol": 1e-10}).x
        got = ar.solve("cutoff_opt", {"p": np.array([p]), "T": np.array([float(T)])})[0]
        assert got == pytest.approx(ref, rel=1e-6, abs=1e-6)
        assert f(got) <= f(ref) + 1e-14
    # p = 0.9, T = 5: the derivative is positive at K = 1, the minimiser is the end K = 1
    assert ar.solve_mp("cutoff_opt", {"p": 0.9, "T": 5.0}, 50, 1.0) == (1, 0)


@pytest.mark.parametrize("bid", IDS)
def test_the_catalogue_originals_hold_tight(bid):
    res = verify.falsify(bid, budget=40, seed=0)
    assert res.verdict == "holds" and res.certificate == "mpmath-50"
    assert abs(res.worst_ratio - 1) <= res.certified_error < 1e-40
    assert "tight" in res.reason


@pytest.mark.parametrize("bid, mutation", [
    ("weight_error.cutoff_cor4", "const[-1/2]*2"),
    ("weight_error.cutoff_opt", "const[3]*2"),
    ("contraction.corollary1_e_opt", "exp[T**(1/3)]-1"),
])
def test_typo_mutants_are_violated_with_their_certificate(bid, mutation):
    user, how = _user(boundlab.get(bid), mutation)
    res = verify.falsify(user, budget=60, seed=1, **how)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error
    assert res.certified_error < 1e-30 * res.worst_ratio
    # the stated value at the instance really is not the defined quantity (the float64
    # search's x* is close to the certificate's; 1 - p loses digits of a small p in float64)
    inst = res.instance
    x = ar.solve_mp(inst.data["definition"], inst.data["params"], 50, inst.lhs)[0]
    assert float(x) == pytest.approx(inst.lhs, rel=1e-4)
    assert routes.identity_ratio(float(x), inst.rhs) == pytest.approx(res.worst_ratio, 1e-3)


def test_a_bound_not_real_at_the_instance_is_violated():
    user, how = _user(boundlab.get("weight_error.cutoff_opt"), "const[1#2]*2")  # log(2 - p)
    res = verify.falsify(user, budget=30, seed=0, **how)
    assert res.verdict == "VIOLATED" and res.worst_ratio == math.inf
    assert "not a finite real number" in res.reason


def test_a_saved_result_replays(tmp_path):
    user, how = _user(boundlab.get("contraction.corollary1_e_opt"), "const[4]*2")
    res = verify.falsify(user, budget=40, seed=2, save=tmp_path / "r.json", **how)
    back = Falsification.load(tmp_path / "r.json")
    assert back.verdict == res.verdict == "VIOLATED"
    assert back.instance.family == "identity.argmin"
    assert back.instance.replay() == pytest.approx(res.instance.ratio, rel=1e-12)
    ok = verify.falsify("weight_error.cutoff_cor4", budget=30, seed=0, save=tmp_path / "o.json")
    assert Falsification.load(tmp_path / "o.json").instance.replay() == \
        pytest.approx(ok.instance.ratio, rel=1e-12)


def test_same_seed_same_result():
    a = verify.falsify("weight_error.cutoff_opt", budget=30, seed=5)
    b = verify.falsify("weight_error.cutoff_opt", budget=30, seed=5)
    assert a.instance.data == b.instance.data and a.worst_ratio == b.worst_ratio


def test_bad_instance_data_are_refused():
    b = boundlab.get("weight_error.cutoff_cor4")
    good = {"definition": "cutoff_cor4", "params": {"p": 0.5, "T": 16.0}}
    assert ar.measure_instance(b, good)[0] == pytest.approx(1.0, abs=1e-12)
    for bad in ({"definition": "other", "params": good["params"]},
                {"definition": "cutoff_opt", "params": good["params"]},  # not this bound's
                {"definition": "cutoff_cor4", "params": {"p": 0.5}},
                {"definition": "cutoff_cor4", "params": {"p": 1.5, "T": 16.0}},
                {"definition": "cutoff_cor4", "params": {"p": 0.5, "T": 2.5}},
                {"definition": "cutoff_cor4", "params": {"p": "0.5", "T": 16.0}},
                {"definition": "cutoff_cor4", "params": {"p": True, "T": 16.0}},
                {"definition": "cutoff_cor4", "params": [0.5, 16.0]}):
        with pytest.raises(DomainError):
            ar.measure_instance(b, bad)


def test_an_ambiguous_cutoff_is_not_applicable():
    p, T = boundlab.sym("p"), boundlab.sym("T")
    mine = Bound(id="mine.cutoff", source="my note", expr=T / p,
                 params=make_params("p", "T"), kind="identity", lhs="cutoff")
    res = verify.falsify(mine, budget=20, **HOW["weight_error"])
    assert res.verdict == "not-applicable" and "two quantities" in res.reason
