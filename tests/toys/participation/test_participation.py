"""Participation processes (spec seeds-002-003 §5.1.4)."""

from __future__ import annotations

import numpy as np
import pytest

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError
from toys import participation as P

PROBS = np.array([0.02, 0.1, 0.37, 0.5, 0.9, 1.0])


def _freq_within(masks, probs, k=4.0, tau_corr=1.0):
    """|empirical - p| <= k standard errors (inflated by an autocorrelation factor)."""
    T = masks.shape[0]
    se = np.sqrt(probs * (1 - probs) / T * tau_corr) + 1e-12
    return np.abs(masks.mean(axis=0) - probs) <= k * se


@pytest.mark.parametrize("name", ["bernoulli", "markov"])
def test_frequencies_converge_to_p(name):
    proc = P.make(name, len(PROBS), p=PROBS)
    masks = P.sample(proc, 20_000, np.random.default_rng(0))
    assert np.allclose(proc.probs, PROBS)
    if name == "bernoulli":
        assert np.all(_freq_within(masks, PROBS))
    else:
        # a two-state chain with switch rates a, b has lag correlation 1 - a - b: the variance
        # of the mean is inflated by (1 + r) / (1 - r)
        r = 1.0 - proc.up - proc.down
        assert np.all(_freq_within(masks, PROBS, tau_corr=(1 + r) / (1 - r + 1e-12)))


def test_markov_transition_rates_and_lag_correlation():
    m = P.Markov(np.array([0.02, 0.1, 0.5]), rate=0.05)
    assert np.allclose(m.up, [0.05 / (0.05 * 49), 0.05, 0.05])  # p = .02: b = 2.45 > 1
    assert np.allclose(m.down, [1.0, 0.45, 0.05])
    assert np.allclose(m.up / (m.up + m.down), [0.02, 0.1, 0.5])
    masks = P.sample(m, 20_000, np.random.default_rng(1)).astype(float)
    x = masks[:, 2] - masks[:, 2].mean()
    lag1 = (x[1:] @ x[:-1]) / (x @ x)
    assert lag1 == pytest.approx(1 - 0.05 - 0.05, abs=0.03)  # persistent, unlike Bernoulli
    xb = P.sample(P.Bernoulli(np.full(3, 0.5)), 20_000, np.random.default_rng(1))[:, 2]
    xb = xb - xb.mean()
    assert abs((xb[1:] @ xb[:-1]) / (xb @ xb)) < 0.03


def test_cyclic_pattern_and_frequency():
    c = P.Cyclic(np.array([0.1, 0.5, 0.004, 1.0]), cycle=100)
    assert c.active.tolist() == [10, 50, 1, 100]
    assert c.inactive.tolist() == [90, 50, 99, 1]
    masks = P.sample(c, 20_000, np.random.default_rng(0))
    assert np.all(np.abs(masks.mean(axis=0) - c.probs) <= 0.01)
    # runs of ones have exactly the active length (after the first, random-offset phase)
    col = masks[:, 0].astype(int)
    edges = np.flatnonzero(np.diff(col) != 0) + 1
    runs = np.diff(edges)
    on_runs = runs[col[edges[:-1]] == 1]
    off_runs = runs[col[edges[:-1]] == 0]
    assert set(on_runs.tolist()) == {10} and set(off_runs.tolist()) == {90}


def test_uniform_full_anchored():
    u = P.make("uniform", 10, m=3)
    masks = P.sample(u, 5000, np.random.default_rng(0))
    assert np.all(masks.sum(axis=1) == 3)
    assert np.all(_freq_within(masks, u.probs))
    f = P.sample(P.make("full", 4), 10, np.random.default_rng(0))
    assert f.all()
    a = P.make("anchored", 20)  # DKR protocol: the outlier plus one regular client
    masks = P.sample(a, 4000, np.random.default_rng(0))
    assert masks[:, 19].all() and np.all(masks.sum(axis=1) == 2)
    assert np.all(_freq_within(masks[:, :19], a.probs[:19]))


@pytest.mark.parametrize("name,opts", [("bernoulli", {"p": 0.3}), ("markov", {"p": 0.3}),
                                       ("cyclic", {"p": 0.3}), ("uniform", {"m": 2}),
                                       ("anchored", {"fixed": [0], "m": 1})])
def test_determinism_per_seed(name, opts):
    proc = P.make(name, 6, **opts)
    a = P.sample(proc, 200, np.random.default_rng(42))
    b = P.sample(proc, 200, np.random.default_rng(42))
    c = P.sample(proc, 200, np.random.default_rng(43))
    assert np.array_equal(a, b)
    if name != "cyclic":
        assert not np.array_equal(a, c)
    # pure step: same state and same generator state give the same result
    s0 = proc.init(np.random.default_rng(0))
    r1, r2 = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(proc.step(s0, r1)[1], proc.step(s0, r2)[1])


def test_bad_inputs_rejected():
    with pytest.raises(DomainError, match="p"):
        P.make("bernoulli", 3, p=[0.5, 0.0, 0.2])
    with pytest.raises(DomainError, match="p"):
        P.make("markov", 3, p=1.5)
    with pytest.raises(DomainError, match="p"):
        P.make("cyclic", 3, p=[0.5, 0.5])
    with pytest.raises(DomainError, match="m"):
        P.make("uniform", 3, m=4)
    with pytest.raises(DomainError, match="rate"):
        P.make("markov", 3, p=0.5, rate=0.0)
    with pytest.raises(MissingParameterError):
        P.make("bernoulli", 3)
    with pytest.raises(UnknownNameError):
        P.make("poisson", 3)
    with pytest.raises(UnknownNameError):
        P.make("full", 3, m=1)
    with pytest.raises(DomainError, match="n_clients"):
        P.make("full", 0)


def test_fedau_probs_recipe():
    out = P.fedau_probs(np.random.default_rng(0), n_clients=2000, n_classes=10)
    assert out.probs.shape == (2000,) and out.kappa.shape == (2000, 10)
    assert np.all(out.probs >= 0.02) and np.all(out.probs <= 1.0)
    raw = np.maximum(0.02, 10 * 0.1 * out.kappa @ out.q)
    assert np.allclose(out.probs, np.minimum(raw, 1.0))
    assert out.n_clipped == int(np.sum(raw > 1))
    # E<kappa, q> = 1/C, so the mean before the floor is ~ mu = 0.1 (a few percent more after it)
    assert 0.07 < out.probs.mean() < 0.16
    hist = np.eye(3)[np.array([0, 1, 2, 2])]
    got = P.fedau_probs(np.random.default_rng(1), class_hist=hist, mean=0.3, p_min=0.0)
    assert np.allclose(got.probs, np.minimum(3 * 0.3 * hist @ got.q, 1.0))
    again = P.fedau_probs(np.random.default_rng(0), n_clients=2000, n_classes=10)
    assert np.array_equal(again.probs, out.probs)
