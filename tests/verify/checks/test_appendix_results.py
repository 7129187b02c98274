"""The checks of the seven results encoded last: FedSoftMax's pi (verify.checks.skew_softmax),
FedAU's Lemma B.3.1 (verify.checks.weight_error_reweighted) and Appendix A.3 (the generated check
on its catalogue run), DKR's Properties 2.1-2.3 and 2.5 (verify.checks.drift_properties)."""

from __future__ import annotations

import numpy as np

import boundlab
import toys
from boundlab.registry import meta
from toys.engine.trace_io import to_log
from verify.checks import generic
from verify.checks import skew_softmax as sm
from verify.checks.drift_properties import drift_properties
from verify.checks.weight_error_reweighted import divergence_sq, weight_error_reweighted
from verify.suite import Context, select

NEW = ("skew.softmax_kappa_min", "weight_error.lemma_b31", "weight_error.corollary4_equiprobable",
       "drift.convexity", "drift.first_order_convexity", "drift.smoothness", "drift.young")


def test_the_seven_results_are_catalogued_with_sources_and_judged():
    fixed, _ = generic.hand_coverage()
    for bid in NEW:
        b = boundlab.get(bid)
        assert b.source.startswith("seed 00") and b.kind == "upper", bid
        assert b.lhs and all(p.domain for p in b.params.values())
        assert bid in fixed or meta(bid)["run"] is not None, bid


def test_chained_softmax_rounds_are_the_engines_run():
    """The check's round-by-round run is bit-identical to one toys.run, and its kappa_min is the
    engine log's (to_log's kappa_min = min alpha/p over participants)."""
    prob = sm._problem()
    res = sm.softmax_run(prob, 1.0, 5)
    tr = toys.run(prob, "fedsoftmax", rounds=5, seed=0, x0=np.zeros(2), lr=sm.LR,
                  local_steps=sm.LOCAL_STEPS, temperature=1.0, record="round")
    assert np.array_equal(tr.final_model, res["models"][-1])
    assert np.array_equal(to_log(tr, p=prob.p)["kappa_min"].to_numpy()[:-1], res["kappa_min"])


def test_softmax_check_holds_below_one():
    rows = sm.skew_softmax(Context(quick=True))
    assert {r.verdict for r in rows} == {"holds"}
    assert all(0 < r.ratio <= 1 for r in rows)


def test_b31_check_attains_the_constant_and_holds():
    rows = weight_error_reweighted(Context(quick=True))
    assert {r.verdict for r in rows} == {"holds"}
    ratios = {r.case: r.ratio for r in rows}
    tight = [v for c, v in ratios.items() if c.startswith("2 clients") and "vertex" in c]
    assert tight and abs(tight[0] - 1.0) < 1e-9  # deltat = 2 delta is attained
    uniform = [v for c, v in ratios.items() if "uniform" in c]
    assert uniform and all(abs(v - 0.25) < 1e-9 for v in uniform)  # phi = 1/N: delta^2


def test_b31_divergence_is_the_sup_over_the_ball():
    """divergence_sq against a dense sample of the ball (a lower estimate of the exact sup)."""
    prob = toys.make("quadratic", n_clients=3, dim=2, L=2.0, mu=0.5, heterogeneity=1.0, seed=4)
    phi = np.array([0.2, 0.5, 0.3])
    got = divergence_sq(prob, phi, 1.0)
    from verify.checks.weight_error_reweighted import _uniform_star

    x0 = _uniform_star(prob)
    ang = np.linspace(0, 2 * np.pi, 2001)
    est = np.zeros(3)
    for u in np.stack([np.cos(ang), np.sin(ang)], axis=1):
        g = np.asarray(prob.grads(x0 + u))
        est = np.maximum(est, np.sum((g - phi @ g) ** 2, axis=1))
    assert np.all(est <= got * (1 + 1e-12)) and np.allclose(est, got, rtol=1e-5)


def test_a3_run_measures_q_n_over_s_and_holds():
    run = meta("weight_error.corollary4_equiprobable")["run"]
    spec = dict(run["problem"])
    prob = toys.make(spec.pop("name"), **spec)
    tr = toys.run(prob, run["algorithm"], rounds=5, seed=0, **run["hyper"])
    p = np.asarray(tr.info["participation_probs"], dtype=float)
    S, N = run["params"]["S_sampled"], prob.n_clients
    assert np.allclose(p, S / N)
    Q = np.max(np.mean(p[None] * np.asarray(tr.omega) ** 2, axis=1))
    assert np.isclose(Q, N / S, rtol=1e-12)
    [spec_] = select("generic_weight_error_corollary4_equiprobable")
    rows = spec_.fn(Context(quick=True, falsify_budget=0))
    assert [(r.case, r.verdict) for r in rows] == [("fixed instance", "holds")]


def test_dkr_properties_hold_and_young_is_tight():
    rows = drift_properties(Context(quick=True))
    assert {r.verdict for r in rows} == {"holds"}
    assert {r.bound_id for r in rows} == {"drift.convexity", "drift.first_order_convexity",
                                          "drift.smoothness", "drift.young"}
    eq = [r for r in rows if "equality" in r.case]
    assert len(eq) == 2 and all(abs(r.ratio - 1) < 1e-12 for r in eq)


def test_generated_rows_leave_the_hand_judged_ids_to_their_checks():
    for bid in NEW:
        if bid == "weight_error.corollary4_equiprobable":
            continue
        [spec] = select("generic_" + bid.replace(".", "_"))
        assert spec.fn(Context(quick=True, falsify_budget=0)) == [], bid
