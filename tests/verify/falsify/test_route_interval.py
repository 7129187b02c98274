"""verify.falsify on the moments of FedAU's K-cutoff participation interval
(verify.falsify.interval_route): exact sums vs an enumeration of every participation
sequence, the catalogue identities tight, typo-mutants violated with an exact certificate."""

import dataclasses
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import boundlab
import verify
from boundlab import Bound, make_params
from boundlab.errors import DomainError
from verify.falsify import Falsification, routes
from verify.falsify import interval_route as ir
from verify.falsify.mutants import mutants

IDS = ("weight_error.interval_mean", "weight_error.interval_var",
       "weight_error.interval_second_moment", "weight_error.interval_factorial_moment",
       "weight_error.interval_bias")
FEDAU = {"algorithm": "fedau", "function_class": "smooth-nonconvex"}


def _enumerated(p: Fraction, K: int) -> dict:
    """The moments by brute force: every participation sequence chi_1..chi_K of the rounds
    after a participation, with probability p^(#1) (1-p)^(#0); the interval closes at the
    first participation, or after K rounds without one."""
    law = {}
    for chi in itertools.product((0, 1), repeat=K):
        S = chi.index(1) + 1 if 1 in chi else K
        w = p ** sum(chi) * (1 - p) ** (K - sum(chi))
        law[S] = law.get(S, 0) + w
    m1 = sum(k * w for k, w in law.items())
    m2 = sum(k * k * w for k, w in law.items())
    return {"interval_mean": m1, "interval_second_moment": m2,
            "interval_factorial_moment": m2 - m1, "interval_var": m2 - m1 * m1,
            "interval_bias_sq": (p * m1 - 1) ** 2}


def _exact(p, K):
    return {k: ir.as_fraction(v) for k, v in ir.interval_moments(p, K).items()}


def test_hand_computed_p_half_k3():
    # Pr{S = 1, 2, 3} = 1/2, 1/4, 1/4: E S = 7/4, E S^2 = 15/4, Var = 15/4 - 49/16 = 11/16,
    # E S(S-1) = 2, (E S / 2 - 1)^2 = 1/64 = (1/2)^6
    assert _exact(0.5, 3) == {"interval_mean": Fraction(7, 4),
                              "interval_second_moment": Fraction(15, 4),
                              "interval_factorial_moment": Fraction(2),
                              "interval_var": Fraction(11, 16),
                              "interval_bias_sq": Fraction(1, 64)}
    assert _exact(1.0, 5)["interval_mean"] == 1 and _exact(0.3, 1)["interval_var"] == 0


@pytest.mark.parametrize("p, K", [(0.5, 1), (0.1, 2), (0.37, 5), (0.9, 7), (1e-3, 8),
                                  (0.999, 6)])
def test_exact_sums_equal_the_enumeration_of_every_sequence(p, K):
    assert _exact(p, K) == _enumerated(Fraction(p), K)


def test_large_cutoffs_stay_exact():
    # the mean is the finite geometric sum of the tail probabilities (1-p)^j, j < K
    p, K = 0.3, 300
    q = 1 - Fraction(p)
    assert _exact(p, K)["interval_mean"] == sum(q ** j for j in range(K))
    # and sum_{j<K} (1-p)^j = sum_i (-p)^i C(K, i+1): four terms leave < 1e-25 at p K = 3e-6
    p, K = 1e-9, 3000
    series = sum((-Fraction(p)) ** i * math.comb(K, i + 1) for i in range(4))
    got = ir.to_float(ir.interval_moments(p, K)["interval_mean"])
    assert got == pytest.approx(float(series), rel=1e-15)


def test_exact_moments_agree_with_algorithm_2_intervals():
    """The intervals FedAU's Algorithm 2 (toys) completes on Bernoulli paths: each sample mean
    within 5 standard errors of the exact moment."""
    from verify.checks.weight_error_paths import completed_intervals

    p, K = 0.3, 4
    S = completed_intervals(p, K, T=400, M=300, seed=11)
    ex = {k: float(v) for k, v in _exact(p, K).items()}
    for name, samples in (("interval_mean", S), ("interval_second_moment", S ** 2)):
        se = samples.std() / math.sqrt(S.size)
        assert abs(samples.mean() - ex[name]) <= 5 * se


def test_the_route_judges_the_interval_moments():
    for bid in IDS:
        assert routes.route_for(boundlab.get(bid)) is ir
    assert routes.route_for_family("identity.interval") is ir


@pytest.mark.parametrize("bid", IDS)
def test_the_catalogue_identities_hold_tight(bid):
    res = verify.falsify(bid, budget=30, seed=0)
    assert res.verdict == "holds" and res.certificate in ("exact-rational", "mpmath-50")
    assert abs(res.worst_ratio - 1) <= res.certified_error < 1e-15
    assert "tight" in res.reason


@pytest.mark.parametrize("bid, mutation", [
    ("weight_error.interval_mean", "exp[(1-p)**K]+1"),
    ("weight_error.interval_var", "const[2]*2"),
    ("weight_error.interval_bias", "exp[(1-p)**(2*K)]-1"),
])
def test_typo_mutants_are_violated_with_an_exact_certificate(bid, mutation):
    m = next(m for m in mutants(boundlab.get(bid)) if m.id == f"{bid}~{mutation}")
    res = verify.falsify(dataclasses.replace(m, id="mine.typo"), budget=40, seed=0, **FEDAU)
    assert res.verdict == "VIOLATED" and res.certificate in ("exact-rational", "mpmath-50")
    assert res.worst_ratio - 1 > res.certified_error
    d = res.instance.data  # the stated value differs from the enumerated moment there
    if d["K"] <= 12:
        ex = _enumerated(Fraction(d["p"]), d["K"])[m.lhs]
        stated = m.expr.subs({m.params["p"].symbol: Fraction(d["p"]),
                              m.params["K"].symbol: d["K"]})
        assert ex != stated


def test_upper_bounds_on_the_moments():
    p = boundlab.sym("p")
    true = Bound(id="mine.var_le", source="mine", expr=(1 - p) / p**2, params=make_params("p"),
                 kind="upper", lhs="interval_var")
    false = Bound(id="mine.mean_le", source="mine", expr=1 / (2 * p), params=make_params("p"),
                  kind="upper", lhs="interval_mean")  # E S <= 1/p only
    ok = verify.falsify(true, budget=30, seed=0, K=40, **FEDAU)  # K held by the setting
    bad = verify.falsify(false, budget=30, seed=0, K=40, **FEDAU)
    assert ok.verdict == "holds" and ok.worst_ratio <= 1 and ok.instance.data["K"] == 40
    assert bad.verdict == "VIOLATED" and bad.certificate == "exact-rational"
    d = bad.instance.data
    mean = _exact(d["p"], d["K"])["interval_mean"]
    assert bad.worst_ratio == pytest.approx(float(mean * 2 * Fraction(d["p"])), rel=1e-15)


def test_a_saved_result_replays(tmp_path):
    m = next(m for m in mutants(boundlab.get(IDS[1])) if m.id.endswith("~const[2]*2"))
    res = verify.falsify(dataclasses.replace(m, id="mine.typo_save"), budget=30, seed=0,
                         save=tmp_path / "r.json", **FEDAU)
    back = Falsification.load(tmp_path / "r.json")
    assert back.verdict == res.verdict == "VIOLATED"
    assert back.instance.family == "identity.interval"
    assert back.instance.replay() == res.instance.replay() == res.instance.ratio


def test_same_seed_same_result():
    a = verify.falsify(IDS[0], budget=30, seed=4)
    b = verify.falsify(IDS[0], budget=30, seed=4)
    assert a.instance.data == b.instance.data and a.worst_ratio == b.worst_ratio


def test_bad_instance_data_are_refused():
    b = boundlab.get(IDS[0])
    assert ir.measure_instance(b, {"p": 0.5, "K": 3})[1] == 1.75
    for bad in ({"p": 0.0, "K": 3}, {"p": 1.5, "K": 3}, {"p": "0.5", "K": 3},
                {"p": 0.5, "K": 0}, {"p": 0.5, "K": 2.5}, {"p": 0.5, "K": True},
                {"p": 0.5, "K": ir.K_HI + 1}, {"p": 0.5, "K": 3, "fixed": [1]},
                {"p": 0.5, "K": 3, "fixed": {"T": "x"}}, [0.5, 3]):
        with pytest.raises(DomainError):
            ir.measure_instance(b, bad)
    with pytest.raises(DomainError):
        ir.interval_moments(np.nan, 3)


def test_a_ratio_beyond_the_float_range_is_violated_with_the_exact_values():
    """(1/10 - p)^(2K) at p = 1/4, K = 229: 0.15^458 ~ 6e-378 against the true
    (1 - p)^(2K) ~ 6e-58; the exact ratio exceeds every float."""
    m = next(m for m in mutants(boundlab.get(IDS[4])) if m.id.endswith("~const[1]/10"))
    res = verify.falsify(dataclasses.replace(m, id="mine.tiny"), budget=10, seed=0, p=0.25,
                         K=229, **FEDAU)
    assert res.verdict == "VIOLATED" and res.certificate == "exact-rational"
    assert res.worst_ratio == math.inf and "beyond the float range" in res.reason
    assert (0.75 ** 458) == pytest.approx(res.instance.lhs, rel=1e-12)
