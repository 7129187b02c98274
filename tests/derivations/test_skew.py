"""Derivation tests of the skew family (seeds 000/001, Ben Mansour et al.): theorem and corollary.

Every expected value is re-derived here from the spec's formulas (typed below as the spec's
``sympy:`` strings, parsed with explicit symbols) or from the recursion itself, then compared
with ``boundlab.get(id)``. Spec: ``seeds-000-001-004.md`` §3.4-3.11, §4.1, appendix V.1-V.2.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

import boundlab
from boundlab.errors import PreconditionError
from boundlab.symbols import sym

R = sp.Rational
L, mu, G, sigma, Gamma = (sym(n) for n in ("L", "mu", "G", "sigma", "Gamma"))
rb, rt, E, eta, T = (sym(n) for n in ("rho_bar", "rho_tilde", "E", "eta", "T"))
gamma, D0, Delta, t = sym("gamma"), sym("D0"), sym("Delta"), sym("t")
G4 = 4 * L / mu  # printed gamma


def spec(s: str, **subs) -> sp.Expr:
    """Parse a spec ``sympy:`` string with boundlab's symbols (never bare sympify)."""
    names = ["L", "mu", "sigma", "G", "Gamma", "rho_bar", "rho_tilde", "E", "T", "gamma", "t"]
    loc = {n: sym(n) for n in names}
    loc.update(eta_t=eta, Delta_t=Delta, Delta0=D0**2, Rational=R, Max=sp.Max)
    return parse_expr(s, local_dict=loc).subs({loc[k]: v for k, v in subs.items()})


def same(a, b) -> bool:
    return sp.simplify(sp.expand(a - b)) == 0


S_REC = (
    "(1 - eta_t*mu*(1 + Rational(3,8)*rho_bar))*Delta_t + eta_t**2*(32*E**2*G**2 + "
    "6*rho_bar*L*Gamma + sigma**2) + 2*eta_t*Gamma*(rho_tilde - rho_bar)"
)
S_V = "4*L*(32*E**2*G**2 + sigma**2)/(3*mu**2*rho_bar) + 8*L**2*Gamma/mu**2 + L*gamma*Delta0/2"
S_ERR = "8*L*Gamma/(3*mu)*(rho_tilde/rho_bar - 1)"
S_GAMMA_C = "Max(4*L/mu, 1 + Rational(3,8)*rho_bar, E - 1)"
S_EF_REC = "(1 - eta_t*mu*(1 + Rational(3,8)*rho_bar))*Delta_t + eta_t**2*(32*E**2*G**2 + sigma**2)"
S_EF_RATE = "(4*L*(32*E**2*G**2 + sigma**2)/(3*mu**2*rho_bar) + L*gamma*Delta0/2)/(T + gamma)"
S_VMIN = "8*L**2*Gamma/mu**2 + L*gamma*Delta0/2"
S_FEDAVG = "8*L**2*Gamma/mu**2 + L*gamma*Delta0/2 + 4*L*(32*E**2*G**2 + sigma**2)/(3*mu**2)"


def test_catalogue_matches_spec_strings():
    gc = spec(S_GAMMA_C)
    V, err = spec(S_V), spec(S_ERR)
    assert same(boundlab.get("skew.recursion").expr, spec(S_REC))
    assert same(boundlab.get("skew.error_free_recursion").expr, spec(S_EF_REC))
    assert same(boundlab.get("skew.corollary_gamma").expr, V / (T + gamma) + sp.Max(0, err))
    assert same(
        boundlab.get("skew.corollary").expr, (V / (T + gamma) + sp.Max(0, err)).subs(gamma, gc)
    )
    assert same(
        boundlab.get("skew.corollary.printed").expr, (V / (T + gamma) + err).subs(gamma, G4)
    )
    assert same(boundlab.get("skew.speed").expr, V.subs(gamma, gc))
    assert same(boundlab.get("skew.error").expr, sp.Max(0, err))
    assert same(boundlab.get("skew.error.printed").expr, err)
    assert same(boundlab.get("skew.vmin").expr, spec(S_VMIN, gamma=G4))
    assert same(boundlab.get("skew.error_free").expr, spec(S_EF_RATE).subs(gamma, gc))
    # FedAvg: corrected gamma at rho_bar = 1 is max(4L/mu, 11/8, E - 1) = max(4L/mu, E - 1)
    assert same(boundlab.get("skew.fedavg_speed").expr, spec(S_FEDAVG, gamma=sp.Max(G4, E - 1)))
    rng = np.random.default_rng(3)
    for _ in range(50):
        lv = rng.uniform(0.1, 5)
        muv, ev = lv * rng.uniform(0.01, 1), int(rng.integers(1, 40))
        assert max(4 * lv / muv, 11 / 8, ev - 1) == max(4 * lv / muv, ev - 1)


@pytest.mark.parametrize("bid", [b.id for b in boundlab.catalogue("skew") if b.terms])
def test_skew_terms_add_up(bid):
    b = boundlab.get(bid)
    assert same(sum(b.terms.values()), b.expr)


def test_e1_eq13_factor():
    """BM-2: seed 000 eq. (13) prints 1 + 3/(8 rho_bar) instead of 1 + (3/8) rho_bar."""
    thm = 1 - eta * mu * (1 + R(3, 8) * rb)
    printed = 1 - eta * mu * (1 + 3 / (8 * rb))
    diff = sp.simplify(thm - printed)
    assert same(diff, 3 * eta * mu * (1 - rb**2) / (8 * rb))
    assert sp.solve(sp.Eq(thm, printed), rb) == [1]
    assert (1 + R(3, 8) * 2, 1 + R(3, 16)) == (R(7, 4), R(19, 16))
    cat = boundlab.get("skew.error_free_recursion").expr
    cat_printed = boundlab.get("skew.error_free_recursion.printed").expr
    assert same(cat_printed - cat, -diff * Delta)
    # the theorem at Gamma = 0 is the corrected (13), not the printed one (spec §7.2.5)
    rec0 = boundlab.get("skew.recursion").expr.subs(Gamma, 0)
    assert same(rec0, cat)
    assert not same(rec0, cat_printed)


def _induction_constants():
    """E3: the corollary's constants from the induction with beta = 1/mu (spec V.1)."""
    B = 1 + R(3, 8) * rb
    C = 32 * E**2 * G**2 + 6 * rb * L * Gamma + sigma**2
    Dd = 2 * Gamma * (rt - rb)
    beta = 1 / mu
    # psi = max(gamma D0^2, (beta^2 C + D beta s)/(beta mu B - 1)); bound max by sum, times L/2
    Vrep = sp.simplify(L / 2 * (gamma * D0**2 + beta**2 * C / (beta * mu * B - 1)))
    Erep = sp.simplify(L / 2 * (beta * Dd / (beta * mu * B - 1)))
    return Vrep, Erep


def test_e3_corollary_constants_by_induction():
    """BM-1 (tau := E), BM-5(c) (beta = 1/mu): all four constants reproduced exactly."""
    Vrep, Erep = _induction_constants()
    Vpaper = spec(S_V)  # printed with tau; tau -> E
    assert same(Vrep, Vpaper)
    assert same(Erep, spec(S_ERR))
    # the catalogue's corollary (given gamma), printed corollary and speed are these constants
    assert same(boundlab.get("skew.corollary_gamma").expr, Vrep / (T + gamma) + sp.Max(0, Erep))
    assert same(
        boundlab.get("skew.corollary.printed").expr, (Vrep / (T + gamma) + Erep).subs(gamma, G4)
    )
    # with tau a separate symbol the printed V is not the reproduced one unless tau = E
    tau = sp.Symbol("tau", positive=True)
    Vtau = Vpaper.subs(E, tau)
    assert not same(Vtau, Vrep)
    assert same(Vtau.subs(tau, E), Vrep)


def test_bm4_error_term_needs_rho_tilde():
    """BM-4: with D = 2 Gamma (rho_bar - rho_bar) (seed 000's rendering) the error term is 0."""
    B = 1 + R(3, 8) * rb
    beta = 1 / mu
    err_printed_D = L / 2 * beta * (2 * Gamma * (rb - rb)) / (beta * mu * B - 1)
    assert err_printed_D == 0
    _, Erep = _induction_constants()
    assert same(boundlab.get("skew.error.printed").expr, Erep)
    assert not same(boundlab.get("skew.error.printed").expr, err_printed_D)


def test_e3_induction_step_algebra():
    """BM-5: step <= (s - 1) psi/s^2 <= psi/(s + 1) when psi >= (C/mu^2 + D s/mu)/(B - 1)."""
    B = 1 + R(3, 8) * rb
    C = 32 * E**2 * G**2 + 6 * rb * L * Gamma + sigma**2
    Dd = 2 * Gamma * (rt - rb)
    b_, s, psi = 1 / mu, sp.Symbol("s", positive=True), sp.Symbol("psi", positive=True)
    step = (1 - b_ * mu * B / s) * psi / s + b_**2 * C / s**2 + b_ * Dd / s
    assert same(step - (s - 1) * psi / s**2, -((B - 1) * psi - C / mu**2 - Dd * s / mu) / s**2)
    assert same((s - 1) / s**2 - 1 / (s + 1), -1 / (s**2 * (s + 1)))
    # replacing Delta_t by psi/s in (1 - eta mu B) Delta_t needs 1 - B/s >= 0 for all s >= gamma
    assert sp.solve(sp.Eq(1 - b_ * mu * B / s, 0), s) == [B]
    # psi_t = (C/mu^2 + D (t + gamma)/mu)/(B - 1) is non-decreasing in t iff D >= 0
    psi_t = (C / mu**2 + Dd * (t + gamma) / mu) / (B - 1)
    assert same(sp.diff(psi_t, t), Dd / (mu * (B - 1)))


def _worst_case(Lv, muv, rbv, rtv, Gv, Cg, Delta0, g, steps):
    """Worst case allowed by the theorem: Delta_{t+1} = max(0, R(Delta_t)), eta_t = 1/(mu(t+g))."""
    Bv, Cv, Dv = 1 + 3 * rbv / 8, Cg + 6 * rbv * Lv * Gv, 2 * Gv * (rtv - rbv)
    d, out = Delta0, []
    for tt in range(steps):
        et = 1 / (muv * (tt + g))
        d = max(0.0, (1 - et * muv * Bv) * d + et**2 * Cv + et * Dv)
        out.append(d)
    return np.array(out)


def test_e4_induction_fails_when_contraction_negative():
    """BM-5(b): L = mu = 1, rho_bar = rho_tilde = 20 (B = 8.5 > gamma = 4)."""
    kw = {"Lv": 1.0, "muv": 1.0, "rbv": 20.0, "rtv": 20.0, "Gv": 0.0, "Cg": 100.0, "Delta0": 0.01}
    d = _worst_case(**kw, g=4.0, steps=50)
    B, C = 1 + 3 * 20 / 8, 100.0 + 0.0
    psi = max(4 * 0.01, (C / 1) / (B - 1))
    bound = psi / (np.arange(1, 51) + 4.0)
    viol = np.nonzero(d > bound * (1 + 1e-12))[0] + 1
    assert viol[:2].tolist() == [1, 3]
    assert round(d[0], 4) == 6.2387 and round(bound[0], 4) == 2.6667
    assert np.all(
        _worst_case(**{**kw, "rbv": 4.0, "rtv": 4.0}, g=4.0, steps=2000)
        <= max(0.04, 100 / 1.5) / (np.arange(1, 2001) + 4.0) * (1 + 1e-12)
    )
    # the catalogue flags the printed corollary, and its corrected corollary holds
    par = {
        "L": 1.0,
        "mu": 1.0,
        "E": 1,
        "G": (100 / 32) ** 0.5,
        "sigma": 0.0,
        "Gamma": 0.0,
        "rho_bar": 20.0,
        "rho_tilde": 20.0,
        "D0": 0.1,
    }
    assert "1 + 3*rho_bar/8 <= 4*L/mu" in boundlab.get(
        "skew.corollary.printed"
    ).violated_preconditions(T=1, **par)
    dc = _worst_case(**kw, g=8.5, steps=50)
    rhs = boundlab.get("skew.corollary").evaluate(T=np.arange(1, 51), **par)
    assert np.all(dc * 1.0 / 2 <= rhs * (1 + 1e-12))


def test_e5_error_term_negative_when_rho_tilde_below_rho_bar():
    """BM-5(a): L = mu = Gamma = 1, rho_bar = 2, rho_tilde = 1: printed RHS(T = 1000) < 0."""
    par = {
        "L": 1.0,
        "mu": 1.0,
        "E": 1,
        "G": (100 / 32) ** 0.5,
        "sigma": 0.0,
        "Gamma": 1.0,
        "rho_bar": 2.0,
        "rho_tilde": 1.0,
        "D0": 1.0,
    }
    err = boundlab.get("skew.error.printed").evaluate(
        **{k: par[k] for k in ("L", "mu", "Gamma", "rho_bar", "rho_tilde")}
    )
    assert err == pytest.approx(8 / 3 * (1 / 2 - 1))
    Vn = (4 * 100 / (3 * 2.0) + 8 + 4 * 1 / 2) / (1000 + 4)
    printed = boundlab.get("skew.corollary.printed")
    assert printed.evaluate(T=1000, **par) == pytest.approx(Vn - 4 / 3, rel=1e-12)
    assert round(Vn - 4 / 3, 3) == -1.257
    assert printed.violated_preconditions(T=1000, **par) == ["rho_tilde >= rho_bar"]
    assert boundlab.get("skew.corollary").evaluate(T=1000, **par) > 0


def _random_sets(rng, n):
    mu_ = 10 ** rng.uniform(-1, 0.5, n)
    L_ = mu_ * 10 ** rng.uniform(0, 1.5, n)
    rb_ = 10 ** rng.uniform(-1, 1.7, n)
    rt_ = rb_ * 10 ** rng.uniform(-0.5, 0.5, n)
    Gam = 10 ** rng.uniform(-2, 1, n)
    C0 = 10 ** rng.uniform(-2, 2, n)
    E_ = rng.integers(1, 4, n).astype(float)
    u = rng.uniform(0.05, 1, n)
    G_ = np.sqrt(u * C0 / (32 * E_**2))
    sig = np.sqrt((1 - u) * C0)
    D0_ = np.sqrt(10 ** rng.uniform(-2, 2, n))
    return {
        "L": L_,
        "mu": mu_,
        "E": E_,
        "G": G_,
        "sigma": sig,
        "Gamma": Gam,
        "rho_bar": rb_,
        "rho_tilde": rt_,
        "D0": D0_,
    }


def _iterate(p, g, steps):
    """Vectorized worst case of the theorem over parameter sets (axis 0) for ``steps``."""
    B = 1 + 3 * p["rho_bar"] / 8
    C = 32 * p["E"] ** 2 * p["G"] ** 2 + p["sigma"] ** 2 + 6 * p["rho_bar"] * p["L"] * p["Gamma"]
    Dd = 2 * p["Gamma"] * (p["rho_tilde"] - p["rho_bar"])
    d = p["D0"] ** 2
    out = np.empty((d.size, steps))
    for tt in range(steps):
        et = 1 / (p["mu"] * (tt + g))
        d = np.maximum(0.0, (1 - et * p["mu"] * B) * d + et**2 * C + et * Dd)
        out[:, tt] = d
    return out  # out[:, j] = Delta_{j+1}


def test_v2_worst_case_recursion_vs_corollary():
    """BM-5, BM-8: corrected corollary never violated; printed violated only where flagged."""
    rng = np.random.default_rng(0)
    n, steps = 300, 400
    p = _random_sets(rng, n)
    Tgrid = np.arange(1, steps + 1)[None, :]
    P = {k: v[:, None] for k, v in p.items()}
    # corrected: gamma typed from the spec, the run uses it
    gc = np.maximum.reduce([4 * p["L"] / p["mu"], 1 + 3 * p["rho_bar"] / 8, p["E"] - 1])
    lhs = p["L"][:, None] / 2 * _iterate(p, gc, steps)
    rhs = boundlab.get("skew.corollary").evaluate(T=Tgrid, **P)
    assert np.all(lhs <= rhs + 1e-9 * (1 + np.abs(rhs)))
    # printed: gamma = 4L/mu, error term unclipped
    g4 = 4 * p["L"] / p["mu"]
    lhs_p = p["L"][:, None] / 2 * _iterate(p, g4, steps)
    printed = boundlab.get("skew.corollary.printed")
    rhs_p = printed.evaluate(T=Tgrid, **P)
    violated = np.any(lhs_p > rhs_p + 1e-9 * (1 + np.abs(rhs_p)), axis=1)
    flagged = np.array(
        [
            bool(printed.violated_preconditions(T=1, **{k: v[i] for k, v in p.items()}))
            for i in range(n)
        ]
    )
    assert not np.any(violated & ~flagged), "printed corollary violated without a flag"
    B_gt = 1 + 3 * p["rho_bar"] / 8 > g4
    rt_lt = p["rho_tilde"] < p["rho_bar"]
    # every failure case of the spec occurs here (the audit is not vacuous)
    for case in (B_gt & ~rt_lt, rt_lt & ~B_gt, B_gt & rt_lt):
        assert violated[case].sum() > 0
    assert violated.sum() > n // 5
    # and where the spec's two conditions hold (and E - 1 <= 4L/mu) nothing is violated
    ok = ~B_gt & ~rt_lt & (p["E"] - 1 <= g4)
    assert ok.sum() > 50 and not violated[ok].any()


def test_e6_fedavg_speed():
    """BM-3: alpha = p gives rho = 1 and V(1, 1) - V_min = 4L(32E^2G^2 + sigma^2)/(3 mu^2)."""
    V, Vmin = spec(S_V), spec(S_VMIN)
    extra = sp.factor(sp.simplify(V.subs(rb, 1) - Vmin))
    assert same(extra, 4 * L * (32 * E**2 * G**2 + sigma**2) / (3 * mu**2))
    printed_extra = (4 * L - 32 * E**2 * G**2 + sigma**2) / (3 * mu**2)
    assert not same(printed_extra, extra)
    fa, fa_p = (
        boundlab.get("skew.fedavg_speed").expr,
        boundlab.get("skew.fedavg_speed.printed").expr,
    )
    vmin = boundlab.get("skew.vmin").expr
    # under E - 1 <= 4L/mu the corrected gamma is 4L/mu and the catalogue gives exactly `extra`
    assert same(fa.xreplace({sp.Max(G4, E - 1): G4}) - vmin, extra)
    assert same(fa_p - vmin, printed_extra)
    # corrected corollary at rho_bar = rho_tilde = 1 has no error term and speed V_FedAvg
    par = {"L": 2.0, "mu": 0.5, "E": 3, "G": 0.7, "sigma": 0.3, "Gamma": 1.5, "D0": 2.0}
    cor = boundlab.get("skew.corollary").evaluate(T=100, rho_bar=1.0, rho_tilde=1.0, **par)
    g = max(4 * 2.0 / 0.5, 3 - 1)
    assert cor == pytest.approx(boundlab.get("skew.fedavg_speed").evaluate(**par) / (100 + g))


def test_e9_three_eighths_constant():
    """BM-6: min over 0 < L eta <= 1/4 of (1 - 2x)(1 - x) is 3/8, so the A_7 term carries '-'."""
    x = sp.Symbol("x", positive=True)
    h = (1 - 2 * x) * (1 - x)
    assert sp.expand(sp.diff(h, x)) == 4 * x - 3
    assert h.subs(x, R(1, 4)) == R(3, 8) and h.subs(x, 0) == 1
    assert sp.solve(sp.diff(h, x), x) == [R(3, 4)]  # decreasing on [0, 1/4]: minimum at 1/4
    lhs = 2 * eta * (2 * L * eta - 1) * (1 - eta * L) * rb * Gamma
    rhs = -2 * eta * rb * Gamma + 6 * eta**2 * rb * L * Gamma
    assert same(sp.factor(sp.expand(lhs - rhs)), -4 * Gamma * L**2 * eta**3 * rb)
    dist = (2 * eta * (2 * L * eta - 1) * (1 - eta * L) * mu / 2 * rb).subs(eta, 1 / (4 * L))
    assert same(dist, (-R(3, 8) * eta * mu * rb).subs(eta, 1 / (4 * L)))
    # the catalogue recursion: coefficient of rho_bar * Delta is -(3/8) eta mu (minus sign)
    rec = boundlab.get("skew.recursion").expr
    assert same(sp.diff(rec, Delta, rb), -R(3, 8) * eta * mu)


def test_bm14_step_size_condition():
    """BM-14: (1 - 2L eta)(1 - L eta) >= 3/8 needs L eta <= 1/4; the theorem must require it."""
    vals = [(xv, round((1 - 2 * xv) * (1 - xv), 4)) for xv in (0.1, 0.25, 0.3, 0.4)]
    assert vals == [(0.1, 0.72), (0.25, 0.375), (0.3, 0.28), (0.4, 0.12)]
    rec = boundlab.get("skew.recursion")
    par = {
        "Delta": 1.0,
        "mu": 0.5,
        "L": 1.0,
        "E": 2,
        "G": 1.0,
        "sigma": 0.1,
        "Gamma": 0.2,
        "rho_bar": 1.2,
        "rho_tilde": 1.5,
    }
    assert rec.violated_preconditions(eta=0.3, **par) == ["eta <= 1/(4*L)"]
    assert rec.violated_preconditions(eta=0.25, **par) == []
    with pytest.raises(PreconditionError):
        rec.evaluate(strict=True, eta=0.3, **par)


def test_e10_lemma2_step_ratio():
    """BM-8: eta_{t0}/eta_t <= 2 inside a round iff gamma >= E - 1."""
    table = []
    for lm, ev in [(1, 2), (1, 5), (1, 10), (10, 10), (2, 20)]:
        g = 4 * lm
        # brute force: max over rounds r and steps s of eta_{rE}/eta_{rE+s}
        worst = max((r * ev + s + g) / (r * ev + g) for r in range(50) for s in range(ev))
        assert worst == pytest.approx((g + ev - 1) / g)
        table.append(worst <= 2)
    assert table == [True, True, False, True, False]
    assert round((4 + 10 - 1) / 4, 3) == 3.25
    gs = sp.Symbol("g", positive=True)
    assert sp.solve(sp.Eq((gs + E - 1) / gs, 2), gs) == [E - 1]
    lem = boundlab.get("skew.lemma2")
    assert lem.violated_preconditions(eta=0.1, E=10, G=1.0, gamma=4.0) == ["gamma >= E - 1"]
    cg = boundlab.get("skew.corollary_gamma")
    par = {
        "T": 10,
        "L": 1.0,
        "mu": 1.0,
        "E": 10,
        "G": 1.0,
        "sigma": 0.0,
        "Gamma": 0.5,
        "rho_bar": 1.0,
        "rho_tilde": 1.0,
        "D0": 1.0,
    }
    assert "gamma >= E - 1" in cg.violated_preconditions(gamma=4.0, **par)
    assert boundlab.get("skew.corollary").evaluate(**par) == pytest.approx(
        cg.evaluate(gamma=9.0, **par)
    )


def test_e14_g_squared_coefficient():
    """BM-7: 16 (A_1) + 16 (A_5) = 32, the theorem's coefficient; printed A_1 gives 17."""
    rec = boundlab.get("skew.recursion").expr
    coeff = sp.expand(rec).coeff(eta**2).coeff(E**2).coeff(G**2)
    assert coeff == 32 == 16 + 16
    assert 1 + 16 == 17 != coeff


def test_e15_negative_contraction():
    """The contraction factor 1 - eta_0 mu B can be negative with gamma = 4L/mu (L/mu = 1)."""
    dfac = sp.diff(boundlab.get("skew.recursion").expr, Delta)
    assert same(dfac, 1 - eta * mu * (1 + R(3, 8) * rb))
    got = [float(dfac.subs({eta: 1 / (mu * 4), rb: v})) for v in (1, 8, 20, 49)]
    assert got == pytest.approx([1 - (1 + 3 * v / 8) / 4 for v in (1, 8, 20, 49)])
    assert got[2] == pytest.approx(-1.125)
    # with the corrected gamma the factor at t = 0 is >= 0
    for v in (1, 8, 20, 49):
        g = sp.Max(4, 1 + R(3, 8) * v)
        assert dfac.subs({eta: 1 / (mu * g), rb: v}) >= 0


def test_bm20_rate_is_order_one_over_t_only_without_error():
    """BM-20: RHS * (T + gamma) stays bounded iff the error term is 0."""
    expr = boundlab.get("skew.corollary").expr
    gc = spec(S_GAMMA_C)
    V = spec(S_V, gamma=gc)
    assert same((expr.subs(rt, rb) * (T + gc)), V)  # rho_tilde = rho_bar: exactly V/(T + gamma)
    assert same((expr.subs(Gamma, 0) * (T + gc)), V.subs(Gamma, 0))
    err = spec(S_ERR)
    assert same(sp.limit(boundlab.get("skew.corollary.printed").expr, T, sp.oo), err)
    grow = boundlab.get("skew.corollary.printed").expr.subs({rt: 2 * rb, Gamma: 1}) * T
    assert sp.limit(grow, T, sp.oo) == sp.oo
    assert boundlab.get("skew.rate_order").kind == "order"
