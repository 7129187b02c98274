"""Power-of-Choice (toys.algorithms.selection): against a per-client reference loop, FedMax(k)
bit for bit at d = N (spec BM-27), the law of the candidate draw, torch and the errors."""

import itertools
import math

import numpy as np
import pytest
from comparison_reference import PAIRS, masks_of, reference

import toys
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError
from toys.algorithms.selection import candidate_mask
from toys.participation import make as make_process

TOL = {"rtol": 1e-12, "atol": 1e-12}


@pytest.mark.parametrize("participation", ["full", "bernoulli"])
@pytest.mark.parametrize("pname", sorted(PAIRS))
def test_poc_matches_reference(pname, participation):
    prob, cl = PAIRS[pname]()
    proc = None if participation == "full" else make_process("bernoulli", 5, p=0.7)
    # x0 != 0: at 0 every logistic client's loss is log 2 and the ranking is round-off
    h = {"lr": 0.1, "local_steps": 3, "k": 2, "candidates": 3, "x0": [0.3, -0.2, 0.1]}
    tr = toys.run(prob, "poc", rounds=7, seed=5, participation=proc or "full", **h)
    masks = masks_of(proc, 7, 5, 5)
    x, alpha = reference(cl, "poc", 7, 5, masks, **h)
    np.testing.assert_allclose(tr.alpha, alpha, **TOL)
    np.testing.assert_allclose(tr.final_model, x, **TOL)
    kept = (tr.alpha > 0).sum(axis=1)
    assert set(kept.tolist()) <= {0, 1, 2} and kept.max() == 2
    # the candidates change from round to round (the draw is live)
    assert len({tuple(np.flatnonzero(a)) for a in tr.alpha}) > 1


def test_full_candidate_set_is_fedmax_k_on_raw_losses_bit_for_bit():
    prob = toys.logistic_synthetic(n_clients=6, dim=3, seed=4)
    kw = dict(rounds=5, seed=2, lr=0.3, local_steps=2, k=3, participation="bernoulli:p=0.8",
              record="step")
    a = toys.run(prob, "poc", candidates=6, **kw)
    b = toys.run(prob, "fedmax-k", loss_offset="zero", **kw)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    np.testing.assert_array_equal(a.final_model, b.final_model)
    np.testing.assert_array_equal(a.to_frame().to_numpy(), b.to_frame().to_numpy())


def _inclusion(p, d):
    """P(i in A) for d draws without replacement, each ∝ p among those not yet drawn (by
    enumerating the ordered draws)."""
    N, out = len(p), np.zeros(len(p))
    for seq in itertools.permutations(range(N), d):
        pr, left = 1.0, 1.0
        for i in seq:
            pr *= p[i] / left
            left -= p[i]
        out[list(seq)] += pr
    return out


def test_candidates_have_the_law_of_sampling_without_replacement():
    p = np.array([0.05, 0.1, 0.15, 0.3, 0.4])
    mask = np.ones(5, bool)
    R = 12000
    hits = np.zeros(5)
    for r in range(R):
        m = candidate_mask(11, r, p, mask, 2)
        assert m.sum() == 2
        hits += m
    expect = _inclusion(p, 2)
    se = np.sqrt(expect * (1 - expect) / R)
    assert np.all(np.abs(hits / R - expect) <= 5 * se), (hits / R, expect)


def test_unavailable_clients_are_never_candidates():
    p = np.full(6, 1 / 6)
    mask = np.array([True, False, True, False, False, True])
    for r in range(50):
        m = candidate_mask(0, r, p, mask, 5)
        assert m.sum() == 3 and not np.any(m & ~mask)


def test_fewer_available_than_k():
    prob, _ = PAIRS["quadratic"]()
    masks = np.zeros((3, 5), bool)
    masks[0, [1]] = True
    masks[1, [0, 2, 4]] = True
    tr = toys.run(prob, "poc", rounds=3, seed=0, lr=0.1, k=2, candidates=4, participation=masks)
    assert (tr.alpha > 0).sum(axis=1).tolist() == [1, 2, 0]
    assert tr.alpha[0, 1] == 1.0 and np.all(tr.alpha[~masks] == 0)


def test_torch_agrees_with_numpy(one_torch_thread):
    pytest.importorskip("torch")
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=5, seed=3, lr=0.3, local_steps=2, k=2, candidates=0.6,
              participation="bernoulli:p=0.7", record="step")
    a = toys.run(prob, "poc", **kw)
    b = toys.run(prob, "poc", backend="torch", device="cpu", **kw)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("hyper, exc, word", [
    ({"k": 2}, MissingParameterError, "candidates"),
    ({"candidates": 3}, MissingParameterError, "k"),
    ({"k": 3, "candidates": 2}, DomainError,
     r"candidates = 2 is outside its domain: integer in \[k, N\] = \[3, 5\]"),
    ({"k": 2, "candidates": 6}, DomainError, r"candidates = 6 .*\[2, 5\]"),
    ({"k": 2, "candidates": 1.5}, DomainError, "candidates = 1.5"),
    ({"k": 2, "candidates": True}, DomainError, "candidates = True"),
    ({"k": 2, "d": 3}, UnknownNameError, "paper symbol 'd' is candidates"),
])
def test_bad_poc_settings_are_refused(hyper, exc, word):
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(exc, match=word):
        toys.run(prob, "poc", rounds=1, seed=0, lr=0.1, **hyper)


def test_fraction_candidates():
    prob, _ = PAIRS["quadratic"]()
    tr = toys.run(prob, "poc", rounds=2, seed=0, lr=0.1, k=1, candidates=0.4)
    assert math.isclose(tr.alpha.sum(axis=1).max(), 1.0)
