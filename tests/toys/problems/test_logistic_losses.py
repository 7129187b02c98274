"""toys.problems._logistic_losses: the batched loss kernel of the engine's shadow measurements,
against 50-digit arithmetic, and the bits of a point independent of its batch."""

import mpmath
import numpy as np
import pytest

from toys.problems import _logistic_losses as LL
from toys.problems.logistic import Logistic

EPS = np.finfo(float).eps


def _problem(N=6, n=9, d=3, seed=0, offset=False, scale=1.0, pad=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n, d)) * scale
    y = (rng.random((N, n)) < 0.5).astype(float)
    mask = np.ones((N, n), dtype=bool)
    mask[0, -pad:] = False  # padding rows (anywhere in the mask: here at the end)
    mask[1, :2] = False  # and at the start
    off = rng.standard_normal((N, n)) if offset else None
    return Logistic(X, y, mask, l2=0.05, offset=off)


def _mp_loss(prob, i, w):
    mpmath.mp.dps = 50
    total = mpmath.mpf(0)
    off = prob.offset
    rows = np.flatnonzero(prob.mask[i])
    for k in rows:
        z = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(prob.X[i, k], w))
        z += mpmath.mpf(off[i, k])
        total += mpmath.log1p(mpmath.exp(z)) - mpmath.mpf(prob.y[i, k]) * z
    return total / len(rows) + mpmath.mpf(prob.l2) / 2 * mpmath.fsum(mpmath.mpf(v) ** 2
                                                                      for v in w)


@pytest.mark.parametrize("offset", [False, True])
@pytest.mark.parametrize("scale", [0.1, 3.0, 40.0])
def test_losses_match_50_digit_arithmetic(offset, scale):
    # scale 40: |z| up to ~200, most factors 1 + e^{-|t|} round to 1 and many losses are tiny
    prob = _problem(offset=offset, scale=scale)
    P = np.random.default_rng(1).standard_normal((4, prob.dim))
    L = prob.losses_at(P)
    for j in range(len(P)):
        for i in range(prob.n_clients):
            ref = float(_mp_loss(prob, i, P[j]))
            # the documented accuracy: ~eps absolute (the product of the factors), plus a
            # relative few ulps of the sums
            assert abs(L[j, i] - ref) <= 8 * EPS + 1e-14 * abs(ref), (j, i, L[j, i], ref)


def test_more_rows_than_one_product_group(monkeypatch):
    monkeypatch.setattr(LL, "GROUP_ROWS", 4)  # 9 rows: three groups, padding in two of them
    prob = _problem()
    P = np.random.default_rng(2).standard_normal((3, prob.dim))
    L = prob.losses_at(P)
    for i in range(prob.n_clients):
        assert abs(L[1, i] - float(_mp_loss(prob, i, P[1]))) <= 8 * EPS


def test_a_points_bits_do_not_depend_on_its_batch_or_the_chunks():
    prob = _problem(N=13, n=7, d=5, offset=True)
    P = np.random.default_rng(3).standard_normal((9, prob.dim))
    full = prob.losses_at(P)
    for j in range(len(P)):
        np.testing.assert_array_equal(prob.losses_at(P[j:j + 1])[0], full[j])
        np.testing.assert_array_equal(prob.losses_at(P[j:j + 3])[0], full[j])
    args = (prob.X, 1.0 - 2.0 * prob.y, prob.mask, prob.offset, prob.l2, P)
    for cb in (1, 500, 1 << 24):
        np.testing.assert_array_equal(LL.binary_losses_at(*args, chunk_bytes=cb), full)


def test_non_finite_points_give_non_finite_losses():
    prob = _problem()
    L = prob.losses_at(np.array([[np.nan, 0.0, 0.0], [1e308, 1e308, 0.0]]))
    assert np.all(np.isnan(L[0]))
    assert not np.any(np.isfinite(L[1]))
