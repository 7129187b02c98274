"""BC's non-convex theorems in verify.falsify: the population's gradients at the virtual
averages (toys.run_many, record="step") against toys.run's, and a search whose worst instance
replays to its search value, both measuring (1/(T E)) sum_t sum_{k<E} ||grad F(wbar_{t,k})||^2."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import boundlab
import toys
import verify
from verify.falsify._plan_parts import draw_masks
from verify.falsify.families import Spec, get_family
from verify.falsify.plan import make_plan
from verify.falsify.population import quantities
from verify.falsify.toys_map import toys_call
from verify.measures import VIRTUAL, measure
from verify.measures import paper_name as measured_lhs

SPEC = Spec(L=2.0, mu=0.3, D=1.5, n_clients=3, dim=2)


@pytest.mark.parametrize("name", ["quadratic", "softplus", "huber"])
@pytest.mark.parametrize("algo,hyper,tau", [("fedprox", {"alpha": 0.7}, 2),
                                            ("beta", {"beta": 0.4}, 3)])
def test_virtual_gradients_match_toys_run(name, algo, hyper, tau, run_population):
    fam = get_family(name)
    Z = np.random.default_rng(13).uniform(-1, 1, (3, fam.n_vars(SPEC)))
    eta = np.array([0.1, 0.25, 0.45])
    st = fam.stack(Z, SPEC)
    q = run_population(st, eta, rounds=4, tau=tau, algo=algo, hyper=hyper, virtual=True)
    plain = run_population(st, eta, rounds=4, tau=tau, algo=algo, hyper=hyper)
    # a step run adds the virtual gradients and the per-step arrays; the rest bit for bit
    assert set(q) - set(plain) == {"grad_norm2_virtual", "rho_max", "step_dist2", "step_lr"}
    assert all(np.array_equal(plain[k], q[k], equal_nan=True) for k in plain)
    toys_algo, kw = toys_call(algo, hyper, 3)
    values = measure(VIRTUAL, q)[0][:, 0]
    for k in range(3):
        prob, x0 = fam.build(Z[k], SPEC)
        tr = toys.run(prob, toys_algo, rounds=4, seed=0, lr=float(eta[k]), local_steps=tau,
                      x0=x0, record="step", **kw)
        assert tr.diverged_at is None
        ref = tr.grad_norm2_virtual
        np.testing.assert_allclose(q["grad_norm2_virtual"][k], ref, rtol=1e-12, atol=1e-14)
        assert values[k] == pytest.approx(np.mean(ref), rel=1e-12)
        # E >= 2: not the server models' average (what avg_grad_norm2 measures elsewhere)
        assert abs(values[k] - np.mean(tr.grad_norm2[:-1])) > 1e-6 * values[k]
        np.testing.assert_allclose(quantities(tr)["grad_norm2_virtual"][0], ref,
                                   rtol=0, atol=0)


def test_virtual_gradients_under_partial_participation_match_toys_run(run_population):
    """A round without participants leaves every virtual average at x_r, as in toys.run."""
    fam = get_family("quadratic")
    Z = np.random.default_rng(3).uniform(-1, 1, (4, fam.n_vars(SPEC)))
    m = draw_masks("bernoulli:p=0.5", Z, 6, 3)
    assert (~m.any(axis=2)).any()  # some round with nobody
    st = fam.stack(Z, SPEC)
    eta = np.array([0.1, 0.2, 0.3, 0.4])
    q = run_population(st, eta, rounds=6, tau=2, algo="fedprox", hyper={"alpha": 0.7},
                       masks=m, virtual=True)
    for k in range(4):
        prob, x0 = fam.build(Z[k], SPEC)
        tr = toys.run(prob, "fedprox", rounds=6, seed=0, lr=float(eta[k]), local_steps=2, x0=x0,
                      participation=m[k], prox=0.7, record="step")
        np.testing.assert_allclose(q["grad_norm2_virtual"][k], tr.grad_norm2_virtual,
                                   rtol=1e-12, atol=1e-14)


def test_the_measured_quantity_follows_verify_checks_table():
    assert measured_lhs("avg_grad_norm2", "fedprox") == VIRTUAL
    assert measured_lhs("avg_grad_norm2", "beta") == VIRTUAL
    assert measured_lhs("avg_grad_norm2", "fedau") == "avg_grad_norm2"  # FedAU: server models
    assert measured_lhs("final_gap", "beta") == "final_gap"
    for bid in ("contraction.fedprox_nc", "contraction.fedprox_nc.printed",
                "contraction.beta_nc"):
        plan = make_plan(boundlab.get(bid), {})
        assert measured_lhs(plan.lhs, plan.algorithm) == VIRTUAL
    # a mutant (a Bound object, not registered) searched with the original's algorithm
    b = dataclasses.replace(boundlab.get("contraction.beta_nc"), id="mine.beta_nc_copy")
    plan = make_plan(b, {}, algorithm="beta", function_class="smooth-nonconvex")
    assert measured_lhs(plan.lhs, plan.algorithm) == VIRTUAL


def test_falsify_beta_nc_replays_its_search_value_on_the_virtual_averages():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = verify.falsify("contraction.beta_nc", budget=24, seed=0, E=2)
    inst = res.instance
    assert res.verdict == "holds" and inst.run["local_steps"] == 2
    ratio, lhs, rhs = inst.measure()
    assert ratio == pytest.approx(inst.ratio, rel=1e-9) and lhs == pytest.approx(inst.lhs,
                                                                                 rel=1e-9)
    assert res.worst_ratio == pytest.approx(inst.ratio, rel=1e-9)
    # the search's lhs is toys.run's virtual-average mean, not the server models'
    prob, x0 = inst.problem()
    algo, kw = inst.plan.toys_call()
    run = inst.run
    tr = toys.run(prob, algo, rounds=run["rounds"], seed=0, lr=run["lr"], local_steps=2, x0=x0,
                  record="step", **kw)
    assert inst.lhs == pytest.approx(np.mean(tr.grad_norm2_virtual), rel=1e-12)
    assert abs(inst.lhs - np.mean(tr.grad_norm2[:-1])) > 1e-6 * inst.lhs
