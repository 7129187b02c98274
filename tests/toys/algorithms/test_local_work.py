"""Per-client local work (fedavg-hetero; toys.algorithms.local_work): heterogeneous local steps
and stragglers against a per-client reference loop, the law of the draws, FedAvg bit for bit
without heterogeneity, torch, checkpoints and the domain errors."""

import math

import numpy as np
import pytest
from comparison_reference import PAIRS, masks_of, reference, steps_of

import toys
from boundlab.errors import DomainError, UnknownNameError
from toys.algorithms.local_work import LocalWork, work_sums
from toys.participation import make as make_process

TOL = {"rtol": 1e-12, "atol": 1e-12}
SETTINGS = {
    "fixed": {"client_steps": (1, 3, 2, 4, 1)},
    "drawn": {"local_steps": 4, "min_steps": 1},
    "stragglers": {"client_steps": (2, 4, 3, 4, 5), "straggler_prob": 0.5},
    "both": {"local_steps": 5, "min_steps": 2, "straggler_prob": 0.3},
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("pname", sorted(PAIRS))
def test_hetero_matches_reference(pname, setting):
    prob, cl = PAIRS[pname]()
    proc = make_process("bernoulli", 5, p=[0.9, 0.6, 0.8, 0.5, 0.7])
    h = {"lr": 0.1, **SETTINGS[setting]}
    tr = toys.run(prob, "fedavg-hetero", rounds=6, seed=4, participation=proc, **h)
    masks = masks_of(proc, 6, 4, 5)
    x, alpha = reference(cl, "fedavg-hetero", 6, 4, masks, **h)
    np.testing.assert_array_equal(tr.participation, masks)
    np.testing.assert_allclose(tr.final_model, x, **TOL)
    np.testing.assert_allclose(tr.alpha, alpha, **TOL)
    assert tr.local_steps == max(SETTINGS[setting].get("client_steps", (0,))
                                 + (SETTINGS[setting].get("local_steps", 0),))


def test_heterogeneity_changes_the_run():
    prob, _ = PAIRS["quadratic"]()
    a = toys.run(prob, "fedavg-hetero", rounds=3, seed=0, lr=0.1, local_steps=4)
    b = toys.run(prob, "fedavg-hetero", rounds=3, seed=0, lr=0.1, local_steps=4,
                 straggler_prob=1.0)
    assert not np.allclose(a.final_model, b.final_model)


def test_without_heterogeneity_it_is_fedavg_bit_for_bit():
    prob = toys.logistic_synthetic(n_clients=5, dim=3, seed=2)
    kw = dict(rounds=5, seed=3, lr=0.3, local_steps=3, participation="bernoulli:p=0.6",
              record="step")
    for extra in ({}, {"batch_size": 4}, {"client_steps": (3,) * 5}, {"min_steps": 3}):
        a = toys.run(prob, "fedavg-hetero", **kw, **extra)
        b = toys.run(prob, "fedavg", **kw, **{k: v for k, v in extra.items()
                                              if k == "batch_size"})
        np.testing.assert_array_equal(a.final_model, b.final_model)
        fa, fb = a.to_frame().to_numpy(), b.to_frame().to_numpy()
        np.testing.assert_array_equal(fa, fb)


def test_minibatch_stream_is_not_disturbed_by_the_work_draws():
    """The draws come from their own stream: a hetero run whose draws give every client all
    its steps equals FedAvg with minibatches (the sampling stream advances the same)."""
    prob = toys.logistic_synthetic(n_clients=4, dim=3, seed=0)
    kw = dict(rounds=4, seed=1, lr=0.3, local_steps=2, batch_size=3)
    a = toys.run(prob, "fedavg-hetero", straggler_prob=1e-300, **kw)
    np.testing.assert_array_equal(a.final_model, toys.run(prob, "fedavg", **kw).final_model)


def test_uniform_draws_have_the_stated_law():
    work = LocalWork(local_steps=4, min_steps=2, seed=7)
    draws = np.array([work.steps(r, 3) for r in range(3000)])
    assert draws.min() == 2 and draws.max() == 4
    freq = np.array([(draws == v).mean() for v in (2, 3, 4)])
    se = math.sqrt((1 / 3) * (2 / 3) / draws.size)
    np.testing.assert_allclose(freq, 1 / 3, atol=5 * se)
    # the reference's reading of the documented stream gives the same draws
    assert [list(draws[r]) for r in (0, 11)] == [steps_of(7, r, 3, 4, min_steps=2)
                                                 for r in (0, 11)]


def test_stragglers_do_a_random_fraction_of_their_steps():
    q, tau = 0.4, 5
    work = LocalWork(local_steps=tau, client_steps=(tau,) * 4, straggler_prob=q, seed=3)
    draws = np.array([work.steps(r) for r in range(4000)])
    assert draws.min() >= 1 and draws.max() == tau
    # P(fewer steps) = q P(ceil(u tau) < tau) = q (tau - 1) / tau, and given a straggler the
    # count is uniform on 1..tau
    p_short = q * (tau - 1) / tau
    se = math.sqrt(p_short * (1 - p_short) / draws.size)
    assert abs((draws < tau).mean() - p_short) <= 5 * se
    p_one = q / tau
    assert abs((draws == 1).mean() - p_one) <= 5 * math.sqrt(p_one / draws.size)


def test_work_sums_hand_values():
    # constant lr, no prox: lr * tau_i
    np.testing.assert_allclose(work_sums([0.1] * 4, np.array([1, 2, 4])), [0.1, 0.2, 0.4],
                               rtol=1e-15)
    # FedProx's a_i: sum_k lr (1 - lr mu)^k = (1 - (1 - lr mu)^tau) / mu
    lr, mu = 0.1, 2.0
    got = work_sums([lr] * 3, np.array([1, 2, 3]), prox=mu)
    np.testing.assert_allclose(got, [(1 - (1 - lr * mu) ** t) / mu for t in (1, 2, 3)],
                               rtol=1e-14)


def test_torch_agrees_with_numpy(one_torch_thread):
    pytest.importorskip("torch")
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=4, seed=2, lr=0.2, participation="bernoulli:p=0.6", record="step",
              local_steps=4, min_steps=1, straggler_prob=0.3)
    a = toys.run(prob, "fedavg-hetero", **kw)
    b = toys.run(prob, "fedavg-hetero", backend="torch", device="cpu", **kw)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)
    fa, fb = a.to_frame().to_numpy(), b.to_frame().to_numpy()
    np.testing.assert_allclose(fb, fa, rtol=1e-10, atol=1e-12)


def test_resume_is_bit_identical(tmp_path):
    prob, _ = PAIRS["quadratic"]()
    kw = dict(rounds=6, seed=5, lr=0.1, local_steps=3, min_steps=1, straggler_prob=0.5,
              participation="bernoulli:p=0.7")
    full = toys.run(prob, "fedavg-hetero", **kw)
    path = tmp_path / "ck.npz"
    toys.run(prob, "fedavg-hetero", checkpoint=path, checkpoint_every=2,
             callbacks=[lambda info: info.round == 3], **kw)
    resumed = toys.run(prob, "fedavg-hetero", resume=path, **kw)
    np.testing.assert_array_equal(full.final_model, resumed.final_model)


@pytest.mark.parametrize("hyper, word", [
    ({"client_steps": (1, 2)}, r"client_steps = .*\[1, 2\].* is outside its domain: 5 integers"),
    ({"client_steps": (1, 2, 0, 1, 1)}, "client_steps"),
    ({"client_steps": (1, 2, 1.5, 1, 1)}, "client_steps"),
    ({"client_steps": (1, 2, 3, 1, 1), "local_steps": 2},
     r"integers in \[1, local_steps\] = \[1, 2\]"),
    ({"local_steps": 3, "min_steps": 4}, r"min_steps = 4 .*integer in \[1, 3\]"),
    ({"client_steps": (2, 3, 2, 2, 5), "min_steps": 3}, r"min_steps = 3 .*\[1, 2\]"),
    ({"straggler_prob": 1.5}, r"straggler_prob = 1.5 is outside its domain: real in \[0, 1\]"),
    ({"straggler_prob": -0.1}, "straggler_prob"),
    ({"client_steps": (1, 1, 1, 1, 10 ** 12)}, "client_steps = .* schedule"),
])
def test_bad_work_is_refused_with_name_value_domain(hyper, word):
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(DomainError, match=word):
        toys.run(prob, "fedavg-hetero", rounds=1, seed=0, lr=0.1, **hyper)


def test_plain_fedavg_refuses_the_work_names_and_symbols_get_a_hint():
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(UnknownNameError, match="unknown hyper-parameter of fedavg.*client_steps"):
        toys.run(prob, "fedavg", rounds=1, seed=0, lr=0.1, client_steps=(1,) * 5)
    with pytest.raises(UnknownNameError, match="paper symbol 'tau_i' is client_steps"):
        toys.run(prob, "fedavg-hetero", rounds=1, seed=0, lr=0.1, tau_i=(1,) * 5)
