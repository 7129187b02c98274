"""verify.reproduce.power: the seeds that decide a direction (or an equivalence) with 80 %
power, checked by simulation (normal samples of known mean and spread at the projected n, the
95 % t interval computed independently with scipy) and against the exact noncentral-t power."""

import math

import numpy as np
import pytest
from scipy import stats as sps

from boundlab.errors import DomainError
from verify.reproduce.power import seeds_for_direction, seeds_for_equivalence

TRIALS = 2000
TOL = 0.03  # 2000 trials: the binomial sd of a share near 0.8 is 0.009; 0.03 is 3.3 sd


def _intervals(mean, sd, n, seed):
    x = np.random.default_rng(seed).normal(mean, sd, (TRIALS, n))
    m = x.mean(axis=1)
    h = sps.t.ppf(0.975, n - 1) * x.std(axis=1, ddof=1) / math.sqrt(n)
    return m - h, m + h


@pytest.mark.parametrize("mean, sd, seed", [(1.0, 1.0, 1), (-0.5, 1.0, 2), (0.25, 1.0, 3),
                                            (3.0, 8.0, 4)])
def test_direction_power_by_simulation(mean, sd, seed):
    n = seeds_for_direction(mean, sd)
    lo, hi = _intervals(mean, sd, n, seed)
    share = float(np.mean((lo > 0) | (hi < 0)))
    assert abs(share - 0.8) < TOL, (n, share)


def _exact_power(mean, sd, n):
    c = sps.t.ppf(0.975, n - 1)
    nc = abs(mean) * math.sqrt(n) / sd
    return sps.nct.sf(c, n - 1, nc) + sps.nct.cdf(-c, n - 1, nc)


@pytest.mark.parametrize("ratio", [0.1, 0.3, 0.6, 1.2])
def test_direction_n_is_about_the_smallest_with_80_percent(ratio):
    n = seeds_for_direction(ratio, 1.0)
    assert _exact_power(ratio, 1.0, n) >= 0.79
    assert _exact_power(ratio, 1.0, n - 2) < 0.8
    # the referee's check (issue 32 (b)): far fewer than the old width projection
    assert n < (2 * 1.96 / 0.1) ** 2 / 10 if ratio >= 0.6 else True


@pytest.mark.parametrize("mean, sd, margin, seed", [(0.0, 1.0, 0.5, 5), (0.2, 1.0, 0.8, 6),
                                                    (-0.1, 2.0, 1.0, 7)])
def test_equivalence_power_by_simulation(mean, sd, margin, seed):
    n = seeds_for_equivalence(mean, sd, margin)
    lo, hi = _intervals(mean, sd, n, seed)
    share = float(np.mean((lo > -margin) & (hi < margin)))
    assert abs(share - 0.8) < TOL, (n, share)


def test_no_seeds_decide_a_null_or_an_out_of_margin_effect():
    assert seeds_for_direction(0.0, 1.0) is None
    assert seeds_for_equivalence(0.6, 1.0, 0.5) is None
    assert seeds_for_direction(1.0, 0.0) == 2 and seeds_for_equivalence(0.1, 0.0, 0.5) == 2


@pytest.mark.parametrize("kw, name", [(dict(mean=math.nan, sd=1.0), "mean"),
                                      (dict(mean=1.0, sd=-1.0), "sd"),
                                      (dict(mean=1.0, sd=1.0, power=1.0), "power"),
                                      (dict(mean=1.0, sd=1.0, level=0.0), "level")])
def test_bad_input_names_the_parameter(kw, name):
    with pytest.raises(DomainError, match=name):
        seeds_for_direction(**kw)
    with pytest.raises(DomainError, match="margin"):
        seeds_for_equivalence(0.0, 1.0, 0.0)
