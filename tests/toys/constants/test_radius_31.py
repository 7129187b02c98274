"""Issue 31: toys.constants(problem, radius=R) for a huge radius gives the correct zeta (it was
0.0 labelled exact at R = 1e300): the sup over the ball scales with R."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from toys.constants._math import sup_norm_affine_ball


@pytest.fixture(scope="module")
def prob():
    return toys.quadratic(n_clients=3, dim=2, seed=0)


def test_zeta_grows_with_the_radius(prob):
    ratios = []
    for r in (1e6, 1e50, 1e101, 1e200, 1e300):
        z = toys.constants(prob, radius=r).zeta
        assert z.how == "exact" and np.isfinite(z.value) and z.value > 0
        ratios.append(z.value / r)
    # asymptotically zeta ~ R max_i ||A_i - A_bar||_2: the same ratio for every huge radius
    assert ratios == pytest.approx([ratios[-1]] * len(ratios), rel=1e-6)
    assert toys.constants(prob, radius=10).zeta.value == pytest.approx(55.2562111562, rel=1e-9)


def test_zeta_overflowing_float64_is_unavailable_not_exact(prob):
    z = toys.constants(prob, radius=1.7e308).zeta
    assert z.how == "unavailable" and "float64" in z.note


def test_sup_norm_homogeneous_in_the_radius():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 3, 3))
    M = M + M.transpose(0, 2, 1)
    r = rng.normal(size=(4, 3))
    small = sup_norm_affine_ball(M, r * 1e-200, 1.0)
    big = sup_norm_affine_ball(M, r, 1e200)
    np.testing.assert_allclose(big / 1e200, small, rtol=1e-9)
