"""verify.measures, the one registry of measured left-hand sides: every catalogue lhs is either
measured or has a reason; the measures against hand-computed values; check and falsify measure
through it (a quantity registered by a user is checked and falsified end to end); the README's
table is the registry's."""

from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pytest

import boundlab
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError, UnknownNameError
from verify import measures


def _catalogue_lhs():
    return {boundlab.get(i).lhs for i in boundlab.ids()}


def test_every_catalogue_lhs_is_measured_or_has_a_reason():
    names = set(measures.names())
    for lhs in _catalogue_lhs():
        assert lhs in names or lhs in measures.NOT_MEASURED, lhs
    assert not names & set(measures.NOT_MEASURED)
    assert len(_catalogue_lhs()) >= 37  # the brief's count: the catalogue's ~37 names


def test_measure_shapes():
    q = {"gap": np.arange(6.0)[None], "dist2": np.arange(6.0)[None],
         "grad_norm2": np.ones((1, 6)), "shadow_gap": np.full((1, 5), 2.0),
         "g2_max": np.ones((1, 5))}
    assert measures.measure("final_gap", q)[0].tolist() == [[5.0]]
    v, per = measures.measure("dist_next", q)
    assert v.tolist() == [[1, 2, 3, 4, 5]] and per["dist_t"].tolist() == [[0, 1, 2, 3, 4]]
    assert "gamma_prev" not in per  # no steps among the arrays
    assert measures.measure("avg_shadow_gap", q)[0].tolist() == [[2.0]]
    assert measures.measure("gap_t", q)[1]["t"].tolist() == [[0, 1, 2, 3, 4, 5]]
    assert measures.measure("avg_grad_norm2", q)[0].tolist() == [[1.0]]


def test_measure_of_the_drift_and_gradient_sides():
    q = {"gap": np.array([[2.0, 1.0, 0.5]]), "loss": np.array([[5.0, 4.0, 3.5]]),
         "dist2": np.array([[4.0, 2.0, 1.0]]), "grad_norm2": np.array([[3.0, 2.0, 1.0]]),
         "drift_max": np.array([[0.1, 0.3]]), "drift_sum": np.array([[0.2, 0.4]]),
         "disc_max": np.array([[0.05, 0.07]]), "shadow_gap": np.array([[1.5, 0.7]]),
         "kappa_max": np.array([[1.2, 1.7]]), "grad_norm2_virtual": np.array([[0.5, 1.5]]),
         "lr": np.array([[0.2, 0.1]])}
    v, per = measures.measure("grad_norm_sq", q)
    assert v.tolist() == [[3.0, 2.0, 1.0]]
    assert (per["f_w"] - per["f_star"]).tolist() == q["gap"].tolist()
    assert measures.measure("max_client_drift", q)[0].tolist() == [[0.3]]
    v, per = measures.measure("client_discrepancy", q)  # eta: each round's first step
    assert v.tolist() == [[0.05, 0.07]] and per["eta"].tolist() == [[0.2, 0.1]]
    assert measures.measure("Pi", q)[0].tolist() == [[1.7]]
    assert measures.measure(measures.VIRTUAL, q)[0].tolist() == [[1.0]]
    v, per = measures.measure("round_avg_gap", q)
    assert v.tolist() == [[1.5, 0.7]] and per["dist0"].tolist() == [[4.0, 2.0]]
    assert per["dist_tau"].tolist() == [[2.0, 1.0]] and per["drift_sum"].tolist() == [[0.2, 0.4]]


def test_measure_gives_the_previous_rounds_step():
    q = {"dist2": np.array([[4.0, 2.0, 1.0]]), "lr": np.array([[0.1, 0.2]])}
    v, per = measures.measure("dist_next", q)
    assert per["gamma_prev"].tolist() == [[0.0, 0.1]] and per["dist_t"].tolist() == [[4.0, 2.0]]


def test_a_log_reads_as_one_instance():
    cols = {"round": np.arange(3), "gap": np.array([2.0, 1.0, 0.5]),
            "shadow_gap": np.array([1.5, 0.7, np.nan])}
    q = measures.from_log(cols)
    assert q["gap"].shape == (1, 3) and q["shadow_gap"].tolist() == [[1.5, 0.7]]
    assert "round" not in q
    assert measures.measure("avg_shadow_gap", q)[0].tolist() == [[1.1]]


def test_unknown_names_and_missing_arrays_are_refused_with_the_reason():
    with pytest.raises(UnknownNameError, match="limit T -> inf"):
        measures.measure("plateau_gap", {"gap": np.ones((1, 2))})
    with pytest.raises(UnknownNameError, match="register"):
        measures.get("no_such_quantity")
    with pytest.raises(DomainError, match="shadow_gap"):
        measures.measure("avg_shadow_gap", {"gap": np.ones((1, 2))})


@pytest.mark.parametrize("kw,param", [
    ({"name": "final_gap"}, "name"), ({"name": "plateau_gap"}, "name"),
    ({"name": "two words"}, "name"), ({"fn": 3}, "fn"), ({"needs": ("nope",)}, "needs"),
    ({"needs": ()}, "needs"), ({"record": "all"}, "record"), ({"doc": " "}, "doc"),
    ({"params": lambda q: {}}, "gives"), ({"gives": ("a",)}, "gives")])
def test_register_validates_every_argument(kw, param):
    args = {"name": "mine_q", "fn": lambda q: q["gap"][:, -1:], "needs": ("gap",),
            "doc": "a quantity", **kw}
    name, fn = args.pop("name"), args.pop("fn")
    with pytest.raises(DomainError, match=param):
        measures.register(name, fn, **args)
    assert "mine_q" not in measures.names()


def test_a_registered_measure_of_the_wrong_shape_is_refused():
    measures.register("mine_bad", lambda q: q["gap"], needs=("gap",), doc="not per run")
    try:
        with pytest.raises(DomainError, match="shape"):
            measures.measure("mine_bad", {"gap": np.ones((2, 3))})
        with pytest.raises(DomainError, match="already|registered"):
            measures.register("mine_bad", lambda q: q["gap"], needs=("gap",), doc="again")
    finally:
        measures.unregister("mine_bad")
    with pytest.raises(DomainError):
        measures.unregister("final_gap")  # built-ins stay


def test_a_user_quantity_is_checked_and_falsified_end_to_end():
    """||x_T - x*||^2 <= ||x_0 - x*||^2 = D^2 holds for GD with step 1/L on a convex L-smooth
    function (each step is non-expansive toward x*); D^2 / 8 does not: at T = 1 on f = L/4 x^2
    (curvature L/2 <= L), x_1 - x* = (x_0 - x*) / 2, so ||x_1 - x*||^2 = D^2 / 4 > D^2 / 8."""
    import toys
    import verify

    measures.register("dist2_T", lambda q: q["dist2"][:, -1:], needs=("dist2",),
                      doc="||x_T - x*||^2 of the last server model")
    D = sym("D")
    good = Bound(id="mine.dist_holds", source="test", expr=D**2, kind="upper",
                 params=make_params("D"), lhs="dist2_T")
    bad = Bound(id="mine.dist_eighth", source="test", expr=D**2 / 8, kind="upper",
                params=make_params("D"), lhs="dist2_T")
    try:
        prob = toys.quadratic(n_clients=3, dim=2, seed=0)
        tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.05)
        df = verify.check(good, prob, "fedavg", rounds=3, seeds=1, lr=0.05,
                          params={"D": 10.0})
        assert df["measured"].iloc[-1] == pytest.approx(tr.dist2[-1], rel=1e-12)
        for b in (good, bad):
            boundlab.register(b, algorithm="gd", function_class="smooth-convex")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ok = verify.falsify(good.id, budget=24, seed=0, eta=1.0, exact=False)
                no = verify.falsify(bad.id, budget=24, seed=0, eta=1.0, exact=False)
            assert ok.verdict == "holds" and ok.worst_ratio <= 1
            assert no.verdict == "VIOLATED" and no.instance.replay() > 1  # on toys.run
        finally:
            for b in (good, bad):
                boundlab.unregister(b.id)
    finally:
        measures.unregister("dist2_T")


def test_falsify_names_the_registry_reason_for_an_unmeasured_lhs():
    import verify

    b = Bound(id="mine.interval", source="test", expr=sym("L"), kind="upper",
              params=make_params("L"), lhs="interval_mean")
    boundlab.register(b, algorithm="fedavg", function_class="smooth-convex")
    try:
        res = verify.falsify(b.id, budget=10, seed=0)
    finally:
        boundlab.unregister(b.id)
    assert res.verdict == "not-applicable" and "identity of the theory" in res.reason


def test_the_readme_table_is_the_registry():
    text = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    m = re.search(r"<!-- measures-table:[^\n]*-->\n(.*?)\n<!-- /measures-table -->", text, re.S)
    assert m, "README.md has no measures-table section"
    assert m.group(1) == measures.table()


def test_a_registered_step_quantity_is_measured_on_step_runs():
    """A quantity of the virtual averages (record="step") is measured by check and by the
    falsify search / replay from record="step" runs: the instance's lhs is toys.run's."""
    import toys
    import verify

    measures.register("virtual_max", lambda q: np.max(q["grad_norm2_virtual"], axis=1,
                                                      keepdims=True),
                      needs=("grad_norm2_virtual",), record="step",
                      doc="max_t (1/tau) sum_k ||grad F(xbar^(t,k))||^2")
    L, D = sym("L"), sym("D")
    b = Bound(id="mine.virtual_max", source="test", expr=100 * L**2 * D**2, kind="upper",
              params=make_params("L", "D"), lhs="virtual_max")
    try:
        prob = toys.quadratic(n_clients=3, dim=2, seed=0)
        tr = toys.run(prob, "fedavg", rounds=3, seed=0, lr=0.05, local_steps=2, record="step")
        df = verify.check(b, prob, "fedavg", rounds=3, seeds=1, lr=0.05, local_steps=2,
                          params={"L": 1.0, "D": 1.0})
        assert df["measured"].iloc[-1] == pytest.approx(np.max(tr.grad_norm2_virtual),
                                                        rel=1e-12)
        boundlab.register(b, algorithm="fedavg", function_class="smooth-convex")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = verify.falsify(b.id, budget=16, seed=0, exact=False)
            inst = res.instance
            prob, x0 = inst.problem()
            run = inst.run
            ref = toys.run(prob, "fedavg", rounds=run["rounds"], seed=0, lr=run["lr"],
                           local_steps=run["local_steps"], x0=x0, record="step")
            assert inst.lhs == pytest.approx(np.max(ref.grad_norm2_virtual), rel=1e-12)
            assert res.verdict == "holds"
        finally:
            boundlab.unregister(b.id)
    finally:
        measures.unregister("virtual_max")


def test_rho_is_the_largest_recorded_skew():
    """rho: max over the rounds of the rounds' largest skew; a round with none recorded (NaN)
    is skipped, an instance with none at all is NaN."""
    q = {"rho_max": np.array([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4])}
    v = measures.measure("rho", q)[0]
    assert v[0].tolist() == [3.0] and np.isnan(v[1, 0])
    assert measures.get("rho").record == "step" and measures.reason("rho") == ""


def test_rho_on_runs_closed_form_and_recomputed():
    """On toys runs (record="step"): FedAvg aggregates with alpha = p, so rho(t, w) = 1 at
    every iterate (closed form); FedSoftMax's is the largest per-step value the trace recorded
    (taken over the whole (T, tau) array at once here), inside BM-15's [min kappa, 1/min p]."""
    import toys
    from verify.falsify.population import quantities

    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    kw = dict(rounds=4, seed=0, lr=0.05, local_steps=3, record="step")
    tr = toys.run(prob, "fedavg", **kw)
    assert measures.measure("rho", quantities(tr))[0][0, 0] == pytest.approx(1.0, abs=1e-12)
    tr = toys.run(prob, "fedsoftmax", **kw)
    ref = float(np.nanmax(np.asarray(tr.steps["rho"], dtype=float)))
    got = measures.measure("rho", quantities(tr))[0][0, 0]
    assert got == ref and 1.0 < got <= 1.0 / prob.p.min()
    with pytest.raises(DomainError, match="rho_max"):  # a record="round" trace has no rho
        measures.measure("rho", quantities(toys.run(prob, "fedsoftmax", **{**kw,
                                                                          "record": "round"})))


def test_rho_range_is_checked_end_to_end():
    """verify.check judges skew.rho_range (rho <= 1/min p) with the registry's ``rho`` on a
    record="step" run; a bound below the run's skew is VIOLATED."""
    import toys
    import verify

    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    kw = dict(rounds=3, seeds=1, lr=0.05, local_steps=3)
    df = verify.check("skew.rho_range", prob, "fedsoftmax", params={"p_min": prob.p.min()}, **kw)
    tr = toys.run(prob, "fedsoftmax", rounds=3, seed=0, lr=0.05, local_steps=3, record="step")
    ref = float(np.nanmax(np.asarray(tr.steps["rho"], dtype=float)))
    assert df["verdict"].tolist() == ["holds"] and df["measured"].iloc[0] == ref
    p_min = sym("p_min")  # a bound below the run's skew, on the same lhs
    low = Bound(id="mine.rho_low", source="test", expr=1 / (2 * p_min), kind="upper",
                params=make_params("p_min"), lhs="rho")
    df = verify.check(low, prob, "fedsoftmax", params={"p_min": 1.0}, **kw)
    assert df["verdict"].tolist() == ["VIOLATED"]


def test_falsify_searches_rho_on_its_populations():
    """rho is measured by the search's population runs (record="step": the skew at every
    virtual average) as on a toys.run: a user bound on rho is searched, and its worst instance
    replays on toys.run to the search's ratio."""
    import verify

    p_min = sym("p_min")  # rho <= max_i alpha_i / p_i <= 1 / p_min: true
    b = Bound(id="mine.rho_user", source="test", expr=1 / p_min, kind="upper",
              params=make_params("p_min"), lhs="rho")
    res = verify.falsify(b, budget=10, seed=0, algorithm="fedsoftmax",
                         function_class="smooth-strongly-convex")
    assert res.verdict == "holds" and res.evaluations > 0
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)


def test_next_sq_dist_closed_form_on_one_quadratic_client():
    """One client F(x) = (a/2) x^2 (x* = 0), gradient descent inside the round: w_{t+1} =
    (1 - eta a) w_t, so next_sq_dist = (1 - eta a)^2 Delta at every iteration, Delta running
    through the iterates from the server model x_r (closed form, computed here by hand)."""
    import toys
    from verify.falsify.population import quantities

    a, eta, x0, T, tau = 2.0, 0.1, 3.0, 2, 3
    prob = toys.Quadratic(np.array([[[a]]]), np.array([[0.0]]), name="one client")
    tr = toys.run(prob, "fedavg", rounds=T, seed=0, lr=eta, local_steps=tau,
                  x0=np.array([x0]), record="step")
    v, per = measures.measure("next_sq_dist", quantities(tr, prob.p))
    c = 1 - eta * a
    w2 = x0 ** 2 * c ** (2 * np.arange(T * tau + 1))  # ||w_t||^2, t = 0..T tau
    assert v.shape == (1, T * tau)
    np.testing.assert_allclose(v[0], w2[1:], rtol=1e-12)
    np.testing.assert_allclose(per["Delta"][0], w2[:-1], rtol=1e-12)
    assert per["eta"][0].tolist() == [eta] * (T * tau)


def test_next_sq_dist_is_searched_by_falsify_with_unit_skew():
    """skew.recursion (FedAvg: alpha = p, so rho_bar = rho_tilde = 1) is searched: its plan
    says so, and a copy with the contraction term halved is VIOLATED on a replayed instance."""
    import verify
    from verify.falsify.plan import make_plan

    plan = make_plan(boundlab.get("skew.recursion"), {})
    assert plan.fixed["rho_bar"] == plan.fixed["rho_tilde"] == 1.0
    assert any("rho(t, w) = 1" in n for n in plan.notes)
    orig = boundlab.get("skew.recursion")
    Delta = sym("Delta")
    low = Bound(id="mine.recursion_half", source="test", expr=orig.expr - Delta / 2,
                params=orig.params, extra_params=orig.extra_params, kind="upper",
                lhs="next_sq_dist", preconditions=orig.preconditions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = verify.falsify(low, budget=16, seed=0, exact=False, algorithm="fedavg",
                             function_class="smooth-strongly-convex")
    assert res.verdict == "VIOLATED" and res.instance is not None and res.worst_ratio > 1
