"""PEP worst case of gradient descent and the THG interpolation turned into a run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import toys
from verify.falsify.interpolate import Interpolated
from verify.falsify.pep import gd_worst_case


def _pep(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gd_worst_case(**kw)


@pytest.mark.parametrize("T", [1, 3, 6])
def test_gd_last_iterate_pep_is_the_known_worst_case(T):
    """Drori and Teboulle (2014): sup f(x_T) - f* = L D^2 / (4T + 2) for step 1/L."""
    L, D = 2.0, 1.5
    w = _pep(lhs="final_gap", T=T, eta=1 / L, L=L, mu=0.0, D=D)
    exact = L * D**2 / (4 * T + 2)
    assert w["lower"] <= w["upper"] * (1 + 1e-7)
    assert w["upper"] == pytest.approx(exact, rel=1e-6)
    assert w["lower"] == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_interpolated_worst_case_replays_on_the_engine(mu):
    """GD run by toys.run on the interpolating function measures the PEP value."""
    L, D, T = 2.0, 1.5, 4
    w = _pep(lhs="final_gap", T=T, eta=1 / L, L=L, mu=mu, D=D)
    prob = Interpolated(w["points"], w["grads"], w["values"], L=L, mu=mu)
    tr = toys.run(prob, "fedavg", rounds=T, seed=0, lr=1 / L, local_steps=1, x0=w["points"][1])
    assert tr.gap[-1] == pytest.approx(w["lower"], rel=1e-6)
    if mu == 0:
        assert tr.gap[-1] == pytest.approx(L * D**2 / (4 * T + 2), rel=1e-6)


def test_interpolant_is_smooth_convex_and_through_the_data():
    """Data of a known L-smooth convex function (log-sum-exp scaled to L): the interpolant
    passes through it and satisfies the L-smooth convex inequality at random points."""
    L = 3.0
    rng = np.random.default_rng(0)

    def f(x):
        return L * np.log(np.sum(np.exp(x)))

    def g(x):
        e = np.exp(x)
        return L * e / e.sum()

    X = rng.normal(size=(6, 3))
    X[0] = np.zeros(3)  # the data need a minimiser first: shift g there to zero
    G = np.array([g(x) - g(X[0]) for x in X])
    F = np.array([f(x) - f(X[0]) - g(X[0]) @ x for x in X])
    prob = Interpolated(X, G, F, L=L)
    np.testing.assert_allclose(prob.losses(X[2:3]), F[2:3], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(prob.grads(X[3:4]), G[3:4], rtol=1e-9, atol=1e-10)
    Y = rng.normal(size=(12, 3))
    fy = np.array([prob.losses(y[None])[0] for y in Y])
    gy = np.array([prob.grads(y[None])[0] for y in Y])
    for i in range(12):
        for j in range(12):
            lhs = fy[i] - fy[j] - gy[j] @ (Y[i] - Y[j]) - np.sum((gy[i] - gy[j]) ** 2) / (2 * L)
            assert lhs >= -1e-8
