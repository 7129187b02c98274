"""verify.falsify.plateau_route: DKR's plateau, the exact limit of FedAvg's time-averaged
shadow gap on quadratic clients (fixed point of the affine round map).

Expected values: a 1-D two-client example solved by hand, and a long run of the real engine
(toys.run, 4000 rounds) whose last round's shadow gap must equal the limit."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import boundlab
import toys
from boundlab.errors import DomainError
from verify.falsify import Falsification, falsify, routes
from verify.falsify import plateau_route as pl
from verify.falsify.families import Spec, get_family
from verify.falsify.population import quantities
from verify.measures import measure


def test_registered_as_a_route():
    assert routes.route_for(boundlab.get("drift.plateau")) is pl
    assert routes.route_for_family("plateau.quadratic") is pl


def test_limit_round_by_hand():
    # F_1 = a/2 (w - 1)^2, F_2 = a/2 (w + 1)^2, p = 1/2 each, tau = 2 steps of eta:
    # by symmetry x_inf = 0; client 1 from 0: w1 = eta a, w2 = eta a (2 - eta a)
    a, eta = 2.0, 0.1
    H, h = np.array([[[a]], [[a]]]), np.array([[-a], [a]])
    x, W = pl.limit_round(H, h, np.array([0.5, 0.5]), eta, 2)
    assert x[0] == pytest.approx(0.0, abs=1e-15)
    assert W[1, 0, 0] == pytest.approx(eta * a, rel=1e-14)
    assert W[2, 0, 0] == pytest.approx(eta * a * (2 - eta * a), rel=1e-14)


def test_fixed_point_matches_a_long_run():
    spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=3, dim=2)
    fam = get_family("quadratic")
    prob = fam.build(np.random.default_rng(0).uniform(-1, 1, fam.n_vars(spec)), spec)[0]
    eta, tau = 0.2, 5
    gap, L, zeta, radius = pl.plateau(prob, eta, tau)
    tr = toys.run(prob, "fedavg", rounds=4000, lr=eta, local_steps=tau, seed=0)
    last = measure("round_avg_gap", quantities(tr))[0][0, -1]
    assert gap > 1e-6 and last == pytest.approx(gap, rel=1e-9)
    assert L == pytest.approx(float(np.linalg.eigvalsh(prob.A).max()), rel=1e-12)
    assert zeta > 0 and radius > 0


def test_original_holds_certified():
    res = falsify("drift.plateau", budget=24, seed=0)
    assert res.verdict == "holds" and res.certificate == "mpmath-50"
    assert 0 < res.worst_ratio < 1
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-8)


def test_false_version_violated():
    # the plateau is ~ tau^2 eta^2 L zeta^2 / 1000 at worst; a bound 1e6 times smaller fails
    b = boundlab.get("drift.plateau")
    bad = dataclasses.replace(b, id="mine.plateau_tiny", expr=b.expr / 10**6, terms={})
    res = falsify(bad, budget=24, seed=0, algorithm="fedavg", function_class="smooth-convex")
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_saved_result_replays_and_bad_data_refused(tmp_path):
    res = falsify("drift.plateau", budget=12, seed=1)
    path = res.save(tmp_path / "p.json")
    back = Falsification.load(path)
    assert back.instance.replay() == pytest.approx(res.instance.ratio, rel=1e-12)
    good = json.loads(open(path).read())["instance"]["data"]
    b = boundlab.get("drift.plateau")
    for key, value in (("tau", 0), ("u", 3.0), ("z", [0.1]), ("spec", {"L": 1.0}),
                       ("tau", True)):
        with pytest.raises(DomainError):
            pl.measure_instance(b, {**good, key: value})
