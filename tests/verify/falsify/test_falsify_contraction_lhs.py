"""verify.falsify on seed 003's left-hand sides that were not applicable before: the beta
algorithm's neighbour averages and perturbed points (Lemmas B.1, B.2: record="step" runs with
the extra steps of toys), Lemma A.3 / B.3's kappa and eq. (9)'s factors (the route
verify.falsify.kappa_route). The originals hold, hand-made false versions are VIOLATED (the
kappa route with an mpmath-50 certificate), and saved results replay."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import warnings

import mpmath
import numpy as np
import pytest

import boundlab
import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError
from verify.falsify import kappa_route
from verify.falsify.plan import NotApplicable

alpha, beta, mu, L, gamma, E = (sym(n) for n in ("alpha", "beta", "mu", "L", "gamma", "E"))
G, gp = sym("G"), sym("gamma_prev")


def _falsify(b, budget=20, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify.falsify(b, budget=budget, seed=0, exact=False, **kw)


def _variant(source, expr, names, kind=None):
    """A Bound of ``source``'s lhs, kind and preconditions with ``expr`` (params ``names``)."""
    ref = boundlab.get(source)
    return Bound(id=f"mine.{source.replace('.', '_')}_variant", source="test", expr=expr,
                 params=make_params(*names), kind=kind or ref.kind, lhs=ref.lhs,
                 preconditions=ref.preconditions)


def _registered(b, source, **kw):
    meta = boundlab.registry.meta(source)
    boundlab.register(b, algorithm=meta["algorithm"], function_class=meta["function_class"])
    try:
        return _falsify(b.id, **kw)
    finally:
        boundlab.unregister(b.id)


# ----------------------------------------------------------------- Lemmas B.1 and B.2 (runs)
@pytest.mark.parametrize("bid", ["contraction.lemma_b1", "contraction.lemma_b2"])
def test_the_beta_lemmas_are_searched_and_hold(bid):
    res = _falsify(bid)
    assert res.verdict == "holds", res.reason
    assert res.evaluations > 0 and 0 < res.worst_ratio <= 1
    assert res.instance.run["algorithm"] == "beta"
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)


# Lemma B.1 with N = 3 clients of the uniform graph: u_0 - u_1 = gamma (g_0 - g_1)/2 after one
# local step, so a 40th of 4 gamma^2 E^2 G^2 is exceeded (the search finds ~0.2 of it);
# Lemma B.2 at t >= 1, E = 1: ||wbar - w~_i||^2 = (1 - beta)^2 ||x_t - u_i||^2, of the order of
# gamma^2 G^2 / 10, a thousand times the variant below
FALSE_B = [("contraction.lemma_b1", gp**2 * E**2 * G**2 / 10, ("gamma_prev", "E", "G"), 1.5),
           ("contraction.lemma_b2", gp**2 * E**2 * G**2 * (1 - beta)**2 / 10**4,
            ("gamma_prev", "E", "G", "beta"), 1.5)]


@pytest.mark.parametrize("source,expr,names,least", FALSE_B, ids=[f[0] for f in FALSE_B])
def test_a_false_beta_lemma_is_violated_on_the_real_engine(source, expr, names, least):
    res = _registered(_variant(source, expr, names), source)
    assert res.verdict == "VIOLATED", res.reason
    assert res.worst_ratio >= least
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)


# ----------------------------------------------------------------- kappa and the factors (route)
def _kappa_closed(algo, h, m, g, e):
    """Lemma A.3's / B.3's kappa written here (mpmath), for the replay's check."""
    h, m, g = mpmath.mpf(h), mpmath.mpf(m), mpmath.mpf(g)
    if algo == "beta":
        return 1 - 1 / h + (1 / h) * (1 - h * m * g) ** e
    return (h + m * (1 - g * (h + m)) ** e) / (h + m)


@pytest.mark.parametrize("algo,h,m,g,e", [
    ("fedprox", 0.7, 0.5, 0.3, 4), ("fedprox", 0.0, 2.0, 0.9, 7), ("beta", 0.35, 0.2, 0.45, 6),
    ("beta", 1.0, 1.5, 1.2, 3), ("fedprox", 3.0, 0.3, 0.6, 5)])
def test_the_measured_kappa_is_the_lemmas_kappa(algo, h, m, g, e):
    with mpmath.workdps(60):
        want = _kappa_closed(algo, h, m, g, e)
        assert abs(kappa_route.kappa_mp(algo, h, m, g, e) - want) < mpmath.mpf(10) ** -50
    measured = kappa_route._measured(algo, h, m, g, e)  # one round of toys.run
    assert measured == pytest.approx(float(want), rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("bid", ["contraction.fedprox_kappa", "contraction.beta_kappa",
                                 "contraction.fedavg_factor", "contraction.fedprox_factor",
                                 "contraction.beta_factor"])
def test_the_kappas_and_factors_hold_with_an_mpmath_certificate(bid):
    res = _falsify(bid, budget=30)
    assert res.verdict == "holds", res.reason
    assert res.certificate == "mpmath-50" and res.certified_error < 1e-40
    if boundlab.get(bid).kind == "identity":
        assert res.worst_ratio == 1.0  # equal within the replay's rounding
    else:
        assert 0 < res.worst_ratio < 1
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-9)


# false versions: kappa with E + 1 steps, the beta algorithm's kappa without beta in the base;
# the factors below kappa at E = 1 (kappa = 1 - mu gamma: 1 - mu/(2(L + alpha)), 1 - mu/(2L))
# and FedAvg's 1 - mu/(2L) < (1 - mu/(2EL))^E for E >= 2 (Bernoulli)
FALSE_K = [("contraction.fedprox_kappa", (alpha + mu * (1 - gamma * (alpha + mu)) ** (E + 1))
            / (alpha + mu), ("alpha", "mu", "gamma", "E")),
           ("contraction.beta_kappa", 1 - 1 / beta + (1 - mu * gamma) ** E / beta,
            ("beta", "mu", "gamma", "E")),
           ("contraction.fedavg_factor", 1 - mu / (2 * L), ("mu", "L")),
           ("contraction.fedprox_factor", 1 - mu / (L + alpha), ("mu", "L", "alpha")),
           ("contraction.beta_factor", 1 - mu / ((beta + 1) * L), ("mu", "L", "beta"))]


@pytest.mark.parametrize("source,expr,names", FALSE_K, ids=[f[0] for f in FALSE_K])
def test_a_false_kappa_or_factor_is_violated_with_a_certificate(source, expr, names):
    res = _registered(_variant(source, expr, names), source, budget=30)
    assert res.verdict == "VIOLATED", res.reason
    assert res.certificate == "mpmath-50" and res.worst_ratio - 1 > 1e3 * res.certified_error
    with mpmath.workdps(60):  # the instance's kappa, by the closed form written here
        d = res.instance.data
        step = d["gamma"]
        want = _kappa_closed(d["algorithm"], d["hyper"] or 0.0, d["mu"], step, d["E"])
        assert abs(float(want) - res.instance.lhs) <= 1e-9 * (1 + abs(float(want)))


def test_an_unregistered_bound_gets_its_algorithm_from_its_parameters():
    b = _variant("contraction.beta_factor", 1 - mu / ((beta + 1) * L), ("mu", "L", "beta"))
    res = _falsify(b, budget=20, algorithm="beta", function_class="smooth-strongly-convex")
    assert res.verdict == "VIOLATED" and res.instance.run["algorithm"] == "beta"
    assert kappa_route.algorithm_of(_variant("contraction.fedavg_factor", 1 - mu / L,
                                             ("mu", "L"))) == "fedavg"
    with pytest.raises(NotApplicable, match="lemma_kappa"):
        kappa_route.algorithm_of(_variant("contraction.fedprox_kappa", (1 - gamma * mu) ** E,
                                          ("mu", "gamma", "E")))


def test_a_parameter_neither_searched_nor_given_is_not_applicable():
    b = _variant("contraction.fedprox_kappa", sym("S") * (alpha + mu * (1 - gamma * (
        alpha + mu)) ** E) / (alpha + mu), ("alpha", "mu", "gamma", "E", "S"))
    res = _falsify(b, algorithm="fedprox", function_class="smooth-strongly-convex")
    assert res.verdict == "not-applicable" and "S" in res.reason
    res = _falsify(b, algorithm="fedprox", function_class="smooth-strongly-convex", S=1.0)
    assert res.verdict == "holds" and res.worst_ratio == 1.0  # S = 1: the lemma's kappa
    res = _falsify(b, algorithm="fedprox", function_class="smooth-strongly-convex", S=0.5)
    assert res.verdict == "VIOLATED"


def test_saved_instances_are_validated():
    bound = boundlab.get("contraction.fedavg_factor")
    good = {"algorithm": "fedavg", "hyper": None, "mu": 0.5, "L": 1.0, "gamma": 0.25, "E": 2,
            "fixed": {}}
    r, m, s = kappa_route.measure_instance(bound, good)
    assert m == pytest.approx((1 - 0.5 * 0.25) ** 2, rel=1e-14) and s == pytest.approx(1 - 1 / 6)
    for key, bad in (("algorithm", "sgd"), ("E", True), ("E", 0), ("mu", -1.0),
                     ("gamma", 0.3), ("fixed", {"a": "x"})):
        with pytest.raises(DomainError):
            kappa_route.measure_instance(bound, {**good, key: bad})
    with pytest.raises(DomainError, match="beta"):
        kappa_route.measure_instance(boundlab.get("contraction.beta_kappa"),
                                     {**good, "algorithm": "beta", "hyper": 1.5})


def test_a_saved_result_replays_in_a_new_process(tmp_path):
    b = dataclasses.replace(_variant("contraction.beta_kappa", 1 - 1 / beta + (1 - mu * gamma)
                                     ** E / beta, ("beta", "mu", "gamma", "E")),
                            id="mine.kappa_save")
    res = verify.falsify(b, budget=20, seed=0, save=tmp_path / "r.json", algorithm="beta",
                         function_class="smooth-strongly-convex")
    assert res.verdict == "VIOLATED"
    code = ("import sys, json; from verify.falsify import Falsification; "
            "r = Falsification.load(sys.argv[1]); "
            "print(json.dumps([r.verdict, r.certificate, r.instance.replay()]))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]  # the new process's traceback, if any
    verdict, cert, ratio = json.loads(out.stdout.strip().splitlines()[-1])
    assert verdict == "VIOLATED" and cert == "mpmath-50"
    assert ratio == res.instance.replay() and math.isfinite(ratio) and ratio > 1
    assert res.worst_ratio == pytest.approx(ratio, rel=1e-9)


def test_the_theorem_step_is_the_theorems():
    assert kappa_route.theorem_step("fedavg", None, 2.0, 5) == 1 / 20
    assert kappa_route.theorem_step("fedprox", 1.0, 2.0, 5) == 1 / 30
    assert kappa_route.theorem_step("beta", 0.3, 2.0, 5) == 1 / 20
    assert np.allclose(kappa_route.theorem_step("beta", np.ones(2), np.array([1.0, 2.0]), 2),
                       [0.25, 0.125])
