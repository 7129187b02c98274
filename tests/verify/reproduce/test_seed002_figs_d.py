"""Pieces of the FedAU appendix figures (``002:figD2``, ``002:figD4``) against independent
references: Algorithm 2's weights from a per-client Python loop written from the spec (and the
engine's own record of them), the smoothing from a per-window loop, the training metrics from a
per-client loop, the 2-sigma range by hand."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.reproduce import seed002_figs_d as d2


def _alg2_reference(chi_col):
    """omega_t of one client, K = infinity (spec §5.1.2): the mean length of the completed
    participation intervals seen before round t (an interval ends at a participation and
    counts the rounds since the previous one); 1 before the first."""
    out, intervals, since = [], [], 0
    for c in chi_col:
        out.append(sum(intervals) / len(intervals) if intervals else 1.0)
        since += 1
        if c:
            intervals.append(since)
            since = 0
    return out


@pytest.mark.parametrize("pattern", ["bernoulli", "cyclic"])
def test_weight_paths_equal_a_per_client_loop_of_algorithm_2(pattern):
    probs = np.array([[0.02, 0.3, 0.9], [0.5, 0.05, 0.2]])
    omega, chi = d2.weight_paths(probs, pattern, rounds=400, seed=3)
    assert omega.shape == chi.shape == (400, 2, 3)
    for s in range(2):
        for n in range(3):
            assert omega[:, s, n].tolist() == pytest.approx(_alg2_reference(chi[:, s, n]),
                                                            rel=1e-12)


def test_weight_paths_agree_with_the_engines_record_of_fedau():
    import toys
    from toys.participation import Fixed

    probs = np.array([[0.1, 0.4, 0.7, 0.25]])
    omega, chi = d2.weight_paths(probs, "bernoulli", rounds=60, seed=1)
    prob = toys.quadratic(n_clients=4, dim=2, seed=0)
    tr = toys.run(prob, "fedau", rounds=60, seed=0, participation=Fixed(chi[:, 0]), K=math.inf,
                  lr=0.01)
    np.testing.assert_allclose(tr.omega, omega[:, 0], rtol=1e-12)


def test_cyclic_paths_are_blocks_of_the_stated_length():
    omega, chi = d2.weight_paths(np.array([[0.02, 0.5]]), "cyclic", rounds=1000)
    on = chi[:, 0, 0].astype(int)
    runs = np.diff(np.flatnonzero(np.diff(np.r_[0, on, 0])))[::2]  # lengths of active blocks
    assert set(runs[:-1].tolist()) <= {2}  # round(100 * 0.02) = 2 active rounds per cycle
    assert chi[:, 0, 1].mean() == pytest.approx(0.5, abs=0.05)


def test_two_sigma_range_by_hand():
    lo, hi = d2.two_sigma_range(10_000, 0.02)
    mu, sd = 200.0, math.sqrt(196.0)  # T p and sqrt(T p (1 - p)) = 14
    assert (lo, hi) == pytest.approx((10_000 / (mu + 2 * sd), 10_000 / (mu - 2 * sd)))
    assert d2.two_sigma_range(10, 0.02)[1] == math.inf  # mu' < 2 sigma': no upper end


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(2, 30), st.floats(0.02, 0.9), st.integers(0, 99))
def test_smooth_equals_a_per_window_loop(S, R, frac, seed):
    c = np.random.default_rng(seed).normal(size=(S, R))
    c[0, seed % R] = np.nan  # a diverged sample is left out of its windows
    r, m, s = d2.smooth(c, frac)
    w = max(1, int(round(frac * R)))
    assert r.tolist() == list(range(w, R + 1))
    for j, end in enumerate(r):
        v = c[:, end - w:end].ravel()
        v = v[np.isfinite(v)]
        if v.size:
            assert m[j] == pytest.approx(v.mean(), abs=1e-12)
            assert s[j] == pytest.approx(v.std(), abs=1e-12)
        else:
            assert math.isnan(m[j])


def test_train_metrics_equal_a_per_client_loop():
    from verify.reproduce.registry import Config
    from verify.reproduce.seed002 import Settings

    fac = Settings(Config(tiny=True), {"b": ("bernoulli", 0.02, 0.1, 0.1)})
    prob = fac(0, "b")
    w = np.random.default_rng(0).normal(size=prob.dim) * 0.1
    got = {}

    class Info:
        model = w

        @staticmethod
        def record(k, v):
            got[k] = v

    d2.TrainMetrics(fac)(Info)
    W = w.reshape(prob.n_features, prob.classes)
    losses, hits, n = 0.0, 0, 0
    for i in range(prob.n_clients):  # reference: one client at a time
        X, y = prob.X[i][prob.mask[i]], prob.y[i][prob.mask[i]]
        Z = X @ W
        lse = np.log(np.exp(Z - Z.max(1, keepdims=True)).sum(1)) + Z.max(1)
        losses += float(np.sum(lse - Z[np.arange(len(y)), y]))
        hits += int(np.sum(Z.argmax(1) == y))
        n += len(y)
    assert got["train_loss"] == pytest.approx(losses / n, rel=1e-10)
    assert got["train_accuracy"] == pytest.approx(hits / n, rel=1e-12)


def test_fig_d4_claims_go_the_papers_way_at_quick_size():
    """At the paper's scale (N = 250, T = 10 000; seconds of CPU) the first two claims decide."""
    import matplotlib.pyplot as plt

    from verify.reproduce.registry import Config

    res = d2.fig_d4(Config(quick=True, seeds=3))
    plt.close(res.figure)
    assert [c.outcome for c in res.claims[:2]] == ["matches", "matches"]
    assert res.claims[2].outcome in ("matches", "inconclusive")
    assert res.data.startswith("none") and res.model.startswith("none")
