"""Property tests of ``skew.softmax_kappa_min`` (pi >= exp(-x_range/T), written 1/pi <=
exp(x_range/T)): the engine's FedSoftMax weights on hypothesis-drawn scores, client weights,
participants and temperatures."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import boundlab
from toys.algorithms.weights import alpha_of

SET = settings(max_examples=100, deadline=None)
B = boundlab.get("skew.softmax_kappa_min")


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def round_(draw):
    n = draw(st.integers(2, 8))
    x = np.array(draw(st.lists(fl(0.0, 10.0), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(fl(0.01, 1.0), min_size=n, max_size=n)))
    mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    assume(mask.any())
    T = draw(fl(0.2, 50.0))
    return x, p / p.sum(), mask, T


@SET
@given(round_())
def test_engine_kappa_min_is_at_least_exp_minus_range(r):
    x, p, mask, T = r
    alpha = alpha_of("fedsoftmax", x, p, mask, inv_temperature=1.0 / T)
    kmin = float(np.min(alpha[mask] / p[mask]))
    xr = float(x[mask].max() - x[mask].min())
    assert 1.0 / kmin <= float(B.evaluate(x_range=xr, Temp=T)) * (1 + 1e-12)


@SET
@given(round_())
def test_full_participation_ratio_is_the_p_mean_of_exp_gaps(r):
    """exp(-range/T)/kappa_min = sum_j p_j exp((x_j - max x)/T) with every client taking part."""
    x, p, _, T = r
    mask = np.ones_like(x, dtype=bool)
    alpha = alpha_of("fedsoftmax", x, p, mask, inv_temperature=1.0 / T)
    kmin = float(np.min(alpha / p))
    ratio = (1.0 / kmin) / float(B.evaluate(x_range=float(np.ptp(x)), Temp=T))
    assert np.isclose(1.0 / ratio, 1.0 / float(np.sum(p * np.exp((x - x.max()) / T))),
                      rtol=1e-9)


@SET
@given(fl(0.0, 50.0), fl(0.1, 100.0), fl(0.1, 100.0))
def test_bound_monotone(xr, T1, T2):
    """Grows with the range, falls with the temperature, 1 at range 0 (FedAvg weights)."""
    lo, hi = sorted((T1, T2))
    assert float(B.evaluate(x_range=xr, Temp=hi)) <= float(B.evaluate(x_range=xr, Temp=lo))
    assert float(B.evaluate(x_range=0.0, Temp=T1)) == 1.0
