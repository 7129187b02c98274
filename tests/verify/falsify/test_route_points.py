"""verify.falsify.points_route: DKR's textbook properties (convexity, first-order convexity,
L-smoothness, Young's inequality) judged at searched points and vectors.

Expected values are hand-derived: a quadratic 1-D client f(x) = (a/2)(x - c)^2 in closed form,
inner products of small integer vectors, and the false versions' counterexamples by hand."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import sympy as sp

import boundlab
from boundlab.errors import DomainError
from verify.falsify import Falsification, falsify, routes
from verify.falsify import points_route as pr

PROPS = ("drift.convexity", "drift.first_order_convexity", "drift.smoothness", "drift.young")


def _mutant(bid, expr, new_id):
    """The catalogue bound with another right-hand side, as a user would write it."""
    return dataclasses.replace(boundlab.get(bid), id=new_id, expr=expr, terms={})


def _falsify(bound, budget=80):
    return falsify(bound, budget=budget, seed=0, algorithm="fedavg",
                   function_class="smooth-convex")


def test_registered_as_a_route():
    for bid in PROPS:
        assert routes.route_for(boundlab.get(bid)) is pr
    assert routes.route_for_family("points") is pr


def test_signed_ratio_hand_values():
    r = pr.signed_ratio(np.array([3.0, -1.0, -3.0, 0.0, 1.0]), np.array([2.0, -2.0, -2.0,
                                                                          0.0, -1.0]))
    # 3/2; -1 > -2: 1 + 1/2; -3 < -2: 1 - 1/2; 0 = 0: 1; 1 > -1: 1 + 2/1
    assert r.tolist() == [1.5, 1.5, 0.5, 1.0, 3.0]
    assert pr.signed_ratio(1.0, 0.0) == math.inf and pr.signed_ratio(-1.0, 0.0) == 0.0


@pytest.mark.parametrize("bid", PROPS)
def test_originals_hold(bid):
    res = falsify(bid, budget=120, seed=0)
    assert res.verdict == "holds", res.reason
    assert res.certificate == "mpmath-50"
    assert res.worst_ratio <= 1 + res.certified_error
    assert res.instance.family == "points"


def test_false_convexity_violated_with_certificate():
    # f(lam x + (1-lam) y) <= lam f_x + (1 - lam) f_y / 2: false at lam = 0 wherever f_y > 0
    b = boundlab.get("drift.convexity")
    f_x, f_y, lam = (b.params[n].symbol for n in ("f_x", "f_y", "lam"))
    bad = _mutant("drift.convexity", lam * f_x + (1 - lam) * f_y / 2, "mine.convexity_half")
    res = _falsify(bad)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_false_smoothness_violated():
    # f(y) <= f(x) + <grad f(x), y - x> + (L/8)||y - x||^2 fails on a quadratic of curvature L
    b = boundlab.get("drift.smoothness")
    s = {n: p.symbol for n, p in b.params.items()}
    bad = _mutant("drift.smoothness", s["f_x"] + s["lin"] + s["L"] / 8 * s["dist_xy"],
                  "mine.smooth_eighth")
    res = _falsify(bad)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"


def test_false_young_violated_and_true_variant_holds():
    b = boundlab.get("drift.young")
    lam, a, bb = (b.params[n].symbol for n in ("lam_young", "a_sq", "b_sq"))
    bad = _mutant("drift.young", lam**2 / 4 * a + bb / (4 * lam**2), "mine.young_quarter")
    res = _falsify(bad)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    # b = lam^2 a: <a, b> = lam^2 |a|^2 > (lam^2/4)|a|^2 + lam^2 |a|^2 / 4: ratio exactly 2
    assert res.worst_ratio > 1.5
    # Young's with 1/lam (the inequality is symmetric in lam -> 1/lam): true, holds
    ok = _mutant("drift.young", a / (2 * lam**2) + lam**2 / 2 * bb, "mine.young_swap")
    assert _falsify(ok).verdict == "holds"


def test_first_order_false_with_negative_values():
    # tangent <= 2 f(y): false where f(y) < 0 (an offset): the route searches signed values
    b = boundlab.get("drift.first_order_convexity")
    bad = _mutant("drift.first_order_convexity", 2 * b.params["f_y"].symbol, "mine.fo_twice")
    assert _falsify(bad).verdict == "VIOLATED"


def test_measure_matches_closed_form_quadratic():
    # one client f(x) = 1/2 (x - c)^T A (x - c), A = diag(2, 1), c = 0 (quadratic family form)
    from verify.falsify.families import Spec, get_family

    spec = Spec(L=2.0, mu=0.0, D=1.0, n_clients=1, dim=2)
    fam = get_family("quadratic")
    z = np.zeros(fam.n_vars(spec))
    prob = fam.build(z, spec)[0]
    A, c = np.asarray(prob.A[0]), np.asarray(prob.c[0])
    x, y = np.array([1.0, 0.5]), np.array([-0.5, 2.0])
    f = (lambda v: 0.5 * (v - c) @ A @ (v - c))
    data = {"kind": "function", "family": "quadratic", "z": z.tolist(),
            "spec": dataclasses.asdict(spec) | {}, "client": 0, "x": x.tolist(),
            "y": y.tolist(), "lam": 0.25, "offset": -3.0, "fixed": {}}
    data["spec"] = {k: data["spec"][k] for k in ("L", "mu", "D", "n_clients", "dim")}
    r, lhs, rhs = pr.measure_instance(boundlab.get("drift.convexity"), data)
    assert lhs == pytest.approx(f(0.25 * x + 0.75 * y) - 3.0, rel=1e-14)
    assert rhs == pytest.approx(0.25 * f(x) + 0.75 * f(y) - 3.0, rel=1e-14)
    assert r == pytest.approx(1 + (lhs - rhs) / abs(rhs), rel=1e-14)
    r, lhs, rhs = pr.measure_instance(boundlab.get("drift.first_order_convexity"), data)
    assert lhs == pytest.approx(f(x) + (A @ (x - c)) @ (y - x) - 3.0, rel=1e-14)


def test_young_measure_hand_values():
    data = {"kind": "vectors", "a": [1.0, 2.0], "b": [3.0, -1.0], "lam_young": 2.0,
            "fixed": {}}
    r, lhs, rhs = pr.measure_instance(boundlab.get("drift.young"), data)
    assert (lhs, rhs) == (1.0, 4 / 2 * 5 + 10 / 8)


def test_saved_result_replays(tmp_path):
    res = falsify("drift.smoothness", budget=40, seed=3)
    path = res.save(tmp_path / "pts.json")
    back = Falsification.load(path)
    assert back.verdict == res.verdict and back.instance.family == "points"
    assert back.instance.replay() == pytest.approx(res.instance.ratio, rel=1e-12)


def test_bad_data_refused(tmp_path):
    res = falsify("drift.convexity", budget=30, seed=0)
    path = res.save(tmp_path / "c.json")
    doc = json.loads(open(path).read())
    b = boundlab.get("drift.convexity")
    good = doc["instance"]["data"]
    for key, value in (("lam", 1.5), ("client", 99), ("x", [1.0]), ("family", "nope"),
                       ("offset", "a"), ("kind", "other")):
        with pytest.raises(DomainError):
            pr.measure_instance(b, {**good, key: value})


def test_parameter_not_computed_is_not_applicable():
    b = boundlab.get("drift.smoothness")
    extra = sp.Symbol("kappa_extra", positive=True)
    params = {**b.params, "kappa_extra": dataclasses.replace(b.params["L"], name="kappa_extra",
                                                              symbol=extra)}
    odd = dataclasses.replace(b, id="mine.smooth_extra", expr=b.expr + extra, params=params,
                              terms={})
    res = _falsify(odd)
    assert res.verdict == "not-applicable" and "kappa_extra" in res.reason


def test_same_seed_same_result():
    a = falsify("drift.convexity", budget=40, seed=5)
    b = falsify("drift.convexity", budget=40, seed=5)
    assert a.instance.data == b.instance.data and a.worst_ratio == b.worst_ratio
