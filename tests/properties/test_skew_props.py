"""Property tests of the skew family (spec ``seeds-000-001-004.md`` §7.2-7.5).

Floats are drawn on the stated domains with moderate magnitudes; comparisons use relative
tolerances; derivative signs come from sympy derivatives of the catalogue expressions. A property
the catalogue does not satisfy is a finding (errata BM-P1..P4): its test asserts the
counterexample, computed with formulas typed here, and a companion test asserts the property on
the sub-domain where it does hold (a fixed step-size shift gamma).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import boundlab
from boundlab.errors import DomainError, PreconditionError
from boundlab.symbols import sym

SET = settings(max_examples=80, deadline=None)
R = sp.Rational
REC, COR, COR_P = (
    boundlab.get(i) for i in ("skew.recursion", "skew.corollary", "skew.corollary.printed")
)
COR_G, SPEED = boundlab.get("skew.corollary_gamma"), boundlab.get("skew.speed")
B17, B19, BUNI = (
    boundlab.get(i) for i in ("skew.pi_bound", "skew.pi_bound_pmin", "skew.pi_bound_uniform")
)
L, mu, G, sigma, Gamma = (sym(n) for n in ("L", "mu", "G", "sigma", "Gamma"))
rb, rt, E, eta, Delta = (sym(n) for n in ("rho_bar", "rho_tilde", "E", "eta", "Delta"))
T, D0 = sym("T"), sym("D0")


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def nonneg(hi):
    """0 exactly, or a moderate positive value (no subnormals: they only test float underflow)."""
    return st.one_of(st.just(0.0), fl(1e-3, hi))


@st.composite
def bm(draw):
    m = draw(fl(0.1, 3.0))
    Lv = m * draw(fl(1.0, 30.0))
    return {
        "mu": m,
        "L": Lv,
        "E": draw(st.integers(1, 10)),
        "G": draw(fl(0.01, 10.0)),
        "sigma": draw(nonneg(10.0)),
        "Gamma": draw(nonneg(10.0)),
        "rho_bar": draw(fl(0.05, 50.0)),
        "rho_tilde": draw(nonneg(100.0)),
        "D0": draw(nonneg(10.0)),
        "T": draw(st.integers(1, 100_000)),
    }


def rec_par(p, eta_frac, delta):
    q = {k: p[k] for k in ("mu", "L", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde")}
    return dict(q, eta=eta_frac / (4 * p["L"]), Delta=delta)


def cor_par(p):
    return {
        k: p[k] for k in ("T", "L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde", "D0")
    }


def le(a, b, rtol=1e-11):
    return a <= b + rtol * max(abs(a), abs(b), 1e-300)


def num(expr, p):
    """Value of a sympy expression at the parameter dict p (symbols by name)."""
    return float(expr.subs({sym(k): v for k, v in p.items()}))


# ----------------------------------------------------------------- 7.2 theorem recursion
def test_recursion_derivatives_symbolic():
    """7.2.1-7.2.4: derivatives of the catalogue recursion equal the spec's formulas."""
    r = REC.expr
    d_rb = sp.diff(r, rb)
    assert sp.simplify(d_rb - eta * (-3 * mu * Delta + 48 * Gamma * L * eta - 16 * Gamma) / 8) == 0
    assert sp.simplify(d_rb.subs(eta, 1 / (4 * L)) + (3 * mu * Delta + 4 * Gamma) / (32 * L)) == 0
    assert sp.simplify(sp.diff(r, rt) - 2 * eta * Gamma) == 0
    assert sp.simplify(sp.diff(r, Gamma) - 2 * eta * (rt - rb * (1 - 3 * L * eta))) == 0
    assert sp.simplify(sp.diff(r, Delta) - (1 - eta * mu * (1 + R(3, 8) * rb))) == 0
    # 7.2.6: alpha = p (rho_bar = rho_tilde = 1): no O(eta) term besides the contraction
    r1 = sp.expand(r.subs({rb: 1, rt: 1}) - (1 - eta * mu * R(11, 8)) * Delta)
    assert sp.simplify(r1 - eta**2 * (32 * E**2 * G**2 + 6 * L * Gamma + sigma**2)) == 0


@SET
@given(bm(), fl(1e-3, 1.0), nonneg(100.0), fl(1.001, 3.0))
def test_recursion_decreasing_in_rho_bar(p, ef, delta, h):
    """7.2.1: strictly decreasing in rho_bar when L eta <= 1/4 and (Delta > 0 or Gamma > 0)."""
    q = rec_par(p, ef, delta)
    assert num(sp.diff(REC.expr, rb), q) < 0 or (delta == 0 and p["Gamma"] == 0)
    r1 = REC.evaluate(**q)
    r2 = REC.evaluate(**{**q, "rho_bar": p["rho_bar"] * h})
    assert le(r2, r1)


@SET
@given(bm(), fl(1e-3, 1.0), nonneg(100.0), fl(1.001, 3.0))
def test_recursion_monotone_in_E_G_sigma_L_mu_rho_tilde(p, ef, delta, h):
    """7.2.2, 7.2.4: non-decreasing in rho_tilde, E, G, sigma, L; non-increasing in mu."""
    q = rec_par(p, ef, delta)
    r0 = REC.evaluate(**q)
    for name in ("rho_tilde", "G", "sigma", "L"):
        assert le(r0, REC.evaluate(**{**q, name: q[name] * h}))
    assert le(r0, REC.evaluate(**{**q, "E": q["E"] + 1}))
    assert le(REC.evaluate(**{**q, "mu": q["mu"] * h}), r0)


@SET
@given(bm(), fl(1e-3, 1.0), nonneg(100.0), fl(0.01, 5.0))
def test_recursion_in_gamma_follows_sign(p, ef, delta, dg):
    """7.2.3: R increases with Gamma iff rho_tilde >= rho_bar (1 - 3 L eta) (not monotone)."""
    q = rec_par(p, ef, delta)
    r1, r2 = REC.evaluate(**q), REC.evaluate(**{**q, "Gamma": q["Gamma"] + dg})
    slope = 2 * q["eta"] * (q["rho_tilde"] - q["rho_bar"] * (1 - 3 * p["L"] * q["eta"]))
    assert (r2 - r1) == pytest.approx(slope * dg, rel=1e-6, abs=1e-9 * (abs(r1) + abs(r2)))


def test_recursion_not_monotone_in_gamma_and_negative_contraction():
    """7.2.3/7.2.4: explicit decrease in Gamma; dR/dDelta < 0 is possible."""
    q = {
        "Delta": 1.0,
        "eta": 0.25,
        "mu": 1.0,
        "L": 1.0,
        "E": 1,
        "G": 0.1,
        "sigma": 0.0,
        "rho_bar": 20.0,
        "rho_tilde": 0.0,
    }
    assert REC.evaluate(Gamma=1.0, **q) < REC.evaluate(Gamma=0.0, **q)
    assert num(sp.diff(REC.expr, Delta), {"eta": 0.25, "mu": 1.0, "rho_bar": 20.0}) < 0


@SET
@given(bm(), fl(1e-3, 1.0), nonneg(100.0))
def test_recursion_gamma_zero_is_error_free(p, ef, delta):
    """7.2.5."""
    q = rec_par({**p, "Gamma": 0.0}, ef, delta)
    ef_q = {k: v for k, v in q.items() if k not in ("Gamma", "rho_tilde")}
    assert REC.evaluate(**q) == pytest.approx(
        boundlab.get("skew.error_free_recursion").evaluate(**ef_q), rel=1e-12, abs=1e-12
    )


# ----------------------------------------------------------------- 7.3 corollary
def _v_printed(p):
    return COR_P.evaluate_terms(**cor_par(p))["speed"] * (p["T"] + 4 * p["L"] / p["mu"])


def test_corollary_speed_symbolic():
    """7.3.1 at gamma = 4L/mu: dV/drho_bar < 0 and V -> V_min as rho_bar -> inf."""
    V = sp.simplify(COR_P.terms["speed"] * (T + 4 * L / mu))
    assert (
        sp.simplify(sp.diff(V, rb) + 4 * L * (32 * E**2 * G**2 + sigma**2) / (3 * mu**2 * rb**2))
        == 0
    )
    assert sp.simplify(sp.limit(V, rb, sp.oo) - boundlab.get("skew.vmin").expr) == 0
    # 7.3.2: signs of the derivatives of V (printed gamma)
    args = [L, mu, E, G, sigma, Gamma, rb, D0]
    dV = {s: sp.lambdify(args, sp.diff(V, s)) for s in (L, Gamma, E, G, mu, sigma, D0)}
    rng = np.random.default_rng(0)
    n = 500
    m = rng.uniform(0.1, 3, n)
    pts = [
        m * rng.uniform(1, 30, n),
        m,
        rng.integers(1, 10, n),
        rng.uniform(0.01, 10, n),
        rng.uniform(0, 10, n),
        rng.uniform(0, 10, n),
        rng.uniform(0.05, 50, n),
        rng.uniform(0, 10, n),
    ]
    for s in (L, Gamma, E, G):
        assert np.all(dV[s](*pts) > 0), s
    assert np.all(dV[mu](*pts) < 0)
    assert np.all(dV[sigma](*pts) >= 0) and np.all(dV[D0](*pts) >= 0)


@SET
@given(bm(), fl(1.001, 3.0))
def test_corollary_speed_monotone_at_fixed_gamma(p, h):
    """7.3.1: V > V_min > 0 and V decreasing in rho_bar (printed gamma and any fixed gamma)."""
    vmin = boundlab.get("skew.vmin").evaluate(L=p["L"], mu=p["mu"], Gamma=p["Gamma"], D0=p["D0"])
    v1 = _v_printed(p)
    assert v1 > vmin >= 0 and (vmin > 0 or p["Gamma"] == p["D0"] == 0)
    assert _v_printed({**p, "rho_bar": p["rho_bar"] * h}) < v1
    g = 4 * p["L"] / p["mu"] + 100.0
    s1 = COR_G.evaluate_terms(gamma=g, **cor_par(p))["speed"]
    s2 = COR_G.evaluate_terms(gamma=g, **{**cor_par(p), "rho_bar": p["rho_bar"] * h})["speed"]
    assert s2 < s1


@SET
@given(bm(), fl(1.001, 3.0))
def test_corrected_speed_monotone_in_constants(p, h):
    """7.3.2 for the corrected V (skew.speed): up in L, Gamma, D0, E, G, sigma; down in mu."""
    q = {k: p[k] for k in ("L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "D0")}
    v = SPEED.evaluate(**q)
    for name in ("L", "Gamma", "D0", "G", "sigma"):
        assert le(v, SPEED.evaluate(**{**q, name: q[name] * h}))
    assert le(v, SPEED.evaluate(**{**q, "E": q["E"] + 1}))
    assert le(SPEED.evaluate(**{**q, "mu": min(q["mu"] * h, q["L"])}), v)
    # and where 1 + 3 rho_bar/8 is not the active branch, decreasing in rho_bar too
    top = max(4 * q["L"] / q["mu"], q["E"] - 1)
    assume(1 + 3 * q["rho_bar"] * h / 8 <= top)
    assert SPEED.evaluate(**{**q, "rho_bar": q["rho_bar"] * h}) < v


def test_finding_bm_p1_speed_not_decreasing_in_rho_bar():
    """BM-P1: with the corrected gamma, V grows with rho_bar; V/(T + gamma) -> L D0^2/2."""
    q = {"L": 1.0, "mu": 1.0, "E": 1, "G": 0.1, "sigma": 0.0, "Gamma": 0.0, "D0": 1.0}

    def v_typed(r):
        g = max(4.0, 1 + 3 * r / 8, 0.0)
        return 4 * (32 * 0.01) / (3 * r) + g / 2, g

    for r in (40.0, 80.0):
        assert SPEED.evaluate(rho_bar=r, **q) == pytest.approx(v_typed(r)[0])
    assert v_typed(80.0)[0] > v_typed(40.0)[0]
    assert SPEED.evaluate(rho_bar=80.0, **q) > SPEED.evaluate(rho_bar=40.0, **q)
    for r in (1e3, 1e6, 1e9):  # V ~ L D0^2 (3 rho_bar/8)/2 -> inf (V_min = 2 is not the limit)
        assert SPEED.evaluate(rho_bar=r, **q) == pytest.approx(v_typed(r)[0])
        assert SPEED.evaluate(rho_bar=r, **q) > 3 * r / 16
    big = COR.evaluate(T=100, rho_bar=1e9, rho_tilde=1.0, **q)
    assert big == pytest.approx(1.0 * 1.0**2 / 2, rel=1e-6)  # the trivial bound L D0^2/2
    # the printed gamma does have V -> V_min
    vmin = boundlab.get("skew.vmin").evaluate(L=1.0, mu=1.0, Gamma=0.0, D0=1.0)
    assert _v_printed({**q, "T": 1, "rho_bar": 1e9, "rho_tilde": 1.0}) == pytest.approx(vmin)


@SET
@given(bm())
def test_corollary_error_term(p):
    """7.3.3: E = 0 iff rho_tilde = rho_bar or Gamma = 0; sign(E) = sign(rho_tilde - rho_bar);
    increasing in rho_tilde, decreasing in rho_bar; corrected E+ = max(E, 0) >= 0."""
    q = {k: p[k] for k in ("L", "mu", "Gamma", "rho_bar", "rho_tilde")}
    e, ep = (
        boundlab.get("skew.error.printed").evaluate(**q),
        boundlab.get("skew.error").evaluate(**q),
    )
    assert ep == max(e, 0.0) >= 0
    if p["Gamma"] > 0 and p["rho_tilde"] != p["rho_bar"]:
        assert np.sign(e) == np.sign(p["rho_tilde"] - p["rho_bar"])
    assert boundlab.get("skew.error.printed").evaluate(**{**q, "rho_tilde": q["rho_bar"]}) == 0
    assert boundlab.get("skew.error.printed").evaluate(**{**q, "Gamma": 0.0}) == 0
    err = boundlab.get("skew.error.printed").expr
    pt = {sym(k): v for k, v in q.items()}
    assert float(sp.diff(err, rt).subs(pt)) >= 0 and float(sp.diff(err, rb).subs(pt)) <= 0


@SET
@given(bm(), st.integers(1, 1000))
def test_corollary_decreasing_in_T_and_limit(p, dT):
    """7.3.4: strictly decreasing in T; limit E+ (corrected), E (printed); O(1/T) when E = 0."""
    c = cor_par(p)
    for b in (COR, COR_P):
        assert b.evaluate(**{**c, "T": p["T"] + dT}) < b.evaluate(**c)
    eq = {**c, "rho_tilde": p["rho_bar"]}
    g = max(4 * p["L"] / p["mu"], 1 + 3 * p["rho_bar"] / 8, p["E"] - 1)
    assert (COR.evaluate(**eq) * (p["T"] + g)) == pytest.approx(
        COR.evaluate(**{**eq, "T": p["T"] + dT}) * (p["T"] + dT + g), rel=1e-9
    )


def test_corollary_limit_symbolic():
    gc = sp.Max(4 * L / mu, 1 + R(3, 8) * rb, E - 1)
    err = 8 * L * Gamma / (3 * mu) * (rt / rb - 1)
    assert (
        sp.simplify(sp.limit(COR.expr.xreplace({gc: sym("gamma")}), T, sp.oo) - sp.Max(0, err)) == 0
    )
    assert sp.simplify(sp.limit(COR_P.expr, T, sp.oo) - err) == 0


def test_corollary_preconditions():
    """7.3.5: rho_bar <= 0 is a DomainError; gamma rules raise in strict mode."""
    c = {
        "T": 10,
        "L": 2.0,
        "mu": 1.0,
        "E": 4,
        "G": 1.0,
        "sigma": 0.1,
        "Gamma": 0.5,
        "rho_tilde": 1.0,
        "D0": 1.0,
    }
    for bid in ("skew.corollary", "skew.corollary.printed", "skew.speed"):
        b = boundlab.get(bid)
        q = {k: v for k, v in {**c, "rho_bar": 0.0}.items() if k in b.params}
        with pytest.raises(DomainError):
            b.evaluate(**q)
    with pytest.raises(DomainError):
        REC.evaluate(
            Delta=1.0,
            eta=0.1,
            mu=1.0,
            L=2.0,
            E=1,
            G=1.0,
            sigma=0.0,
            Gamma=0.0,
            rho_bar=-1.0,
            rho_tilde=1.0,
        )
    ok = dict(c, rho_bar=2.0)
    COR_G.evaluate(strict=True, gamma=8.0, **ok)
    for g, failed in [
        (7.9, "gamma >= 4*L/mu"),
        (8.0, "gamma >= 1 + 3*rho_bar/8"),
        (8.0, "gamma >= E - 1"),
    ]:
        bad = dict(ok)
        if "rho_bar" in failed:
            bad["rho_bar"] = 20.0
        if "E - 1" in failed:
            bad["E"] = 10
        with pytest.raises(PreconditionError, match=failed.replace("*", r"\*").replace("+", r"\+")):
            COR_G.evaluate(strict=True, gamma=g, **bad)
    # printed form: a warning (violated_preconditions), a number when not strict
    bad = dict(c, rho_bar=30.0)
    assert "1 + 3*rho_bar/8 <= 4*L/mu" in COR_P.violated_preconditions(**bad)
    assert np.isfinite(COR_P.evaluate(**bad))
    with pytest.raises(PreconditionError):
        COR_P.evaluate(strict=True, **bad)


@settings(max_examples=60, deadline=None)
@given(bm())
def test_corollary_consistent_with_worst_case_recursion(p):
    """7.3.6: iterate Delta_{t+1} = max(0, R(Delta_t)), eta_t = 1/(mu (t + gamma)), t < 400."""
    g = max(4 * p["L"] / p["mu"], 1 + 3 * p["rho_bar"] / 8, p["E"] - 1)
    B = 1 + 3 * p["rho_bar"] / 8
    C = 32 * p["E"] ** 2 * p["G"] ** 2 + 6 * p["rho_bar"] * p["L"] * p["Gamma"] + p["sigma"] ** 2
    Dd = 2 * p["Gamma"] * (p["rho_tilde"] - p["rho_bar"])
    d, out = p["D0"] ** 2, []
    for t in range(400):
        et = 1 / (p["mu"] * (t + g))
        d = max(0.0, (1 - et * p["mu"] * B) * d + et**2 * C + et * Dd)
        out.append(d)
    rhs = COR.evaluate(**{**cor_par(p), "T": np.arange(1, 401)})
    lhs = p["L"] / 2 * np.array(out)
    assert np.all(lhs <= rhs + 1e-9 * (1 + np.abs(rhs)))


@SET
@given(bm())
def test_corollary_specialisations(p):
    """7.3.7: rho_bar = rho_tilde = 1 gives V_FedAvg/(T + gamma); Gamma = 0 gives (14)."""
    c = cor_par(p)
    fa = boundlab.get("skew.fedavg_speed").evaluate(
        **{k: p[k] for k in ("L", "mu", "E", "G", "sigma", "Gamma", "D0")}
    )
    g = max(4 * p["L"] / p["mu"], p["E"] - 1)
    assert COR.evaluate(**{**c, "rho_bar": 1.0, "rho_tilde": 1.0}) == pytest.approx(
        fa / (p["T"] + g), rel=1e-12
    )
    c0 = {**c, "Gamma": 0.0}
    ef = {k: v for k, v in c0.items() if k not in ("Gamma", "rho_tilde")}
    assert COR.evaluate(**c0) == pytest.approx(
        boundlab.get("skew.error_free").evaluate(**ef), rel=1e-12
    )
