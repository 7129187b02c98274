"""BM's schedule shift gamma searched as a shift (not a step size), boundlab.register's
``symbols``, the high-precision replay of the clients' drift and of logistic clients, and the
power benchmark's user layer (issue 30, items 3 and 4)."""

import dataclasses

import mpmath
import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, Precondition, make_params, sym
from boundlab.registry import RegistrationError
from verify.falsify.plan import NotApplicable, make_plan

L, mu, D, T, gamma, eta, tau, zeta = (sym(n) for n in ("L", "mu", "D", "T", "gamma", "eta",
                                                       "tau", "zeta"))


def _quad():
    """The small heterogeneous quadratic and start point the replay tests share."""
    prob = toys.make("quadratic", n_clients=3, dim=2, L=1.0, mu=0.1, heterogeneity=1.0, seed=4)
    return prob, np.array([1.0, -0.5])


def _agrees(q, tr, keys, loss_rtol=1e-12, dist2=True):
    """An mpmath replay's quantities against toys.run's float64 trace: the loss (and dist2) per
    round, and the per-round ``keys`` to 1e-10."""
    np.testing.assert_allclose([float(v) for v in q["loss"]], tr.state["loss"], rtol=loss_rtol)
    if dist2:
        np.testing.assert_allclose([float(v) for v in q["dist2"]], tr.state["dist2"], rtol=1e-9)
    for key in keys:
        np.testing.assert_allclose([float(v) for v in q[key]], tr.per_round[key], rtol=1e-10,
                                   err_msg=key)


def test_bm_corollary_gamma_searches_gamma_as_the_schedules_shift():
    b = boundlab.get("skew.corollary_gamma")
    plan = make_plan(b, {})
    assert plan.shift and plan.step_name == "gamma" and plan.schedule == "bm"
    # gamma >= 4L/mu, >= 1 + 3 rho_bar/8 (rho_bar = 1 for FedAvg), >= E - 1: L = 1, mu = 0.1
    lo, hi = plan.eta_range(4, 5)
    assert lo == pytest.approx(40.0) and hi == pytest.approx(800.0)
    steps = plan.steps(np.array([40.0, 100.0]), 2, 3)  # eta_t = 1/(mu (t + gamma)) each
    t = np.arange(6.0)
    np.testing.assert_allclose(steps, [1 / (0.1 * (t + 40)), 1 / (0.1 * (t + 100))],
                               rtol=1e-15)
    res = verify.falsify(b, budget=60, seed=0, exact=False)
    assert res.verdict == "holds" and "shift" in res.notes[0]
    assert "gamma searched" in res.instance.run["lr_schedule"]


def _user_corollary(bid, factor):
    b = boundlab.get("skew.corollary_gamma")
    return dataclasses.replace(b, id=bid, expr=b.expr / factor, terms={})


def test_a_user_bound_with_a_shift_is_falsified_and_replays(tmp_path):
    wrong = _user_corollary("mine.bm_over_1e4", 10 ** 4)
    boundlab.register(wrong, algorithm="fedavg", function_class="smooth-strongly-convex",
                      symbols={"T": "rounds*local_steps", "gamma": "lr_shift"})
    try:
        res = verify.falsify("mine.bm_over_1e4", budget=100, seed=0, exact=False,
                             save=tmp_path / "f.json")
        assert res.verdict == "VIOLATED" and res.worst_ratio > 100
        back = verify.Falsification.load(tmp_path / "f.json")
        assert back.instance.plan.shift
        assert back.instance.replay() == pytest.approx(res.instance.ratio, rel=1e-12)
    finally:
        boundlab.unregister("mine.bm_over_1e4")
    # without the symbol's meaning gamma is a step size, and no step >= 4L/mu exists in (0, 2/L]
    plain = _user_corollary("mine.bm_plain", 1)
    with pytest.raises(NotApplicable, match="no step size"):
        make_plan(plain, {}, algorithm="fedavg", function_class="smooth-strongly-convex")
    plan = make_plan(plain, {}, algorithm="fedavg", function_class="smooth-strongly-convex",
                     symbols={"gamma": "lr_shift"})
    assert plan.shift


def test_register_symbols_are_checked():
    b = Bound(id="mine.sym", source="t", expr=L * D**2 / T, params=make_params("L", "D", "T"),
              kind="upper", lhs="final_gap")
    with pytest.raises(RegistrationError, match="not a parameter"):
        boundlab.register(b, symbols={"eta": "lr"})
    with pytest.raises(RegistrationError, match="not a run setting"):
        boundlab.register(b, symbols={"T": "rounds; import os"})
    with pytest.raises(RegistrationError, match="must be a dict"):
        boundlab.register(b, symbols=["T"])
    boundlab.register(b, symbols={"T": "rounds*local_steps"})
    try:
        assert boundlab.registry.meta("mine.sym")["symbols"] == {"T": "rounds*local_steps"}
        assert make_plan(b, {}, algorithm="gd", function_class="smooth-convex").t_iterations
    finally:
        boundlab.unregister("mine.sym")


def _plan(lhs, algo="fedavg", fclass="smooth-convex", **kw):
    b = Bound(id=f"mine.replay_{lhs}", source="t", expr=L * D**2, params=make_params("L", "D"),
              kind="upper", lhs=lhs)
    return make_plan(b, {"T": 3, "tau": 3, "eta": 0.3, **kw}, algorithm=algo,
                     function_class=fclass)


def test_mpmath_replay_of_drift_matches_toys_float64():
    from verify.falsify._mpreplay import replay

    prob, x0 = _quad()
    tr = toys.run(prob, "fedavg", rounds=3, local_steps=3, lr=0.3, x0=x0, seed=0)
    with mpmath.workdps(40):
        q = replay(_plan("max_client_drift"), prob, x0, 3, 3, np.full(9, 0.3))
    for key in ("drift_max", "drift_sum", "disc_max", "shadow_gap"):
        got = np.array([float(v) for v in q[key]])
        np.testing.assert_allclose(got, tr.per_round[key], rtol=1e-10, err_msg=key)


def test_mpmath_replay_of_logistic_clients_matches_toys_float64():
    from verify.falsify._mpreplay import replay

    prob = toys.make("logistic-synthetic", n_clients=3, dim=2, seed=1)
    x0 = np.array([0.3, -0.2])
    tr = toys.run(prob, "fedavg", rounds=2, local_steps=2, lr=0.5, x0=x0, seed=0)
    with mpmath.workdps(40):
        q = replay(_plan("final_gap", fclass="smooth-strongly-convex"), prob, x0, 2, 2,
                   np.full(4, 0.5))
    # x* re-solved at 40 digits: the gap agrees to the float64 optimum's accuracy
    np.testing.assert_allclose([float(v) for v in q["loss"]], tr.state["loss"], rtol=1e-12)
    np.testing.assert_allclose([float(v) for v in q["grad_norm2"]], tr.state["grad_norm2"],
                               rtol=1e-9)


def test_a_false_drift_bound_is_certified_in_high_precision():
    pre = (Precondition(eta, "<=", 1 / L, "eta <= 1/L"),)
    b = Bound(id="mine.drift_q", source="t", expr=eta**2 * tau**2 * zeta**2 / 4,
              params=make_params("eta", "tau", "zeta"), extra_params=make_params("L"),
              kind="upper", lhs="max_client_drift", preconditions=pre)
    res = verify.falsify(b, budget=200, seed=0, exact=False, algorithm="fedavg",
                         function_class="smooth-convex")
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_power_user_layer_reports_every_verdict():
    from verify.falsify.power import evaluate, summarize

    b = Bound(id="mine.pow_user", source="t", expr=L * D**2 / (4 * T + 2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        res, runs = evaluate("mine.pow_user", budget=30, layers=("user",), oracle=False,
                             operators=["const"])
    finally:
        boundlab.unregister("mine.pow_user")
    verdicts = runs["user"].verdicts
    assert set(verdicts) == {r.id for r in res} and set(verdicts.values()) <= {
        "holds", "VIOLATED"}
    s = summarize(res, {"mine.pow_user": runs})
    assert s["user_verdicts"]["not_applicable_share"] == 0.0
    # a mutant x 1/10 of a valid bound L D^2/(4T + 2) (GD at step 1/L) is caught by the layer
    caught = [r for r in res if r.flags.get("user")]
    assert caught and all(r.truth == "false" for r in caught)
    assert not any(r.flags.get("user") for r in res if r.truth == "true")


def test_mpmath_replay_of_fedprox_matches_toys_float64():
    """FedProx's local step W <- W - eta (grad F_i(W) + alpha (W - x)) replayed in mpmath: the
    states and the drift agree with toys.run's fedprox in float64."""
    from verify.falsify._mpreplay import replay

    prob, x0 = _quad()
    tr = toys.run(prob, "fedprox", rounds=3, local_steps=3, lr=0.3, prox=0.7, x0=x0, seed=0)
    plan = _plan("final_gap", algo="fedprox", fclass="smooth-strongly-convex")
    plan = plan.with_hyper({"alpha": 0.7})
    with mpmath.workdps(40):
        q = replay(plan, prob, x0, 3, 3, np.full(9, 0.3))
    _agrees(q, tr, ("drift_max", "shadow_gap"))
    fedavg = toys.run(prob, "fedavg", rounds=3, local_steps=3, lr=0.3, x0=x0, seed=0)
    assert not np.allclose(tr.state["loss"][1:], fedavg.state["loss"][1:])  # the term acts


def test_a_false_fedprox_bound_is_certified_in_high_precision():
    """A FedProx bound without the prox term's slowdown (FedAvg's gradient-descent rate at the
    same step) is false; its counterexample is certified by the mpmath replay."""
    pre = (Precondition(eta, "<=", 1 / L, "eta <= 1/L"),)
    b = Bound(id="mine.fedprox_fast", source="t", expr=D**2 / (16 * eta * T * tau),
              params=make_params("D", "eta", "T", "tau"), extra_params=make_params("L"),
              kind="upper", lhs="final_gap", preconditions=pre)
    res = verify.falsify(b, budget=200, seed=0, exact=False, algorithm="fedprox",
                         function_class="smooth-convex")
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_mpmath_replay_of_beta_matches_toys_float64():
    """Seed 003's beta algorithm replayed in mpmath (falsify's messages: the uniform graph):
    its states and its round quantities (the virtual average with the aggregation weights)
    agree with toys.run's beta in float64."""
    from verify.falsify._mpreplay import replay
    from verify.falsify.toys_map import beta_messages

    prob, x0 = _quad()
    tr = toys.run(prob, "beta", rounds=3, local_steps=3, lr=0.3, beta=0.4, x0=x0, seed=0,
                  messages=beta_messages(3))
    plan = _plan("final_gap", algo="beta", fclass="smooth-strongly-convex")
    with mpmath.workdps(40):
        q = replay(plan.with_hyper({"beta": 0.4}), prob, x0, 3, 3, np.full(9, 0.3))
    _agrees(q, tr, ("drift_max", "drift_sum", "disc_max", "shadow_gap", "g2_max"))
    fedavg = toys.run(prob, "fedavg", rounds=3, local_steps=3, lr=0.3, x0=x0, seed=0)
    assert not np.allclose(tr.state["loss"][1:], fedavg.state["loss"][1:])  # beta acts


def test_a_false_beta_bound_with_measured_gamma_is_certified_in_high_precision():
    """The beta algorithm's replay with Gamma = F* - sum_i p_i F_i* re-solved in mpmath: a
    quarter of a transient plus Gamma is false at t = 0 and certified at 50 digits."""
    Delta, beta, t, Gamma = (sym(n) for n in ("Delta", "beta", "t", "Gamma"))
    b = Bound(id="mine.beta_quarter", source="t",
              expr=(Delta * (1 - mu / (L * (beta + 2))) ** t + Gamma) / 4,
              params=make_params("Delta", "mu", "L", "beta", "t", "Gamma"), kind="upper",
              lhs="gap_t", preconditions=(Precondition(mu, "<=", L, "mu <= L"),))
    res = verify.falsify(b, budget=60, seed=0, exact=False, algorithm="beta",
                         function_class="smooth-strongly-convex")
    assert res.instance.plan.measured == ("Gamma",)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_mpmath_replay_of_scaffold_matches_toys_float64():
    """SCAFFOLD (option II control variates) replayed in mpmath: its states and its round
    quantities agree with toys.run's scaffold in float64, and differ from FedAvg's."""
    from verify.falsify._mpreplay import replay

    prob, x0 = _quad()
    tr = toys.run(prob, "scaffold", rounds=4, local_steps=3, lr=0.3, x0=x0, seed=0)
    plan = _plan("final_gap", algo="scaffold", fclass="smooth-strongly-convex")
    with mpmath.workdps(40):
        q = replay(plan, prob, x0, 4, 3, np.full(12, 0.3))
    _agrees(q, tr, ("drift_max", "drift_sum", "disc_max", "shadow_gap", "g2_max"))
    fedavg = toys.run(prob, "fedavg", rounds=4, local_steps=3, lr=0.3, x0=x0, seed=0)
    assert not np.allclose(tr.state["loss"][2:], fedavg.state["loss"][2:])  # the variates act


def test_a_false_scaffold_bound_is_certified_in_high_precision():
    """The README's rate no method attains on smooth convex functions, on SCAFFOLD: VIOLATED
    with an mpmath-50 certificate (it was float64 only)."""
    b = Bound(id="mine.scaffold_fast_t", source="t", expr=L * D**2 / (50 * T**2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    res = verify.falsify(b, budget=60, seed=0, algorithm="scaffold",
                         function_class="smooth-convex")
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error


def test_fednova_with_equal_local_work_replays_as_fedavg_and_matches_toys():
    """FedNova's normalised average with every client's tau equal is FedAvg's step: the mpmath
    replay (run as FedAvg) agrees with toys.run's fednova in float64."""
    from verify.falsify._mpreplay import replay

    prob, x0 = _quad()
    tr = toys.run(prob, "fednova", rounds=3, local_steps=3, lr=0.3, x0=x0, seed=0)
    plan = _plan("final_gap", algo="fednova", fclass="smooth-strongly-convex")
    with mpmath.workdps(40):
        q = replay(plan, prob, x0, 3, 3, np.full(9, 0.3))
    _agrees(q, tr, ("drift_max", "shadow_gap", "g2_max"), dist2=False)
    with pytest.raises(Exception, match="server step"):
        replay(plan.with_hyper({"server_lr": 0.5}), prob, x0, 3, 3, np.full(9, 0.3))


@pytest.mark.parametrize("algo", ["fedadagrad", "fedadam", "fedyogi"])
def test_mpmath_replay_of_the_adaptive_servers_matches_toys_float64(algo):
    """FedAdagrad / FedAdam / FedYogi's server step on FedAvg's average, replayed in mpmath
    with the plan's hyper-parameters over the servers' defaults: toys.run's numbers."""
    from verify.falsify._mpreplay import replay

    prob, x0 = _quad()
    tr = toys.run(prob, algo, rounds=4, local_steps=2, lr=0.3, server_lr=0.2, x0=x0, seed=0)
    plan = _plan("final_gap", algo=algo, fclass="smooth-strongly-convex")
    with mpmath.workdps(40):
        q = replay(plan.with_hyper({"server_lr": 0.2}), prob, x0, 4, 2, np.full(8, 0.3))
    _agrees(q, tr, ("drift_max", "shadow_gap"), loss_rtol=1e-11)
    fedavg = toys.run(prob, "fedavg", rounds=4, local_steps=2, lr=0.3, x0=x0, seed=0)
    assert not np.allclose(tr.state["loss"][1:], fedavg.state["loss"][1:])  # its own step


@pytest.mark.parametrize("algo", ["fedavg", "fedprox"])
def test_mpmath_replay_under_partial_participation_matches_toys_float64(algo):
    """A participation matrix replayed in mpmath (the absent clients stay at x, FedAvg's
    weights renormalised over the participants, the participants' drift): toys.run's numbers
    with that matrix; a round without participants is not replayed."""
    from verify.falsify._mpreplay import Unsupported, replay

    prob, x0 = _quad()
    masks = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 1], [0, 1, 1]], dtype=bool)
    hyper = {"prox": 0.7} if algo == "fedprox" else {}
    tr = toys.run(prob, algo, rounds=4, local_steps=3, lr=0.3, x0=x0, seed=0,
                  participation=masks, **hyper)
    b = Bound(id="mine.replay_part", source="t", expr=L * D**2, params=make_params("L", "D"),
              kind="upper", lhs="final_gap")
    plans = make_plan(b, {"T": 4, "tau": 3, "eta": 0.3}, algorithm=algo,
                      function_class="smooth-strongly-convex", participation="bernoulli:p=0.5")
    plan = plans[0] if isinstance(plans, list) else plans
    assert plan.participation is not None
    if algo == "fedprox":
        plan = plan.with_hyper({**plan.hyper_grid[0], "alpha": 0.7})
        assert plan.participation is not None
    with mpmath.workdps(40):
        q = replay(plan, prob, x0, 4, 3, np.full(12, 0.3), masks=masks)
    _agrees(q, tr, ("drift_max", "drift_sum", "disc_max", "shadow_gap", "g2_max"))
    full = toys.run(prob, algo, rounds=4, local_steps=3, lr=0.3, x0=x0, seed=0, **hyper)
    assert not np.allclose(tr.state["loss"][1:], full.state["loss"][1:])  # the masks act
    # a round without participants: x stays, its round values are NaN, as toys.run records
    empty = masks.copy()
    empty[1] = False
    tr = toys.run(prob, algo, rounds=4, local_steps=3, lr=0.3, x0=x0, seed=0,
                  participation=empty, **hyper)
    with mpmath.workdps(40):
        q = replay(plan, prob, x0, 4, 3, np.full(12, 0.3), masks=empty)
    np.testing.assert_allclose([float(v) for v in q["loss"]], tr.state["loss"], rtol=1e-12)
    np.testing.assert_allclose([float(v) for v in q["shadow_gap"]], tr.per_round["shadow_gap"],
                               rtol=1e-10)  # NaN where toys.run has NaN
    with pytest.raises(Unsupported, match="participation"):  # the masks without the plan's
        replay(_plan("final_gap", algo=algo), prob, x0, 4, 3, np.full(12, 0.3), masks=masks)


@pytest.mark.parametrize("part", ["bernoulli:p=0.5", "cyclic"])
def test_a_false_bound_under_partial_participation_is_certified(part):
    """The README's unattainable rate on FedAvg searched under partial participation: its
    counterexample (whose masks include rounds without participants) is VIOLATED with an
    mpmath-50 certificate (it was float64 only)."""
    b = Bound(id="mine.part_fast_t", source="t", expr=L * D**2 / (50 * T**2),
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    res = verify.falsify(b, budget=60, seed=0, algorithm="fedavg",
                         function_class="smooth-convex", participation=part)
    assert res.verdict == "VIOLATED" and res.certificate == "mpmath-50"
    assert res.worst_ratio - 1 > res.certified_error
