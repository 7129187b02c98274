"""The checks judge what the papers state, on the right objective, where the bound can fail."""

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

import boundlab
import toys
from verify.checks import contraction, drift, skew, weight_error
from verify.checks._runs import runs, sweep_runs
from verify.compare import mean_ci
from verify.suite import Context

QUICK = Context(quick=True, tightness=False)


def test_contraction_runs_on_the_graph_weighted_objective():
    prob, consts = contraction._problem()
    uniform = toys.quadratic(n_clients=8, dim=3, L=2.0, mu=0.5, heterogeneity=1.0, seed=2)
    g = toys.run(uniform, "beta", rounds=1, seed=0, lr=1e-3, local_steps=1, beta=0.9,
                 record="none").info["graph"]["p"]
    assert np.allclose(prob.p, g, atol=1e-14) and not np.allclose(prob.p, 1 / 8)
    assert consts.Gamma.value == pytest.approx(prob.Gamma)  # the graph-weighted Gamma
    tr, _ = contraction._run("fedavg", 3, contraction.NEAR)
    x0 = prob.x_star + contraction.NEAR * np.ones(prob.dim)
    assert tr.gap[0] == pytest.approx(prob.F(x0) - prob.F_star)  # the gap of f = sum p_i f_i


def test_contraction_theorems_worst_round_is_never_the_trivial_one():
    rs = contraction.contraction_theorems(QUICK)
    assert len(rs) == 4 and all(r.kind == "bound" for r in rs)
    for r in rs:
        assert r.setting["t"] >= 1 and "t = 0 excluded" in r.note
        assert "region the iterates visit" in r.constants["G"]["how"]
        assert r.constants["S"]["value"] == pytest.approx(
            float(np.sum(contraction._problem()[0].p ** 2)))
        assert r.effective_samples == 1


def test_contraction_rates_are_claims_and_the_ordering_covers_both_betas():
    rs = contraction.contraction_rates(QUICK)
    assert all(r.kind == "claim" and r.verdict in ("supported", "refuted", "inconclusive")
               for r in rs)
    rates = [r for r in rs if r.case != "ordering_eq9"]
    assert {r.case for r in rates} == {"fedavg", "fedprox_a1", "beta_0.5", "beta_0.9"}
    for r in rates:
        assert r.statistic_lo <= r.statistic <= r.statistic_hi and 0 < r.threshold < 1
    order = next(r for r in rs if r.case == "ordering_eq9")
    assert "0.5 and 0.9" in order.statement
    assert {"beta_0.5", "beta_0.9", "fedavg", "fedprox_a1"} <= set(order.setting)


def test_printed_and_corrected_corollary_differ_in_a_verdict():
    rs = skew.skew_corollary_printed(QUICK)
    printed = [r for r in rs if r.case.startswith("printed")]
    corrected = [r for r in rs if r.case.startswith("corrected")]
    assert printed and corrected
    assert all(r.verdict == "not-applicable" and "E - 1 <= 4*L/mu" in r.reason for r in printed)
    assert all(r.verdict == "holds" for r in corrected)
    assert {r.setting["gamma"] for r in printed} != {r.setting["gamma"] for r in corrected}


def test_alpha_to_p_is_a_two_sided_rate_claim_on_sgd():
    rs = skew.skew_alpha_to_p(QUICK)
    c = rs[0]
    assert c.kind == "claim" and c.threshold == -1.0
    assert c.statistic_lo < c.statistic < c.statistic_hi
    assert c.verdict == ("supported" if c.statistic_lo <= -1 <= c.statistic_hi else "refuted")
    assert c.setting["batch_size"] == 1 and c.effective_samples == len(c.seeds) >= 3


def test_weight_error_claims_carry_no_foreign_bound_id():
    (shift,) = weight_error.weight_error_objective_shift(QUICK)
    assert shift.kind == "claim" and shift.paper == "seed 002, Theorem 1"
    assert shift.bound_id == "" and boundlab.get  # no catalogue id it does not evaluate


def test_weight_errors_come_from_the_engine_and_match_algorithm_2():
    p = np.array([0.2, 0.5])
    W = weight_error._weight_errors(p, 3, 200, 5, seed=0)
    assert W.shape == (5, 2) and np.all(W >= 0)
    # K = 1: omega = 1 always, so the error is (p - 1)^2 exactly on every path
    W1 = weight_error._weight_errors(p, 1, 50, 3, seed=0)
    assert np.allclose(W1, (p - 1) ** 2)


@pytest.fixture
def sweep_calls(monkeypatch):
    """The keywords of every verify.sweep call (the calls still run)."""
    module = importlib.import_module("verify.sweep")
    real, calls = module.sweep, []

    def spy(*args, **kw):
        calls.append(kw)
        return real(*args, **kw)

    monkeypatch.setattr(module, "sweep", spy)
    return calls


def test_seed_loops_run_through_the_sweep_layer_bit_for_bit(sweep_calls):
    rs = drift.drift_theorem_minibatch(Context(quick=True, seeds=3, tightness=False))
    assert [c["seeds"] for c in sweep_calls] == [[0, 1, 2], [0, 1, 2]]  # one sweep per toy
    # the loop the sweep replaced: one toys.run per seed
    prob = toys.make("logistic-synthetic", size_sigma=0.0)
    eta = 0.5 / (4 * toys.constants(prob).L.value)
    trs = [toys.run(prob, "fedavg", rounds=15, seed=s, lr=eta, local_steps=5, batch_size=4)
           for s in range(3)]
    thm, lemma = rs[0], rs[1]
    assert thm.case == "Thm 2.1, logistic-synthetic" and lemma.case.startswith("Lemma 2.3")
    m, _, hi = mean_ci([tr.avg_shadow_gap for tr in trs])
    assert (thm.measured, thm.measured_hi) == (m, hi)
    m, _, hi = mean_ci([float(np.nanmax(tr.drift_max)) for tr in trs])
    assert (lemma.measured, lemma.measured_hi) == (m, hi)


def test_theory_runs_read_like_the_traces_they_replace():
    prob, _ = drift._toy()
    tr = toys.run(prob, "fedavg", rounds=6, seed=0, lr=drift.ETA, local_steps=10)
    run = drift._theory_run(10, 6)
    for name in ("gap", "dist2", "shadow_gap", "drift_max", "drift_sum"):
        np.testing.assert_array_equal(getattr(run, name), getattr(tr, name))
    assert run.avg_shadow_gap == tr.avg_shadow_gap and run.diverged == ""
    assert run.point == {"local_steps": 10} and run.seed == 0


def test_runs_split_the_table_by_point_and_seed_with_final_models():
    from verify.checks._runs import DIVERGED, final_model

    prob = toys.quadratic(n_clients=3, dim=2, seed=0, noise_std=0.1)
    df = sweep_runs(Context(), prob, "fedavg", grid={"local_steps": [1, 2]}, seeds=[3, 1],
                    rounds=2, lr=0.1, batch_size=1, measures={**DIVERGED, **final_model(2)})
    rs = runs(df)
    assert [(r.point["local_steps"], r.seed) for r in rs] == [(1, 3), (1, 1), (2, 3), (2, 1)]
    for r in rs:
        tr = toys.run(prob, "fedavg", rounds=2, seed=r.seed, lr=0.1, batch_size=1,
                      local_steps=r.point["local_steps"])
        np.testing.assert_array_equal(r.final_model, tr.final_model)
        np.testing.assert_array_equal(r.per_round("lr"), tr.lr)
    with pytest.raises(AttributeError):
        rs[0].no_such_column  # noqa: B018


def test_sweep_runs_passes_the_suite_backend_and_executor(sweep_calls):
    pytest.importorskip("torch")
    ctx = SimpleNamespace(backend="torch", device="cpu", executor="local")
    df = sweep_runs(ctx, toys.quadratic(3, 2, seed=0), "fedavg", seeds=1, rounds=1, lr=0.1,
                    measures={"backend_used": lambda tr, prob: tr.backend})
    kw = sweep_calls[-1]
    assert (kw["backend"], kw["device"], kw["executor"], kw["grid"]) == ("torch", "cpu",
                                                                         "local", {})
    assert df["backend_used"].iloc[-1] == "torch"
    sweep_runs(Context(), toys.quadratic(3, 2, seed=0), "fedavg", seeds=1, rounds=1, lr=0.1)
    assert "backend" not in sweep_calls[-1]  # numpy: toys.run's own defaults
