"""Properties of the small pure pieces: weight rules, rho, FedAU's Algorithm 2, the seed-003
graph and perturbation, step-size schedules (spec seeds-000-001-004 §3.1/§5.3, seeds-002-003
§5.1.2, §5.2.1, §7)."""

import math

import numpy as np
import pytest
from engine_reference import bc_messages, fedau_omega_literal
from hypothesis import given, settings
from hypothesis import strategies as st

import toys
from boundlab.errors import DomainError
from toys.algorithms import beta as bc
from toys.algorithms import fedau as fa
from toys.algorithms.weights import alpha_of, rho
from toys.local import exponential, lr_schedule

RULES = ["fedavg", "fedmax", "fedmax-k", "fedsoftmax", "fedbetter", "fedbetter-k",
         "fedsoftbetter"]


@st.composite
def scores_weights_mask(draw, n_max=8):
    n = draw(st.integers(1, n_max))
    x = np.array(draw(st.lists(st.floats(0, 50), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.floats(0.01, 1), min_size=n, max_size=n)))
    mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if not mask.any():
        mask[draw(st.integers(0, n - 1))] = True
    return x, w / w.sum(), mask


@settings(max_examples=60, deadline=None)
@given(data=scores_weights_mask(), rule=st.sampled_from(RULES),
       inv_t=st.floats(0.01, 20), k=st.integers(1, 8))
def test_rules_return_simplex_on_participants(data, rule, inv_t, k):
    x, p, mask = data
    a = alpha_of(rule, x, p, mask, inv_temperature=inv_t, k=min(k, len(x)))
    assert np.all(a >= 0) and np.all(a[~mask] == 0)
    assert abs(a.sum() - 1.0) <= 1e-12


@settings(max_examples=60, deadline=None)
@given(data=scores_weights_mask(), rule=st.sampled_from(RULES), inv_t=st.floats(0.01, 20))
def test_rho_between_kappa_extremes(data, rule, inv_t):
    """pi_t <= rho(t, w) <= Pi_t and rho <= 1/min p (spec §3.1 bm.rho_range), full
    participation."""
    x, p, _ = data
    mask = np.ones(len(x), bool)
    x = x + 1e-3  # keep the denominator away from 0
    a = alpha_of(rule, x, p, mask, inv_temperature=inv_t, k=1)
    r = float(rho(a, x, p))
    kappa = a / p
    assert kappa.min() - 1e-12 <= r <= kappa.max() + 1e-12
    assert r <= 1 / p.min() + 1e-9


def test_fedmax_maximises_rho_and_softmax_limits():
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = rng.integers(2, 9)
        x, p, m = rng.random(n) * 5, rng.dirichlet(np.ones(n)), np.ones(n, bool)
        a = alpha_of("fedmax", x, p, m)
        assert float(rho(a, x, p)) == pytest.approx(x.max() / (p @ x), rel=1e-12)
        # T -> infinity: FedAvg; T -> 0+: FedMax (unique max here)
        np.testing.assert_allclose(alpha_of("fedsoftmax", x, p, m, inv_temperature=1e-9), p,
                                   atol=1e-8)
        np.testing.assert_allclose(alpha_of("fedsoftmax", x, p, m, inv_temperature=1e6), a,
                                   atol=1e-12)
        np.testing.assert_allclose(alpha_of("fedsoftbetter", x, p, m, inv_temperature=1e6),
                                   alpha_of("fedbetter", x, p, m), atol=1e-12)
        # alpha = p  =>  rho = 1
        assert float(rho(alpha_of("fedavg", x, p, m), x, p)) == pytest.approx(1, abs=1e-12)


def test_softmax_is_stable_for_large_exponents():
    x = np.array([100.0, 99.0, 0.0])  # x / T = 500 with T = 0.2
    a = alpha_of("fedsoftmax", x, np.full(3, 1 / 3), np.ones(3, bool), inv_temperature=5.0)
    assert np.all(np.isfinite(a)) and a[2] > 0 and a[0] == pytest.approx(1 / (1 + np.exp(-5)))


def test_rho_undefined_guard():
    """rho is NaN when F(w) = sum p_i F_i* (Gamma = 0 and w = w*)."""
    assert math.isnan(float(rho(np.array([1.0, 0.0]), np.zeros(2), np.full(2, 0.5))))


# ----------------------------------------------------------------------------- FedAU Alg. 2
def _batch_omega(chi, K):
    """Batch equivalent (spec F2): omega_t = mean of the intervals completed in rounds < t."""
    T = len(chi)
    out = np.ones(T)
    intervals, start = [], 0  # the current interval started right before round `start`
    for t in range(T):
        if intervals:
            out[t] = np.mean(intervals)
        # round t ends: boundary after a participation, or after K rounds without one
        length = t - start + 1
        if chi[t] or length == K:
            intervals.append(length)
            start = t + 1
    return out


@settings(max_examples=80, deadline=None)
@given(chi=st.lists(st.booleans(), min_size=1, max_size=60),
       K=st.one_of(st.integers(1, 12), st.just(math.inf)))
def test_fedau_online_equals_batch_and_literal(chi, K):
    chi = np.array(chi)
    state = fa.fedau_init(1)
    online = []
    for t in range(len(chi)):
        online.append(float(state.omega[0]))
        state = fa.fedau_update(state, chi[t:t + 1], K)
    online = np.array(online)
    np.testing.assert_allclose(online, _batch_omega(chi, K), rtol=1e-12)
    np.testing.assert_allclose(online, fedau_omega_literal(chi, K), rtol=1e-12)
    assert online[0] == 1.0 and online.min() >= 1.0 and online.max() <= min(K, len(chi))
    if K == 1 or chi.all():
        assert np.all(online == 1.0)


def test_omega_does_not_depend_on_current_participation():
    """Changing chi_t changes omega only from round t+1 on (spec property 15)."""
    prob = toys.quadratic(n_clients=3, dim=2, seed=0)
    rng = np.random.default_rng(0)
    M = rng.random((12, 3)) < 0.5
    M2 = M.copy()
    M2[6] = ~M2[6]
    a = toys.run(prob, "fedau", rounds=12, seed=0, participation=M, lr=0.1, record="none")
    b = toys.run(prob, "fedau", rounds=12, seed=0, participation=M2, lr=0.1, record="none")
    np.testing.assert_array_equal(a.omega[:7], b.omega[:7])
    assert not np.array_equal(a.omega[7:], b.omega[7:])


# ----------------------------------------------------------------------------- seed 003 graph
@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 7), D=st.integers(1, 5), seed=st.integers(0, 10_000))
def test_graph_properties(n, D, seed):
    m = np.random.default_rng(seed).normal(size=(n, D))
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    g = bc.graph(m)
    mis, P = g["mis"], g["P"]
    assert np.all((mis >= 0) & (mis <= 1)) and np.allclose(mis, mis.T)
    assert np.all(np.diag(mis) == 0) and np.all(np.diag(g["A"]) == 0)
    np.testing.assert_allclose(mis, np.clip(((m[:, None] - m[None]) ** 2).sum(-1) / 4, 0, 1) *
                               (1 - np.eye(n)), atol=1e-12)
    if g["A"].sum() > 0:
        assert P.sum() == pytest.approx(1.0) and g["p"].sum() == pytest.approx(1.0)
        np.testing.assert_allclose(P, P.T, atol=1e-15)
    # messages are normalised inside: scaling them does not change the graph
    np.testing.assert_allclose(bc.graph(3.0 * m)["p"], g["p"], rtol=1e-12)


def test_graph_edge_cases_duplicates_and_isolated_client():
    m = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0]])  # mis(0,1) = 0, client 2 antipodal
    g = bc.graph(m)
    assert np.all(np.isfinite(g["P"])) and g["degree"][2] == 0 and g["p"][2] == 0
    W_last = np.array([[1.0], [3.0], [7.0]])
    U = bc.neighbour_average(g["P"], g["degree"], W_last, np.array([5.0]))
    np.testing.assert_allclose(U, [[3.0], [1.0], [5.0]])  # isolated client: u = w_bar
    # all messages antipodal: sum A = 0 -> uniform weights, no NaN
    g2 = bc.graph(np.array([[1.0], [-1.0]]))
    np.testing.assert_allclose(g2["p"], [0.5, 0.5])


def test_messages_match_svd_with_sign_convention():
    prob = toys.logistic_synthetic(n_clients=6, dim=4, seed=3)
    np.testing.assert_allclose(bc.messages(prob), bc_messages(prob), atol=1e-10)
    quad = toys.quadratic(n_clients=4, dim=3, seed=1)
    np.testing.assert_allclose(bc.messages(quad), bc_messages(quad), atol=1e-10)
    # Gram-trick branch (fewer rows than features)
    rng = np.random.default_rng(0)
    few = toys.logistic([rng.normal(size=(3, 6)) + 1 for _ in range(3)],
                        [np.array([0.0, 1.0, 1.0])] * 3, l2=0.1)
    np.testing.assert_allclose(bc.messages(few), bc_messages(few), atol=1e-10)


def test_lemma_m1_average_perturbed_iterate():
    """With symmetric A and full participation: sum_i p_i w~_i = beta wbar_k + (1-beta) wbar_0
    (spec property 31)."""
    rng = np.random.default_rng(1)
    N, d, beta = 6, 3, 0.3
    g = bc.graph(rng.normal(size=(N, 4)))
    W_prev = rng.normal(size=(N, d))
    w_bar0 = g["p"] @ W_prev  # the aggregate of the previous round's local models
    U = bc.neighbour_average(g["P"], g["degree"], W_prev, w_bar0)
    Wk = rng.normal(size=(N, d))
    lhs = g["p"] @ bc.perturbed(beta, Wk, U)
    np.testing.assert_allclose(lhs, beta * (g["p"] @ Wk) + (1 - beta) * w_bar0, atol=1e-12)


def test_beta_one_is_bitwise_fedavg():
    """beta = 1 is exactly FedAvg with the graph weights (spec property 32): two clients, whose
    graph weights are exactly 1/2 = the problem's uniform p."""
    prob = toys.logistic_synthetic(n_clients=2, dim=3, seed=0)
    prob_u = toys.logistic([prob.X[i][prob.mask[i]] for i in range(2)],
                           [prob.y[i][prob.mask[i]] for i in range(2)], l2=prob.l2,
                           weights=[1.0, 1.0])
    a = toys.run(prob_u, "beta", rounds=5, seed=0, lr=0.3, local_steps=3, beta=1.0)
    b = toys.run(prob_u, "fedavg", rounds=5, seed=0, lr=0.3, local_steps=3)
    assert a.info["graph"]["p"].tolist() == [0.5, 0.5]
    np.testing.assert_array_equal(a.final_model, b.final_model)
    c = toys.run(prob_u, "beta", rounds=5, seed=0, lr=0.3, local_steps=3, beta=0.5)
    assert not np.array_equal(c.final_model, b.final_model)


# ----------------------------------------------------------------------------- schedules
def test_lr_schedule_forms_and_errors():
    np.testing.assert_array_equal(lr_schedule([0.3, 0.2], 2, 3), [0.3] * 3 + [0.2] * 3)
    np.testing.assert_array_equal(lr_schedule(np.arange(1, 7) / 10, 2, 3), np.arange(1, 7) / 10)
    np.testing.assert_allclose(lr_schedule(lambda t: 0.1 if t < 2 else 0.01, 1, 4),
                               [0.1, 0.1, 0.01, 0.01])
    np.testing.assert_allclose(lr_schedule(exponential(1.0, 0.5, 2), 2, 2),
                               [1, 1, 0.5, 0.5])
    for bad in (0.0, -1.0, math.nan, [0.1, 0.0], [0.1] * 5, lambda t: -t, "x"):
        with pytest.raises(DomainError, match="lr"):
            lr_schedule(bad, 2, 2)
