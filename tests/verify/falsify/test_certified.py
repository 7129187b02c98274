"""Certified verdicts (issue 30, item 4): VIOLATED only when a high-precision replay puts
measured / bound above 1 by more than its certified error; a tight true bound at ratio 1 holds,
a diverged run is ``diverged``, the search stays inside the preconditions, and a bound that is
not real where it is evaluated is a DomainError naming the parameter."""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

import verify
from boundlab import Bound, Precondition, make_params, sym
from boundlab.errors import DomainError
from verify.falsify.certify import DIVERGED_RATIO, Certificate, decide
from verify.falsify.exact import TOL
from verify.falsify.judge import judge

L, mu, D, T, eta = sym("L"), sym("mu"), sym("D"), sym("T"), sym("eta")
Delta = sym("Delta")
SC = {"algorithm": "gd", "function_class": "smooth-strongly-convex", "exact": False}


def _bound(bid, expr, names, **kw):
    return Bound(id=bid, source="test", expr=expr, params=make_params(*names), kind="upper",
                 lhs="final_gap", **kw)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gd_at_its_exact_rate_is_tight_not_violated(seed):
    # F(x_T) - F* <= (1 - mu/L)^(2T) (F(x0) - F*): exact for step 1/L (Taylor et al. 2018);
    # the float64 replay measured 1.0000027 (VIOLATED before certification)
    tight = _bound("t.gd_rate", (1 - mu / L) ** (2 * T) * Delta, ("L", "mu", "T", "Delta"))
    res = verify.falsify(tight, budget=300, seed=seed, L=1.0, mu=0.19, **SC)
    assert res.verdict == "holds" and res.certificate == "mpmath-50"
    assert res.worst_ratio <= 1 + res.certified_error and res.certified_error < 1e-9
    if seed in (0, 2):  # the float64 replay alone reports it VIOLATED (1.0000027)
        assert res.instance.replay() > 1 + TOL
        assert abs(res.worst_ratio - 1) <= res.certified_error and "tight" in res.reason


def test_a_false_bound_is_still_violated_with_its_certificate():
    wrong = _bound("t.gd_last", L * D**2 / (8 * T), ("L", "D", "T"))
    res = verify.falsify(wrong, budget=100, eta=1.0, algorithm="gd",
                         function_class="smooth-convex", exact=False)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error
    assert res.to_dict()["certificate"] == "mpmath-50"


def test_a_diverged_run_is_diverged_not_violated():
    # step 10/L on curvatures in [0.9 L, L]: |1 - 10 lambda| >= 8, the gap passes 1e100
    b = _bound("t.diverging", L * D**2 / T, ("L", "D", "T"))
    res = verify.falsify(b, budget=30, T=64, L=1.0, mu=0.9, eta=10.0, families=["quadratic"],
                         **SC)
    assert res.verdict == "diverged" and math.isnan(res.worst_ratio)


def test_the_judge_ranks_a_diverged_run_below_every_judged_one():
    b = _bound("t.div", L * D**2 / T, ("L", "D", "T"))
    q = {"gap": np.array([[1.0, 5e127], [1.0, 0.5]]), "dist2": np.ones((2, 2))}
    r, *_ = judge(b, q, {"L": 1.0, "D": 1.0, "T": 1}, {})
    assert r.tolist() == [DIVERGED_RATIO, 0.5]
    assert decide(Certificate("float64-only", DIVERGED_RATIO, math.inf, 0, 0))[0] == "diverged"


def test_the_search_stays_strictly_inside_the_preconditions():
    from verify.falsify.plan import make_plan

    dist_t = sym("dist_t")
    b = Bound(id="t.contraction", source="test", expr=(1 - eta * mu) ** 2 * dist_t,
              params=make_params("mu", "eta", "dist_t"), extra_params=make_params("L"),
              kind="upper", lhs="dist_next",
              preconditions=(Precondition(eta, "<=", 2 / (L + mu), "eta <= 2/(L+mu)"),))
    plan = make_plan(b, {}, algorithm="gd", function_class="smooth-strongly-convex")
    for sc in plan.scales:
        sub = plan.at_scale(*sc)
        hi = sub.eta_range(4, 1)[1]
        with mpmath.workdps(50):
            limit = 2 / (mpmath.mpf(sub.spec.L) + mpmath.mpf(sub.spec.mu))
            assert mpmath.mpf(hi) <= limit and hi > float(limit) * (1 - 1e-10)


def test_a_bound_not_real_where_evaluated_names_the_parameter():
    b = _bound("t.imag", sp.sqrt(1 - 2 * L) * D**2 / T, ("L", "D", "T"))
    with pytest.raises(DomainError, match=r"^L = 1\.0 .*1 - 2\*L"):
        verify.falsify(b, budget=20, L=1.0, algorithm="gd", function_class="smooth-convex",
                       exact=False)


def test_decide():
    assert decide(Certificate("mpmath-50", 1 + 1e-13, 1e-11, 1, 1)) [0] == "holds"
    assert decide(Certificate("mpmath-50", 1 + 1e-9, 1e-11, 1, 1))[0] == "VIOLATED"
    assert decide(Certificate("float64-only", 1 + 1e-7, 1e-6, 1, 1))[0] == "holds"
    assert decide(Certificate("float64-only", 1.01, 1e-6, 1, 1))[0] == "VIOLATED"
