"""verify.falsify searches the catalogue bounds whose left-hand sides the population runs now
record (rho, the round's average gradient at the virtual averages, DKR's pairwise drift, BC's
local deviation and divergence): each true bound holds with an instance that replays to its
ratio, and a clearly false variant is VIOLATED on the real engine."""

from __future__ import annotations

import warnings

import pytest

import boundlab
import verify
from boundlab import Bound, make_params, sym

eta, zeta, k, d_k = sym("eta"), sym("zeta"), sym("k"), sym("d_k")
gamma, E, G, dec, p_min = sym("gamma"), sym("E"), sym("G"), sym("decrease"), sym("p_min")


def _falsify(b, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify.falsify(b, budget=20, seed=0, exact=False, **kw)


@pytest.mark.parametrize("bid", ["skew.rho_range", "contraction.lemma_a4",
                                 "contraction.lemma_a4.printed", "contraction.lemma_b4",
                                 "drift.client_drift_exact", "drift.drift_recursion",
                                 "contraction.lemma_a1", "contraction.lemma_a2"])
def test_the_catalogue_bound_is_searched_and_holds(bid):
    res = _falsify(bid)
    assert res.verdict == "holds", res.reason
    assert res.evaluations > 0 and 0 < res.worst_ratio <= 1 + 1e-9
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)


def _false(source, expr, params, extra=()):
    """A variant of ``source`` (same lhs, preconditions, algorithm and class) with ``expr``."""
    ref = boundlab.get(source)
    meta = boundlab.registry.meta(source)
    return Bound(id=f"mine.{source.replace('.', '_')}_false", source="test", expr=expr,
                 params=make_params(*params), extra_params=make_params(*extra), kind="upper",
                 lhs=ref.lhs, preconditions=ref.preconditions), meta


# (source, a clearly false expression, its params, extra params, the least ratio expected):
# rho = 1 for FedAvg with full participation, p_min <= 1/3 with N = 3: rho / (2 p_min) >= 1.5;
# one local step moves a client by gamma g: deviation = gamma^2 ||g||^2 = E^2 G^2 gamma^2 at
# E = 1 for the largest gradient, and a client's distance to the average is up to twice
# that (4 E^2 G^2 gamma^2, Lemma A.2; a sixteenth of it is exceeded); the first step
# separates two clients by eta ||g_i - g_j||,
# up to 2 eta zeta apart (tilts of norm zeta); a round's average ||grad F||^2 is about
# decrease / (E gamma) for small steps, twice the halved bound
FALSE = [("skew.rho_range", 2 * p_min, ("p_min",), (), 1.4),
         ("contraction.lemma_a1", E**2 * G**2 * gamma**2 / 2, ("gamma", "E", "G"),
          ("alpha",), 1.9),
         ("contraction.lemma_a2", E**2 * G**2 * gamma**2 / 16, ("gamma", "E", "G"),
          ("alpha",), 1.5),
         ("drift.client_drift_exact", eta**2 * zeta**2 * k / 2, ("eta", "zeta", "k"), ("L", "tau"),
          1.5),
         ("drift.drift_recursion", d_k + eta**2 * zeta**2 / 2, ("d_k", "eta", "zeta"), ("L",),
          1.5),
         ("contraction.lemma_a4", dec / (2 * E * gamma), ("decrease", "E", "gamma"),
          ("L", "alpha"), 1.5)]


@pytest.mark.parametrize("source,expr,params,extra,least", FALSE, ids=[f[0] for f in FALSE])
def test_a_false_variant_is_violated_on_the_real_engine(source, expr, params, extra, least):
    wrong, meta = _false(source, expr, params, extra)
    boundlab.register(wrong, algorithm=meta["algorithm"],
                      function_class=meta["function_class"])
    try:
        res = _falsify(wrong.id)
    finally:
        boundlab.unregister(wrong.id)
    assert res.verdict == "VIOLATED", res.reason
    assert res.worst_ratio >= least
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)
