"""Property tests of the drift family (spec ``seeds-000-001-004.md`` §7.6, §7.7).

Formula properties use ``boundlab.get(id).evaluate`` on hypothesis-drawn floats (relative
tolerances) and sympy derivatives. The measured properties (7.7.3, 7.7.4 and Theorem 2.1) run a
small full-batch FedAvg written here on quadratic clients: a shared Hessian A with different
centres c_i gives the exact dissimilarity zeta = max_i ||A (c_i - cbar)||; different Hessians
(zeta unbounded) are used for Lemma 2.2, which does not involve zeta.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab
from boundlab.errors import DomainError, PreconditionError
from boundlab.symbols import sym

SET = settings(max_examples=100, deadline=None)
THM, PLATEAU = boundlab.get("drift.fedavg_convex"), boundlab.get("drift.plateau")
LEMMA, EXACT = boundlab.get("drift.client_drift"), boundlab.get("drift.client_drift_exact")
REC, PROG = boundlab.get("drift.drift_recursion"), boundlab.get("drift.round_progress")
D, eta, tau, T, sigma, M, L, zeta = (
    sym(n) for n in ["D", "eta", "tau", "T", "sigma", "M", "L", "zeta"]
)


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def nonneg(hi):
    """0 exactly, or a moderate positive value (no subnormals: they only test float underflow)."""
    return st.one_of(st.just(0.0), fl(1e-3, hi))


@functools.cache
def _derivative(bound_id, name):
    b = boundlab.get(bound_id)
    syms = [par.symbol for par in b.params.values()]
    return tuple(b.params), sp.lambdify(syms, sp.diff(b.expr, b.params[name].symbol))


def d_dx(bound, name, p):
    """Value at p of the sympy derivative of the bound's expression with respect to name."""
    names, f = _derivative(bound.id, name)
    return float(f(*[p[n] for n in names]))


@st.composite
def dkr(draw):
    Lv = draw(fl(0.01, 10.0))
    return {
        "D": draw(nonneg(10.0)),
        "eta": draw(fl(1e-3, 1.0)) / (4 * Lv),
        "tau": draw(st.integers(1, 1000)),
        "T": draw(st.integers(1, 10_000)),
        "sigma": draw(nonneg(5.0)),
        "M": draw(st.integers(1, 100)),
        "L": Lv,
        "zeta": draw(nonneg(5.0)),
    }


def le(a, b, rtol=1e-12):
    return a <= b + rtol * max(abs(a), abs(b))


# ----------------------------------------------------------------- 7.6 Theorem 2.1
@SET
@given(dkr(), st.integers(1, 1000))
def test_theorem_decreasing_in_T_with_limit(p, dT):
    """7.6.1: strictly decreasing in T (D > 0); tends to eta sigma^2/M + drift terms."""
    r1, r2 = THM.evaluate(**p), THM.evaluate(**{**p, "T": p["T"] + dT})
    assert le(r2, r1)
    slope = d_dx(THM, "T", p)
    assert slope == pytest.approx(-(p["D"] ** 2) / (2 * p["eta"] * p["tau"] * p["T"] ** 2))
    assert slope < 0 if p["D"] > 0 else slope == 0
    e, t = p["eta"], p["tau"]
    lim = (
        e * p["sigma"] ** 2 / p["M"]
        + 4 * t * e**2 * p["L"] * p["sigma"] ** 2
        + 18 * t**2 * e**2 * p["L"] * p["zeta"] ** 2
    )
    big = THM.evaluate(**{**p, "T": 10**15})
    assert big == pytest.approx(lim, rel=1e-6, abs=p["D"] ** 2 / (2 * e * t * 1e15) * 2)
    assert r2 > lim or (lim == 0 and p["D"] == 0) or r2 == pytest.approx(lim)


@SET
@given(dkr(), fl(1.001, 3.0))
def test_theorem_monotone_in_constants(p, h):
    """7.6.2: increasing in D, zeta, sigma, L (strictly if sigma or zeta > 0); decreasing in M."""
    r = THM.evaluate(**p)
    for name in ("D", "zeta", "sigma", "L"):
        assert le(r, THM.evaluate(**{**p, name: p[name] * h}))
        assert d_dx(THM, name, p) >= 0
    assert le(THM.evaluate(**{**p, "M": p["M"] + 1}), r)
    assert (d_dx(THM, "L", p) > 0) == (p["sigma"] > 0 or p["zeta"] > 0)
    assert (d_dx(THM, "M", p) < 0) == (p["sigma"] > 0)


def test_theorem_convex_not_monotone_in_tau_eta():
    """7.6.3: second derivatives are the spec's positive expressions; not monotone."""
    rhs = THM.expr
    assert (
        sp.simplify(
            sp.diff(rhs, eta, 2)
            - (D**2 / (T * eta**3 * tau) + 8 * L * sigma**2 * tau + 36 * L * tau**2 * zeta**2)
        )
        == 0
    )
    assert (
        sp.simplify(sp.diff(rhs, tau, 2) - (D**2 / (T * eta * tau**3) + 36 * L * eta**2 * zeta**2))
        == 0
    )
    base = {"D": 3.0, "T": 50, "sigma": 0.0, "M": 20, "L": 0.2, "zeta": 0.4}
    taus = np.arange(1, 200)
    v = THM.evaluate(eta=0.2, tau=taus, **base)
    assert np.any(np.diff(v) < 0) and np.any(np.diff(v) > 0)
    etas = np.linspace(0.01, 1.0, 200)
    w = THM.evaluate(eta=etas, tau=10, **base)
    assert np.any(np.diff(w) < 0) and np.any(np.diff(w) > 0)


@SET
@given(dkr(), fl(0.01, 0.99))
def test_theorem_convex_in_eta_and_tau(p, lam):
    """7.6.3: midpoint convexity in eta and discrete convexity in tau."""
    e1, e2 = p["eta"], p["eta"] * 0.3
    mid = THM.evaluate(**{**p, "eta": lam * e1 + (1 - lam) * e2})
    ends = lam * THM.evaluate(**p) + (1 - lam) * THM.evaluate(**{**p, "eta": e2})
    assert le(mid, ends, 1e-10)
    t = p["tau"] + 1
    f = [THM.evaluate(**{**p, "tau": t + d}) for d in (-1, 0, 1)]
    assert le(2 * f[1], f[0] + f[2], 1e-10)


@SET
@given(dkr(), st.integers(2, 5), fl(1.001, 3.0))
def test_plateau_properties(p, c, h):
    """7.6.4: P increasing in tau, eta, L, zeta; P(c tau) = c^2 P(tau) (same for eta, zeta);
    linear in L."""
    q = {k: p[k] for k in ("eta", "tau", "L", "zeta")}
    P = PLATEAU.evaluate(**q)
    for name in ("eta", "L", "zeta"):
        assert le(P, PLATEAU.evaluate(**{**q, name: q[name] * h}))
    assert le(P, PLATEAU.evaluate(**{**q, "tau": q["tau"] + 1}))
    assert PLATEAU.evaluate(**{**q, "tau": c * q["tau"]}) == pytest.approx(c**2 * P, rel=1e-12)
    for name in ("eta", "zeta"):
        assert PLATEAU.evaluate(**{**q, name: c * q[name]}) == pytest.approx(c**2 * P, rel=1e-12)
    assert PLATEAU.evaluate(**{**q, "L": c * q["L"]}) == pytest.approx(c * P, rel=1e-12)


@SET
@given(dkr())
def test_theorem_specialisations(p):
    """7.6.5: sigma = 0 gives plateau_finite; sigma = zeta = 0 the centralised GD bound."""
    s0 = {**p, "sigma": 0.0}
    fin = {k: v for k, v in s0.items() if k not in ("sigma", "M")}
    assert THM.evaluate(**s0) == pytest.approx(
        boundlab.get("drift.plateau_finite").evaluate(**fin), rel=1e-12
    )
    gd = p["D"] ** 2 / (2 * p["eta"] * p["tau"] * p["T"])
    assert THM.evaluate(**{**s0, "zeta": 0.0}) == pytest.approx(gd, rel=1e-12, abs=1e-300)


def test_theorem_preconditions():
    """7.6.6: eta > 1/(4L) raises in strict mode; eta = 1/(4L) is allowed."""
    base = {"D": 2.0, "tau": 10, "T": 50, "sigma": 0.1, "M": 20, "L": 0.19, "zeta": 0.4}
    THM.evaluate(strict=True, eta=1 / (4 * 0.19), **base)
    for bid in ("drift.fedavg_convex", "drift.plateau", "drift.plateau_finite"):
        b = boundlab.get(bid)
        q = {k: v for k, v in base.items() if k in b.params}
        with pytest.raises(PreconditionError, match="eta <= 1/"):
            b.evaluate(strict=True, eta=1 / (4 * 0.19) * 1.001, **q)
        assert np.isfinite(b.evaluate(eta=2.0, **q))  # not strict: a value
    with pytest.raises(DomainError):
        THM.evaluate(eta=0.1, **{**base, "tau": 0})
    with pytest.raises(DomainError):
        THM.evaluate(eta=0.1, **{**base, "zeta": -1.0})


# ----------------------------------------------------------------- 7.7 lemmas
@SET
@given(dkr(), fl(1.001, 3.0))
def test_client_drift_properties(p, h):
    """7.7.1: increasing in tau, eta, zeta, sigma; zero iff zeta = sigma = 0."""
    q = {k: p[k] for k in ("eta", "tau", "zeta", "sigma")}
    v = LEMMA.evaluate(**q)
    for name in ("eta", "zeta", "sigma"):
        assert le(v, LEMMA.evaluate(**{**q, name: q[name] * h}))
    assert le(v, LEMMA.evaluate(**{**q, "tau": q["tau"] + 1}))
    assert (v == 0) == (q["zeta"] == 0 and q["sigma"] == 0)


@SET
@given(dkr(), st.integers(0, 10**4), st.integers(1, 10**4))
def test_exact_drift_below_lemma(p, kk, tt):
    """7.7.2: tau((1 + 1/tau)^k - 1) c <= Lemma 2.3 for 0 <= k <= tau; fails at k = tau + 1,
    tau = 1."""
    q = {k: p[k] for k in ("eta", "zeta", "sigma")}
    k = min(kk, tt)
    assert le(EXACT.evaluate(tau=tt, k=k, **q), LEMMA.evaluate(tau=tt, **q), 1e-10)
    assert EXACT.violated_preconditions(tau=tt, k=tt + 1, L=p["L"], **q) == ["k <= tau"]
    if q["zeta"] > 0 or q["sigma"] > 0:
        assert EXACT.evaluate(tau=1, k=2, **q) > LEMMA.evaluate(tau=1, **q)


def _shared_hessian_run(seed, tau_, eta_frac, rounds=4, M_=4, d=2):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    A = Q @ np.diag(rng.uniform(0.05, 2.0, d)) @ Q.T
    c = rng.normal(0, 2, (M_, d))
    Lv = np.linalg.eigvalsh(A).max()
    zeta_ = np.max(np.linalg.norm((c - c.mean(0)) @ A.T, axis=1))
    eta_ = eta_frac / (4 * Lv)
    xstar = c.mean(0)

    def F(x):
        diff = x[..., None, :] - c
        return 0.5 * np.mean(np.einsum("...mi,ij,...mj->...m", diff, A, diff), axis=-1)

    x0 = rng.normal(0, 3, d)
    x, traj = x0.copy(), []
    for _ in range(rounds):
        X = np.tile(x, (M_, 1))
        Xs = [X]
        for _ in range(tau_):
            X = X - eta_ * (X - c) @ A.T
            Xs.append(X)
        traj.append(np.array(Xs))  # (tau + 1, M, d)
        x = Xs[-1].mean(0)
    return {
        "traj": traj,
        "L": Lv,
        "zeta": zeta_,
        "eta": eta_,
        "F": F,
        "Fs": F(xstar),
        "D": np.linalg.norm(x0 - xstar),
    }


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 40), fl(0.05, 1.0))
def test_lemmas_on_shared_hessian_toy(seed, tau_, eta_frac):
    """7.7.3 and Lemma 2.3 / Theorem 2.1 on a run: pairwise recursion, drift <= exact <= lemma."""
    r = _shared_hessian_run(seed, tau_, eta_frac)
    par = {"eta": r["eta"], "tau": tau_, "zeta": r["zeta"], "sigma": 0.0}
    ks = np.arange(tau_ + 1)
    exact = EXACT.evaluate(k=ks, strict=True, L=r["L"], **par)
    lemma = LEMMA.evaluate(strict=True, L=r["L"], **par)
    gaps = []
    for Xs in r["traj"]:
        pair = np.sum((Xs[:, :, None, :] - Xs[:, None, :, :]) ** 2, axis=-1)  # (tau+1, M, M)
        nxt = REC.evaluate(d_k=pair[:-1], **par)
        assert np.all(pair[1:] <= nxt * (1 + 1e-10) + 1e-12)
        assert np.all(pair.max(axis=(1, 2)) <= exact * (1 + 1e-10) + 1e-12)
        drift = np.sum((Xs - Xs.mean(1, keepdims=True)) ** 2, axis=-1).max()
        assert drift <= lemma * (1 + 1e-10) + 1e-12
        gaps.extend(r["F"](Xs[1:].mean(1)) - r["Fs"])
    rhs = THM.evaluate(strict=True, D=r["D"], T=len(r["traj"]), M=4, L=r["L"], **par)
    assert np.mean(gaps) <= rhs


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 30), fl(0.05, 1.0), st.sampled_from([1.0, 100.0]))
def test_round_progress_on_heterogeneous_toy(seed, tau_, eta_frac, scale):
    """7.7.4: Lemma 2.2 (with L) holds per round with measured distances and drift."""
    rng = np.random.default_rng(seed)
    M_, d = 4, 2
    A = []
    for _ in range(M_):
        Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
        A.append(Q @ np.diag(rng.uniform(0.01, 1.0, d) * scale) @ Q.T)
    A, c = np.array(A), rng.normal(0, 2, (M_, d))
    Lv = max(np.linalg.eigvalsh(a).max() for a in A)
    eta_ = eta_frac / (4 * Lv)
    xstar = np.linalg.solve(A.mean(0), np.einsum("mij,mj->i", A, c) / M_)

    def F(x):
        diff = x[..., None, :] - c
        return 0.5 * np.mean(np.einsum("...mi,mij,...mj->...m", diff, A, diff), axis=-1)

    x = rng.normal(0, 3, d)
    for _ in range(5):
        Xs = [np.tile(x, (M_, 1))]
        for _ in range(tau_):
            Xs.append(Xs[-1] - eta_ * np.einsum("mij,mj->mi", A, Xs[-1] - c))
        Xs = np.array(Xs)
        xb = Xs.mean(1)
        lhs = np.mean(F(xb[1:])) - F(xstar)
        rhs = PROG.evaluate(
            strict=True,
            dist0=np.sum((xb[0] - xstar) ** 2),
            dist_tau=np.sum((xb[-1] - xstar) ** 2),
            eta=eta_,
            tau=tau_,
            sigma=0.0,
            M=M_,
            L=Lv,
            drift_sum=np.sum((Xs[1:tau_] - xb[1:tau_, None]) ** 2),
        )
        assert lhs <= rhs * (1 + 1e-9) + 1e-12
        x = xb[-1]
