"""Gradient clipping as a client update (seed 003, App. C.7)."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import toys
from boundlab.errors import DomainError
from toys.algorithms.clipping import ClippedBeta, ClippedSteps, clip_rows


@settings(max_examples=30, deadline=None)
@given(G=arrays(np.float64, (4, 3), elements=st.floats(-1e3, 1e3)),
       c=st.floats(1e-3, 1e3))
def test_clip_rows(G, c):
    out = clip_rows(G, c)
    norms, new = np.linalg.norm(G, axis=1), np.linalg.norm(out, axis=1)
    assert np.all(new <= c * (1 + 1e-12))
    small = norms <= c
    assert np.array_equal(out[small], G[small])  # untouched, bit for bit
    big = ~small
    # same direction: the clipped row is a positive multiple of the original
    assert np.allclose(out[big] * norms[big, None], G[big] * new[big, None], rtol=1e-9,
                       atol=1e-12)


def _with(client, base="fedavg"):
    return dataclasses.replace(toys.algorithms.get(base), name=f"{base}-clip", client=client)


def test_no_clipping_is_bit_identical():
    prob = toys.quadratic(n_clients=4, dim=3, seed=0)
    kw = dict(rounds=4, seed=0, lr=0.05, local_steps=3, batch_size=None)
    a = toys.run(prob, "fedavg", **kw)
    b = toys.run(prob, _with(ClippedSteps()), **kw)
    assert np.array_equal(a.final_model, b.final_model)
    c = toys.run(prob, "beta", beta=0.5, **kw)
    d = toys.run(prob, _with(ClippedBeta(), "beta"), beta=0.5, clip=math.inf, **kw)
    assert np.array_equal(c.final_model, d.final_model)


def test_clipped_gradients_have_bounded_norm():
    prob = toys.quadratic(n_clients=4, dim=3, L=10.0, seed=0)
    for client, base, extra in ((ClippedSteps(), "fedavg", {}),
                                (ClippedBeta(), "beta", {"beta": 0.5})):
        tr = toys.run(prob, _with(client, base), rounds=3, seed=0, lr=0.01, local_steps=4,
                      clip=0.3, **extra)
        assert np.nanmax(tr.g2_max) <= 0.09 * (1 + 1e-12)
        free = toys.run(prob, _with(client, base), rounds=3, seed=0, lr=0.01, local_steps=4,
                        **extra)
        assert np.nanmax(free.g2_max) > 0.09  # the clip was active
        assert not np.array_equal(tr.final_model, free.final_model)


def test_clipped_step_equals_hand_step():
    """One local step with clip c moves each client by lr * clip(g) from x."""
    prob = toys.quadratic(n_clients=3, dim=2, L=5.0, seed=1)
    x = np.zeros(2)
    G = prob.grads(np.stack([x] * 3))
    W, _ = ClippedSteps(local_steps=1, lrs=np.array([0.1]), clip=0.5).update(
        (), x=x, oracle=prob, round=0, rng=np.random.default_rng(0), mask=np.ones(3, bool))
    scale = np.minimum(1.0, 0.5 / np.linalg.norm(G, axis=1))
    assert np.allclose(W, x - 0.1 * G * scale[:, None], rtol=1e-14)


@pytest.mark.parametrize("bad", [0.0, -1.0, "x", True, float("nan")])
def test_bad_clip(bad):
    with pytest.raises(DomainError, match="clip"):
        toys.run(toys.quadratic(3, 2, seed=0), _with(ClippedSteps()), rounds=1, seed=0, lr=0.1,
                 clip=bad)
