"""The per-step quantities recorded only when asked (toys.engine.measure.EXTRA_STEPS):
``pairwise_drift`` (max over pairs of participants of ||x_i - x_j||^2, DKR's d_k) and
``local_deviation`` (max over participants of ||x_i - x_r||^2, BC's Lemma A.1), against a
per-client loop written here from the quadratics' raw arrays, toys.run_many against toys.run
bit for bit, and the default outputs without them."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError
from toys.engine.population import run_many

N, D, TAU, LR, R = 4, 3, 3, 0.05, 3
P = np.array([0.1, 0.2, 0.3, 0.4])
EXTRA = ("pairwise_drift", "local_deviation")


def _problem(seed=0):
    return toys.quadratic(n_clients=N, dim=D, L=4.0, mu=0.5, seed=seed, weights=P)


def _reference(prob, masks, alpha, prox=0.0):
    """(pairwise, deviation) (rounds, tau): FedAvg / FedProx, the participants' steps one
    client at a time; the server model x_{r+1} = x_r + sum_{i in S} alpha_i (x_i - x_r) with
    the run's recorded coefficients ``alpha`` (rounds, N)."""
    a = prob.arrays()
    A, c = a["A"], a["c"]
    x = np.asarray(prob.x0 if prob.x0 is not None else np.zeros(D), dtype=float)
    pair, dev = np.zeros(masks.shape[:1] + (TAU,)), np.zeros(masks.shape[:1] + (TAU,))
    for r, mask in enumerate(masks):
        S = [i for i in range(N) if mask[i]]
        W = {i: x.copy() for i in S}
        for k in range(TAU):
            W = {i: W[i] - LR * (A[i] @ (W[i] - c[i]) + prox * (W[i] - x)) for i in S}
            pair[r, k] = max(float((W[i] - W[j]) @ (W[i] - W[j])) for i in S for j in S)
            dev[r, k] = max(float((W[i] - x) @ (W[i] - x)) for i in S)
        x = x + sum(alpha[r, i] * (W[i] - x) for i in S)
    return pair, dev


@pytest.mark.parametrize("algo,kw", [("fedavg", {}), ("fedprox", {"prox": 0.3})])
def test_extra_steps_match_a_per_client_loop(algo, kw):
    prob = _problem()
    masks = np.array([[1, 1, 1, 1], [1, 0, 1, 0], [0, 1, 1, 1]], dtype=bool)
    tr = toys.run(prob, algo, rounds=R, seed=0, lr=LR, local_steps=TAU, participation=masks,
                  record="step", extra_steps=EXTRA, **kw)
    pair, dev = _reference(prob, masks, tr.alpha, kw.get("prox", 0.0))
    np.testing.assert_allclose(tr.steps["pairwise_drift"], pair, rtol=1e-12, atol=0)
    np.testing.assert_allclose(tr.steps["local_deviation"], dev, rtol=1e-12, atol=0)
    assert (pair > 0).all() and (np.diff(pair, axis=1) > 0).all()  # the case is exercised


def test_run_many_records_them_as_each_instances_own_run():
    probs = [_problem(seed=s) for s in range(3)]
    kw = dict(rounds=4, lr=LR, local_steps=TAU, participation="uniform:m=2", record="step")
    pop = run_many(probs, "fedavg", seeds=[0, 1, 2], measure=["gap", *EXTRA], **kw)
    for b in range(3):
        ref = toys.run(probs[b], "fedavg", seed=b, extra_steps=EXTRA, **kw)
        for k in EXTRA:
            np.testing.assert_array_equal(pop.steps[k][b], ref.steps[k], err_msg=k)
            np.testing.assert_array_equal(pop[b].steps[k], ref.steps[k], err_msg=k)
    one = run_many(probs, "fedavg", seeds=[0, 1, 2], measure=["pairwise_drift"], **kw)
    assert set(one.steps) - set(pop.steps) == set() and "local_deviation" not in one.steps
    np.testing.assert_array_equal(one.steps["pairwise_drift"], pop.steps["pairwise_drift"])


def test_default_outputs_are_unchanged():
    prob = _problem()
    kw = dict(rounds=R, seed=0, lr=LR, local_steps=TAU, record="step")
    plain, extra = toys.run(prob, "fedavg", **kw), toys.run(prob, "fedavg", extra_steps=EXTRA, **kw)
    assert set(extra.steps) - set(plain.steps) == set(EXTRA)
    for k, v in plain.steps.items():
        np.testing.assert_array_equal(extra.steps[k], v, err_msg=k)
    for k, v in plain.state.items():
        np.testing.assert_array_equal(extra.state[k], v, err_msg=k)
    assert not set(EXTRA) & set(run_many([prob], "fedavg", seeds=0, rounds=R, lr=LR,
                                         local_steps=TAU, record="step").steps)


@pytest.mark.parametrize("kw,bad", [({"extra_steps": ["pairs"]}, "pairs"),
                                    ({"extra_steps": EXTRA, "record": "round"}, "record"),
                                    ({"extra_steps": [3]}, "3")])
def test_bad_extra_steps_are_refused_by_name(kw, bad):
    with pytest.raises(DomainError, match="extra_steps") as e:
        toys.run(_problem(), "fedavg", rounds=1, seed=0, lr=LR, **{"record": "step", **kw})
    assert bad in str(e.value)
    with pytest.raises(DomainError, match="pairwise_drift"):
        run_many([_problem()], "fedavg", seeds=0, rounds=1, lr=LR, measure=["pairwise_drift"])


def test_a_checkpoint_names_its_extra_steps_and_resumes_only_with_them(tmp_path):
    from boundlab.errors import IntegrityError

    prob = _problem()
    path = tmp_path / "ck.npz"
    kw = dict(rounds=4, seed=0, lr=LR, local_steps=TAU, record="step")
    full = toys.run(prob, "fedavg", extra_steps=("local_deviation",), **kw)
    toys.run(prob, "fedavg", extra_steps=("local_deviation",), checkpoint=path,
             checkpoint_every=2, **kw)
    with pytest.raises(IntegrityError, match="does not belong here: extra_steps"):
        toys.run(prob, "fedavg", resume=path, **kw)
    with pytest.raises(IntegrityError, match="does not belong here: extra_steps"):
        toys.run(prob, "fedavg", extra_steps=("pairwise_drift",), resume=path, **kw)
    resumed = toys.run(prob, "fedavg", extra_steps=("local_deviation",), resume=path, **kw)
    np.testing.assert_array_equal(resumed.steps["local_deviation"],
                                  full.steps["local_deviation"])
