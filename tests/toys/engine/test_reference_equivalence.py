"""Every algorithm of toys.run matches a plain per-client-loop reference to 1e-12 (float64).

The reference (engine_reference.py) is written from the papers' pseudo-code with Python loops
over clients and local steps; it shares no code with toys' algorithm pieces.
"""

import math

import numpy as np
import pytest
from engine_reference import reference_run

import toys
from toys.local import inverse_time
from toys.participation import make as make_process

TOL = {"rtol": 1e-12, "atol": 1e-12}
# the seed papers' algorithms; the comparison algorithms have their own per-client references
# (tests/toys/algorithms/comparison_reference.py)
PAPERS = sorted(set(toys.ALGORITHMS) - set(toys.algorithms.COMPARISONS))
ROUND_FIELDS = ("rho_sync", "rho_star", "rho_min", "shadow_gap", "drift_max", "drift_mean",
                "drift_sum", "disc_max", "g2_max", "zeta_obs")
STATE_FIELDS = ("loss", "gap", "dist2", "grad_dissim", "grad_norm2")

EXTRA = {
    "fedprox": {"prox": 0.3}, "fedprox-bc": {"prox": 0.05}, "fedmax-k": {"k": 2},
    "fedbetter-k": {"k": 3}, "fedsoftmax": {"temperature": 0.7},
    "fedsoftbetter": {"inv_temperature": 2.0},
    "hybrid": {"rules": ("fedsoftbetter", "fedavg", "fedmax"), "switch_round": (2, 4)},
    "anneal": {"rule": "fedsoftmax", "schedule": "temperature", "decay": 0.7,
               "inv_temperature": 3.0},
    "fedau": {"K": 3}, "beta": {"beta": 0.6},
}


@pytest.fixture(scope="module")
def quad():
    return toys.quadratic(n_clients=5, dim=3, L=4.0, mu=1.0, heterogeneity=1.0, seed=0,
                          weights=[0.1, 0.3, 0.2, 0.25, 0.15])


@pytest.fixture(scope="module")
def logi():
    return toys.logistic_synthetic(n_clients=5, dim=3, seed=1)


@pytest.fixture(scope="module")
def multi():
    rng = np.random.default_rng(2)
    Xs = [rng.normal(size=(n, 3)) + i for i, n in enumerate((12, 7, 15, 9))]
    ys = [rng.integers(0, 3, size=len(x)) for x in Xs]
    return toys.logistic(Xs, ys, l2=0.1)


def _compare(tr, ref, name):
    np.testing.assert_allclose(tr.final_model, ref["final"], **TOL, err_msg=name)
    np.testing.assert_array_equal(tr.participation, ref["masks"])
    np.testing.assert_allclose(tr.alpha, ref["alpha"], **TOL, err_msg=f"{name} alpha")
    if tr.omega is not None:
        np.testing.assert_allclose(tr.omega, ref["omega"], **TOL, err_msg=f"{name} omega")
    for k in STATE_FIELDS:
        np.testing.assert_allclose(tr.state[k], ref[k], **TOL, err_msg=f"{name} {k}")
    for k in ROUND_FIELDS:
        np.testing.assert_allclose(tr.per_round[k], ref[k], **TOL, err_msg=f"{name} {k}")
    for k, v in ref["steps"].items():
        np.testing.assert_allclose(tr.steps[k], v, **TOL, err_msg=f"{name} steps {k}")


@pytest.mark.parametrize("name", PAPERS)
def test_full_participation_quadratic(quad, name):
    hyper = {"lr": 0.08, "local_steps": 3, **EXTRA.get(name, {})}
    tr = toys.run(quad, name, rounds=6, seed=0, record="step", **hyper)
    ref = reference_run(quad, name, 6, 0, **hyper)
    _compare(tr, ref, name)


@pytest.mark.parametrize("name", PAPERS)
def test_bernoulli_minibatch_logistic(logi, name):
    proc = make_process("bernoulli", logi.n_clients, p=[0.9, 0.5, 0.7, 0.3, 0.6])
    hyper = {"lr": 0.5, "local_steps": 3, "batch_size": 8, "server_lr": 0.9, **EXTRA.get(name, {})}
    tr = toys.run(logi, name, rounds=7, seed=3, participation=proc, record="step", **hyper)
    ref = reference_run(logi, name, 7, 3, process=proc, **hyper)
    assert tr.participation.sum(axis=1).min() < logi.n_clients  # partial participation happens
    _compare(tr, ref, name)


@pytest.mark.parametrize("name", ["fedavg", "fedmax", "fedsoftbetter", "fedau", "mifa",
                                  "fedvarp", "beta"])
def test_multinomial_uniform_participation(multi, name):
    proc = make_process("uniform", multi.n_clients, m=2)
    hyper = {"lr": 0.3, "local_steps": 2, **EXTRA.get(name, {})}
    tr = toys.run(multi, name, rounds=5, seed=7, participation=proc, record="step", **hyper)
    ref = reference_run(multi, name, 5, 7, process=proc, **hyper)
    _compare(tr, ref, name)


def test_noisy_quadratic_decaying_schedule(quad):
    """Gradient noise (sample-free problem) and BM's eta_t = 1/(mu (t + gamma)) schedule."""
    noisy = toys.quadratic(n_clients=4, dim=2, L=4.0, mu=1.0, seed=5, noise_std=0.3)
    lr = inverse_time(1.0, 16.0)
    for name in ("fedavg", "fedsoftmax", "anneal"):
        extra = ({"schedule": "mix", "rule": "fedmax", "mix_rounds": 3}
                 if name == "anneal" else {})
        hyper = {"lr": lr, "local_steps": 4, "batch_size": 2, **extra}
        tr = toys.run(noisy, name, rounds=5, seed=11, record="step", **hyper)
        ref = reference_run(noisy, name, 5, 11, **hyper)
        _compare(tr, ref, name)
        np.testing.assert_allclose(tr.steps["lr"].ravel(), 1.0 / (np.arange(20) + 16.0),
                                   rtol=1e-15)


@pytest.mark.parametrize("opts", [{"loss_offset": "zero"}, {"loss_offset": "running_min"},
                                  {"score_point": "local_end"}])
def test_score_options(logi, opts):
    proc = make_process("bernoulli", logi.n_clients, p=0.6)
    hyper = {"lr": 0.4, "local_steps": 2, "temperature": 0.5, **opts}
    tr = toys.run(logi, "fedsoftmax", rounds=6, seed=2, participation=proc, record="step",
                  **hyper)
    ref = reference_run(logi, "fedsoftmax", 6, 2, process=proc, **hyper)
    _compare(tr, ref, str(opts))


def test_ragged_minibatch_larger_than_small_clients():
    """b between the smallest and largest client size: small clients use all their rows."""
    rng = np.random.default_rng(4)
    Xs = [rng.normal(size=(n, 2)) for n in (4, 9, 30)]
    ys = [np.r_[0.0, 1.0, (rng.random(n - 2) < 0.5)] for n in (4, 9, 30)]
    prob = toys.logistic(Xs, ys, l2=0.2)
    hyper = {"lr": 0.5, "local_steps": 3, "batch_size": 6}
    tr = toys.run(prob, "fedavg", rounds=4, seed=5, record="step", **hyper)
    ref = reference_run(prob, "fedavg", 4, 5, **hyper)
    _compare(tr, ref, "ragged")


def test_explicit_matrix_with_empty_rounds(quad):
    M = np.zeros((6, 5), bool)
    M[0, :] = True
    M[2, [1, 3]] = True
    M[4, 4] = True
    for name in ("fedavg", "mifa", "fedvarp", "fedau", "fedau-known", "average-all"):
        hyper = {"lr": 0.1, "local_steps": 2}
        tr = toys.run(quad, name, rounds=6, seed=0, participation=M, record="step", **hyper)
        ref = reference_run(quad, name, 6, 0, masks=M, **hyper)
        _compare(tr, ref, name)
        assert np.isnan(tr.shadow_gap[1]) and tr.n_participants[1] == 0


def test_k_fraction_and_ties():
    """k as a fraction (BM-B's 10 %/20 %) and FedMax splitting ties equally (BM-A (21))."""
    A = np.stack([np.eye(2)] * 4)
    c = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])  # clients 0-2 tie at x=0
    prob = toys.Quadratic(A, c)
    tr = toys.run(prob, "fedmax", rounds=1, seed=0, lr=0.1, x0=np.zeros(2))
    np.testing.assert_allclose(tr.alpha[0], [1 / 3, 1 / 3, 1 / 3, 0.0], rtol=0, atol=1e-15)
    tr = toys.run(prob, "fedmax-k", rounds=1, seed=0, lr=0.1, k=0.5, x0=np.zeros(2))
    np.testing.assert_allclose(tr.alpha[0], [0.5, 0.5, 0.0, 0.0])  # ties: lower index first
    ref = reference_run(prob, "fedmax-k", 1, 0, lr=0.1, k=0.5, x0=np.zeros(2))
    np.testing.assert_allclose(tr.alpha, ref["alpha"])


def test_infinite_cutoff_equals_large_K(logi):
    proc = make_process("markov", logi.n_clients, p=0.4)
    a = toys.run(logi, "fedau", rounds=8, seed=1, participation=proc, lr=0.2, K=math.inf)
    b = toys.run(logi, "fedau", rounds=8, seed=1, participation=proc, lr=0.2, K=1000)
    np.testing.assert_array_equal(a.omega, b.omega)
    ref = reference_run(logi, "fedau", 8, 1, process=proc, lr=0.2, K=math.inf)
    np.testing.assert_allclose(a.omega, ref["omega"], **TOL)
