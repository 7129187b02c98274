"""verify.falsify on seed 003's FedProx / beta bounds: the catalogue lemmas and theorems hold
with replayed instances, and a too-strong contraction factor is caught on the real engine."""

from __future__ import annotations

import warnings

import pytest

import boundlab
import verify
from boundlab import Bound, make_params, sym

alpha, beta, mu, gamma, E = sym("alpha"), sym("beta"), sym("mu"), sym("gamma"), sym("E")
L, Gamma, S, sigma, dist_t = sym("L"), sym("Gamma"), sym("S"), sym("sigma"), sym("dist_t")
KAPPA = {"fedprox": (alpha + mu * (1 - gamma * (alpha + mu)) ** E) / (alpha + mu),
         "beta": 1 - 1 / beta + (1 - beta * mu * gamma) ** E / beta}


def _falsify(bid, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify.falsify(bid, seed=0, **kw)


@pytest.mark.parametrize("bid,algo", [("contraction.lemma_a3", "fedprox"),
                                      ("contraction.lemma_b3", "beta"),
                                      ("contraction.fedprox_sc", "fedprox"),
                                      ("contraction.beta_sc", "beta")])
def test_catalogue_bound_holds_with_a_replayed_instance(bid, algo):
    res = _falsify(bid, budget=24)
    assert res.verdict == "holds" and res.instance.run["algorithm"] == algo
    # the float64 replay vs the ratio the certificate gives (mpmath where it replays)
    assert 0 < res.worst_ratio <= 1
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)
    assert any("Gamma" in n for n in res.notes)


@pytest.mark.parametrize("algo,hp,source", [("fedprox", "alpha", "contraction.lemma_a3"),
                                            ("beta", "beta", "contraction.lemma_b3")])
def test_a_too_strong_contraction_factor_is_caught(algo, hp, source):
    """kappa^3 dist_t + 6 E Gamma L gamma^2 (the E^3 G^2 terms dropped, the factor cubed): on
    identical clients of curvature mu the distance contracts by kappa^2 exactly (Gamma = 0), so
    measured / bound = 1 / kappa, computed here from the closed form of kappa."""
    wrong = Bound(id=f"mine.{algo}_kappa_cubed", source="test",
                  expr=KAPPA[algo] ** 3 * dist_t + 6 * E * Gamma * L * gamma**2
                  + E * S * gamma**2 * sigma**2,
                  params=make_params(hp, "mu", "gamma", "E", "dist_t", "sigma", "S", "L",
                                     "Gamma"),
                  kind="upper", lhs="dist_next",
                  preconditions=boundlab.get(source).preconditions)
    boundlab.register(wrong, algorithm=algo, function_class="smooth-strongly-convex")
    try:
        res = _falsify(wrong.id, budget=20)
    finally:
        boundlab.unregister(wrong.id)
    assert res.verdict == "VIOLATED"
    run, spec = res.instance.run, res.instance.plan.spec
    kappa = float(KAPPA[algo].subs({sym(hp): run["prox" if algo == "fedprox" else "beta"],
                                    mu: spec.mu, gamma: run["lr"], E: run["local_steps"]}))
    assert res.instance.replay() == pytest.approx(1 / kappa, rel=1e-9) and 1 / kappa > 1.001
