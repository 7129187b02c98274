"""Derivation tests of the contraction family (seed 003, Buttaci & Calafiore).

Expected values are re-derived here: the spec's sympy formulas (§3.2) are transcribed with
plain symbols and compared with the catalogue; theorems are rebuilt from the catalogue's
lemmas at each theorem's step size; numbers are quoted from the spec (§4.2 B1-B18, §7);
a small quadratic toy (numpy, fixed seed) checks that Theorems 1 and 3 hold.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import boundlab

R = sp.Rational
al, be, mu, L, E, T, G, S, sg, Gam, Dl, g, gp, t, eps = sp.symbols(
    "alpha beta mu L E T G S sigma Gamma Delta gamma gamma_prev t epsilon", positive=True
)
La = L + al
Ab = 4 + (1 - be) ** 2 + 8 * (1 - 1 / be) ** 2


def get(name):
    return boundlab.get(f"contraction.{name}")


def plain(bound):
    """The bound's expression in this file's plain positive symbols (by parameter name)."""
    names = {
        "alpha": al,
        "beta": be,
        "mu": mu,
        "L": L,
        "E": E,
        "T": T,
        "G": G,
        "S": S,
        "sigma": sg,
        "Gamma": Gam,
        "Delta": Dl,
        "gamma": g,
        "gamma_prev": gp,
        "t": t,
        "eps": eps,
        "dist_t": sp.Symbol("D_t", positive=True),
        "decrease": sp.Symbol("dec", real=True),
    }
    return bound.expr.xreplace({p.symbol: names[n] for n, p in bound.params.items()})


def same(a, b) -> bool:
    return sp.simplify(sp.expand(a - b)) == 0


# ----------------------------------------------------------------------------- spec transcription
SPEC = {
    "fedprox_sc": L * Dl / mu * (1 - mu / (3 * La)) ** t
    + L / La * (S * sg**2 / (4 * mu) + 3 * L * Gam / (2 * mu) + 2 * E**2 * G**2 / mu),
    "beta_sc": L * Dl / mu * (1 - mu / ((be + 2) * L)) ** t
    + S * sg**2 / (4 * mu)
    + 3 * L * Gam / (2 * mu)
    + 2 * Ab * E**2 * G**2 / mu
    + be * (1 - be) * E * G**2 / (8 * L),
    "fedprox_nc.printed": (
        8 * La * Dl / sp.sqrt(E) + L * S * sg**2 / (La * sp.sqrt(E)) + al * E ** R(3, 2) * G**2 / La
    )
    / sp.sqrt(T)
    + 2 * L**2 * E * G**2 / (La**2 * T)
    + al**2 * L * sp.sqrt(E) * G**2 / (16 * La**3 * T ** R(3, 2)),
    "fedprox_nc": (
        8 * La * Dl / sp.sqrt(E)
        + 2 * L * S * sg**2 / (La * sp.sqrt(E))
        + al * E ** R(3, 2) * G**2 / La
    )
    / sp.sqrt(T)
    + 2 * L**2 * E * G**2 / (La**2 * T)
    + al**2 * L * sp.sqrt(E) * G**2 / (2 * La**3 * T ** R(3, 2)),
    "beta_nc": (4 * L * Dl / sp.sqrt(E) + S * sg**2 / (2 * sp.sqrt(E))) / sp.sqrt(T)
    + E * G**2 * Ab / T,
    "fedavg_factor": 1 - mu / (3 * L),
    "fedprox_factor": 1 - mu / (3 * (al + L)),
    "beta_factor": 1 - mu / ((be + 2) * L),
    "fedprox_kappa": (al + mu * (1 - g * (al + mu)) ** E) / (al + mu),
    "beta_kappa": 1 - 1 / be + (1 / be) * (1 - be * mu * g) ** E,
    "lemma_a1": g**2 * E**2 * G**2,
    "lemma_a2": 4 * g**2 * E**2 * G**2,
    "lemma_b1": 4 * gp**2 * E**2 * G**2,
    "lemma_b2": 4 * g**2 * E**2 * G**2 * (4 + (1 - be) ** 2 + 8 * gp**2 / g**2 * (1 - 1 / be) ** 2),
    "complexity_fedprox": 64 * La**2 * Dl**2 / (E * eps**2)
    + L**2 * S**2 * sg**4 / (La**2 * E * eps**2)
    + al**2 * E**3 * G**4 / (La**2 * eps**2)
    + 2 * L**2 * E * G**2 / (La**2 * eps)
    + al ** R(4, 3)
    * L ** R(2, 3)
    * E ** R(1, 3)
    * G ** R(4, 3)
    / (16 ** R(2, 3) * La**2 * eps ** R(2, 3)),
    "complexity_beta": 16 * L**2 * Dl**2 / (E * eps**2)
    + S**2 * sg**4 / (4 * E * eps**2)
    + E * G**2 / eps * Ab,
}
A_FP = g**2 * E * sg**2 * S + 6 * g**2 * L * E * Gam + 8 * g**2 * E**3 * G**2
A_B = (
    8 * g**2 * E**3 * G**2 * (4 + (1 - be) ** 2 + 8 * gp**2 * (1 - be) ** 2 / (g**2 * be**2))
    + mu * g**3 * be * (1 - be) * E**3 * G**2
    + g**2 * E * S * sg**2
    + 6 * g**2 * L * E * Gam
)
A_A4 = {
    "printed": 2 * g * L * sg**2 * S
    + 2 * g * al * E**2 * G**2
    + 8 * g**2 * L**2 * E**2 * G**2
    + g**3 * al**2 * L * E**2 * G**2 / 2,
    "corrected": 4 * g * L * sg**2 * S
    + 2 * g * al * E**2 * G**2
    + 8 * g**2 * L**2 * E**2 * G**2
    + 4 * g**3 * al**2 * L * E**2 * G**2,
}
A_B4 = g * L * sg**2 * S + 4 * g**2 * L**2 * E**2 * G**2 * (
    4 + (1 - be) ** 2 + 8 * gp**2 / g**2 * (1 - 1 / be) ** 2
)
Dt, dec = sp.Symbol("D_t", positive=True), sp.Symbol("dec", real=True)


@pytest.mark.parametrize("name", sorted(SPEC))
def test_catalogue_matches_spec_formulas(name):
    assert same(plain(get(name)), SPEC[name]), name


def test_lemmas_match_spec_formulas():
    assert same(plain(get("lemma_a3")), SPEC["fedprox_kappa"] * Dt + A_FP)
    assert same(plain(get("lemma_b3")), SPEC["beta_kappa"] * Dt + A_B)
    assert same(plain(get("lemma_a4")), 4 / (g * E) * dec + A_A4["corrected"])
    assert same(plain(get("lemma_a4.printed")), 4 / (g * E) * dec + A_A4["printed"])
    assert same(plain(get("lemma_b4")), 2 / (g * E) * dec + A_B4)


# ----------------------------------------------------------------------------- B1, B4, B5, B6
def test_b1_perturbed_iterate_closed_form():
    """B1: the stationarity condition of (4) gives w~ = beta w_k + (1-beta) u (3 neighbours)."""
    w, wk = sp.symbols("w w_k", real=True)
    pin = sp.symbols("p1:4", positive=True)
    wn = sp.symbols("w1:4", real=True)
    pi = sum(pin)
    obj = be / 2 * (w - wk) ** 2 + (1 - be) / (2 * pi) * sum(
        a * (w - b) ** 2 for a, b in zip(pin, wn)
    )
    sol = sp.solve(sp.diff(obj, w), w)[0]
    u = sum(a * b for a, b in zip(pin, wn)) / pi
    assert same(sol, be * wk + (1 - be) * u)


def test_b4_fedprox_kappa_chain():
    """B4: kappa(E=1) = 1 - gamma mu; identity (57); kappa <= 1 - gamma mu and <= the factor on
    the spec's grid at gamma = 1/(2E(L+alpha))."""
    kfp = plain(get("fedprox_kappa"))
    assert same(kfp.subs(E, 1), 1 - g * mu)
    x = (al + mu) / (2 * (al + L))
    assert same((al + mu / (1 + x)) / (al + mu), 1 - mu / (3 * al + 2 * L + mu))
    Lv = 1.0
    m = np.array([1e-3, 1e-2, 0.1, 0.5, 1.0])[:, None, None] * Lv
    Ev = np.array([1, 2, 5, 10, 50, 200])[None, :, None]
    a = np.array([1e-3, 1e-2, 0.1, 1.0, 10.0])[None, None, :]
    gam = 1 / (2 * Ev * (Lv + a))
    kap = get("fedprox_kappa").evaluate(alpha=a, mu=m, gamma=gam, E=Ev)
    assert np.all(kap <= 1 - gam * m + 1e-15)
    assert np.all(kap <= get("fedprox_factor").evaluate(mu=m, L=Lv, alpha=a) + 1e-15)


def test_b5_beta_kappa_recursion_and_chain():
    """B5: the recursion D_{k+1} = a D_k + b D_0 (a = 1 - mu gamma beta, b = -mu gamma (1-beta))
    reproduces kappa; (190) -> (191); the chain to 1 - mu/((beta+2)L) at gamma = 1/(2LE)."""
    kb = plain(get("beta_kappa"))
    a, b = 1 - mu * g * be, -mu * g * (1 - be)
    for Ev in range(1, 7):
        D = sp.Integer(1)
        for _ in range(Ev):
            D = a * D + b
        assert same(D, kb.subs(E, Ev))
        assert same(kb.subs(E, Ev), 1 - mu * g * sum((1 - be * mu * g) ** j for j in range(Ev)))
    assert same(kb.subs(E, 1), 1 - g * mu)
    assert same(1 - 1 / be + (1 / be) * 2 * L / (be * mu + 2 * L), 1 - mu / (be * mu + 2 * L))
    # 1 - mu/(beta mu + 2L) <= 1 - mu/((beta + 2) L)  <=>  beta mu <= beta L
    assert same((be + 2) * L - (be * mu + 2 * L), be * (L - mu))


def test_b6_ordering_gaps_and_exact_kappa_order():
    """B6: gaps of (9) and the order of the exact kappas at each theorem's step size; equality
    kappa_beta = kappa_FedAvg at E = 1."""
    c_avg, c_fp, c_b = (plain(get(n)) for n in ("fedavg_factor", "fedprox_factor", "beta_factor"))
    assert same(c_avg - c_b, mu * (1 - be) / (3 * L * (be + 2)))
    assert same(c_fp - c_avg, al * mu / (3 * L * (L + al)))
    rng = np.random.default_rng(6)
    kb, kf = get("beta_kappa"), get("fedprox_kappa")
    n_checked = 0
    for _ in range(225):
        Lv = 1.0
        m, b, a = rng.uniform(1e-3, 1), rng.uniform(0.01, 0.99), rng.uniform(0.01, 5)
        Ev = int(rng.integers(1, 50))
        g_b = 1 / (2 * Lv * Ev)
        k_beta = kb.evaluate(beta=b, mu=m, gamma=g_b, E=Ev)
        k_avg = kf.evaluate(alpha=0.0, mu=m, gamma=g_b, E=Ev)
        k_fp = kf.evaluate(alpha=a, mu=m, gamma=1 / (2 * Ev * (Lv + a)), E=Ev)
        assert k_beta <= k_avg + 1e-13 and k_avg <= k_fp + 1e-13
        if Ev == 1:
            assert k_beta == pytest.approx(k_avg, abs=1e-13)
        n_checked += 1
    assert n_checked == 225


# ------------------------------------------------------------------ B7: lemmas => theorems
def test_b7_strongly_convex_theorems_from_lemmas():
    """B7: Thm 1/3 = (L/2)[(2 Delta/mu) factor^t + A/(gamma mu)] with the lemma's A at the step."""
    a3 = plain(get("lemma_a3"))
    A_cat = a3 - a3.coeff(Dt) * Dt
    g1 = 1 / (2 * E * La)
    floor1 = (L * A_cat / (2 * g * mu)).subs(g, g1)
    thm1 = L / 2 * (2 * Dl / mu) * plain(get("fedprox_factor")) ** t + floor1
    assert same(thm1, plain(get("fedprox_sc")))
    b3 = plain(get("lemma_b3"))
    A_cat = b3 - b3.coeff(Dt) * Dt
    g3 = 1 / (2 * L * E)
    floor3 = (L * A_cat / (2 * g * mu)).subs({gp: g3}).subs(g, g3)
    thm3 = L / 2 * (2 * Dl / mu) * plain(get("beta_factor")) ** t + floor3
    assert same(thm3, plain(get("beta_sc")))
    # the geometric series uses kappa <= 1 - gamma mu: sum_j kappa^j <= 1/(gamma mu)
    k = sp.Symbol("k", integer=True, nonnegative=True)
    kap = 1 - g * mu
    assert same(sp.summation(kap**k, (k, 0, t - 1)), (1 - kap**t) / (g * mu))


def test_b7_nonconvex_theorems_from_lemmas():
    """B7: Thm 2/4 = (1/(TE)) sum_t lemma = c Delta/(gamma E T) + A at the theorem's step."""
    for lemma, thm, step in [
        ("lemma_a4", "fedprox_nc", 1 / (2 * La * sp.sqrt(T * E))),
        ("lemma_a4.printed", "fedprox_nc.printed", 1 / (2 * La * sp.sqrt(T * E))),
        ("lemma_b4", "beta_nc", 1 / (2 * L * sp.sqrt(T * E))),
    ]:
        ex = plain(get(lemma))
        # summing over t telescopes sum_t decrease_t = f(w_0) - f(w_T) <= Delta; divide by T
        avg = ex.subs(dec, Dl / T)
        assert same(avg.subs(gp, g).subs(g, step), plain(get(thm))), thm


def test_b7_lemma_b2_pre_simplification_form():
    """(121) -> (107): (107) - (121) = 16 gp^2 E^2 G^2 ((1-beta)^2 - (1-beta)^4)/beta^2 >= 0."""
    f121 = (
        16 * g**2 * E**2 * G**2
        + 16 * gp**2 * E**2 * G**2 / be**2 * ((1 - be) ** 2 + (1 - be) ** 4)
        + 4 * g**2 * (1 - be) ** 2 * E**2 * G**2
    )
    f107 = plain(get("lemma_b2"))
    assert same(f107 - f121, 16 * gp**2 * E**2 * G**2 * ((1 - be) ** 2 - (1 - be) ** 4) / be**2)
    bb = np.linspace(1e-3, 1, 1000)
    assert np.all((1 - bb) ** 4 <= (1 - bb) ** 2)


# ----------------------------------------------------------------------------- B14, B16
def test_b14_corollary1():
    """B14: E_opt solves r'(E) = 0, r(E_opt) = 3 2^(-2/3) A^(2/3) B^(1/3) T^(-2/3), r'' > 0."""
    r = plain(get("beta_nc"))
    Ac, Bc = 4 * L * Dl + S * sg**2 / 2, G**2 * Ab
    Er = sp.Symbol("Er", positive=True)
    rE = Ac / sp.sqrt(T * Er) + Bc * Er / T
    assert same(r, rE.subs(Er, E))
    e_opt = plain(get("corollary1_e_opt"))
    assert same(sp.diff(rE, Er).subs(Er, e_opt), 0)
    assert same(rE.subs(Er, e_opt), plain(get("corollary1")))
    assert same(
        plain(get("corollary1")), 3 / 2 ** R(2, 3) * Ac ** R(2, 3) * Bc ** R(1, 3) * T ** R(-2, 3)
    )
    d2 = sp.simplify(sp.diff(rE, Er, 2).subs(Er, e_opt))
    assert same(d2, 3 * 2 ** R(2, 3) * Bc ** R(5, 3) / (2 * Ac ** R(2, 3) * T ** R(4, 3)))
    # preconditions: the bound holds only at E = E_opt
    v = {"L": 1.0, "Delta": 2.0, "S": 0.1, "sigma": 1.0, "G": 1.0, "beta": 0.5, "T": 1000}
    eo = get("corollary1_e_opt").evaluate(**v)
    assert get("corollary1").violated_preconditions(**v, E=eo) == []
    assert get("corollary1").violated_preconditions(**v, E=eo * 1.01) == ["E <= E_opt"]


def test_b16_A_beta():
    """B16: A(beta) expanded, derivative factorization, A(1) = 4, beta^2 A -> 8."""
    assert same(Ab, be**2 - 2 * be + 13 - 16 / be + 8 / be**2)
    assert same(sp.diff(Ab, be), 2 * (be - 1) * (be + 2) * (be**2 - 2 * be + 4) / be**3)
    assert Ab.subs(be, 1) == 4
    assert sp.limit(be**2 * Ab, be, 0, "+") == 8
    drift = get("beta_sc").terms["drift"]
    b, Ev, Gv, m = (get("beta_sc").params[n].symbol for n in ("beta", "E", "G", "mu"))
    assert same(drift.subs(b, 1), 8 * Ev**2 * Gv**2 / m)


# ----------------------------------------------------------------------------- B18: quadratic toy
def _toy(E_, beta, alpha, T_=60, seed=0):
    """Deterministic quadratic toy of spec B18 (C = 6, D = 3): returns gaps and constants."""
    rng = np.random.default_rng(seed)
    C, D = 6, 3
    Q = np.linalg.qr(rng.normal(size=(C, D, D)))[0]
    ev = rng.uniform(0.2, 1.0, size=(C, D))
    H = np.einsum("cij,cj,ckj->cik", Q, ev, Q)
    B = rng.normal(scale=2.0, size=(C, D))
    A = rng.uniform(0, 1, size=(C, C))
    A = np.triu(A, 1) + np.triu(A, 1).T
    P = A / A.sum()
    p = P.sum(1)
    Lc, muc = ev.max(), ev.min()

    def f(w):
        d = w - B
        return float(p @ (0.5 * np.einsum("ci,cij,cj->c", d, H, d)))

    Hbar = np.einsum("c,cij->ij", p, H)
    wstar = np.linalg.solve(Hbar, np.einsum("c,cij,cj->i", p, H, B))
    fstar = f(wstar)
    gam = 1 / (2 * E_ * (Lc + alpha)) if beta == 1.0 else 1 / (2 * Lc * E_)
    wbar = np.full(D, 5.0)
    U = np.tile(wbar, (C, 1))
    gaps, G2 = [f(wbar) - fstar], 0.0
    for _ in range(T_):
        W = np.tile(wbar, (C, 1))
        for _k in range(E_):
            Wt = beta * W + (1 - beta) * U
            grad = np.einsum("cij,cj->ci", H, Wt - B)
            G2 = max(G2, float((grad**2).sum(1).max()))
            W = W - gam * (grad + alpha * (W - wbar))
        U = (P @ W) / p[:, None]
        wbar = p @ W
        gaps.append(f(wbar) - fstar)
    consts = {
        "L": Lc,
        "mu": muc,
        "Delta": gaps[0],
        "S": float(p @ p),
        "sigma": 0.0,
        "Gamma": fstar,
        "E": E_,
        "G": math.sqrt(G2),
    }
    return np.array(gaps), consts, gam


@pytest.mark.parametrize("E_", [1, 5])
@pytest.mark.parametrize("beta,alpha", [(1.0, 0.0), (1.0, 0.5), (0.5, 0.0), (0.8, 0.0)])
def test_b18_quadratic_toy_theorems_1_and_3_hold(E_, beta, alpha):
    """B18: on a deterministic quadratic toy, Theorem 1 (beta = 1) / Theorem 3 hold at every
    round with the measured constants (the spec's own toy reports bound/gap >= 24)."""
    gaps, c, gam = _toy(E_, beta, alpha)
    t_ = np.arange(gaps.size)
    if beta == 1.0:
        b = get("fedprox_sc")
        rhs = b.evaluate(t=t_, alpha=alpha, **c)
    else:
        b = get("beta_sc")
        rhs = b.evaluate(t=t_, beta=beta, **c)
    assert (
        b.violated_preconditions(
            **{k: v for k, v in c.items()},
            t=0,
            gamma=gam,
            **({"alpha": alpha} if beta == 1.0 else {"beta": beta}),
        )
        == []
    )
    assert np.all(gaps >= -1e-12)
    assert np.all(gaps <= rhs)
    # loose, as in the spec's toy (there bound/gap >= 24): here at least L/mu at t = 0
    assert rhs[0] / gaps[0] >= c["L"] / c["mu"]


# ----------------------------------------------------------------------------- errata
def test_erratum_bc_b2_lemma_m1_hidden_assumptions():
    """BC-B2: Lemma M1 holds for symmetric A with full participation, fails otherwise."""
    rng = np.random.default_rng(2)
    C, D, beta = 7, 4, 0.6
    Wprev, Wk = rng.normal(size=(C, D)), rng.normal(size=(C, D))

    def lhs_rhs(A):
        P = A / A.sum()
        p = P.sum(1)
        wbar0, wbark = p @ Wprev, p @ Wk
        U = (P @ Wprev) / p[:, None]
        Wt = beta * Wk + (1 - beta) * U
        return p @ Wt, beta * wbark + (1 - beta) * wbar0, p

    A = rng.uniform(size=(C, C))
    A = np.triu(A, 1) + np.triu(A, 1).T
    lhs, rhs, p = lhs_rhs(A)
    assert np.abs(lhs - rhs).max() < 1e-12
    A2 = A.copy()
    A2[0, 1] *= 3
    lhs, rhs, _ = lhs_rhs(A2)
    assert np.abs(lhs - rhs).max() > 1e-3
    part = rng.choice(C, size=4, replace=False)
    assert p[part].sum() < 1 - 1e-3


def test_erratum_bc_b3_principal_component_sign():
    """BC-B3: mis = ||m_i - m_n||^2/4; a sign flip maps mis to 1 - mis; the convention
    m . mean(X) >= 0 makes the message independent of the SVD's sign."""
    rng = np.random.default_rng(3)
    m = rng.normal(size=(5, 8))
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    mis = (1 - m @ m.T) / 2
    d = ((m[:, None, :] - m[None, :, :]) ** 2).sum(-1) / 4
    assert np.abs(mis - d).max() < 1e-12
    m2 = m.copy()
    m2[1] *= -1
    mis2 = (1 - m2 @ m2.T) / 2
    assert mis2[0, 1] == pytest.approx(1 - mis[0, 1])
    assert abs(mis2[0, 1] - mis[0, 1]) > 1e-3
    X = rng.normal(loc=1.0, size=(30, 8))
    v = np.linalg.svd(X, full_matrices=False)[2][0]
    fixed = [s * v if (s * v) @ X.mean(0) >= 0 else -s * v for s in (1, -1)]
    assert np.array_equal(fixed[0], fixed[1])


def test_erratum_bc_b5_float_violations_are_rounding():
    """BC-B5 (refuted): exact rationals give no violation of kappa <= 1 - gamma mu or of
    kappa <= 1 - mu/((beta+2)L) at gamma = 1/(2LE); floats differ from exact only by rounding."""
    kb, fac = get("beta_kappa"), get("beta_factor")
    sb, smu, sg_, sE = (kb.params[n].symbol for n in ("beta", "mu", "gamma", "E"))
    fb, fmu, fL = (fac.params[n].symbol for n in ("beta", "mu", "L"))
    violations = 0
    for b in (Fraction(1, 1000), Fraction(1, 10), Fraction(1, 2), Fraction(9, 10), Fraction(1)):
        for Ev in (1, 2, 5, 20, 100):
            for m in (Fraction(1, 1000), Fraction(1, 10), Fraction(1, 2), Fraction(1)):
                gv = Fraction(1, 2 * Ev)  # L = 1
                rb, rm, rg = (sp.Rational(x.numerator, x.denominator) for x in (b, m, gv))
                kap = kb.expr.xreplace({sb: rb, smu: rm, sg_: rg, sE: Ev})
                bound = fac.expr.xreplace({fb: rb, fmu: rm, fL: 1})
                violations += int(bool(kap > 1 - rg * rm)) + int(bool(kap > bound))
                kf = kb.evaluate(beta=float(b), mu=float(m), gamma=float(gv), E=Ev)
                # the printed form 1 - 1/beta + (1/beta)(...)^E cancels: error ~ E/beta ulps
                rounding = 8 * (Ev + 1) / float(b) * np.finfo(float).eps
                assert abs(kf - float(kap)) <= rounding
                float_excess = kf - fac.evaluate(beta=float(b), mu=float(m), L=1.0)
                assert float_excess <= rounding  # any float 'violation' is rounding
    assert violations == 0


def test_erratum_bc_b8_beta1_vs_alpha0():
    """BC-B8: Thm 3(beta=1) - Thm 1(alpha=0) = 6 E^2 G^2/mu; Thm 4(beta=1) - Thm 2(alpha=0)."""
    d_sc = plain(get("beta_sc")).subs(be, 1) - plain(get("fedprox_sc")).subs(al, 0)
    assert same(d_sc, 6 * E**2 * G**2 / mu)
    assert same(plain(get("beta_factor")).subs(be, 1), plain(get("fedprox_factor")).subs(al, 0))
    d_nc = plain(get("beta_nc")).subs(be, 1) - plain(get("fedprox_nc.printed")).subs(al, 0)
    assert same(d_nc, 2 * E * G**2 / T - (4 * L * Dl + S * sg**2 / 2) / sp.sqrt(T * E))
    d_nc_c = plain(get("beta_nc")).subs(be, 1) - plain(get("fedprox_nc")).subs(al, 0)
    assert same(d_nc_c, 2 * E * G**2 / T - (4 * L * Dl + 3 * S * sg**2 / 2) / sp.sqrt(T * E))
    # Lemma B.2 at beta = 1 is four times Lemma A.2
    assert same(plain(get("lemma_b2")).subs(be, 1), 4 * plain(get("lemma_a2")))


def test_erratum_bc_b9_inequality_76():
    """BC-B9: (76) fails (x = -y: 2.0 vs 0.625); the repaired bound gives corrected Lemma A.4
    and Theorem 2 (coefficient bookkeeping of the proof, both versions)."""
    Lv = gv = av = 1.0
    x = np.array([1.0, 0.0])
    d, s = x, -x  # d = wbar_{t,0} - wbar_{t,k}, s = sum_i p_i g_i
    lhs = Lv / 2 * np.sum((av * gv * d - gv * s) ** 2)
    printed = gv**2 * Lv / 2 * np.sum(s**2) + gv**2 * av**2 * Lv / 8 * np.sum(d**2)
    assert lhs == pytest.approx(2.0) and printed == pytest.approx(0.625)
    rng = np.random.default_rng(9)
    dd, ss = rng.normal(size=(1000, 3)), rng.normal(size=(1000, 3))
    lhs = Lv / 2 * ((av * gv * dd - gv * ss) ** 2).sum(1)
    repaired = gv**2 * Lv * (ss**2).sum(1) + gv**2 * av**2 * Lv * (dd**2).sum(1)
    assert np.all(lhs <= repaired + 1e-12)
    # proof bookkeeping per local step (coefficients of ||sum p grad f_i||^2, ||grad f||^2,
    # ||wbar0 - wbark||^2, noise), then Lemma A.1/A.2 and sum over k times 4/(gamma E)
    for version, c3s, c3d, cnoise in [
        ("corrected", g**2 * L, g**2 * al**2 * L, g**2 * L),
        ("printed", g**2 * L / 2, g**2 * al**2 * L / 8, g**2 * L / 2),
    ]:
        c_sum = -g / 2 + c3s
        c_grad = -g / 2 + al * g**2 / 2
        c_dist = al / 2 + c3d
        if version == "corrected":
            assert same(c_sum, -(g / 2) * (1 - 2 * L * g))  # <= 0 iff gamma <= 1/(2L)
        else:
            assert same(c_sum, -(g / 2) * (1 - L * g))  # <= 0 iff gamma <= 1/L
        assert same(c_grad, -(g / 2) * (1 - al * g))  # <= -gamma/4 iff gamma <= 1/(2 alpha)
        per_step = (
            c_dist * g**2 * E**2 * G**2
            + (g / 2) * 4 * g**2 * L**2 * E**2 * G**2
            + cnoise * sg**2 * S
        )
        A = sp.expand(4 / g * per_step)
        assert same(A, A_A4[version]), version


def test_erratum_bc_b10_lemma_b3_needs_strong_convexity():
    """BC-B10: under Assumptions 1-4 only (f not mu-strongly convex for the mu used), Lemma B.3
    fails: f = eps w^2/2, eps = 0.01 << mu = 1, one client, one step, t = 0."""
    eps_, mu_, gam, beta, w0 = 0.01, 1.0, 0.1, 0.5, 1.0
    w1 = w0 - gam * eps_ * w0  # u_0 = wbar_{0,0}, so w~ = w0 at the first step
    D1 = w1**2
    b = get("lemma_b3")
    kw = {
        "beta": beta,
        "gamma": gam,
        "gamma_prev": 0.0,
        "E": 1,
        "dist_t": w0**2,
        "sigma": 0.0,
        "S": 1.0,
        "L": 1.0,
        "Gamma": 0.0,
        "G": eps_ * w0,
    }
    assert b.violated_preconditions(mu=mu_, **kw) == []
    assert D1 > b.evaluate(mu=mu_, **kw) + 0.05  # fails without A5 for this mu
    assert D1 <= b.evaluate(mu=eps_, **kw)  # holds with the true modulus


def test_erratum_bc_b11_proof_typos():
    """BC-B11: the checkable typos: noise of sum_i p_i xi_i is sigma^2 sum p_i^2 (not sigma^2/C);
    gamma <= 1/(2 alpha) gives 1 - alpha gamma >= 1/2; the geometric sum needs no sum_m."""
    rng = np.random.default_rng(11)
    C = 10
    p = rng.dirichlet(np.ones(C))
    xi = rng.normal(size=(50000, C))
    v = (xi @ p).var()
    assert v == pytest.approx(p @ p, rel=0.04)
    assert abs(p @ p - 1 / C) > 0.02 and 1 / C <= p @ p <= 1
    a_, g_ = sp.symbols("a g", positive=True)
    assert sp.simplify((1 - a_ * g_).subs(g_, 1 / (2 * a_))) == R(1, 2)
    kap = sp.Symbol("kappa", positive=True)
    for n in range(1, 5):  # sum_{j<t} kappa^j = (1 - kappa^t)/(1 - kappa), no extra sum_m
        assert same(sum(kap**j for j in range(n)), (1 - kap**n) / (1 - kap))


def test_erratum_bc_b12_unnormalised_aggregation():
    """BC-B12: with M < C clients, sum_{i in S_t} p_i w^i is not a convex combination."""
    rng = np.random.default_rng(12)
    C = 7
    A = rng.uniform(size=(C, C))
    A = np.triu(A, 1) + np.triu(A, 1).T
    p = (A / A.sum()).sum(1)
    w = np.array([1.0, -2.0, 3.0])
    S_t = rng.choice(C, size=4, replace=False)
    agg = p[S_t].sum() * w  # all local models equal to w
    assert np.linalg.norm(agg - w) > 0.1  # shrinks toward 0
    assert p.sum() == pytest.approx(1.0)  # M = C is fine


def test_erratum_bc_b13_local_epochs_vs_steps():
    """BC-B13: 10 local epochs of minibatch 256 on 300 samples are 20 steps, not E = 10, and the
    experiments' fixed gamma = 1e-3 violates Theorem 3's step-size precondition."""
    steps = 10 * math.ceil(300 / 256)
    assert steps == 20
    b = get("beta_sc")
    kw = {
        "t": 10,
        "L": 1.0,
        "mu": 0.1,
        "beta": 0.5,
        "Delta": 1.0,
        "S": 0.01,
        "sigma": 1.0,
        "Gamma": 0.1,
        "G": 1.0,
    }
    assert b.evaluate(E=steps, **kw) > 3 * b.evaluate(E=10, **kw)
    assert b.violated_preconditions(E=steps, gamma=1e-3, **kw) == ["gamma >= 1/(2*L*E)"]
    assert b.violated_preconditions(E=steps, gamma=1 / (2 * 1.0 * steps), **kw) == []


def test_erratum_bc_b15_complexity_factor3():
    """BC-B15 (refuted): each complexity term is a piece of Theorem 2/4 set <= eps; the factor 3
    is (a+b+c)^2 <= 3(a^2+b^2+c^2); the exact T_eps makes the corrected bounds <= eps."""
    thm2 = SPEC["fedprox_nc.printed"]
    pieces = [
        8 * La * Dl / sp.sqrt(E),
        L * S * sg**2 / (La * sp.sqrt(E)),
        al * E ** R(3, 2) * G**2 / La,
    ]
    cx = [p**2 / eps**2 for p in pieces]
    b_ = 2 * L**2 * E * G**2 / La**2
    c_ = al**2 * L * sp.sqrt(E) * G**2 / (16 * La**3)
    assert same(thm2, sum(pieces) / sp.sqrt(T) + b_ / T + c_ / T ** R(3, 2))
    assert same(sum(cx) + b_ / eps + (c_ / eps) ** R(2, 3), SPEC["complexity_fedprox"])
    x, y, z = sp.symbols("x y z", real=True)
    assert sp.factor(3 * (x**2 + y**2 + z**2) - (x + y + z) ** 2) == sp.factor(
        (x - y) ** 2 + (y - z) ** 2 + (x - z) ** 2
    )
    beta_pieces = [4 * L * Dl / sp.sqrt(E), S * sg**2 / (2 * sp.sqrt(E))]
    assert same(
        sum(p**2 / eps**2 for p in beta_pieces) + E * G**2 * Ab / eps, SPEC["complexity_beta"]
    )
    rng = np.random.default_rng(15)
    for _ in range(200):
        v = {
            "L": rng.uniform(0.1, 5),
            "Delta": rng.uniform(0.01, 10),
            "E": int(rng.integers(1, 30)),
            "eps": rng.uniform(1e-3, 1),
            "S": rng.uniform(0.01, 1),
            "sigma": rng.uniform(0, 3),
            "G": rng.uniform(0.1, 5),
        }
        a = rng.uniform(0, 3)
        Tf = math.ceil(get("t_eps_fedprox").evaluate(alpha=a, **v))
        nc = {k: v[k] for k in ("L", "Delta", "E", "S", "sigma", "G")}
        assert get("fedprox_nc").evaluate(T=max(Tf, 1), alpha=a, **nc) <= v["eps"] * (1 + 1e-12)
        b = rng.uniform(0.05, 1)
        Tb = math.ceil(get("t_eps_beta").evaluate(beta=b, **v))
        assert get("beta_nc").evaluate(T=max(Tb, 1), beta=b, **nc) <= v["eps"] * (1 + 1e-12)


def test_erratum_bc_b17_table1_speedup_rounding():
    """BC-B17: 20/19 rounds to 1.1 (printed 1.0x); 80/50 = 1.6 as printed."""
    assert round(20 / 19, 1) == 1.1
    assert round(80 / 50, 1) == 1.6
