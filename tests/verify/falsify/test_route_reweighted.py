"""verify.falsify.reweighted_route: FedAU's Lemma B.3.1 (max_n sup ||grad F_n - grad f~||^2 <=
4 delta^2), both suprema exact on quadratic clients.

Expected values: two clients sharing one Hessian A = a I with centres +-c: grad F_n - grad f
= +-a c (constant), so delta = a|c| and at the vertex phi = e_1 the left side is (2 a |c|)^2 =
4 delta^2 (the constant is attained)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import boundlab
from boundlab.errors import DomainError
from verify.falsify import Falsification, falsify, routes
from verify.falsify import reweighted_route as rw
from verify.falsify.families import Spec, get_family


def test_registered_as_a_route():
    assert routes.route_for(boundlab.get("weight_error.lemma_b31")) is rw


def test_attained_constant_by_hand():
    # one Hessian for both clients (z's Hessian variables of client 0 copied), vertex phi
    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=2, dim=2)
    fam = get_family("quadratic")
    z = np.random.default_rng(0).uniform(-1, 1, fam.n_vars(spec))
    z[4:8], z[10:12] = z[:4], z[8:10]
    prob = fam.build(z, spec)[0]
    assert np.allclose(prob.A[0], prob.A[1])
    c = np.asarray(prob.c)
    delta = np.linalg.norm(prob.A[0] @ (c[0] - c[1]) / 2)  # ||grad F_1 - grad f||, constant
    r, lhs, rhs, d = rw.evaluate(boundlab.get("weight_error.lemma_b31"), z, spec,
                                 np.array([1.0, 0.0]), 0.7, {})
    assert d == pytest.approx(delta, rel=1e-10)
    assert lhs == pytest.approx(4 * delta**2, rel=1e-10) and r == pytest.approx(1.0, rel=1e-9)


def test_original_holds_tight():
    res = falsify("weight_error.lemma_b31", budget=40, seed=0)
    assert res.verdict == "holds" and res.certificate == "float64-only"
    assert res.worst_ratio == pytest.approx(1.0, abs=1e-6)


def test_false_version_violated():
    b = boundlab.get("weight_error.lemma_b31")
    bad = dataclasses.replace(b, id="mine.b31_three", expr=3 * b.params["delta"].symbol**2,
                              terms={})
    res = falsify(bad, budget=40, seed=0, algorithm="fedau", function_class="smooth-nonconvex")
    assert res.verdict == "VIOLATED" and res.worst_ratio == pytest.approx(4 / 3, rel=1e-6)


def test_saved_result_replays_and_bad_data_refused(tmp_path):
    res = falsify("weight_error.lemma_b31", budget=20, seed=2)
    path = res.save(tmp_path / "w.json")
    assert Falsification.load(path).instance.replay() == pytest.approx(res.worst_ratio)
    good = json.loads(open(path).read())["instance"]["data"]
    b = boundlab.get("weight_error.lemma_b31")
    for key, value in (("phi", [0.7, 0.7]), ("radius", -1.0), ("z", [0.0]),
                       ("spec", None), ("phi", "x")):
        with pytest.raises(DomainError):
            rw.measure_instance(b, {**good, key: value})
