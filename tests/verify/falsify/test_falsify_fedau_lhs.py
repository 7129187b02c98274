"""FedAU's other left-hand sides in verify.falsify (verify/falsify/fedau_lhs.py): each one
against a brute force over the participation paths that shares none of its code (toys.run
path by path, hand-computed probabilities, Python loops), the catalogue originals holding at a
small budget, and hand-made false versions caught VIOLATED."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, make_params, sym
from verify import measures
from verify.checks.weight_error_descent import constant_omega
from verify.falsify import fedau_lhs as fl
from verify.falsify import fedau_paths as fa
from verify.falsify.families import get_family
from verify.falsify.plan import make_plan

N, T, TAU = 2, 3, 2


def _plan(bound_id, hyper=None, **setting):
    b = boundlab.get(bound_id)
    plan = make_plan(b, {"T": T, "I": TAU, "n_clients": N, **setting})
    return plan.with_hyper(hyper or plan.hyper_grid[0])


def _point(plan, fam_name="quadratic", seed=0):
    fam = get_family(fam_name)
    z = np.random.default_rng(seed).uniform(-0.8, 0.8, fam.n_vars(plan.spec) + N + 1)
    prob, x0 = fam.build(z, plan.spec)
    lo, hi = plan.eta_range(T, TAU)
    return fam, z, prob, x0, 0.5 * (lo + hi)


def _path_prob(chi, p):
    """P(path) of the enumerated rounds ``chi`` (R, N) under Bernoulli(p), by hand."""
    out = 1.0
    for row in chi:
        for c, pn in zip(row, p):
            out *= pn if c else 1.0 - pn
    return out


def _models(prob, algo, masks, x0, gamma, eta, **kw):
    """x_0..x_R of one path (toys.run, read by a callback)."""
    xs = [np.asarray(x0, dtype=float)]
    toys.run(prob, algo, rounds=len(masks), seed=0, lr=gamma, server_lr=eta, local_steps=TAU,
             x0=x0, participation=np.asarray(masks), record="none",
             callbacks=[lambda info: xs.append(np.asarray(info.model))], **kw)
    return xs


def test_as_quadratic_is_the_tilted_problem():
    plan = _plan("weight_error.theorem_b41")
    _, _, prob, _, _ = _point(plan)
    quad = fl.as_quadratic(prob)
    W = np.random.default_rng(1).normal(0, 3, (N, prob.dim))
    np.testing.assert_allclose(quad.losses(W), prob.losses(W), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(quad.grads(W), prob.grads(W), rtol=1e-12, atol=1e-12)


def test_avg_grad_norm2_h_against_brute_force():
    """Algorithm 1 with omega = E[S_n] (K = 2) on the tilted quadratic itself (uniform data
    weights, toys.run per path); grad h = sum_n phi_n grad F_n by hand; h* from grad h = A (x -
    x*) + c_phi = 0; every 2^(N (T-1)) path weighed by its hand probability."""
    plan = _plan("weight_error.theorem_b41", {"K": 2.0})
    fam, z, prob, x0, gamma = _point(plan)
    q, per = fa.instance_arrays(plan, prob, x0, T, TAU, gamma, z)
    p = fa.probabilities(z[-(N + 1):-1])
    omega = (1 - (1 - p) ** 2) / p
    phi = omega * p / np.sum(omega * p)
    eta = float(per["eta"][0])
    A, t = prob.base.A[0], prob.t
    c_phi = phi @ t
    x_h = prob.x_star - np.linalg.solve(A, c_phi)
    h = lambda x: float(phi @ prob.losses(np.repeat(x[None], N, 0)))  # noqa: E731
    lhs = 0.0
    for bits in itertools.product([False, True], repeat=N * (T - 1)):
        chi = np.ones((T, N), dtype=bool)
        chi[:T - 1] = np.reshape(bits, (T - 1, N))
        xs = _models(prob, constant_omega(omega), chi, x0, gamma, eta)
        g = [phi @ prob.grads(np.repeat(x[None], N, 0)) for x in xs[:T]]
        lhs += _path_prob(chi[:T - 1], p) * np.mean([gg @ gg for gg in g])
    assert measures.measure("avg_grad_norm2_h", q)[0][0, 0] == pytest.approx(lhs, rel=1e-10)
    assert per["H"][0] == pytest.approx(h(x0) - h(x_h), rel=1e-9)
    assert per["P"][0] == pytest.approx(np.sum(omega * p), rel=1e-14)
    assert per["Q"][0] == pytest.approx(np.mean(p * omega ** 2), rel=1e-14)
    assert per["deltat"][0] == pytest.approx(np.max(np.linalg.norm(t - c_phi, axis=1)),
                                             rel=1e-9)
    r, lhs_e, _ = fa.evaluate(plan, fam, z[None], T, TAU, np.array([gamma]))
    assert lhs_e[0] == pytest.approx(lhs, rel=1e-10) and np.isfinite(r[0])


def test_one_round_descent_against_brute_force():
    """E_t f(x_{t+1}) - f(x_t) at every state: toys.run on the prefix and each outcome of
    round t, weighed by hand; the state's q_t, werr_t from toys' own omega_t (Trace.omega)."""
    plan = _plan("weight_error.lemma_b51", {"K": 2.0})
    _, z, prob, x0, gamma = _point(plan, "huber", seed=4)
    q, per = fa.instance_arrays(plan, prob, x0, T, TAU, gamma, z)
    p = fa.probabilities(z[-(N + 1):-1])
    eta = float(per["eta"][0])
    vals, g2s, qts, werrs = (q[k][0] for k in ("descent_t", "descent_grad_norm2",
                                               "descent_q_t", "descent_werr_t"))
    B = 2 ** (N * (T - 1))
    for t in range(T - 1):
        for b in range(B):
            bits = [(b >> j) & 1 == 1 for j in range(N * (T - 1))]
            prefix = np.reshape(bits, (T - 1, N))[:t]
            exp = 0.0
            for out in itertools.product([False, True], repeat=N):
                chi = np.vstack([prefix, [out]]) if t else np.array([out])
                tr = toys.run(prob, "fedau", rounds=t + 1, seed=0, lr=gamma, server_lr=eta,
                              local_steps=TAU, x0=x0, participation=chi, K=2)
                exp += _path_prob([out], p) * (tr.loss[t + 1] - tr.loss[t])
            k = t * B + b
            assert vals[k] == pytest.approx(exp, rel=1e-9, abs=1e-14)
            assert g2s[k] == pytest.approx(tr.grad_norm2[t], rel=1e-12)
            om = np.asarray(tr.omega[t])
            assert qts[k] == pytest.approx(np.mean(p * om ** 2), rel=1e-14)
            assert werrs[k] == pytest.approx(np.mean((p * om - 1) ** 2), rel=1e-14, abs=1e-16)


def test_local_drift_against_brute_force():
    """max over participants and local steps of ||y - x_t||^2: local gradient steps by hand
    (prob.grads) from the path's x_t."""
    plan = _plan("weight_error.lemma_b32", {"K": math.inf})
    _, z, prob, x0, gamma = _point(plan, "softplus", seed=2)
    q, per = fa.instance_arrays(plan, prob, x0, T, TAU, gamma, z)
    eta = float(per["eta"][0])
    assert per["deltat"][0] == pytest.approx(np.max(np.linalg.norm(prob.t, axis=1)), rel=1e-12)
    B = 2 ** (N * (T - 1))
    for b in range(B):
        chi = np.ones((T, N), dtype=bool)
        chi[:T - 1] = np.reshape([(b >> j) & 1 == 1 for j in range(N * (T - 1))], (T - 1, N))
        xs = _models(prob, "fedau", chi, x0, gamma, eta, K=None)
        for t in range(T):
            Y, best = np.repeat(xs[t][None], N, 0), 0.0
            for _ in range(TAU):
                Y = Y - gamma * prob.grads(Y)
                dev = np.sum((Y - xs[t]) ** 2, axis=1)[chi[t]]
                best = max([best, *dev])
            got = q["local_drift_t"][0, t * B + b]
            if chi[t].any():
                assert got == pytest.approx(best, rel=1e-9)
            g = prob.grad_F(xs[t])
            assert q["local_drift_grad_norm2"][0, t * B + b] == pytest.approx(g @ g, rel=1e-9)


def test_s_sampled_equiprobable_known_weights():
    """p_n = S/N for every client, omega = 1/p (average-all weights times 1/p), S the
    instance's; the expectation by hand over the paths."""
    plan = _plan("weight_error.corollary4_equiprobable")
    assert plan.hyper_grid == ({"K": math.inf},)
    fam, z, prob, x0, gamma = _point(plan, seed=5)
    z[-(N + 1)] = -0.2  # S = 1 + floor(N (z + 1) / 2) = 1
    q, per = fa.instance_arrays(plan, prob, x0, T, TAU, gamma, z)
    assert per["S_sampled"][0] == 1.0
    p = np.full(N, 1 / N)
    lhs = 0.0
    for bits in itertools.product([False, True], repeat=N * (T - 1)):
        chi = np.ones((T, N), dtype=bool)
        chi[:T - 1] = np.reshape(bits, (T - 1, N))
        xs = _models(prob, constant_omega(1 / p), chi, x0, gamma, float(per["eta"][0]))
        g = [prob.grad_F(x) for x in xs[:T]]
        lhs += _path_prob(chi[:T - 1], p) * np.mean([gg @ gg for gg in g])
    assert measures.measure("avg_grad_norm2", q)[0][0, 0] == pytest.approx(lhs, rel=1e-10)
    assert fl.sampled_probabilities(np.array([[1.0], [-1.0]]), 3)[0].tolist() == [3.0, 1.0]


def test_conditional_next_by_hand():
    p = np.array([0.2, 0.7])  # two rounds enumerated, condition on round 0, expect round 1
    v = np.arange(16.0) ** 2  # path b: round 0 bits 0-1, round 1 bits 2-3
    got = fl.conditional_next(v, p, 1, 2)
    for b in range(16):
        low = b & 3
        want = sum(_path_prob([[(m >> 0) & 1, (m >> 1) & 1]], p) * v[low + 4 * m]
                   for m in range(4))
        assert got[b] == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("bound_id", ["weight_error.theorem_b41", "weight_error.lemma_b51",
                                      "weight_error.lemma_b32",
                                      "weight_error.corollary4_equiprobable"])
def test_catalogue_originals_hold(bound_id):
    res = verify.falsify(bound_id, budget=24, seed=0)
    assert res.verdict == "holds", res.reason
    assert 0 < res.worst_ratio < 1
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-9)


def _false(base_id, expr, params, extra):
    base = boundlab.get(base_id)
    b = Bound(id="mine.fedau_lhs_false", source="test", kind="upper", lhs=base.lhs, expr=expr,
              params=make_params(*params), extra_params=make_params(*extra),
              preconditions=base.preconditions)
    boundlab.register(b, algorithm="fedau", function_class="smooth-nonconvex")
    try:
        return verify.falsify("mine.fedau_lhs_false", budget=24, seed=0, n_clients=N)
    finally:
        boundlab.unregister("mine.fedau_lhs_false")


H, L_, T_, F_, G2, I_, gam, eta = (sym(n) for n in ("H", "L", "T", "F", "grad_norm2", "I",
                                                    "gamma", "eta"))


@pytest.mark.parametrize("base_id,expr,params,extra", [
    # T = 1: lhs = ||grad h(x0)||^2 >= 2 lambda_min(A) H >= 2e-3 L H (the family's floor)
    ("weight_error.theorem_b41", L_ * H / (1000 * T_), ("L", "H", "T"),
     ("N", "gamma", "eta", "P", "I", "Q")),
    # T = 1: ||grad f(x0)||^2 >= 2e-3 L F on quadratics
    ("weight_error.corollary4_equiprobable", L_ * F_ / (1000 * T_), ("L", "F", "T"),
     ("I", "delta", "sigma", "S_sampled", "gamma", "eta", "N")),
    # I = 1, round 0: max_n gamma^2 ||grad f + t_n||^2 >= gamma^2 ||grad f||^2 (sum t_n = 0)
    ("weight_error.lemma_b32", I_ * gam ** 2 * G2 / 2, ("I", "gamma", "grad_norm2"), ("L",)),
    # a promised descent at every state: false wherever FedAU's step raises f (near x*)
    ("weight_error.lemma_b51", -I_ * eta * gam * G2 / 1000, ("I", "eta", "gamma", "grad_norm2"),
     ("L",)),
])
def test_false_versions_are_violated(base_id, expr, params, extra):
    res = _false(base_id, expr, params, extra)
    assert res.verdict == "VIOLATED", res.reason
    assert res.instance.replay() > 1


def test_plan_refuses_and_restricts():
    from verify.falsify.plan import NotApplicable

    with pytest.raises(NotApplicable, match="T >= 2"):
        make_plan(boundlab.get("weight_error.lemma_b51"), {"T": 1, "n_clients": 2})
    plan = make_plan(boundlab.get("weight_error.lemma_b51"), {"n_clients": 2})
    assert min(plan.T_grid) == 2
    plan = make_plan(boundlab.get("weight_error.theorem_b41"), {"n_clients": 2})
    assert [f for f in ("quadratic", "huber") if plan.accepts(get_family(f))] == ["quadratic"]
    assert set(plan.measured) >= {"H", "P", "Q", "deltat"}


def test_measures_registered():
    for name in ("avg_grad_norm2_h", "one_round_descent", "local_drift"):
        assert name in measures.names() and name not in measures.NOT_MEASURED
    q = {"descent_t": np.array([[1.0, -2.0]]), "descent_grad_norm2": np.ones((1, 2)),
         "descent_q_t": np.ones((1, 2)), "descent_werr_t": np.zeros((1, 2))}
    v, per = measures.measure("one_round_descent", q)
    assert v.tolist() == [[1.0, -2.0]] and set(per) == {"grad_norm2", "q_t", "werr_t"}
    assert dataclasses.is_dataclass(measures.get("local_drift"))


def test_saved_instance_replays(tmp_path):
    """K = inf (known weights) is written as null: the reloaded plan still replays."""
    from verify.falsify.api import Falsification

    res = verify.falsify("weight_error.corollary4_equiprobable", budget=12, seed=1)
    res.save(tmp_path / "r.json")
    back = Falsification.load(tmp_path / "r.json")
    assert back.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)
