"""Derivation tests of the drift family (seed 004, Dhasade, Kremer, Renard).

Spec ``seeds-000-001-004.md`` §3.12-3.15, errata DKR-1..11, appendix V.3 (D1-D14). Expected
values come from the spec's formulas typed here, exact rationals, or small reference code.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

import boundlab
from boundlab.symbols import sym

R = sp.Rational
D, eta, tau, T, sigma, M, L, zeta = (
    sym(n) for n in ["D", "eta", "tau", "T", "sigma", "M", "L", "zeta"]
)
k, d_k = sym("k"), sym("d_k")


def spec(s: str) -> sp.Expr:
    names = [
        "D",
        "eta",
        "tau",
        "T",
        "sigma",
        "M",
        "L",
        "zeta",
        "k",
        "d_k",
        "dist0",
        "dist_tau",
        "drift_sum",
    ]
    return parse_expr(s, local_dict={n: sym(n) for n in names})


def same(a, b) -> bool:
    return sp.simplify(sp.expand(a - b)) == 0


S_THM = "D**2/(2*eta*tau*T) + eta*sigma**2/M + 4*tau*eta**2*L*sigma**2 + 18*tau**2*eta**2*L*zeta**2"
S_PLATEAU = "18*tau**2*eta**2*L*zeta**2"
S_FINITE = "D**2/(2*eta*tau*T) + 18*tau**2*eta**2*L*zeta**2"
S_PROGRESS = "(dist0 - dist_tau)/(2*eta*tau) + eta*sigma**2/M + L/(M*tau)*drift_sum"
S_DRIFT = "18*tau**2*eta**2*zeta**2 + 4*tau*eta**2*sigma**2"
S_REC = "(1 + 1/tau)*d_k + 10*eta**2*tau*zeta**2 + 2*eta**2*sigma**2"
S_EXACT = "(10*eta**2*tau*zeta**2 + 2*eta**2*sigma**2)*tau*((1 + 1/tau)**k - 1)"


def test_catalogue_drift_matches_spec_strings():
    for bid, s in [
        ("drift.fedavg_convex", S_THM),
        ("drift.plateau", S_PLATEAU),
        ("drift.plateau_finite", S_FINITE),
        ("drift.round_progress", S_PROGRESS),
        ("drift.client_drift", S_DRIFT),
        ("drift.drift_recursion", S_REC),
        ("drift.client_drift_exact", S_EXACT),
    ]:
        assert same(boundlab.get(bid).expr, spec(s)), bid


@pytest.mark.parametrize("bid", [b.id for b in boundlab.catalogue("drift") if b.terms])
def test_drift_terms_add_up(bid):
    b = boundlab.get(bid)
    assert same(sum(b.terms.values()), b.expr)


def test_d1_finite_t_plateau():
    """DKR-1: '18 tau^2 + eta^2 L zeta^2' (printed) vs 18 tau^2 eta^2 L zeta^2."""
    par = {"eta": 0.2, "L": 0.190, "zeta": 0.407}
    fin, fin_p = boundlab.get("drift.plateau_finite"), boundlab.get("drift.plateau_finite.printed")
    assert same(
        fin_p.expr - fin.expr,
        18 * tau**2 + eta**2 * L * zeta**2 - 18 * tau**2 * eta**2 * L * zeta**2,
    )
    for tv, want in [(10, 2.26608), (50, 56.652), (300, 2039.47), (1000, 22660.8)]:
        exact = 18 * tv**2 * 0.2**2 * 0.190 * 0.407**2
        assert exact == pytest.approx(want, rel=1e-5)
        assert boundlab.get("drift.plateau").evaluate(tau=tv, **par) == pytest.approx(exact)
        init = 2.0**2 / (2 * 0.2 * tv * 50)
        assert fin.evaluate(D=2.0, T=50, tau=tv, **par) == pytest.approx(init + exact)
        assert fin_p.evaluate(D=2.0, T=50, tau=tv, **par) == pytest.approx(
            init + 18 * tv**2 + 0.2**2 * 0.190 * 0.407**2
        )
    assert round(18 * 10**2 + 0.2**2 * 0.190 * 0.407**2) == 1800


def _geo_exact(tv: int, kv: int) -> Fraction:
    """sum_{j<k} (1 + 1/tau)^j as an exact rational."""
    a = Fraction(tv + 1, tv)
    return sum((a**j for j in range(kv)), Fraction(0))


def test_d2_geometric_sum_gives_18():
    """DKR-4: sum_{j<k}(1 + 1/tau)^j = tau((1 + 1/tau)^k - 1) <= (e - 1) tau for k <= tau."""
    j = sp.Symbol("j", integer=True, nonnegative=True)
    a = 1 + 1 / tau
    assert same(sp.summation(a**j, (j, 0, k - 1)), tau * (a**k - 1))
    worst = Fraction(0)
    for tv in range(1, 120):
        a_, s, power = Fraction(tv + 1, tv), Fraction(0), Fraction(1)
        for _kv in range(tv + 1):  # s = sum_{j<kv} a^j, power = a^kv
            assert s == tv * (power - 1)
            worst = max(worst, s / tv)
            s, power = s + power, power * a_
    assert float(worst) < math.e - 1  # attained at k = tau, increasing to e - 1
    assert sp.limit((1 + 1 / tau) ** tau - 1, tau, sp.oo) == sp.E - 1
    for tv in (10**3, 10**4, 10**5):
        assert tv * ((1 + 1 / tv) ** tv - 1) / tv < math.e - 1
    c_het, c_noise = 10 * (math.e - 1), 2 * (math.e - 1)
    assert (round(c_het, 2), round(c_noise, 2)) == (17.18, 3.44)
    assert c_het <= 18 and c_noise <= 4
    # the printed factor (k + sum_{t=2}^k (1 + 1/tau)^k) at k = tau does not give 18
    printed = [(tv + (tv - 1) * (1 + 1 / tv) ** tv) / tv for tv in (1, 10, 1000, 10**5)]
    assert max(printed) == pytest.approx(1 + math.e, abs=1e-3)
    assert 10 * max(printed) > 37
    # the (1 - 1/tau)^j variant would give the constants 10 and 2
    assert all(sum((1 - 1 / tv) ** jj for jj in range(tv)) <= tv for tv in range(1, 60))


def test_d2_tau_plus_one_steps_breaks_constant():
    """DKR-11 (and DKR-4): tau + 1 local steps (k in {0..tau}) break the constant at tau = 1."""
    assert _geo_exact(1, 2) / 1 == 3 > math.e - 1
    assert 10 * _geo_exact(1, 2) == 30
    exact, lemma = boundlab.get("drift.client_drift_exact"), boundlab.get("drift.client_drift")
    par = {"eta": 0.1, "zeta": 1.0, "sigma": 0.5}
    assert exact.evaluate(tau=1, k=2, **par) > lemma.evaluate(tau=1, **par)
    assert exact.violated_preconditions(tau=1, k=2, L=1.0, **par) == ["k <= tau"]
    assert exact.evaluate(tau=1, k=1, **par) <= lemma.evaluate(tau=1, **par)


def test_client_drift_exact_below_client_drift():
    """drift.client_drift_exact <= drift.client_drift for 0 <= k <= tau (exact rationals)."""
    ex = sp.lambdify([tau, k, eta, zeta, sigma], boundlab.get("drift.client_drift_exact").expr)
    lem = sp.lambdify([tau, eta, zeta, sigma], boundlab.get("drift.client_drift").expr)
    for tv in list(range(1, 40)) + [100, 300]:
        for kv in range(tv + 1):
            for ev, zv, sv in [
                (Fraction(1, 10), Fraction(1), Fraction(0)),
                (Fraction(1, 3), Fraction(0), Fraction(2)),
                (Fraction(1, 7), Fraction(3, 2), Fraction(5, 4)),
            ]:
                assert ex(tv, kv, ev, zv, sv) <= lem(tv, ev, zv, sv)


def test_unrolled_recursion_is_exact():
    """Iterating drift.drift_recursion from d_0 = 0 gives drift.client_drift_exact exactly."""
    rec = boundlab.get("drift.drift_recursion").expr
    exact = boundlab.get("drift.client_drift_exact").expr
    assert exact.subs(k, 0) == 0
    assert same(rec.subs(d_k, exact) - exact.subs(k, k + 1), 0)
    par = {"eta": 0.05, "tau": 7, "zeta": 0.8, "sigma": 0.3}
    d = 0.0
    for kv in range(1, 8):
        d = boundlab.get("drift.drift_recursion").evaluate(d_k=d, **par)
        assert d == pytest.approx(boundlab.get("drift.client_drift_exact").evaluate(k=kv, **par))


def test_d3_d4_drift_recursion_slips():
    """DKR-2: 6 eta^2 zeta^2 merges into 10 eta^2 tau zeta^2 iff tau >= 1; AM-GM needs squares."""
    assert same(
        sp.factor(4 * eta**2 * tau * zeta**2 + 6 * eta**2 * zeta**2 - 10 * eta**2 * tau * zeta**2),
        -6 * eta**2 * zeta**2 * (tau - 1),
    )
    d = sp.Symbol("d", positive=True)  # ||x_1 - x_2||
    gap = d**2 / (2 * eta * tau) + 2 * eta * tau * zeta**2 - 2 * zeta * d
    assert same(gap, (d - 2 * eta * tau * zeta) ** 2 / (2 * eta * tau))
    # printed (norm not squared): zeta = eta = tau = 1, d = 10: 20 <= 7 is false
    assert (2 * 1 * 10, 10 / 2 + 2) == (20, 7.0)
    # the factor (1 + 1/tau) is 2 eta * 1/(2 eta tau); the constant 2 eta * 2 eta tau zeta^2
    assert same(2 * eta / (2 * eta * tau), 1 / tau)
    assert same(2 * eta * 2 * eta * tau * zeta**2, 4 * eta**2 * tau * zeta**2)


def test_d5_triangle_term_needs_factor_three():
    """DKR-3: ||a + b - c||^2 <= 3(...) (not 1x); zeta bounds differences at one point only."""
    a = np.array([1.0, 0.0])
    b, c = a, -a
    lhs = np.sum((a + b - c) ** 2)
    plain = np.sum(a**2) + np.sum(b**2) + np.sum(c**2)
    assert (lhs, plain, 3 * plain) == (9.0, 3.0, 9.0)
    rng = np.random.default_rng(0)
    v = rng.normal(size=(10_000, 3, 4))
    s = v[:, 0] + v[:, 1] - v[:, 2]
    assert np.all(np.sum(s**2, 1) <= 3 * np.sum(v**2, axis=(1, 2)) + 1e-12)
    # F_1 = F_2 = F = x^2/2: zeta = 0 but ||grad F_1(1) - grad F_2(0)||^2 = 1
    assert (1.0 - 0.0) ** 2 > 0.0


def test_d6_squared_triangle_inequality():
    """DKR-7: (L/2)||a + b||^2 <= (L/2)(||a||^2 + ||b||^2) is false; L(...) is right."""
    a = np.array([1.0, 1.0]) / np.sqrt(2)
    assert (0.5 * np.sum((2 * a) ** 2), 0.5 * 2 * np.sum(a**2)) == pytest.approx((2.0, 1.0))
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, 10_000, 3))
    assert np.all(np.sum((x + y) ** 2, 1) <= 2 * np.sum(x**2, 1) + 2 * np.sum(y**2, 1) + 1e-12)


def test_d7_step_size_conditions():
    """2 eta/L >= 8 eta^2 and L - 1/(4 eta) <= 0 both mean eta <= 1/(4L)."""
    assert sp.solve(sp.Eq(2 * eta / L, 8 * eta**2), eta) == [1 / (4 * L)]
    assert sp.solve(sp.Eq(L - 1 / (2 * eta) + 1 / (4 * eta), 0), eta) == [1 / (4 * L)]
    for bid in ("drift.fedavg_convex", "drift.round_progress", "drift.client_drift"):
        assert [pc.text for pc in boundlab.get(bid).preconditions] == ["eta <= 1/(4*L)"]


def test_d8_young_parameter():
    """DKR-8: lambda = sqrt(2 eta) gives eta and 1/(4 eta); sqrt(2) eta gives eta^2."""
    lam = sp.sqrt(2 * eta)
    assert same(lam**2 / 2, eta) and same(1 / (2 * lam**2), 1 / (4 * eta))
    assert same((sp.sqrt(2) * eta) ** 2 / 2, eta**2)
    assert not same(eta**2, eta)


def test_d9_lemma22_carries_l():
    """DKR-5: the drift term of Lemma 2.2 carries L; with it, Lemmas 2.2 + 2.3 give Thm 2.1."""
    lem = boundlab.get("drift.client_drift").expr
    term = L / (M * tau) * M * (tau - 1) * lem
    assert same(term, 2 * L * eta**2 * (2 * sigma**2 + 9 * tau * zeta**2) * (tau - 1))
    prog = boundlab.get("drift.round_progress").expr
    prog_printed = boundlab.get("drift.round_progress.printed").expr
    drift_sum = sym("drift_sum")
    assert same(prog - prog_printed, (L - 1) * drift_sum / (M * tau))
    # average over T rounds: telescoping dist terms <= D^2/(2 eta tau T), drift_sum <= M(tau-1)lem
    avg = D**2 / (2 * eta * tau * T) + eta * sigma**2 / M + term
    thm = boundlab.get("drift.fedavg_convex").expr
    assert same(thm - avg, L * lem / tau)  # >= 0: Theorem 2.1 is implied
    assert same(thm, spec(S_THM))


def _hetero_quadratics(seed, M=4, d=2, scale=100.0):
    rng = np.random.default_rng(seed)
    A = []
    for _ in range(M):
        Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
        A.append(Q @ np.diag(rng.uniform(0.01, 1.0, d) * scale) @ Q.T)
    return np.array(A), rng.normal(0, 2, (M, d)), int(rng.integers(2, 30))


def _progress_rounds(A, c, eta_, tau_, rounds):
    """Per round: LHS of Lemma 2.2, dist0, dist_tau, drift_sum (full batch, all M clients)."""
    M_ = c.shape[0]
    xstar = np.linalg.solve(A.mean(0), np.einsum("mij,mj->i", A, c) / M_)

    def F(x):
        diff = x[..., None, :] - c
        return 0.5 * np.mean(np.einsum("...mi,mij,...mj->...m", diff, A, diff), axis=-1)

    x, rows = np.full(c.shape[1], 3.0), []
    for _ in range(rounds):
        X = np.tile(x, (M_, 1))
        Xs = [X]
        for _ in range(tau_):
            X = X - eta_ * np.einsum("mij,mj->mi", A, X - c)
            Xs.append(X)
        Xs = np.array(Xs)
        xb = Xs.mean(1)
        rows.append(
            (
                np.mean(F(xb[1:])) - F(xstar),
                np.sum((xb[0] - xstar) ** 2),
                np.sum((xb[-1] - xstar) ** 2),
                np.sum((Xs[1:tau_] - xb[1:tau_, None]) ** 2),
            )
        )
        x = xb[-1]
    return np.array(rows).T


def test_d9_printed_lemma22_fails_on_a_toy():
    """DKR-5 on a run: heterogeneous quadratics with L ~ 100, full batch, eta = 1/(4L)."""
    A, c, tau_ = _hetero_quadratics(288)
    Lv = max(np.linalg.eigvalsh(a).max() for a in A)
    lhs, d0, dt, drift = _progress_rounds(A, c, 1 / (4 * Lv), tau_, 20)
    par = {
        "dist0": d0,
        "dist_tau": dt,
        "eta": 1 / (4 * Lv),
        "tau": tau_,
        "sigma": 0.0,
        "M": 4,
        "drift_sum": drift,
    }
    corrected = boundlab.get("drift.round_progress").evaluate(L=Lv, strict=True, **par)
    printed = boundlab.get("drift.round_progress.printed").evaluate(**par)
    assert np.all(lhs <= corrected)
    assert np.any(lhs > 10 * printed)


def test_d10_limit_is_not_order_one_over_tau_t():
    """DKR-6: for fixed eta the RHS of Theorem 2.1 tends to a positive constant."""
    thm = boundlab.get("drift.fedavg_convex").expr
    lim = sp.limit(thm, T, sp.oo)
    assert same(
        lim,
        eta * sigma**2 / M + 4 * tau * eta**2 * L * sigma**2 + 18 * tau**2 * eta**2 * L * zeta**2,
    )
    assert same(lim.subs(sigma, 0), boundlab.get("drift.plateau").expr)
    assert sp.limit(thm.subs(sigma, 1) * tau * T, T, sp.oo) == sp.oo


def test_d11_polarization_identity():
    """DKR-9: <a,b> = 1/2(|a+b|^2 - |a|^2 - |b|^2); the printed grouping is wrong."""
    a, b = np.array([1.0, 2.0]), np.array([-3.0, 0.5])

    def n2(v):
        return v @ v

    vals = (
        a @ b,
        0.5 * (n2(a + b) - n2(a) - n2(b)),
        0.5 * n2(a + b) - n2(a) - n2(b),
        0.5 * (n2(a) + n2(b) - n2(a - b)),
    )
    assert vals == pytest.approx((-2.0, -2.0, -9.125, -2.0))


def test_d14_toy_step_size():
    """eta = 0.2 <= 1/(4L) for the toy (L = 0.190 reported, 0.201 per client, <= 1/4 for BCE)."""
    assert (round(1 / (4 * 0.19), 3), round(1 / (4 * 0.201), 3)) == (1.316, 1.244)
    thm = boundlab.get("drift.fedavg_convex")
    par = {"D": 3.04, "eta": 0.2, "tau": 10, "T": 50, "sigma": 0.0, "M": 20, "zeta": 0.427}
    for Lv in (0.190, 0.201, 0.25):
        assert thm.violated_preconditions(L=Lv, **par) == []


def test_dkr10_one_step_expansion():
    """DKR-10: ||(x1 - eta g1) - (x2 - eta g2)||^2 needs <g1 - g2, x1 - x2> (two arguments)."""
    rng = np.random.default_rng(3)
    x1, x2, g1, g2 = rng.normal(size=(4, 100, 5))
    e = 0.3
    lhs = np.sum((x1 - e * g1 - (x2 - e * g2)) ** 2, 1)
    rhs = (
        np.sum((x1 - x2) ** 2, 1)
        - 2 * e * np.sum((g1 - g2) * (x1 - x2), 1)
        + e**2 * np.sum((g1 - g2) ** 2, 1)
    )
    assert np.allclose(lhs, rhs)
    # grad F_i = g_i + (grad F_i - g_i) (the printed F_i - g_i mixes a value and a gradient)
    gF = rng.normal(size=5)
    assert np.allclose(g1[0] + (gF - g1[0]), gF)
