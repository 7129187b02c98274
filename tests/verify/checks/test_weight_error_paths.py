"""The path-based FedAU checks (verify.checks.weight_error_paths): what they measure is what the
statements speak of (a plain per-path reference), and they can fail (wrong statements are
VIOLATED on the same measurements)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import boundlab
from toys import participation
from verify.checks import weight_error_paths as w
from verify.compare import compare
from verify.suite import Context


def _reference_intervals(chi: np.ndarray, K: int) -> np.ndarray:
    """Algorithm 2's cutoff intervals, counted plainly path by path (the first T // K)."""
    T, M = chi.shape
    out = []
    for m in range(M):
        c, got = 0, []
        for t in range(T):
            c += 1
            if chi[t, m] or c == K:
                got.append(c)
                c = 0
        out.append(got[: T // K])
    return np.array([s for t in range(T // K) for s in (g[t] for g in out)], dtype=float)


@pytest.mark.parametrize("p,K", [(0.1, 5), (0.5, 3), (0.3, 1), (0.05, 8)])
def test_completed_intervals_equal_a_plain_count(p, K):
    T, M, seed = 60, 7, 3
    chi = participation.sample(participation.Bernoulli(np.full(M, p)), T,
                               np.random.default_rng(seed))
    got = w.completed_intervals(p, K, T, M, seed)
    ref = _reference_intervals(np.asarray(chi, dtype=bool), K)
    assert got.size == M * (T // K)
    assert np.array_equal(np.sort(got), np.sort(ref))


def test_interval_mean_matches_the_exact_sum():
    # E[min(G, K)] = sum_{j<K} (1-p)^j, summed exactly (not the catalogue's formula)
    p, K = 0.1, 20
    S = w.completed_intervals(p, K, 400, 2000, 1)
    exact = sum((1 - p) ** j for j in range(K))
    se = S.std(ddof=1) / np.sqrt(S.size)
    assert abs(S.mean() - exact) < 4 * se


def test_omega_paths_start_at_one_and_converge_to_the_cutoff_mean():
    p, K = 0.5, 3
    om = w.omega_paths(p, K, 300, 500, seed=0)
    assert np.all(om[0] == 1.0)
    exact = sum((1 - p) ** j for j in range(K))  # E[S] = 1.75
    assert abs(om[-1].mean() - exact) < 0.02


def test_the_checks_judge_their_ids_and_none_is_violated():
    ctx = Context(quick=True)
    rs = (w.weight_error_round_paths(ctx) + w.weight_error_average_paths(ctx)
          + w.weight_error_interval_identities(ctx))
    ids = {r.bound_id for r in rs}
    assert {"weight_error.round", "weight_error.round_var_form", "weight_error.round_envelope",
            "weight_error.average_refined", "weight_error.theorem3",
            "weight_error.lemma_b71_ceil", "weight_error.interval_mean",
            "weight_error.interval_var", "weight_error.interval_bias"} <= ids
    # the spec (seeds-002-003, F5/F6) finds every one of them holding on simulations
    assert not [r for r in rs if r.verdict in ("VIOLATED", "error")]
    assert {r.verdict for r in rs if r.bound_id == "weight_error.theorem3"} == {"order-only"}
    # the real-cutoff lemma, where its cutoff is an integer: p = 1 - 2^(-1/2) gives c = 2,
    # so log_c T = 8 at T = 256 (by hand)
    [b71] = [r for r in rs if r.bound_id == "weight_error.lemma_b71"]
    assert b71.verdict == "holds" and b71.setting["K"] == 8 and b71.setting["T"] == 256
    assert math.log(256) / (-2 * math.log(1 - b71.setting["p"])) == pytest.approx(8, rel=1e-14)


def _mutant(bid, expr):
    b = boundlab.get(bid)
    return dataclasses.replace(b, id=bid + ".wrong", expr=expr(b), stable=None)


def test_a_wrong_interval_identity_is_violated():
    p, K = 0.1, 20
    S = w.completed_intervals(p, K, 200, 500, 0)
    # a flipped sign: 1/p + (1-p)^K/p = 11.2 where E[S] = 8.78
    wrong = _mutant("weight_error.interval_mean",
                    lambda b: 2 / b.params["p"].symbol - b.expr)
    r = compare(wrong, S, params={"p": p, "K": K}, level=w.IDENTITY_LEVEL)
    assert r.verdict == "VIOLATED"
    right = compare(boundlab.get("weight_error.interval_mean"), S, params={"p": p, "K": K},
                    level=w.IDENTITY_LEVEL)
    assert right.verdict == "holds"


def test_a_halved_per_round_bound_is_violated():
    p, K, t = 0.1, 5, 10
    err = (p * w.omega_paths(p, K, 40, 1000, seed=1) - 1.0) ** 2
    half = _mutant("weight_error.round_var_form", lambda b: b.expr / 2)
    assert compare(half, err[t], params={"p": p, "K": K, "t": t}).verdict == "VIOLATED"
