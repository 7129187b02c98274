"""Partial participation in verify.falsify: masks drawn once per search point, the population
(toys.run_many) against toys.run under the same masks, and a bound true for full participation
caught under Bernoulli participation (proved false here by hand first)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError
from verify.falsify._plan_parts import canonical
from verify.falsify._plan_parts import draw_masks as masks
from verify.falsify.families import Spec, get_family
from verify.falsify.population import quantities
from verify.falsify.toys_map import toys_call

SPEC = Spec(L=2.0, mu=0.3, D=1.5, n_clients=3, dim=2)
PATTERNS = ("bernoulli:p=0.5", "cyclic:p=0.5,cycle=4", "markov:p=0.5,rate=0.25")


def _falsify(bid, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return verify.falsify(bid, seed=0, **kw)


def test_masks_are_drawn_once_per_search_point():
    Z = np.random.default_rng(0).uniform(-1, 1, (400, 5))
    m = masks("bernoulli:p=0.25", Z, rounds=6, n_clients=3)
    assert m.shape == (400, 6, 3) and m.dtype == bool
    assert np.array_equal(m, masks("bernoulli:p=0.25", Z.copy(), rounds=6, n_clients=3))
    assert abs(m.mean() - 0.25) < 0.03  # 7200 Bernoulli(1/4) draws: 5 standard deviations
    h = masks("bernoulli:p=0.5", Z, rounds=6, n_clients=3)  # 2^18 equally likely draws
    assert len({h[k].tobytes() for k in range(400)}) >= 397  # other points, other draws
    # cyclic, p = 1/2 of a 4-round cycle: every client alternates 2 rounds on, 2 off
    c = masks("cyclic:p=0.5,cycle=4", Z[:20], rounds=12, n_clients=3).astype(int)
    assert np.all(c[:, :-4] == c[:, 4:]) and np.all(c.reshape(20, 3, 4, 3).sum(axis=2) == 2)


def test_pattern_names_and_grids():
    assert canonical("full", 3) == () and canonical(None, 3) == ()
    assert canonical("markov", 3) == ("markov:p=0.25,rate=0.25", "markov:p=0.5,rate=0.25")
    assert len(canonical("any", 3)) == 7
    with pytest.raises(DomainError, match="p"):
        canonical("bernoulli:p=1.5", 3)


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("algo,hyper", [("fedavg", {}), ("fedprox", {"alpha": 0.7}),
                                        ("fedsoftmax", {"temperature": 0.5})])
def test_population_partial_participation_matches_toys_run(pattern, algo, hyper,
                                                           run_population):
    fam = get_family("quadratic")
    Z = np.random.default_rng(5).uniform(-1, 1, (4, fam.n_vars(SPEC)))
    R, tau = 6, 2
    m = masks(pattern, Z, R, 3)
    assert not m.all() and m.any()
    eta = np.array([0.1, 0.2, 0.3, 0.4])
    st = fam.stack(Z, SPEC)
    q = run_population(st, eta, rounds=R, tau=tau, algo=algo, hyper=hyper, masks=m)
    name, kw = toys_call(algo, hyper, 3)
    for k in range(4):
        prob, x0 = fam.build(Z[k], SPEC)
        tr = toys.run(prob, name, rounds=R, seed=0, lr=float(eta[k]), local_steps=tau, x0=x0,
                      participation=m[k], **kw)
        assert np.array_equal(tr.participation, m[k])
        for key, v in quantities(tr, prob.p).items():
            np.testing.assert_allclose(q[key][k], v[0], rtol=1e-12, atol=1e-14, equal_nan=True,
                                       err_msg=key)


def test_a_gd_bound_is_caught_under_bernoulli_participation():
    """L D^2/(4T + 2) holds for gradient descent with step 1/L (Drori and Teboulle 2014) but
    not when rounds can be missed. By hand: f = L/2 x^2, x0 = D, one round, the client absent:
    f(x_1) - f* = L D^2/2 = 3 L D^2/(4 + 2)."""
    L, D, T = sym("L"), sym("D"), sym("T")
    b = Bound(id="mine.gd_drori_teboulle", source="test", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    missed = 2.0 * 1.5**2 / 2  # L D^2 / 2 at L = 2, D = 1.5: x_1 = x0
    assert missed == pytest.approx(3 * float(b.evaluate(L=2.0, D=1.5, T=1)), rel=1e-15)
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        full = _falsify(b.id, budget=24, eta=1.0, families=["quadratic"], exact=False)
        part = _falsify(b.id, budget=24, eta=1.0, families=["quadratic"],
                        participation="bernoulli")
    finally:
        boundlab.unregister(b.id)
    # worst_ratio is the certified (high-precision) ratio; the float64 replay agrees to
    # round-off
    assert full.verdict == "holds" and full.worst_ratio <= 1
    assert full.instance.replay() == pytest.approx(full.worst_ratio, rel=1e-12)
    assert part.verdict == "VIOLATED" and part.worst_ratio > 1
    assert part.instance.replay() == pytest.approx(part.worst_ratio, rel=1e-12)
    assert part.instance.run["participation"].startswith("bernoulli:p=")
    assert "full participation" in part.exact_reason  # no PEP of another protocol


def test_participation_is_refused_where_the_theorem_assumes_every_client():
    with pytest.raises(DomainError, match="every client"):
        verify.falsify("skew.pi_bound", budget=10, participation="bernoulli")
    b = Bound(id="mine.beta_partial", source="test", expr=sym("L") * sym("D") ** 2,
              params=make_params("L", "D"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="beta", function_class="smooth-strongly-convex")
    try:
        res = _falsify(b.id, budget=10, participation="cyclic")
    finally:
        boundlab.unregister(b.id)
    assert res.verdict == "not-applicable" and "beta" in res.reason


def test_cli_participation_option(capsys):
    """``boundlab falsify ID --participation PATTERN`` end to end; a bad pattern is exit 2 with
    one line naming the parameter."""
    import json

    from verify.cli import main

    L, D, T = sym("L"), sym("D"), sym("T")
    b = Bound(id="mine.gd_dt_cli", source="test", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        rc = main(["falsify", b.id, "eta=1", "--budget", "24", "--families", "quadratic",
                   "--participation", "bernoulli", "--json"])
        out = json.loads(capsys.readouterr().out)
        assert rc == 1 and out["verdict"] == "VIOLATED"
        rc = main(["falsify", b.id, "--budget", "24", "--participation", "sometimes"])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2 and len(err) == 1 and "participation" in err[0]
    finally:
        boundlab.unregister(b.id)
