"""Property tests of the contraction family (spec seeds-002-003 §7.2, items 34-54).

Items 27-33 (similarity graph, Lemma M1 on iterates, beta = 1 / alpha = 0 algorithm identities)
concern the algorithms and belong to the tests of ``toys``; Lemma M1 is also demonstrated in
``tests/derivations/test_contraction.py::test_erratum_bc_b2_lemma_m1_hidden_assumptions``.
Domains: 0 < mu <= L, beta in (0, 1), alpha >= 0, integers E, T >= 1. Item 45 fails for the
corrected Theorem 2 (finding BC-P45): the test asserts the failure.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import boundlab

FAST = settings(max_examples=40, deadline=None)


def get(name):
    return boundlab.get(f"contraction.{name}")


def S(b, name):
    return get(b).params[name].symbol


L_ = st.floats(0.1, 10)
ratio = st.floats(1e-3, 1.0)  # mu / L
beta_ = st.floats(0.01, 0.99)
alpha_ = st.floats(0.0, 20.0)
E_ = st.integers(1, 100)
T_ = st.integers(1, 10**6)
pos = st.floats(0.01, 10)


def consts(draw_L, r):
    return draw_L, r * draw_L


# ----------------------------------------------------------------------------- items 34-37
def test_p34_p36_factor_derivatives():
    b, m, L = S("beta_factor", "beta"), S("beta_factor", "mu"), S("beta_factor", "L")
    assert sp.simplify(sp.diff(get("beta_factor").expr, b) - m / (L * (b + 2) ** 2)) == 0
    a, m2, L2 = (S("fedprox_factor", n) for n in ("alpha", "mu", "L"))
    c_fp = get("fedprox_factor").expr
    assert sp.simplify(sp.diff(c_fp, a) - m2 / (3 * (L2 + a) ** 2)) == 0
    assert sp.limit(c_fp, a, sp.oo) == 1
    assert sp.simplify(c_fp.subs(a, 0) - get("fedavg_factor").expr) == 0
    assert sp.simplify(get("beta_factor").expr.subs(b, 1) - get("fedavg_factor").expr) == 0


@FAST
@given(L=L_, r=ratio, b1=beta_, b2=beta_, a1=alpha_, a2=alpha_)
def test_p34_to_p37_contraction_factors(L, r, b1, b2, a1, a2):
    mu = r * L
    assume(abs(b1 - b2) > 1e-6 and abs(a1 - a2) > 1e-6)
    cb = get("beta_factor")
    cf = get("fedprox_factor")
    c_avg = get("fedavg_factor").evaluate(mu=mu, L=L)
    lo, hi = sorted((b1, b2))
    assert cb.evaluate(mu=mu, L=L, beta=lo) < cb.evaluate(mu=mu, L=L, beta=hi)  # 34
    for b in (b1, b2):
        v = cb.evaluate(mu=mu, L=L, beta=b)
        assert 1 - mu / (2 * L) <= v < c_avg  # 35
        assert c_avg - v == pytest.approx(
            mu * (1 - b) / (3 * L * (b + 2)), rel=1e-9, abs=1e-15
        )  # 37
    lo, hi = sorted((a1, a2))
    assert cf.evaluate(mu=mu, L=L, alpha=lo) < cf.evaluate(mu=mu, L=L, alpha=hi)  # 36
    for a in (a1, a2):
        v = cf.evaluate(mu=mu, L=L, alpha=a)
        assert c_avg <= v + 1e-15 and v < 1 and v >= 0.5  # 37 (alpha = 0: a float tie)
    assert cb.evaluate(mu=mu, L=L, beta=b1) >= 0.5


# ----------------------------------------------------------------------------- items 38-39
@FAST
@given(L=L_, r=ratio, b1=beta_, b2=beta_, E=E_, shrink=st.floats(0.01, 1.0))
def test_p38_beta_kappa(L, r, b1, b2, E, shrink):
    mu = r * L
    k = get("beta_kappa")
    gam = shrink * min(1 / (2 * L), 1 / (max(b1, b2) * mu))  # Lemma B.3's step condition
    for b in (b1, b2):
        assert k.evaluate(beta=b, mu=mu, gamma=gam, E=E) <= 1 - mu * gam + 1e-12
    assert math.isclose(
        k.evaluate(beta=1.0, mu=mu, gamma=gam, E=E),
        (1 - mu * gam) ** E,
        rel_tol=1e-9,
        abs_tol=1e-12,
    )
    lo, hi = sorted((b1, b2))
    k_lo, k_hi = (
        k.evaluate(beta=lo, mu=mu, gamma=gam, E=E),
        k.evaluate(beta=hi, mu=mu, gamma=gam, E=E),
    )
    if E == 1:
        assert math.isclose(k_lo, k_hi, abs_tol=1e-12)
    else:
        assert k_lo <= k_hi + 1e-12
    g_thm = 1 / (2 * L * E)
    assert k.evaluate(beta=b1, mu=mu, gamma=g_thm, E=E) >= 0.5 - 1e-12  # >= 1 - mu/(2L) >= 1/2


@FAST
@given(L=L_, r=ratio, a1=alpha_, a2=alpha_, E=E_, shrink=st.floats(0.01, 1.0))
def test_p39_fedprox_kappa(L, r, a1, a2, E, shrink):
    mu = r * L
    k = get("fedprox_kappa")
    for a in (a1, a2):
        gam = shrink * min(1 / (2 * L), 1 / (a + mu))  # Lemma A.3's step condition
        assert k.evaluate(alpha=a, mu=mu, gamma=gam, E=E) <= 1 - gam * mu + 1e-12
    lo, hi = sorted((a1, a2))
    k_lo = k.evaluate(alpha=lo, mu=mu, gamma=1 / (2 * E * (L + lo)), E=E)
    k_hi = k.evaluate(alpha=hi, mu=mu, gamma=1 / (2 * E * (L + hi)), E=E)
    assert k_lo <= k_hi + 1e-12


# ----------------------------------------------------------------------------- items 40-43
def _A(x):
    """A(beta) typed from the spec (§3.2 header)."""
    return 4 + (1 - x) ** 2 + 8 * (1 - 1 / x) ** 2


def test_p40_A_beta():
    from boundlab.contraction_lemmas import A_BETA

    b = next(iter(A_BETA.free_symbols))
    assert sp.simplify(A_BETA - _A(b)) == 0
    assert A_BETA.subs(b, 1) == 4
    assert sp.limit(b**2 * A_BETA, b, 0, "+") == 8
    d = sp.factor(sp.diff(A_BETA, b))
    assert sp.simplify(d - 2 * (b - 1) * (b + 2) * (b**2 - 2 * b + 4) / b**3) == 0


@FAST
@given(b1=beta_, b2=beta_)
def test_p40_A_beta_decreasing(b1, b2):
    f = _A  # equal to the catalogue's A(beta): test_p40_A_beta
    assume(abs(b1 - b2) > 1e-6)
    lo, hi = sorted((b1, b2))
    assert f(lo) > f(hi) >= 4


_SC = {
    "L": L_,
    "r": ratio,
    "Delta": pos,
    "S": st.floats(0.01, 1.0),
    "sigma": st.floats(0, 5),
    "Gamma": st.floats(0, 5),
    "E": E_,
    "G": pos,
}


def _floor(bound_id, **v):
    t = get(bound_id).evaluate_terms(t=0, **v)
    return sum(val for k, val in t.items() if k != "init")


@FAST
@given(v=st.fixed_dictionaries(_SC), b1=beta_, b2=beta_)
def test_p41_theorem3_floor_decreasing_in_beta(v, b1, b2):
    v = dict(v)
    v["mu"] = v.pop("r") * v["L"]
    assume(abs(b1 - b2) > 1e-4)
    lo, hi = sorted((b1, b2))
    assert _floor("beta_sc", beta=lo, **v) > _floor("beta_sc", beta=hi, **v)


def test_p41_p42_floor_limits():
    t3, t1 = get("beta_sc"), get("fedprox_sc")
    fl3 = sum(e for k, e in t3.terms.items() if k != "init")
    fl1 = sum(e for k, e in t1.terms.items() if k != "init")
    b, a = S("beta_sc", "beta"), S("fedprox_sc", "alpha")
    mu, L, E, G, Sg, sg, Gm = (
        S("beta_sc", n) for n in ("mu", "L", "E", "G", "S", "sigma", "Gamma")
    )
    lim3 = sp.limit(fl3, b, 1, "-")
    assert (
        sp.simplify(lim3 - (Sg * sg**2 / (4 * mu) + 3 * L * Gm / (2 * mu) + 8 * E**2 * G**2 / mu))
        == 0
    )
    lim1 = sp.limit(fl1, a, 0, "+")
    assert (
        sp.simplify(lim1 - (Sg * sg**2 / (4 * mu) + 3 * L * Gm / (2 * mu) + 2 * E**2 * G**2 / mu))
        == 0
    )
    assert sp.simplify(lim3 - lim1 - 6 * E**2 * G**2 / mu) == 0
    assert sp.limit(fl1, a, sp.oo) == 0


@FAST
@given(v=st.fixed_dictionaries(_SC), a1=alpha_, a2=alpha_, t=st.integers(0, 10**4))
def test_p42_p43_theorem1_floor_and_time_limits(v, a1, a2, t):
    v = dict(v)
    v["mu"] = v.pop("r") * v["L"]
    assume(abs(a1 - a2) > 1e-4)
    lo, hi = sorted((a1, a2))
    assert _floor("fedprox_sc", alpha=lo, **v) > _floor("fedprox_sc", alpha=hi, **v)
    for bid, extra in (
        ("fedprox_sc", {"alpha": a1}),
        ("beta_sc", {"beta": min(0.99, a1 / 20 + 0.01)}),
    ):
        b = get(bid)
        fl = _floor(bid, **extra, **v)
        at0 = b.evaluate(t=0, **extra, **v)
        assert math.isclose(at0, v["L"] * v["Delta"] / v["mu"] + fl, rel_tol=1e-12)
        assert b.evaluate(t=t + 1, **extra, **v) <= b.evaluate(t=t, **extra, **v)
        assert b.evaluate(t=10**9, **extra, **v) == pytest.approx(fl, rel=1e-9)


# ----------------------------------------------------------------------------- items 44-47
_NC = {"L": L_, "Delta": pos, "S": st.floats(0.01, 1.0), "sigma": st.floats(0, 5), "G": pos}


@FAST
@given(v=st.fixed_dictionaries(_NC), b1=beta_, b2=beta_, T=T_, E=E_, Ereal=st.floats(0.01, 1e4))
def test_p44_theorem4(v, b1, b2, T, E, Ereal):
    b = get("beta_nc")
    assume(abs(b1 - b2) > 1e-4)
    lo, hi = sorted((b1, b2))
    assert b.evaluate(beta=lo, T=T, E=E, **v) > b.evaluate(beta=hi, T=T, E=E, **v)
    # r(E_opt) <= r(E) for every real E > 0 (the expression, continuous in E)
    e_opt = get("corollary1_e_opt").evaluate(beta=b1, T=T, **v)
    r_opt = get("corollary1").evaluate(beta=b1, T=T, **v)
    Ac = 4 * v["L"] * v["Delta"] + v["S"] * v["sigma"] ** 2 / 2
    Bc = v["G"] ** 2 * (4 + (1 - b1) ** 2 + 8 * (1 - 1 / b1) ** 2)
    r = Ac / math.sqrt(T * Ereal) + Bc * Ereal / T
    assert r_opt <= r * (1 + 1e-12)
    assert math.isclose(Ac / math.sqrt(T * e_opt) + Bc * e_opt / T, r_opt, rel_tol=1e-9)
    # scaling: E_opt ~ T^(1/3), r(E_opt) ~ T^(-2/3)
    assert math.isclose(
        get("corollary1_e_opt").evaluate(beta=b1, T=8 * T, **v), 2 * e_opt, rel_tol=1e-9
    )
    assert math.isclose(get("corollary1").evaluate(beta=b1, T=8 * T, **v), r_opt / 4, rel_tol=1e-9)


def test_p44_p46_p47_asymptotics_in_T():
    b4 = get("beta_nc")
    T, E = S("beta_nc", "T"), S("beta_nc", "E")
    assert sp.limit(b4.expr, T, sp.oo) == 0
    lead = sp.limit(sp.sqrt(T) * b4.expr, T, sp.oo)
    L, D, Sg, sg = (S("beta_nc", n) for n in ("L", "Delta", "S", "sigma"))
    assert sp.simplify(lead - (4 * L * D / sp.sqrt(E) + Sg * sg**2 / (2 * sp.sqrt(E)))) == 0
    # r(E) strictly convex: r''(E) = (3/4) A_c T^(-1/2) E^(-5/2) with A_c = 4 L Delta + S sigma^2/2
    Er = sp.Symbol("Er", positive=True)
    Ac = 4 * L * D + Sg * sg**2 / 2
    d2 = sp.diff(b4.expr.subs(E, Er), Er, 2)
    assert sp.simplify(d2 - sp.Rational(3, 4) * Ac / sp.sqrt(T) * Er ** sp.Rational(-5, 2)) == 0
    for bid in ("fedprox_nc", "fedprox_nc.printed"):
        b = get(bid)
        Tn = b.params["T"].symbol
        assert sp.limit(b.expr, Tn, sp.oo) == 0  # 46
        assert sp.diff(sp.sqrt(Tn) * b.terms["prox"], Tn) == 0  # 47
        assert sp.simplify(sp.diff(Tn ** sp.Rational(3, 2) * b.terms["prox_drift"], Tn)) == 0


def test_p45_thm2_at_alpha0():
    """Finding BC-P45: §7 item 45 holds for the printed Theorem 2 only; the corrected Theorem 2
    (contraction.fedprox_nc) has 2 S sigma^2/sqrt(TE) at alpha = 0."""
    pr, co = get("fedprox_nc.printed"), get("fedprox_nc")
    a = pr.params["alpha"].symbol
    L, D, Sg, sg, G, E, T = (
        pr.params[n].symbol for n in ("L", "Delta", "S", "sigma", "G", "E", "T")
    )
    stated = 8 * L * D / sp.sqrt(T * E) + Sg * sg**2 / sp.sqrt(T * E) + 2 * E * G**2 / T
    assert sp.simplify(pr.expr.subs(a, 0) - stated) == 0
    assert sp.simplify(co.expr.subs(a, 0) - stated - Sg * sg**2 / sp.sqrt(T * E)) == 0
    one = {"L": 1.0, "Delta": 1.0, "S": 1.0, "sigma": 1.0, "G": 1.0, "E": 1, "T": 1, "alpha": 0.0}
    assert co.evaluate(**one) == 12.0 and pr.evaluate(**one) == 11.0
    # the other half of item 45 holds for both: every alpha-term is >= 0 and vanishes at 0
    for b in (pr, co):
        for k in ("prox", "prox_drift"):
            assert b.terms[k].subs(a, 0) == 0
    from boundlab.errata import get as erratum

    assert erratum("BC-P45").verdict == "FINDING"


# ----------------------------------------------------------------------------- items 48-51
@FAST
@given(L=L_, r=ratio, a=alpha_, b=beta_, E=E_, T=T_)
def test_p48_to_p51_theorem_steps_satisfy_lemma_preconditions(L, r, a, b, E, T):
    mu = r * L
    g48 = 1 / (2 * E * (L + a))
    kw = {"E": E, "G": 1.0}
    assert get("lemma_a1").violated_preconditions(gamma=g48, alpha=a, **kw) == []
    assert get("lemma_a2").violated_preconditions(gamma=g48, alpha=a, **kw) == []
    assert (
        get("lemma_a3").violated_preconditions(
            alpha=a, mu=mu, gamma=g48, E=E, dist_t=1.0, sigma=1.0, S=0.5, L=L, Gamma=0.0, G=1.0
        )
        == []
    )
    g49 = 1 / (2 * (L + a) * math.sqrt(T * E))
    for bid in ("lemma_a4", "lemma_a4.printed"):
        assert (
            get(bid).violated_preconditions(
                gamma=g49, E=E, decrease=0.0, L=L, sigma=1.0, S=0.5, alpha=a, G=1.0
            )
            == []
        ), bid
    g50 = 1 / (2 * L * E)
    assert (
        get("lemma_b3").violated_preconditions(
            beta=b,
            mu=mu,
            gamma=g50,
            gamma_prev=g50,
            E=E,
            dist_t=1.0,
            sigma=1.0,
            S=0.5,
            L=L,
            Gamma=0.0,
            G=1.0,
        )
        == []
    )
    g51 = 1 / (2 * L * math.sqrt(T * E))
    assert (
        get("lemma_b4").violated_preconditions(
            gamma=g51, gamma_prev=g51, E=E, decrease=0.0, L=L, sigma=1.0, S=0.5, G=1.0, beta=b
        )
        == []
    )
    # and the theorems accept their own step sizes
    sc = {
        "t": 0,
        "L": L,
        "mu": mu,
        "Delta": 1.0,
        "S": 0.5,
        "sigma": 1.0,
        "Gamma": 0.0,
        "E": E,
        "G": 1.0,
    }
    assert get("fedprox_sc").violated_preconditions(alpha=a, gamma=g48, **sc) == []
    assert get("beta_sc").violated_preconditions(beta=b, gamma=g50, **sc) == []
    nc = {"T": T, "E": E, "L": L, "Delta": 1.0, "S": 0.5, "sigma": 1.0, "G": 1.0}
    assert get("fedprox_nc").violated_preconditions(alpha=a, gamma=g49, **nc) == []
    assert get("beta_nc").violated_preconditions(beta=b, gamma=g51, **nc) == []


# ----------------------------------------------------------------------------- items 52-54
_CX = {
    "L": L_,
    "Delta": pos,
    "E": E_,
    "S": st.floats(0.01, 1.0),
    "sigma": st.floats(0, 5),
    "G": pos,
}


@FAST
@given(
    v=st.fixed_dictionaries(_CX),
    e1=st.floats(1e-4, 10),
    e2=st.floats(1e-4, 10),
    a=alpha_,
    b1=beta_,
    b2=beta_,
)
def test_p52_p53_complexity_monotone(v, e1, e2, a, b1, b2):
    lo, hi = sorted((e1, e2))
    for bid, extra in (
        ("complexity_fedprox", {"alpha": a}),
        ("t_eps_fedprox", {"alpha": a}),
        ("complexity_beta", {"beta": b1}),
        ("t_eps_beta", {"beta": b1}),
    ):
        b = get(bid)
        assert b.evaluate(eps=hi, **extra, **v) <= b.evaluate(eps=lo, **extra, **v) * (1 + 1e-12)
    blo, bhi = sorted((b1, b2))
    for bid in ("complexity_beta", "t_eps_beta"):
        b = get(bid)
        assert b.evaluate(eps=e1, beta=bhi, **v) <= b.evaluate(eps=e1, beta=blo, **v) * (1 + 1e-12)


def test_p54_fedprox_alpha_terms_vanish_at_zero():
    b = get("complexity_fedprox")
    a = b.params["alpha"].symbol
    assert b.terms["prox"].subs(a, 0) == 0 and b.terms["prox_drift"].subs(a, 0) == 0
    G = b.params["G"].symbol
    assert sp.degree(b.terms["prox"], G) == 4
    assert sp.simplify(b.terms["prox_drift"] / G ** sp.Rational(4, 3)).has(G) is False
