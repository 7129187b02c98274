"""verify.reproduce.stats: Kaplan–Meier for R_x with censoring (against curves computed by
hand), the decisions from intervals over seeds (properties, and scipy's own t intervals as the
reference), and the 'inconclusive' outcome in the registry."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from boundlab.errors import DomainError
from verify.reproduce.power import seeds_for_direction
from verify.reproduce.registry import OUTCOMES, Claim, Result
from verify.reproduce.stats import (
    as_claim,
    combine,
    decide,
    decide_intervals,
    kaplan_meier,
    km_rounds,
    power_note,
    reach_target,
    relation,
)

Z = 1.959963984540054


def _loglog_band(S, g):
    """One pointwise log(-log) band by hand (Kalbfleisch–Prentice)."""
    se = math.sqrt(g) / abs(math.log(S))
    return S ** math.exp(Z * se), S ** math.exp(-Z * se)


# ---------------------------------------------------------------- Kaplan–Meier
def test_km_with_censoring_by_hand():
    # times 1, 2, 2, 3+, 5: at t=1 4/5 survive; at t=2 2 of 4 at risk reach; 3 is censored;
    # at t=5 the last one reaches
    km = kaplan_meier([1, 2, 2, 3, 5], reached=[True, True, True, False, True])
    assert km.times.tolist() == [1.0, 2.0, 5.0]
    assert km.survival.tolist() == pytest.approx([0.8, 0.4, 0.0], abs=1e-15)
    # Greenwood: S^2 sum d / (n (n - d)): 0.64 / 20; 0.16 (1/20 + 2/8); 0 at S = 0
    assert km.var.tolist() == pytest.approx([0.032, 0.048, 0.0], abs=1e-15)
    assert (km.n, km.censored, km.horizon, km.median) == (5, 1, 5.0, 2.0)
    lo1, hi1 = _loglog_band(0.8, 1 / 20)
    lo2, hi2 = _loglog_band(0.4, 1 / 20 + 2 / 8)
    assert km.lower[:2].tolist() == pytest.approx([lo1, lo2], rel=1e-12)
    assert km.upper[:2].tolist() == pytest.approx([hi1, hi2], rel=1e-12)
    # the median's interval: first time the lower band is <= 1/2, first time the upper is
    assert km.median_lo == (1.0 if lo1 <= 0.5 else 2.0)
    assert km.median_hi == (2.0 if hi2 <= 0.5 else 5.0)
    # restricted mean to 5: 1 + 0.8 + 0.4 * 3 (S = 0.4 on [2, 5)) = 3.0
    assert km.restricted_mean() == pytest.approx(1 + 0.8 + 0.4 * 3, abs=1e-12)


def test_km_linear_band_is_brookmeyer_crowley_by_hand():
    km = kaplan_meier([1, 2, 2, 3, 5], reached=[True, True, True, False, True],
                      transform="linear")
    # t=1: 0.8 -+ 1.96 sqrt(0.032) = [0.449, 1]; t=2: 0.4 -+ 1.96 sqrt(0.048) = [0, 0.829]
    assert km.lower[0] == pytest.approx(0.8 - Z * math.sqrt(0.032), rel=1e-12)
    assert km.upper[1] == pytest.approx(0.4 + Z * math.sqrt(0.048), rel=1e-12)
    assert (km.median_lo, km.median, km.median_hi) == (1.0, 2.0, 5.0)


def test_km_none_censored_with_ties_by_hand():
    km = kaplan_meier([1, 2, 2, 3])
    assert km.survival.tolist() == pytest.approx([0.75, 0.25, 0.0], abs=1e-15)
    assert km.var[:2].tolist() == pytest.approx([0.5625 / 12, 0.0625 * (1 / 12 + 2 / 3)])
    assert km.censored == 0 and km.median == 2.0
    assert km.restricted_mean() == pytest.approx(2.0)  # the plain mean: nothing censored


def test_km_all_censored():
    km = km_rounds([np.nan, np.nan, np.nan], horizon=30)
    assert km.censored == 3 and km.times.size == 0
    assert math.isinf(km.median) and math.isinf(km.median_lo) and math.isinf(km.median_hi)
    assert km.restricted_mean() == 30.0
    assert km.fmt() == "> 30 [> 30, > 30] (3/3 censored)"


def test_km_rounds_censors_at_the_horizon_never_drops():
    km = km_rounds([4.0, np.nan, 6.0, np.nan], horizon=50)
    assert (km.n, km.censored, km.horizon) == (4, 2, 50.0)
    assert km.survival.tolist() == pytest.approx([0.75, 0.5])
    assert km.median == 6.0 and math.isinf(km.median_hi)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=30), st.integers(1, 40))
def test_km_without_early_censoring_is_the_empirical_distribution(times, H):
    r = np.array(times, dtype=float)
    r[r > H] = np.nan  # never reached within the horizon: censored at H
    km = km_rounds(r, horizon=H)
    capped = np.where(np.isfinite(r), r, H)
    # restricted mean = mean of min(R, H); S(t) = share of runs with R > t
    assert km.restricted_mean(H) == pytest.approx(capped.mean(), rel=1e-12)
    emp = [(np.where(np.isfinite(r), r, np.inf) > t).mean() for t in km.times]
    assert km.survival.tolist() == pytest.approx(emp, abs=1e-12)
    assert km.censored == int(np.isnan(r).sum()) and km.n == r.size


def test_km_bad_input():
    with pytest.raises(DomainError, match="times"):
        kaplan_meier([])
    with pytest.raises(DomainError, match="times"):
        kaplan_meier([1.0, np.nan])
    with pytest.raises(DomainError, match="transform"):
        kaplan_meier([1.0], transform="log")


# ---------------------------------------------------------------- decisions
def test_paired_and_welch_intervals_are_scipys():
    rng = np.random.default_rng(3)
    a, b = rng.normal(1.0, 1.0, 7), rng.normal(0.0, 2.0, 7)
    d = decide(a, b, expect=">", resolution=0.1, paired=True)
    ref = sps.ttest_rel(a, b).confidence_interval(0.95)
    assert (d.lo, d.hi) == pytest.approx((ref.low, ref.high), rel=1e-10)
    d = decide(a, b[:5], expect=">", resolution=0.1)
    ref = sps.ttest_ind(a, b[:5], equal_var=False).confidence_interval(0.95)
    assert (d.lo, d.hi) == pytest.approx((ref.low, ref.high), rel=1e-10)
    assert d.n == 5


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=12), st.sampled_from([">", "<", "="]),
       st.booleans(), st.floats(0.01, 10))
def test_identical_arms_are_never_a_tie_or_a_match(values, expect, paired, res):
    """Identical values on every seed: a zero-width interval [0, 0] measures nothing (issue 32:
    001:fig3's every-arm-at-round-2 'tie'): not exercised, never a tie, a match or a
    difference (one seed: inconclusive)."""
    d = decide(values, list(values), expect=expect, resolution=res, paired=paired)
    if len(values) < 2:
        assert d.outcome == "inconclusive"
    elif paired or len(set(values)) == 1:  # the interval [0, 0]
        assert d.outcome == "not exercised" and "measures nothing" in d.how
    else:  # Welch's interval of two spread arms has a width: a real equivalence test
        assert d.outcome in (("matches", "inconclusive") if expect == "=" else
                             ("tie", "inconclusive"))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([True, False]))
def test_far_apart_arms_with_many_seeds_are_decided(seed, paired):
    rng = np.random.default_rng(seed)
    a, b = 10.0 + rng.normal(0, 1, 30), rng.normal(0, 1, 30)
    assert decide(a, b, expect=">", resolution=1.0, paired=paired).outcome == "matches"
    assert decide(a, b, expect="<", resolution=1.0, paired=paired).outcome == "differs"
    assert decide(a, b, expect="=", resolution=1.0, paired=paired).outcome == "differs"
    near = decide(b + 0.01 + rng.normal(0, 0.05, 30), b, expect="=", resolution=1.0,
                  paired=True)
    assert near.outcome == "matches" and near.relation == "tie"


def test_few_noisy_seeds_are_inconclusive_with_the_seeds_that_decide():
    a = np.array([1.0, 2.5, 0.2])
    b = np.array([0.8, 1.0, 0.9])
    d = decide(a, b, expect=">", resolution=0.2, paired=True)
    assert d.outcome == "inconclusive" and d.relation == "?"
    s = np.std(a - b, ddof=1)
    m = float(np.mean(a - b))  # 0.333, s 1.106: ((1.96 + 0.84) s / m)^2 = 86 (t terms: 89)
    assert d.seeds_needed == seeds_for_direction(m, s)
    assert 86 <= d.seeds_needed < 95  # not the old width projection (2 z s / 0.2)^2 = 470
    assert "seeds per arm would decide the direction" in d.how


def test_one_seed_is_inconclusive_without_a_number():
    d = decide([1.0], [0.0], expect=">", resolution=0.1)
    assert d.outcome == "inconclusive" and d.seeds_needed is None
    assert "one seed" in d.how and math.isinf(d.width)


def test_relation_zones():
    assert relation(-0.4, 0.4, 0.5) == "tie"
    assert relation(0.1, 0.4, 0.5) == "tie"  # significant but shown below the resolution
    assert relation(0.1, 0.6, 0.5) == ">"
    assert relation(-3.0, -0.1, 0.5) == "<"
    assert relation(-0.1, 0.6, 0.5) == "?"
    assert relation(math.nan, 1.0, 0.5) == "?"


def test_decide_intervals():
    d = decide_intervals(-5.0, 2, 6, 7, 14, expect="<", resolution=1, n=8)
    assert (d.lo, d.hi, d.outcome) == (-12, -1, "matches")
    d = decide_intervals(-1.0, 2, 9, 3, 12, expect="<", resolution=1, n=4)
    assert d.outcome == "inconclusive" and (d.lo, d.hi) == (-10, 6)
    # the per-seed spread read off the width: s = sqrt(4) 16 / (2 z)
    assert d.seeds_needed == seeds_for_direction(-1.0, 2 * 16 / (2 * Z))
    assert decide_intervals(0.0, 2, 9, 3, 12, expect="<", resolution=1,
                            n=4).seeds_needed is None  # no difference: no seeds decide it
    d = decide_intervals(0.0, 2, math.inf, 3, 12, expect="<", resolution=1, n=4)
    assert d.outcome == "inconclusive" and d.seeds_needed is None and "horizon" in d.how


def test_decide_bad_input():
    with pytest.raises(DomainError, match="expect"):
        decide([1.0, 2.0], [1.0, 2.0], expect=">=", resolution=1)
    with pytest.raises(DomainError, match="resolution"):
        decide([1.0, 2.0], [1.0, 2.0], expect=">", resolution=0)
    with pytest.raises(DomainError, match="a, b"):
        decide([1.0, np.nan], [1.0, 2.0], expect=">", resolution=1)
    with pytest.raises(DomainError, match="paired"):
        decide([1.0, 2.0], [1.0], expect=">", resolution=1, paired=True)


def test_combine_and_claims():
    m = decide([3.0, 3.1], [1.0, 1.1], expect=">", resolution=0.5, paired=True)
    t = decide([1.0, 1.1, 0.9], [1.01, 1.08, 0.9], expect=">", resolution=0.5, paired=True)
    i = decide([1.0, 3.0], [2.0, 1.0], expect=">", resolution=0.5)
    z = decide([1.0, 1.1], [1.0, 1.1], expect=">", resolution=0.5, paired=True)
    s = decide([3.0, 3.1, 3.2], [1.0, 1.1, 1.25], expect=">", resolution=0.5, paired=True,
               effect=5.0)
    assert (m.outcome, t.outcome, i.outcome) == ("matches", "tie", "inconclusive")
    assert (z.outcome, s.outcome) == ("not exercised", "differs in size")
    assert combine([m, m]) == "matches" and combine([m, t]) == "tie"
    assert combine([m, i, t]) == "inconclusive"
    # a part that is not exercised is never rolled up into a match, nor hidden by a tie
    assert combine([m, z]) == "not exercised" and combine([t, z, i]) == "not exercised"
    assert combine([m, s, i]) == "differs in size"
    for o in OUTCOMES:
        c = as_claim("w", "p", "o", "r", o, "why")
        assert c.outcome == o and o in OUTCOMES


def test_inconclusive_in_the_registry():
    ok = Claim("a", "p", "o", "r", True)
    inc = Claim("b", "p", "o", "r", False, "needs 12 seeds", status="inconclusive")
    bad = Claim("c", "p", "o", "r", False)
    assert inc.outcome == "inconclusive"
    assert Result([], [ok, inc]).outcome == "inconclusive"
    assert Result([], [ok, inc, bad]).outcome == "differs"
    assert "b: needs 12 seeds" in Result([], [ok, inc]).how
    with pytest.raises(DomainError, match="status"):
        Claim("a", "p", "o", "r", True, status="unsure")


def test_reach_target_and_power_note():
    accs = np.array([[0.5, 0.86, 0.88], [0.4, 0.7, 0.87], [0.3, 0.6, 0.95]])
    assert reach_target(accs, paper=0.9, share=1.0) == 0.87
    assert reach_target(accs, paper=0.9, share=0.6) == 0.88
    assert reach_target(accs, paper=0.9, share=0.3) == 0.9  # never above the paper's target
    note = power_note(8, 1.0, [3.2, np.inf, 4.0], " rd", paired=True)
    assert "8 seeds per arm (paired by data seed)" in note and "3.2 rd to 4 rd wide" in note
    assert "cannot be estimated" in power_note(1, 0.5, [np.inf])


# ---------------------------------------------------------------- size as well as direction
def _paired(diffs, base=10.0):
    d = np.asarray(diffs, dtype=float)
    return base + d, np.full(d.size, base)


def test_size_verdicts_by_hand():
    """Issue 32 (a): the interval is judged against the paper's effect, not only its sign."""
    d = np.array([-2.0, -1.0, -3.0, -2.0, -1.5, -2.5])  # mean -2, sd 0.707, n 6
    a, b = _paired(d)
    lo, hi = sps.t.interval(0.95, 5, loc=-2.0, scale=sps.sem(d))  # about [-2.74, -1.26]
    assert decide(a, b, expect="<", resolution=0.5, paired=True).outcome == "matches"
    ok = decide(a, b, expect="<", resolution=0.5, paired=True, effect=-2.5)
    assert ok.outcome == "matches" and (ok.lo, ok.hi) == pytest.approx((lo, hi))
    far = decide(a, b, expect="<", resolution=0.5, paired=True, effect=-7.1)
    assert far.outcome == "differs in size" and "excludes the paper's effect -7.1" in far.how
    assert "its direction matches" in far.how and "paper -7.1" in far.fmt()
    # the paper's 000:table3 case: no direction decided, but the effect is excluded
    a2, b2 = _paired([-3.0, 0.5, -1.0, 0.2, -2.0, 0.3])
    und = decide(a2, b2, expect="<", resolution=0.5, paired=True, effect=-7.1)
    assert und.relation == "?" and und.outcome == "differs in size"
    assert "direction is not decided" in und.how
    # the reverse order is 'differs' whatever the effect
    a3, b3 = _paired(-d)
    assert decide(a3, b3, expect="<", resolution=0.5, paired=True,
                  effect=-7.1).outcome == "differs"
    # an interval holding both 0 and the effect: inconclusive, naming both
    a4, b4 = _paired([-3.0, 1.0, -4.0, 0.5])
    inc = decide(a4, b4, expect="<", resolution=0.5, paired=True, effect=-1.0)
    assert inc.outcome == "inconclusive" and "contains both 0 and the paper's effect" in inc.how


def test_tie_only_from_an_equivalence_test():
    """A tie needs the 95 % interval inside (-margin, margin) and a non-zero width."""
    rng = np.random.default_rng(7)
    small = rng.normal(0.0, 0.1, 12)
    a, b = _paired(small)
    t = decide(a, b, expect=">", resolution=0.5, paired=True)
    lo, hi = sps.t.interval(0.95, 11, loc=small.mean(), scale=sps.sem(small))
    assert -0.5 < lo and hi < 0.5 and t.outcome == "tie" and "TOST" in t.how
    assert decide(a, b, expect="=", resolution=0.5, paired=True).outcome == "matches"
    # the same interval with a margin it does not fit: no tie
    assert decide(a, b, expect=">", resolution=0.05, paired=True).outcome != "tie"
    # zero width from identical values (every arm at round 2): not exercised, not a tie
    z = decide([2.0, 2.0, 2.0], [2.0, 2.0, 2.0], expect="<", resolution=1.0, paired=True)
    assert z.outcome == "not exercised" and (z.lo, z.hi) == (0.0, 0.0)
    # a constant non-zero difference larger than the margin is a decided order
    assert decide([2.0, 3.0, 4.0], [5.0, 6.0, 7.0], expect="<", resolution=1.0,
                  paired=True).outcome == "matches"


@pytest.mark.parametrize("expect, effect", [(">", -1.0), ("<", 2.0), ("=", 0.5), (">", math.nan),
                                            (">", 0.0)])
def test_effect_of_the_wrong_sign_is_refused(expect, effect):
    with pytest.raises(DomainError, match="effect"):
        decide([1.0, 2.0], [0.0, 0.5], expect=expect, resolution=0.1, effect=effect)


def test_registry_knows_the_new_outcomes():
    assert {"differs in size", "not exercised"} <= set(OUTCOMES)
    c = as_claim("w", "p", "o", "r", "differs in size", "the interval excludes 7.1")
    assert c.outcome == "differs in size" and not c.ok
    m = as_claim("m", "p", "o", "r", "matches")
    assert Result([], [m, c]).outcome == "differs in size"
    assert Result([], [m, c, Claim("d", "p", "o", "r", False)]).outcome == "differs"
    ne = as_claim("n", "p", "o", "r", "not exercised", "every arm at round 2")
    assert Result([], [ne]).outcome == "not exercised"


def test_a_directional_claim_near_zero_says_the_seeds_that_show_a_tie():
    from verify.reproduce.power import seeds_for_equivalence

    b = np.array([1.0, 2.0, 3.0])
    d = decide(b + np.array([0.1, -0.1, 0.0]), b, expect=">", resolution=0.2, paired=True)
    # mean 0, sd 0.1: t_{.975, 2} 0.1 / sqrt 3 = 0.248 > 0.2: not yet inside the margin
    assert d.outcome == "inconclusive" and d.seeds_needed is None
    assert d.tie_seeds == seeds_for_equivalence(0.0, 0.1, 0.2) and 3 < d.tie_seeds < 10
    assert f"about {d.tie_seeds} seeds per arm would show a tie" in d.how
    assert "no number of seeds decides the direction" in d.how
    small = decide(b + np.array([0.3, -0.2, 0.05]), b, expect=">", resolution=0.5,
                   paired=True)  # mean 0.05, sd 0.25: the tie comes far sooner
    assert small.outcome == "inconclusive" and small.tie_seeds < small.seeds_needed
    assert "would decide the direction" in small.how and "would show a tie" in small.how
    far = decide(b + np.array([1.0, 3.0, 0.2]), b, expect=">", resolution=0.2, paired=True)
    assert far.tie_seeds is None and "show a tie" not in far.how  # beyond the margin
