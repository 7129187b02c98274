"""Derivation tests of the general skew bounds (seeds 000/001, eqs. (16)-(19) / (13)-(17)).

Spec ``seeds-000-001-004.md`` §3.1, §3.10, errata BM-15/16/17, appendix V.1 E12. The random
weight audit uses explicit seeds; the catalogue is compared with formulas typed here.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

import boundlab
from boundlab.symbols import sym

R = sp.Rational
L, mu, G, sigma, Gamma = (sym(n) for n in ("L", "mu", "G", "sigma", "Gamma"))
E, T, D0, N = sym("E"), sym("T"), sym("D0"), sym("N")
pi_, Pi_, p_min, rb, rt = sym("pi"), sym("Pi"), sym("p_min"), sym("rho_bar"), sym("rho_tilde")
g = sp.Symbol("g", positive=True)  # a common step-size shift

LAMBDA1 = 4 * L * (32 * E**2 * G**2 + sigma**2) / (3 * mu**2)
LAMBDA2 = 8 * L * Gamma / (3 * mu)


def spec(s: str, gamma) -> sp.Expr:
    """Parse a spec string of §3.10 with C0 = V_min, lambda1, lambda2 substituted."""
    loc = {n: sym(n) for n in ("L", "mu", "Gamma", "T", "N", "p_min")}
    loc.update(
        kappa_min=pi_,
        kappa_max=Pi_,
        Rational=R,
        gamma=gamma,
        C0=8 * L**2 * Gamma / mu**2 + L * gamma * D0**2 / 2,
        lambda1=LAMBDA1,
        lambda2=LAMBDA2,
    )
    return parse_expr(s, local_dict=loc)


S17 = "(C0 + lambda1/kappa_min)/(T + gamma) + lambda2*(kappa_max - kappa_min)/kappa_min"
S19 = "(C0 + lambda1/kappa_min)/(T + gamma) + lambda2*(1/(kappa_min*p_min) - N)"
SUNI = "(C0 + lambda1/kappa_min)/(T + gamma) + lambda2*(N/kappa_min - N)"
SPI = "(1 - (N - 1)*kappa_min*p_min)/p_min"


def same(a, b) -> bool:
    return sp.simplify(sp.expand(a - b)) == 0


def _at_common_gamma(bid: str) -> sp.Expr:
    """The catalogue expression with its step-size shift (a Max) replaced by the symbol g."""
    expr = boundlab.get(bid).expr
    maxes = expr.atoms(sp.Max)
    assert len(maxes) == 1, maxes
    return expr.xreplace({maxes.pop(): g})


def test_general_bounds_match_spec_strings():
    """lambda1, lambda2, C0 identified by substitution (spec §3.10); Pi bound (18)."""
    assert same(_at_common_gamma("skew.pi_bound"), spec(S17, g))
    assert same(_at_common_gamma("skew.pi_bound_pmin"), spec(S19, g))
    assert same(_at_common_gamma("skew.pi_bound_uniform"), spec(SUNI, g))
    assert same(boundlab.get("skew.Pi_upper").expr, spec(SPI, g))
    # the shift each bound uses dominates the corrected gamma for every feasible rho_bar <= Pi
    (m17,) = boundlab.get("skew.pi_bound").expr.atoms(sp.Max)
    assert set(m17.args) == {4 * L / mu, 1 + R(3, 8) * Pi_, E - 1}
    (m19,) = boundlab.get("skew.pi_bound_pmin").expr.atoms(sp.Max)
    assert any(same(a, 1 + R(3, 8) * spec(SPI, g)) for a in m19.args)


def test_general_bound_17_follows_from_the_corollary():
    """At a common gamma, 1/rho_bar <= 1/pi and rho_tilde/rho_bar <= Pi/pi give (17)."""
    cg = boundlab.get("skew.corollary_gamma")
    b17 = boundlab.get("skew.pi_bound")
    rng = np.random.default_rng(7)
    n = 2000
    mu_ = 10 ** rng.uniform(-1, 0.5, n)
    par = {
        "T": rng.integers(1, 10_000, n).astype(float),
        "L": mu_ * 10 ** rng.uniform(0, 1.5, n),
        "mu": mu_,
        "E": rng.integers(1, 20, n).astype(float),
        "G": 10 ** rng.uniform(-2, 1, n),
        "sigma": 10 ** rng.uniform(-2, 1, n),
        "Gamma": 10 ** rng.uniform(-2, 1, n),
        "D0": 10 ** rng.uniform(-1, 1, n),
    }
    pi = rng.uniform(0.01, 1, n)
    Pi = 1 + rng.exponential(3, n)
    rho_bar = pi + (Pi - pi) * rng.random(n)
    rho_tilde = Pi * rng.random(n)
    gam = np.maximum.reduce([4 * par["L"] / mu_, 1 + 3 * Pi / 8, par["E"] - 1])
    lhs = cg.evaluate(gamma=gam, rho_bar=rho_bar, rho_tilde=rho_tilde, **par)
    assert not any(
        cg.violated_preconditions(gamma=gam, rho_bar=rho_bar, rho_tilde=rho_tilde, **par)
    )
    rhs = b17.evaluate(pi=pi, Pi=Pi, **par)
    assert np.all(lhs <= rhs * (1 + 1e-12))


def test_e12_general_bound_inequalities():
    """BM-15, BM-17 (and the chain (18) of BM-16): random weights, 0 violations."""
    rng = np.random.default_rng(0)
    rho_range, Pi_up = boundlab.get("skew.rho_range"), boundlab.get("skew.Pi_upper")
    bad, worst = 0, 0.0
    for _ in range(3000):
        n = int(rng.integers(2, 12))
        p = rng.dirichlet(np.ones(n))
        a = rng.dirichlet(np.ones(n) * rng.uniform(0.05, 3))
        a = np.maximum(a, 1e-12)
        a /= a.sum()
        x = rng.exponential(1, n)  # F_i(w) - F_i* >= 0
        kappa = a / p
        rho = (a @ x) / (p @ x)
        k_min, k_max = kappa.min(), kappa.max()
        c1 = k_min - 1e-12 <= rho <= k_max + 1e-12  # pi_t <= rho <= Pi_t
        c2 = rho <= rho_range.evaluate(p_min=p.min()) * (1 + 1e-12)  # rho <= 1/min p
        c3 = (
            k_max * p.min() <= a.max() + 1e-12
            and a.max() <= 1 - (n - 1) * a.min() + 1e-12
            and a.min() >= k_min * p.min() - 1e-12
        )
        c3b = k_max <= Pi_up.evaluate(pi=min(k_min, 1.0), p_min=p.min(), N=n) * (1 + 1e-9)
        c4 = k_max / k_min - 1 <= 1 / (k_min * p.min()) - n + 1e-9  # Pi/pi - 1 <= (19)'s term
        c5 = k_min <= 1 + 1e-12 <= k_max + 2e-12  # pi_t <= 1 <= Pi_t
        bad += not (c1 and c2 and c3 and c3b and c4 and c5)
        worst = max(worst, rho * p.min())
    assert bad == 0
    assert 0.5 < worst <= 1  # rho never exceeds 1/min p: not 'arbitrarily large'
    # ... and the supremum 1/min p is approached (FedMax on the lightest client)
    p, a, x = np.array([0.1, 0.9]), np.array([1 - 1e-9, 1e-9]), np.array([1.0, 1e-9])
    assert 0.999 < (a @ x) / (p @ x) * p.min() <= 1
    # alpha = p gives rho = 1 identically
    p = rng.dirichlet(np.ones(5))
    x = rng.exponential(1, (100, 5))
    assert np.allclose((x @ p) / (x @ p), 1.0)


def test_e12_uniform_identity_and_lambda2():
    """BM-16: uniform p: (N - (N - 1) pi)/pi - 1 = N/pi - N; the text's E omits lambda2."""
    assert same((N - (N - 1) * pi_) / pi_ - 1, N / pi_ - N)
    # (19) at p_min = 1/N is B(15), at a common gamma and with the catalogue's own gammas
    assert same(
        _at_common_gamma("skew.pi_bound_pmin").subs(p_min, 1 / N),
        _at_common_gamma("skew.pi_bound_uniform"),
    )
    assert same(
        boundlab.get("skew.pi_bound_pmin").expr.subs(p_min, 1 / N),
        boundlab.get("skew.pi_bound_uniform").expr,
    )
    assert same(boundlab.get("skew.Pi_upper").expr.subs(p_min, 1 / N), N - (N - 1) * pi_)
    # (17)'s error term at Pi = Pi_upper is (19)'s error term
    e17 = boundlab.get("skew.pi_bound").terms["error"]
    e19 = boundlab.get("skew.pi_bound_pmin").terms["error"]
    assert same(e17.subs(Pi_, spec(SPI, g)), e19)
    # the printed 'E <= 1/(pi min p_i) - N' lacks the factor lambda2 = 8 L Gamma/(3 mu)
    assert same(e19 / (1 / (pi_ * p_min) - N), LAMBDA2)
    assert not same(LAMBDA2, 1)
