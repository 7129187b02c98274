"""verify.falsify.softmax_route: FedSoftMax's 1/pi <= exp(x_range/Temp) on engine runs.

Expected values by hand: in one round from w_0 = 0 with every client, FedSoftMax weighs
alpha_i = p_i exp(x_i/T) / sum_j p_j exp(x_j/T), so pi = exp(x_min/T) / sum_j p_j exp(x_j/T)
(x_i = F_i(0) - F_i*, from the problem, not from the engine's weights)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import boundlab
import toys
from boundlab.errors import DomainError
from verify.falsify import Falsification, falsify, routes
from verify.falsify import softmax_route as sm

INST = {"n_clients": 3, "dim": 2, "L": 4.0, "mu": 1.0, "heterogeneity": 0.5, "seed": 3,
        "p": [0.2, 0.3, 0.5], "temperature": 0.7, "rounds": 1, "participants": 3,
        "fixed": {}}


def test_registered_as_a_route():
    assert routes.route_for(boundlab.get("skew.softmax_kappa_min")) is sm


def test_one_round_by_hand():
    prob = toys.make("quadratic", **{k: INST[k] for k in ("n_clients", "dim", "L", "mu",
                                                          "heterogeneity", "seed")},
                     weights=np.array(INST["p"]))
    x = np.asarray(prob.losses(np.zeros(2))) - np.asarray(prob.F_star_i)
    T, p = INST["temperature"], np.array(INST["p"])
    pi = np.exp(x.min() / T) / np.sum(p * np.exp(x / T))
    r, lhs, rhs, xr = sm.measure_instance(boundlab.get("skew.softmax_kappa_min"), INST)
    assert lhs == pytest.approx(1 / pi, rel=1e-10)
    assert xr == pytest.approx(x.max() - x.min(), rel=1e-12)
    assert rhs == pytest.approx(np.exp(xr / T), rel=1e-12) and r < 1


def test_original_holds_and_false_version_violated():
    assert falsify("skew.softmax_kappa_min", budget=12, seed=0).verdict == "holds"
    b = boundlab.get("skew.softmax_kappa_min")
    bad = dataclasses.replace(b, id="mine.softmax_half", expr=b.expr / 2, terms={})
    res = falsify(bad, budget=12, seed=0, algorithm="fedsoftmax",
                  function_class="smooth-strongly-convex")
    assert res.verdict == "VIOLATED" and res.certificate == "float64-only"


def test_saved_result_replays_and_bad_data_refused(tmp_path):
    res = falsify("skew.softmax_kappa_min", budget=10, seed=1)
    path = res.save(tmp_path / "s.json")
    assert Falsification.load(path).instance.replay() == pytest.approx(res.worst_ratio)
    good = json.loads(open(path).read())["instance"]["data"]
    b = boundlab.get("skew.softmax_kappa_min")
    for key, value in (("rounds", 0), ("p", [1.0]), ("temperature", -1.0), ("seed", 1.5),
                       ("mu", 1e9)):
        with pytest.raises(DomainError):
            sm.measure_instance(b, {**good, key: value})
