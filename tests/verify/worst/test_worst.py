"""verify.worst_instance: the search for the instance closest to violating a bound."""

import dataclasses
import json

import numpy as np
import pytest

import boundlab
import verify
from boundlab.errors import DomainError, UnknownNameError
from verify.checks import drift
from verify.compare import compare
from verify.worst import DEFAULT_BUDGET, Family, replay

DRIFT = boundlab.get("drift.client_drift")
#: a typo-like mutant: Lemma 2.3 with 18 printed as 0.6 (scale 1/30). On quadratic clients the
#: drift reaches ~1/18 of 18 tau^2 eta^2 zeta^2 when eta * lambda is small, so the mutant is
#: false on instances of its class; on the fixed seed-004 toy it still "holds" (ratio ~6).
SCALE = 30.0


def _planted():
    return dataclasses.replace(DRIFT, id="planted.client_drift_over_30",
                               expr=DRIFT.expr / SCALE, terms={})


def test_family_holds_its_constants_fixed():
    fam = Family(n_clients=3, dim=2, L=2.0, mu=0.5, heterogeneity="Gamma", value=0.7, D=1.5)
    rng = np.random.default_rng(0)
    for _ in range(5):
        prob, x0 = fam.instance(rng.uniform(-1, 1, fam.n_vars))
        eig = np.linalg.eigvalsh(prob.A)
        assert eig.min() >= 0.5 - 1e-12 and eig.max() <= 2.0 + 1e-12
        assert prob.Gamma == pytest.approx(0.7, rel=1e-10)
        assert np.linalg.norm(x0 - prob.x_star) == pytest.approx(1.5, rel=1e-12)
    zf = Family(n_clients=3, dim=2, L=1.0, mu=0.01, heterogeneity="zeta", value=0.4,
                shared_hessian=True)
    prob, _ = zf.instance(rng.uniform(-1, 1, zf.n_vars))
    dev = np.einsum("nij,nj->ni", prob.A, prob.c - prob.p @ prob.c)
    assert np.max(np.linalg.norm(dev, axis=1)) == pytest.approx(0.4, rel=1e-10)


def test_planted_false_bound_is_found_violated_within_the_default_budget(tmp_path):
    planted = _planted()
    # the planted bound still holds on the fixed toy the suite checks
    prob, consts = drift._toy()
    tr = drift._theory_run(10, 20)
    params = drift._params(consts, 10, 20, prob.n_clients)
    fixed = compare(planted, [float(np.nanmax(tr.drift_max))], params=params)
    assert fixed.verdict == "holds" and fixed.ratio < 0.5  # measured / bound
    # ... and the search, with the toy's constants held fixed, drives it above 1
    c = consts.as_params()
    w = verify.worst_instance(planted, "quadratic", budget=DEFAULT_BUDGET, seed=0,
                              setting={"L": c["L"], "zeta": c["zeta"], "tau": 10, "rounds": 3},
                              save=tmp_path / "planted.json")
    assert w.verdict == "VIOLATED" and w.ratio > 1.0
    assert w.evaluations <= DEFAULT_BUDGET and len(w.trace) == w.evaluations
    assert w.params["eta"] <= 1 / (4 * c["L"]) * (1 + 1e-12)  # within the preconditions
    assert w.params["zeta"] == pytest.approx(c["zeta"]) and w.params["L"] == c["L"]
    # the saved instance replays to the same measurement
    data = json.loads((tmp_path / "planted.json").read_text())
    assert data["verdict"] == "VIOLATED" and w.path == str(tmp_path / "planted.json")
    again = replay(tmp_path / "planted.json", bound=planted)
    assert again["ratio"] == pytest.approx(w.ratio, rel=1e-9)
    # the true Lemma 2.3 holds on the same instance
    assert replay(tmp_path / "planted.json", bound=DRIFT)["ratio"] == pytest.approx(
        w.ratio / SCALE, rel=1e-9)


def test_the_catalogue_bound_itself_is_not_driven_above_one():
    w = verify.worst_instance(DRIFT, budget=60, seed=1)
    assert w.verdict == "holds" and 0 < w.ratio < 1
    assert np.all(np.diff(w.best) >= 0) and w.best[-1] == pytest.approx(w.ratio)


def test_same_seed_same_search():
    a = verify.worst_instance("contraction.fedprox_sc", budget=12, seed=3,
                              setting={"rounds": 5})
    b = verify.worst_instance("contraction.fedprox_sc", budget=12, seed=3,
                              setting={"rounds": 5})
    assert np.array_equal(a.trace, b.trace) and a.ratio == b.ratio
    assert a.params["t"] >= 1  # t = 0 (trivial) is never the worst round


def test_beta_instances_use_their_graph_weights():
    w = verify.worst_instance("contraction.beta_sc", budget=10, seed=0, setting={"rounds": 4})
    p = np.asarray(w.instance["weights"])
    assert not np.allclose(p, p[0])  # graph weights, not uniform
    assert w.params["S"] == pytest.approx(float(np.sum(p ** 2)))


@pytest.mark.parametrize("kw, err", [
    ({"bound": "weight_error.interval_mean"}, DomainError),   # not an upper bound
    ({"bound": "weight_error.average"}, UnknownNameError),    # no measure for its lhs
    ({"bound": "drift.plateau", "family": "cubic"}, UnknownNameError),
    ({"bound": "drift.plateau", "budget": 3}, DomainError),
    ({"bound": "drift.plateau", "seed": -1}, DomainError),
])
def test_bad_input_is_refused(kw, err):
    kw = dict(kw)
    with pytest.raises(err):
        verify.worst_instance(kw.pop("bound"), **kw)
