"""Derivation tests of FedAU's Lemma B.3.1 and Appendix A.3 (seed 002; spec ``seeds-002-003.md``
§3.1.1 and §3.1.4): ``weight_error.lemma_b31`` and ``weight_error.corollary4_equiprobable``."""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

import boundlab
from boundlab.symbols import sym

B31 = boundlab.get("weight_error.lemma_b31")
A3 = boundlab.get("weight_error.corollary4_equiprobable")
C4E = boundlab.get("weight_error.corollary4_explicit")
delta, deltat = sym("delta"), sym("deltat")
L, F, Q, I, sigma, N, T, W, PsiG = (sym(n) for n in
                                     ("L", "F", "Q", "I", "sigma", "N", "T", "W", "PsiG"))
S = sym("S_sampled")


def _vec(name, d=2):
    return sp.Matrix(sp.symbols(f"{name}0:{d}", real=True))


def _sq(v):
    return (v.T * v)[0]


def test_b31_is_deltat_squared_with_deltat_2_delta():
    assert sp.expand(B31.expr - deltat.subs(deltat, 2 * delta) ** 2) == 0
    assert sp.expand(B31.expr - (2 * delta) ** 2) == 0
    assert sp.expand(sum(B31.terms.values()) - 4 * delta**2) == 0
    assert (B31.kind, B31.lhs) == ("upper", "reweighted_divergence_sq")


def test_b31_proof_steps_are_identities():
    """(i) 2||u||^2 + 2||v||^2 - ||u + v||^2 = ||u - v||^2 >= 0; (ii) Jensen for simplex phi:
    sum_m phi_m ||w_m||^2 - ||sum_m phi_m w_m||^2 = (1/2) sum_{m,k} phi_m phi_k ||w_m - w_k||^2
    >= 0 (three vectors, phi_3 = 1 - phi_1 - phi_2); so each part is <= 2 delta^2."""
    u, v = _vec("u"), _vec("v")
    assert sp.expand(2 * _sq(u) + 2 * _sq(v) - _sq(u + v) - _sq(u - v)) == 0
    ws = [_vec(f"w{m}_") for m in range(3)]
    f1, f2 = sp.symbols("phi1:3", nonnegative=True)
    phi = (f1, f2, 1 - f1 - f2)
    mean = sum((ph * w for ph, w in zip(phi, ws)), sp.zeros(2, 1))
    lhs = sum(ph * _sq(w) for ph, w in zip(phi, ws)) - _sq(mean)
    rhs = sum(phi[m] * phi[k] * _sq(ws[m] - ws[k]) for m in range(3) for k in range(3)) / 2
    assert sp.expand(lhs - rhs) == 0


def test_b31_constant_is_attained_and_phi_uniform_gives_a3():
    """Two clients with gradients grad f + d and grad f - d (divergence delta = ||d||) and
    phi = (0, 1): ||grad F_1 - grad f~||^2 = ||2 d||^2 = 4 delta^2 = the bound; phi = (1/2, 1/2)
    gives f~ = f and delta^2 (Lemma B.5.1 uses delta, not deltat)."""
    gf, dvec = _vec("g"), _vec("d")
    g1, g2 = gf + dvec, gf - dvec
    assert sp.expand(_sq(g1 - g2) - B31.expr.subs(delta, sp.sqrt(_sq(dvec)))) == 0
    half = (g1 + g2) / 2
    assert sp.expand(_sq(g1 - half) - _sq(dvec)) == 0


def test_a3_q_of_known_equiprobable_participation():
    """omega = 1/p_n: Q = max_t (1/N) sum_n p_n omega^2 = (1/N) sum_n 1/p_n, = N/S at p_n = S/N;
    W = (1/(N T)) sum (p_n omega - 1)^2 = 0."""
    n = sp.Symbol("n", integer=True, positive=True)
    p_n = S / N
    Q_known = sp.summation(p_n * (1 / p_n) ** 2, (n, 1, N)) / N
    assert sp.simplify(Q_known - N / S) == 0
    assert sp.simplify((p_n * (1 / p_n) - 1) ** 2) == 0


def test_a3_is_corollary4_explicit_at_q_n_over_s_w_0():
    sub = C4E.expr.subs({Q: N / S, W: 0, PsiG: 0})
    assert sp.simplify(sub - A3.expr) == 0
    assert N not in A3.expr.free_symbols  # every Q enters as Q/N = 1/S
    for name, term in A3.terms.items():
        src = C4E.terms[name].subs({Q: N / S, W: 0, PsiG: 0})
        assert sp.simplify(src - term) == 0, name
    assert sp.simplify(C4E.terms["weight_error"].subs({W: 0, PsiG: 0})) == 0


def test_a3_rate_is_one_over_sqrt_s_t():
    """sqrt(S T) x bound -> 43 sqrt(L F (I delta^2 + sigma^2)/I) as T -> infinity: O(1/sqrt(ST)),
    linear speedup in S (the paper's O(sqrt(Q)/sqrt(N T)) = O(1/sqrt(S T)))."""
    lead = sp.limit(sp.sqrt(S * T) * A3.expr, T, sp.oo)
    want = 43 * sp.sqrt(L * F * (I * delta**2 + sigma**2) / I)
    assert sp.simplify(lead - want) == 0


def test_a3_preconditions_are_corollary4s_at_q_n_over_s():
    """A3's conditions after S <= N are corollary4_explicit's, in order, at Q = N/S: each holds
    at the same sample points (drawn on both sides of every boundary)."""
    rng = np.random.default_rng(0)
    pairs = list(zip(A3.preconditions[1:], C4E.preconditions))
    assert len(pairs) == len(C4E.preconditions) == 6
    seen = np.zeros((len(pairs), 2), dtype=int)
    for _ in range(300):
        v = dict(L=rng.uniform(0.5, 2), F=rng.uniform(0.1, 3), I=int(rng.integers(1, 5)),
                 delta=rng.uniform(0, 2), sigma=rng.uniform(0, 2), T=int(rng.integers(2, 200)),
                 gamma=10 ** rng.uniform(-3, -1), N=int(rng.integers(2, 20)))
        v["S_sampled"] = int(rng.integers(1, v["N"] + 1))
        v["eta"] = 10 ** rng.uniform(-1.5, 0.5) * v["S_sampled"] / (27 * v["L"] * v["I"]
                                                                   * v["gamma"])
        c4 = {k: x for k, x in v.items() if k != "S_sampled"}
        c4.update(Q=v["N"] / v["S_sampled"], W=0.0, PsiG=0.0)
        for j, (pa, pc) in enumerate(pairs):
            ha = bool(pa.holds({k: np.float64(v[k]) for k in pa.names}))
            hc = bool(pc.holds({k: np.float64(c4[k]) for k in pc.names}))
            assert ha == hc, (pa.text, pc.text, v)
            seen[j, int(ha)] += 1
    assert (seen > 0).all(), seen  # every condition seen both holding and failing


def test_a3_evaluation_against_mpmath():
    kw = dict(L=1.0, F=1.2520363514107105, I=2, delta=2.1242039186265624, sigma=0.0,
              S_sampled=2, T=40)
    f = sp.lambdify([A3.params[n].symbol for n in A3.params], A3.expr, "mpmath")
    with mpmath.workdps(50):
        want = f(*(mpmath.mpf(kw[n]) for n in A3.params))
    assert abs(float(A3.evaluate(**kw)) - float(want)) <= 1e-13 * float(want)
