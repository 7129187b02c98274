"""Derivation tests of the weight_error family (seed 002, FedAU, Wang & Ji).

Expected values come from independent computations written here (sympy summation over the
pmf, exact rational sums, exhaustive enumeration of participation paths, a reference numpy
implementation of Algorithm 2, formulas transcribed from the spec) or from numbers quoted in
the spec (``seeds-002-003.md`` §3.1, §4.1 F1-F12, §7). Monte-Carlo parts use fixed seeds.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import boundlab
from boundlab.symbols import sym

R = sp.Rational
bp, bK, bt, bT = sym("p"), sym("K"), sym("t"), sym("T")


def get(name):
    return boundlab.get(f"weight_error.{name}")


# ----------------------------------------------------------------------------- references
def alg2(chi: np.ndarray, K) -> tuple[np.ndarray, np.ndarray]:
    """Reference Algorithm 2, vectorized over rows (replicates). ``chi``: bool (R, T).

    Returns omega (R, T) and the number of completed intervals M_t (R, T). ``K`` may be a
    per-row array. Written from the spec's §5.1.2 pseudo-code, independent of boundlab.
    """
    n, T = chi.shape
    K = np.broadcast_to(np.asarray(K, dtype=float), (n,))
    om, cnt = np.ones((n, T)), np.zeros((n, T))
    M, Sd, w = np.zeros(n), np.zeros(n), np.ones(n)
    for s in range(1, T):
        Sd += 1
        ev = chi[:, s - 1] | (Sd >= K)
        w = np.where(ev, np.where(M == 0, Sd, (M * w + Sd) / (M + 1)), w)
        M = np.where(ev, M + 1, M)
        Sd = np.where(ev, 0, Sd)
        om[:, s], cnt[:, s] = w, M
    return om, cnt


def intervals(chi: np.ndarray, K: int) -> np.ndarray:
    """All completed cutoff intervals of the rows of ``chi`` (Alg. 2's S values)."""
    n, T = chi.shape
    Sd, out = np.zeros(n), []
    for s in range(1, T):
        Sd += 1
        ev = chi[:, s - 1] | (Sd >= K)
        out.append(Sd[ev].copy())
        Sd = np.where(ev, 0, Sd)
    return np.concatenate(out)


def all_paths_mse(t: int, K: int, p: np.ndarray) -> np.ndarray:
    """Exact E[(p omega_t - 1)^2] by enumerating the 2^t participation paths of rounds < t."""
    n = 2**t
    chi = ((np.arange(n)[:, None] >> np.arange(t)) & 1).astype(bool)
    chi = np.concatenate([chi, np.zeros((n, 1), bool)], axis=1)
    om, _ = alg2(chi, K)
    w, ones = om[:, t], chi[:, :t].sum(1)
    prob = p[:, None] ** ones * (1 - p[:, None]) ** (t - ones)
    return (prob * (p[:, None] * w - 1) ** 2).sum(1)


def pmf(p: Fraction, K: int) -> list[Fraction]:
    """Pr{S = k}, k = 1..K, of the K-cutoff geometric (spec (B.6.1))."""
    return [p * (1 - p) ** (k - 1) for k in range(1, K)] + [(1 - p) ** (K - 1)]


def exact(bound, **vals):
    """Exact sympy value of a bound's expression at rational arguments."""
    subs = {
        bound.params[n].symbol: sp.Rational(Fraction(v).numerator, Fraction(v).denominator)
        for n, v in vals.items()
    }
    return sp.simplify(bound.expr.xreplace(subs))


# ----------------------------------------------------------------------------- F1: Lemma B.6.1
def test_lemma_b61_by_symbolic_summation():
    """F1: sum the pmf symbolically in K; compare with the catalogue (mean, var, (B.6.4/5))."""
    p, K, k, X = sp.symbols("p K k X", positive=True)
    q = 1 - p

    def summ(e):
        return sp.summation(e, (k, 1, K - 1))

    def norm(e):  # (1-p)**(a*K+b) -> X**a * (1-p)**b, then simplify (spec appendix)
        e = sp.expand(e)
        e = e.replace(
            lambda x: x.is_Pow and x.base == q and x.exp.has(K),
            lambda x: (
                X ** sp.Poly(x.exp, K).coeff_monomial(K)
                * q ** (x.exp - sp.Poly(x.exp, K).coeff_monomial(K) * K)
            ),
        )
        return sp.simplify(sp.factor(e))

    total = summ(p * q ** (k - 1)) + q ** (K - 1)
    mean = summ(k * p * q ** (k - 1)) + K * q ** (K - 1)
    m2 = summ(k**2 * p * q ** (k - 1)) + K**2 * q ** (K - 1)
    to_test = {bp: p, bK: K}
    assert norm(total - 1) == 0
    assert norm(mean - get("interval_mean").expr.xreplace(to_test)) == 0
    assert norm(m2 - mean**2 - get("interval_var").expr.xreplace(to_test)) == 0
    assert norm(m2 - get("interval_second_moment").expr.xreplace(to_test)) == 0
    assert norm(m2 - mean - get("interval_factorial_moment").expr.xreplace(to_test)) == 0
    assert norm((p * mean - 1) ** 2 - get("interval_bias").expr.xreplace(to_test)) == 0


@pytest.mark.parametrize("K", [1, 2, 3, 5, 10, 50])
@pytest.mark.parametrize(
    "p", [Fraction(1, 50), Fraction(1, 10), Fraction(1, 2), Fraction(9, 10), Fraction(1)]
)
def test_lemma_b61_exact_rationals(p, K):
    """F1: exact rational moments of the pmf equal the catalogue's closed forms (edges K=1, p=1)."""
    f = pmf(p, K)
    assert sum(f) == 1
    m1 = sum(k * fk for k, fk in enumerate(f, 1))
    m2 = sum(k * k * fk for k, fk in enumerate(f, 1))
    for name, want in [
        ("interval_mean", m1),
        ("interval_var", m2 - m1 * m1),
        ("interval_second_moment", m2),
        ("interval_factorial_moment", m2 - m1),
        ("interval_bias", (p * m1 - 1) ** 2),
    ]:
        got = exact(get(name), p=p, K=K)
        assert got == sp.Rational(want.numerator, want.denominator), (name, p, K)
    assert 1 <= m1 <= min(K, 1 / p)
    assert (m2 - m1 * m1 == 0) == (K == 1 or p == 1)


def test_lemma_b61_limits_and_var_gap():
    """F1: K -> inf at p = 3/10 gives 10/3 and 70/9; Var - (1-p)/p^2 has the spec's closed form."""
    m = get("interval_mean").expr.subs(bp, R(3, 10))
    v = get("interval_var").expr.subs(bp, R(3, 10))
    assert sp.limit(m, bK, sp.oo) == R(10, 3)
    assert sp.limit(v, bK, sp.oo) == R(70, 9)
    q = 1 - bp
    gap = q**bK * (bp * (1 - 2 * bK) - q**bK) / bp**2
    assert sp.simplify(get("interval_var").expr - (1 - bp) / bp**2 - gap) == 0


def test_interval_formula_values_quoted_in_spec():
    """F3 table, formula columns (mean, var) for five (p, K)."""
    rows = [
        (0.02, 50, 31.792, 315.8),
        (0.10, 5, 4.0951, 1.988),
        (0.10, 50, 9.949, 84.90),
        (0.50, 3, 1.7500, 0.6875),
        (0.30, 1, 1.0, 0.0),
    ]
    for p, K, mean, var in rows:
        assert get("interval_mean").evaluate(p=p, K=K) == pytest.approx(mean, abs=6e-4)
        assert get("interval_var").evaluate(p=p, K=K) == pytest.approx(var, abs=0.06)
    # F5 quotes E[S] = 9.948 for p = 0.1, K = 50
    assert get("interval_mean").evaluate(p=0.1, K=50) == pytest.approx(9.948, abs=1e-3)


def test_intervals_monte_carlo_match_lemma_b61():
    """F3: intervals cut by Alg. 2 on Bernoulli paths have the catalogue's mean and variance."""
    rng = np.random.default_rng(3)
    for p, K in [(0.1, 5), (0.5, 3), (0.02, 50), (0.3, 1)]:
        s = intervals(rng.random((500, 600)) < p, K)
        n = s.size
        mean, var = get("interval_mean").evaluate(p=p, K=K), get("interval_var").evaluate(p=p, K=K)
        se_m = math.sqrt(max(var, 1e-300) / n)
        assert abs(s.mean() - mean) <= 4 * se_m + 1e-12, (p, K)
        mu4 = ((s - s.mean()) ** 4).mean()
        se_v = math.sqrt(max(mu4 - s.var() ** 2, 0.0) / n)
        assert abs(s.var() - var) <= 4 * se_v + 1e-12, (p, K)


def test_estimator_monte_carlo_vs_interval_mean_and_var():
    """Alg. 2's omega_t concentrates at E[S] with variance ~ Var[S]/M_t for large t."""
    rng = np.random.default_rng(4)
    p, K, T = 0.3, 5, 1500
    om, cnt = alg2(rng.random((2000, T)) < p, K)
    w, M = om[:, -1], cnt[:, -1]
    mean, var = get("interval_mean").evaluate(p=p, K=K), get("interval_var").evaluate(p=p, K=K)
    assert abs(w.mean() - mean) <= 4 * w.std() / math.sqrt(w.size) + 2 * var / M.mean()
    assert (w.var() * M.mean()) / var == pytest.approx(1.0, abs=0.1)


# ----------------------------------------------------------------------------- per-round bounds
def test_round_bounds_by_exact_enumeration():
    """Exact E(p omega_t - 1)^2 over all 2^t paths: (B.6.8) both forms for t >= K, the
    envelope for every t >= 1; K = 1 makes the variance form tight (omega = 1)."""
    p = np.linspace(0.01, 0.99, 50)
    worst_var_form = 0.0
    for K in range(1, 7):
        for t in range(1, 13):
            mse = all_paths_mse(t, K, p)
            env = get("round_envelope").evaluate(p=p, K=K, t=t)
            assert np.all(mse <= env * (1 + 1e-12)), (K, t)
            if t >= K:
                for name in ("round", "round_var_form"):
                    b = get(name).evaluate(p=p, K=K, t=t)
                    assert np.all(mse <= b * (1 + 1e-12)), (name, K, t)
                worst_var_form = max(
                    worst_var_form,
                    float(np.max(mse / get("round_var_form").evaluate(p=p, K=K, t=t))),
                )
            assert get("round").violated_preconditions(p=0.5, K=K, t=t) == (
                [] if t >= K else ["t >= K"]
            )
    assert worst_var_form == pytest.approx(1.0, abs=1e-9)


def test_round_var_form_below_final_form():
    """Step (c) of (B.6.8): p^2 Var/max(floor(t/K),1) <= 2K(1-p)/t for t >= K (grid)."""
    p = np.linspace(0.001, 1.0, 200)[:, None]
    for K in (1, 2, 3, 7, 50):
        t = np.arange(K, 40 * K)[None, :]
        a = get("round_var_form").evaluate(p=p, K=K, t=t)
        b = get("round").evaluate(p=p, K=K, t=t)
        assert np.all(a <= b * (1 + 1e-12))


# ----------------------------------------------------------------------------- F4: (B.6.9)
def test_b69_follows_from_b67_b68():
    """F4: harmonic-number bound, sum of the per-round envelope <= (B.6.9) on the spec's grid."""
    Tmax = 10**6
    H = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, Tmax))])  # H[T-1] = H_{T-1}
    T = np.arange(2, Tmax + 1)
    slack = H[T - 1] - np.log(T) - 1
    assert slack.max() <= -0.4228 + 1e-4
    assert slack.max() == pytest.approx(-0.4228, abs=1e-4)
    for p in (0.001, 0.02, 0.1, 0.5, 0.99, 1.0):
        for K in (1, 2, 10, 50, 1000):
            for Tv in (2, 3, 10, 100, 10**4):
                ts = np.arange(1, Tv)
                env = get("round_envelope").evaluate(p=p, K=K, t=ts)
                total = (1.0 + env.sum()) / Tv  # t = 0 contributes <= 1 (B.6.7)
                form = (
                    min(K, Tv) + (Tv - 1) * (1 - p) ** (2 * K) + 2 * K * (1 - p) * H[Tv - 1]
                ) / Tv
                assert total == pytest.approx(form, rel=1e-9)
                refined = get("average_refined").evaluate(p=p, K=K, T=Tv)
                assert form <= refined * (1 + 1e-12)
                assert refined <= get("average").evaluate(p=p, K=K, T=Tv) * (1 + 1e-12)
    gap = get("average").expr - get("average_refined").expr
    assert sp.simplify(gap - 2 * bK * bp * (sp.log(bT) + 1) / bT) == 0


def test_theorem3_hidden_constant():
    """(B.6.9) <= (3/ln 2 + 2) K ln T/T + (1-p)^(2K) for T >= 2 (the O's constant, §3.1.7)."""
    c = 3 / math.log(2) + 2
    assert c == pytest.approx(6.33, abs=5e-3)
    T = np.arange(2, 5000)[:, None]
    K = np.array([1, 3, 50])[None, :]
    avg = get("average").evaluate(p=0.2, K=K, T=T)
    terms = get("theorem3").evaluate_terms(p=0.2, K=K, T=T)
    assert np.all(avg <= c * terms["variance"] + terms["bias"] + 1e-12)


# ----------------------------------------------------------------------------- F6: simulation
def test_weight_error_simulation_vs_b69_and_spec_table():
    """F6: simulated W (one client, T = 2000) vs (B.6.9) and the spec's simulated values."""
    rng = np.random.default_rng(6)
    # (p, K, expected simulated W from the spec: value or ratio x bound)
    cases = [
        (0.02, 1, 0.9604, None),
        (0.02, 5, 0.8174, None),
        (0.02, 20, 0.4510, None),
        (0.02, 50, 0.1576, None),
        (0.1, 5, None, 0.888),
        (0.3, 5, None, 0.424),
        (0.3, 20, None, 0.046),
        (0.7, 5, None, 0.035),
    ]
    n_rep, T = 400, 2000
    p = np.repeat([c[0] for c in cases], n_rep)
    K = np.repeat([c[1] for c in cases], n_rep)
    om, _ = alg2(rng.random((p.size, T)) < p[:, None], K)
    per_rep = ((p[:, None] * om - 1) ** 2).mean(axis=1).reshape(len(cases), n_rep)
    for (pc, Kc, sim, ratio), w in zip(cases, per_rep):
        bound = get("average").evaluate(p=pc, K=Kc, T=T)
        mean, se = w.mean(), w.std(ddof=1) / math.sqrt(n_rep)
        assert mean + 4 * se <= bound, (pc, Kc)  # the bound holds (F6)
        want = sim if sim is not None else ratio * bound
        tol = 4 * se + (5e-5 if sim is not None else 5e-4 * bound) + 1e-12
        assert abs(mean - want) <= tol, (pc, Kc, mean, want)


def test_per_round_envelope_and_bias_floor_monte_carlo():
    """§7 item 10: per-round E(p omega_t - 1)^2 <= (B.6.8) for t >= K (upper 5-SE band), and
    late rounds approach the bias floor (1-p)^(2K)."""
    rng = np.random.default_rng(10)
    n_rep, T = 4000, 600
    for p, K in [(0.05, 10), (0.3, 3), (0.5, 2)]:
        om, _ = alg2(rng.random((n_rep, T)) < p, K)
        err = (p * om - 1) ** 2
        mse, se = err.mean(0), err.std(0, ddof=1) / math.sqrt(n_rep)
        t = np.arange(K, T)
        assert np.all(mse[K:] - 5 * se[K:] <= get("round").evaluate(p=p, K=K, t=t))
        floor = get("interval_bias").evaluate(p=p, K=K)
        late = mse[-100:].mean()
        assert floor - 4 * se[-100:].max() <= late <= get("round").evaluate(p=p, K=K, t=T - 100)
    # and the (B.6.9) bound itself tends to the bias floor as T -> inf
    assert sp.limit(get("average").expr, bT, sp.oo) == get("interval_bias").expr


# ----------------------------------------------------------------------------- F5 (erratum)
def test_erratum_fedau_f5_estimator_biased_low():
    """FedAU-F5: E[omega_t | M_t >= 1] is far below E[S] for small t (spec: p = .1, K = 50)."""
    rng = np.random.default_rng(5)
    p, K = 0.1, 50
    om, cnt = alg2(rng.random((20000, 21)) < p, K)
    ES = get("interval_mean").evaluate(p=p, K=K)
    spec = {1: 1.000, 2: 1.467, 5: 2.781, 10: 4.622, 20: 7.204}
    for t, want in spec.items():
        sel = cnt[:, t] >= 1
        w = om[sel, t]
        se = w.std() / math.sqrt(sel.sum()) + 1e-12
        assert abs(w.mean() - want) <= 4 * se + 5e-4, (t, w.mean())
        assert w.mean() < ES - 20 * se  # biased low: step (a) is false
    # yet the stated per-round bound (B.6.8) holds at these rounds (t >= K not required here:
    # the (B.6.7)/(B.6.8) envelope covers t < K)
    err = ((p * om - 1) ** 2).mean(0)
    assert np.all(err[1:] <= get("round_envelope").evaluate(p=p, K=K, t=np.arange(1, 21)))


# ----------------------------------------------------------------------------- F7 / Lemma B.7.1
def test_lemma_b71_bias_term_and_explicit_form():
    """§7 item 21: (1-p)^(2 log_c T) = 1/T exactly; lemma_b71 = (B.6.9) at K = log_c T."""
    Kc = get("cutoff_cor4").expr
    assert sp.simplify((1 - bp) ** (2 * Kc) - 1 / bT) == 0
    at_K = get("average").expr.subs(bK, Kc)
    assert sp.simplify(sp.expand_log(at_K - get("lemma_b71").expr, force=True)) == 0
    # the integer version: K = ceil(log_c T) <= R ln T + 1 and (1-p)^(2K) <= 1/T
    for p in (0.02, 0.1, 0.3, 0.5, 0.9):
        for T in (2, 10, 2000, 10**5):
            Kc_val = get("cutoff_cor4").evaluate(p=p, T=T)
            Ki = math.ceil(Kc_val)
            assert (1 - p) ** (2 * Ki) <= 1 / T * (1 + 1e-12)
            w = get("average").evaluate(p=p, K=Ki, T=T) - (1 - p) ** (2 * Ki) + 1 / T
            assert get("lemma_b71_ceil").evaluate(p=p, T=T) == pytest.approx(w, rel=1e-12)


def test_erratum_fedau_f7_lemma_b71():
    """FedAU-F7: K = log_c T is not an integer (p = .02, T = 2000: 188.1, R = 24.75, the cutoff
    must be 189), and the proof's bound is not O(R log^2 T/T) as R -> 0 (p_min -> 1)."""
    from boundlab.weight_error import R_OF_P as R_of

    assert float(R_of.subs(bp, 0.02)) == pytest.approx(24.75, abs=5e-3)
    assert float(R_of.subs(bp, 0.5)) == pytest.approx(0.72, abs=5e-3)
    assert float(R_of.subs(bp, 0.9)) == pytest.approx(0.22, abs=5e-3)
    Kc = get("cutoff_cor4").evaluate(p=0.02, T=2000)
    assert Kc == pytest.approx(188.1, abs=0.05) and math.ceil(Kc) == 189
    assert 0.98 ** (2 * 188) > 1 / 2000 >= 0.98 ** (2 * 189)  # floor(K) would miss 1/T
    # R >= 1 iff p <= 1 - e^(-1/2) (§7 item 23)
    p_star = 1 - math.exp(-0.5)
    assert float(R_of.subs(bp, p_star)) == pytest.approx(1.0)
    # proof's bound / (R log^2 T / T) is unbounded as p -> 1 at fixed T: no uniform O-constant
    T = 100
    ratios = [
        get("lemma_b71").evaluate(p=p, T=T) / get("lemma_b71.printed").evaluate(p=p, T=T)
        for p in (0.5, 0.99, 1 - 1e-6, 1 - 1e-12)
    ]
    assert all(b > a for a, b in itertools.pairwise(ratios))
    ratio = sp.simplify(get("lemma_b71").expr / get("lemma_b71.printed").expr)
    assert sp.simplify(ratio - (2 + 3 / sp.log(bT) + 1 / (R_of * sp.log(bT) ** 2))) == 0
    assert sp.limit(ratio.subs(bT, 100), bp, 1, "-") == sp.oo
    # the corrected order form (1 + R) log^2 T / T dominates the explicit bound uniformly
    for p in (0.001, 0.5, 0.99, 1 - 1e-12):
        for Tv in (3, 100, 10**6):
            lhs = get("lemma_b71").evaluate(p=p, T=Tv)
            Rv = float(R_of.subs(bp, p))
            assert lhs <= 6 * (1 + Rv) * math.log(Tv) ** 2 / Tv


def test_cutoff_examples_from_spec():
    """§7 item 9: K* vs log_c T at T = 2000 (p = .1: 14.9 vs 36.1; p = .02: 36.9 vs 188.1)."""
    for p, kstar, kcor in [(0.1, 14.9, 36.1), (0.02, 36.9, 188.1)]:
        assert get("cutoff_opt").evaluate(p=p, T=2000) == pytest.approx(kstar, abs=0.05)
        assert get("cutoff_cor4").evaluate(p=p, T=2000) == pytest.approx(kcor, abs=0.05)


def test_cutoff_opt_is_the_minimizer_of_b69():
    """d/dK of (B.6.9) vanishes at K* (when K* > 1), and the bound is convex in K."""
    lam = -2 * sp.log(1 - bp)
    inner = sp.log(lam * bT / (3 + 2 * sp.log(bT))) / lam
    K = sp.Symbol("Kr", positive=True)
    avg = get("average").expr.subs(bK, K)
    d1 = sp.diff(avg, K).subs(K, inner)
    assert sp.simplify(sp.expand_log(sp.expand_power_exp(d1), force=True)) == 0
    assert sp.simplify(sp.diff(avg, K, 2) - lam**2 * (1 - bp) ** (2 * K)) == 0


# ----------------------------------------------------------------------------- F8 (erratum)
def test_erratum_fedau_f8_b44_constant():
    """FedAU-F8: Theorem B.4.1 from Lemma B.3.3 (transcribed from the spec) with phi_n =
    omega_n p_n/P: the first term is 8 H/(gamma eta~ I T), not 4."""
    g, et, I, L, sig, dt, N, T, H, Pq, Q = (
        sp.Symbol(n, positive=True)
        for n in ["g", "et", "I", "L", "sig", "dt", "N", "T", "H", "P", "Q"]
    )
    spa2 = sp.Symbol("spa2", positive=True)  # sum_n p_n alpha~_n^2
    # Lemma B.3.3 with the weight-error sum zero (p_n alpha~_n/N = phi_n), per round:
    #   E h_{t+1} <= h_t + A1 + A2 + g et I [15 L^2 I^2 g^2 + 27 g et L I spa2/(16 N^2) - 1/4] G2
    A1 = R(5, 2) * g**3 * et * L**2 * I**2 * (sig**2 + 6 * I * dt**2)
    A2 = g**2 * et**2 * L * I / (2 * N**2) * (R(17, 16) * sig**2 + R(27, 8) * I * dt**2) * spa2
    # requirement: 15 L^2 I^2 g^2 + 27 g et L I spa2/(16 N^2) <= 1/8 => bracket <= -1/8
    coeff = 1 / (R(1, 4) - R(1, 8))
    assert coeff == 8
    drift, noise = sp.expand(coeff * A1 / (g * et * I)), sp.expand(coeff * A2 / (g * et * I))
    assert sp.simplify(drift - 20 * I * L**2 * g**2 * (sig**2 + 6 * I * dt**2)) == 0
    assert sp.simplify(noise - L * et * g * (54 * I * dt**2 + 17 * sig**2) * spa2 / (4 * N**2)) == 0
    # telescoping sum_{t<T} (h_t - h_{t+1}) = h_0 - h_T <= H
    h = sp.Function("h")
    tt = sp.Symbol("tt", integer=True)
    tele = sp.summation(h(tt) - h(tt + 1), (tt, 0, T - 1))
    assert sp.simplify(tele - (h(0) - h(T))) == 0
    derived = coeff * H / (g * et * I * T) + drift + noise
    # catalogue, written with eta~ = eta P/N, sum_n p_n alpha~_n^2 = N^3 Q/P^2, deltat = dt
    b = get("theorem_b41")
    eta = sp.Symbol("eta", positive=True)
    cat = b.expr.xreplace(
        {
            b.params["gamma"].symbol: g,
            b.params["eta"].symbol: eta,
            b.params["I"].symbol: I,
            b.params["L"].symbol: L,
            b.params["sigma"].symbol: sig,
            b.params["deltat"].symbol: dt,
            b.params["N"].symbol: N,
            b.params["T"].symbol: T,
            b.params["H"].symbol: H,
            b.params["P"].symbol: Pq,
            b.params["Q"].symbol: Q,
        }
    )
    want = derived.subs({et: eta * Pq / N, spa2: N**3 * Q / Pq**2})
    assert sp.simplify(cat - want) == 0
    printed = get("theorem_b41.printed").expr
    diff = sp.simplify(b.expr - printed)
    assert (
        sp.simplify(
            diff
            - 4
            * b.params["H"].symbol
            * b.params["N"].symbol
            / (
                b.params["gamma"].symbol
                * b.params["eta"].symbol
                * b.params["P"].symbol
                * b.params["I"].symbol
                * b.params["T"].symbol
            )
        )
        == 0
    )


# ----------------------------------------------------------------------------- Theorem 2
def _b51_transcribed():
    """Lemma B.5.1 from the spec (B.3.3 with phi_n = 1/N), in e_t and q_t."""
    s = {
        n: sym(n)
        for n in ["gamma", "eta", "I", "L", "sigma", "delta", "werr_t", "q_t", "N", "grad_norm2"]
    }
    g, et, I, L, sg, d, e, q, N, _g2 = s.values()
    A = (
        R(3, 2) * g * et * I * (15 * L**2 * I * g**2 * sg**2 + R(27, 8) * d**2) * e
        + R(5, 2) * g**3 * et * L**2 * I**2 * (sg**2 + 6 * I * d**2)
        + g**2 * et**2 * L * I / (2 * N) * (R(17, 16) * sg**2 + R(27, 8) * I * d**2) * q
    )
    brk = R(81, 16) * e + 15 * L**2 * I**2 * g**2 + R(27, 16) * g * et * L * I * q / N - R(1, 4)
    return s, A, brk


def test_theorem2_explicit_from_lemma_b51():
    """F10: Theorem 2's explicit constants from Lemma B.5.1 (option 2: 8, 12, 20, 4 with G^2;
    option 1: 16, 24, 40, 8) and the hidden constants of the O-form (6)."""
    s, A, brk = _b51_transcribed()
    g, et, I, L, sg, d, e, q, N, g2 = s.values()
    assert sp.simplify(get("lemma_b51").expr - (A + g * et * I * brk * g2)) == 0
    F, T, W, Q, G, Psi = (sym(n) for n in ("F", "T", "W", "Q", "G", "PsiG"))
    # bracket bounds under the preconditions at gamma = 1/(4 sqrt15 L I), 27 g et L I Q/N = 1
    g_max = 1 / (4 * sp.sqrt(15) * L * I)
    assert sp.simplify((15 * L**2 * I**2 * g**2).subs(g, g_max) - R(1, 16)) == 0
    assert (
        sp.simplify(
            (R(27, 16) * g * et * L * I * Q / N).subs(et, N / (27 * L * I * Q * g)) - R(1, 16)
        )
        == 0
    )
    # option 2: bracket without the 81 e/16 part <= -1/8, weight term bounded with G^2
    opt2 = 8 * F / (g * et * I * T) + 8 * A.subs({e: W, q: Q}) / (g * et * I) + R(81, 2) * W * G**2
    assert sp.simplify(get("theorem2_opt2").expr - opt2) == 0
    # option 1: e <= 1/81 makes the whole bracket <= 81/16/81 + 1/16 + 1/16 - 1/4 = -1/16
    assert R(81, 16) * R(1, 81) + R(1, 16) + R(1, 16) - R(1, 4) == R(-1, 16)
    opt1 = 16 * F / (g * et * I * T) + 16 * A.subs({e: W, q: Q}) / (g * et * I)
    assert sp.simplify(get("theorem2_explicit").expr.subs(Psi, 0) - opt1) == 0
    assert sp.simplify(get("theorem2_explicit").expr.subs(Psi, G**2) - 2 * opt2) == 0
    # hidden constants of (6), option 2 (spec table)
    coeffs = sp.expand(opt2).as_coefficients_dict()
    table = {
        F / (g * et * I * T): 8,
        G**2 * W: R(81, 2),
        d**2 * W: R(81, 2),
        g**2 * L**2 * I * sg**2 * W: 180,
        g * et * L * Q * sg**2 / N: R(17, 4),
        g * et * L * Q * I * d**2 / N: R(27, 2),
        g**2 * L**2 * I * sg**2: 20,
        g**2 * L**2 * I**2 * d**2: 120,
    }
    for mono, c in table.items():
        assert coeffs[sp.expand(mono)] == c, mono
    assert len(coeffs) == len(table)


def test_corollary4_explicit_from_theorem2():
    """F11: Corollary 4's steps in Theorem 2 give the explicit corollary (grid check), with the
    first branch identities checked symbolically."""
    F, L, Q, I, d, sg, N, T = (sym(n) for n in ("F", "L", "Q", "I", "delta", "sigma", "N", "T"))
    ids = I * d**2 + sg**2
    ge = sp.sqrt(F * N / (Q * ids * L * I * T))
    assert sp.simplify(F / (ge * I * T) - ge * L * Q * ids / N) == 0
    assert sp.simplify(F / (ge * I * T) - sp.sqrt(F * L * Q * ids / (N * I * T))) == 0
    g1 = 1 / (L * I * sp.sqrt(T))
    assert sp.simplify(g1**2 * L**2 * I * ids - ids / (I * T)) == 0
    rng = np.random.default_rng(11)
    t2, c4 = get("theorem2_explicit"), get("corollary4_explicit")
    for _ in range(300):
        v = {
            "F": rng.uniform(0.01, 10),
            "L": rng.uniform(0.1, 10),
            "Q": rng.uniform(0.5, 50),
            "I": int(rng.integers(1, 20)),
            "delta": rng.uniform(0, 3),
            "sigma": rng.uniform(0, 3),
            "N": int(rng.integers(1, 300)),
            "T": int(rng.integers(2, 10**5)),
            "W": rng.uniform(0, 1),
            "PsiG": rng.uniform(0, 5),
        }
        gam = min(
            1 / (v["L"] * v["I"] * math.sqrt(v["T"])), 1 / (4 * math.sqrt(15) * v["L"] * v["I"])
        )
        ids_v = v["I"] * v["delta"] ** 2 + v["sigma"] ** 2
        branch1 = (
            math.sqrt(v["F"] * v["N"] / (v["Q"] * ids_v * v["L"] * v["I"] * v["T"]))
            if ids_v > 0
            else math.inf
        )
        gev = min(branch1, 1 / (2 * v["L"] * v["I"]), v["N"] / (27 * v["L"] * v["I"] * v["Q"]))
        assert t2.violated_preconditions(gamma=gam, eta=gev / gam, **v) == []
        assert c4.violated_preconditions(gamma=gam, eta=gev / gam, **v) == []
        assert t2.evaluate(gamma=gam, eta=gev / gam, **v) <= c4.evaluate(**v) * (1 + 1e-12)


def test_gamma_branch_switch_at_T_240():
    """§7 item 24: 1/(L I sqrt T) <= 1/(4 sqrt 15 L I) iff T >= 240 (Corollary 4's gamma)."""
    T = np.arange(1, 1000)
    first_active = 1 / np.sqrt(T) <= 1 / (4 * math.sqrt(15)) * (1 + 1e-12)
    assert T[first_active].min() == 240 and first_active[239:].all()


def test_f10_constant_arithmetic():
    """F10: the constants used in Lemmas B.3.2-B.3.3 and the proof of Theorem 2."""
    L, I, sg = sp.symbols("L I sigma", positive=True)
    g = 1 / (4 * sp.sqrt(15) * L * I)
    assert sp.simplify(L**2 * I**2 * g**2 - R(1, 240)) == 0
    assert sp.simplify(90 * L**2 * I**2 * g**2 + 3 - R(27, 8)) == 0
    assert sp.simplify(15 * L**2 * I * g**2 * sg**2 - sg**2 / (16 * I)) == 0
    assert R(3, 2) * R(27, 8) == R(81, 16)
    assert 8 * R(81, 16) == 12 * R(27, 8) and 16 * R(3, 2) == 24
    g30 = 1 / (sp.sqrt(30) * L * I)
    assert sp.simplify(6 * I * L**2 * g30**2 - 1 / (5 * I)) == 0
    # Lemma B.3.2: (sqrt(3) e - 1)(I - 1/2) <= 5 I, sqrt(3) e - 1 = 3.708
    assert math.sqrt(3) * math.e - 1 == pytest.approx(3.708, abs=1e-3)
    assert all((math.sqrt(3) * math.e - 1) * (i - 0.5) <= 5 * i for i in range(1, 1000))


# ----------------------------------------------------------------------------- F12 (erratum)
def test_erratum_fedau_f12_section5_numbers():
    """FedAU-F12: sigma' = sqrt(T p (1-p)) = 14 (T = 10^4, p = .02); '0.0196' is p(1-p)."""
    T, p = 10**4, 0.02
    sig = math.sqrt(T * p * (1 - p))
    mu = T * p
    assert sig == pytest.approx(14.0)
    assert p * (1 - p) == pytest.approx(0.0196) and sig != pytest.approx(0.0196)
    assert T / (mu + 2 * sig) == pytest.approx(43.86, abs=5e-3)
    assert T / (mu - 2 * sig) == pytest.approx(58.14, abs=5e-3)


def test_spec_bound_values_b69():
    """(B.6.9) at the F6 table points: bound = simulated / ratio as quoted by the spec."""
    for p, K, sim, ratio in [
        (0.02, 1, 0.9604, 0.991),
        (0.02, 5, 0.8174, 0.948),
        (0.02, 20, 0.4510, 0.718),
        (0.02, 50, 0.1576, 0.268),
        (0.02, 200, 0.1150, 0.063),
    ]:
        b = get("average").evaluate(p=p, K=K, T=2000)
        assert sim / b == pytest.approx(ratio, abs=6e-4)
