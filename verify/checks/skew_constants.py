"""Seeds 000/001's constants V, E-term, V_min and V_FedAvg, rebuilt by the corollary's own proof
from the theorem's recursion (no run; mpmath at 40 digits).

The proof of Corollary 4 (seed 000, appendix) rewrites Theorem 3 as
Delta_{t+1} <= (1 - eta_t mu B) Delta_t + eta_t^2 C + eta_t D and proves by induction, with
eta_t = beta/(t + gamma), beta mu B > 1, that Delta_t <= psi_t/(t + gamma) where
psi_t = max{gamma Delta_0, (beta^2 C + D beta (t + gamma))/(beta mu B - 1)}; then
F(w_t) - F* <= (L/2) Delta_t. With beta = 1/mu (the corollary's eta_t = 1/(mu (t + gamma))) and
max <= sum this gives

    V = (L/2) (gamma D0^2 + beta^2 C/(beta mu B - 1)),
    E-term = (L/2) max(0, D beta/(beta mu B - 1))

(the clip: with u = t + gamma, a = gamma Delta_0, b = beta^2 C/(beta mu B - 1) >= 0 and
c = D beta/(beta mu B - 1), max{a, b + c u} <= a + b + max(0, c) u; a negative D cannot lower
the bound, BM-5). Here B, C and D are read off ``skew.recursion``'s expression at the
point (it is affine in Delta and quadratic in eta; the structure is checked at a fourth point),
and gamma = max(4L/mu, B, E - 1): eta_0 <= 1/(4L), 1 - eta_t mu B >= 0 (BM-5) and Lemma 2's
eta_{t0} <= 2 eta_t (BM-8). Judged:

* ``skew.speed`` (V) and ``skew.error`` (the E-term) at points where each branch of gamma is
  active, rho_tilde below and above rho_bar;
* ``skew.error.printed`` (unclipped) where rho_tilde >= rho_bar or Gamma = 0; elsewhere the
  printed form does not follow from the induction (BM-5) and the row is not-applicable, saying so;
* ``skew.vmin``: the limit of V as rho_bar -> infinity at the printed gamma = 4L/mu (B and C are
  affine in rho_bar: the limit is the ratio of their slopes);
* ``skew.fedavg_speed``: V at rho_bar = rho_tilde = 1 (alpha = p) with the corrected gamma.

* ``skew.fedavg_speed.printed``: its garbled 4L - 32 E^2 G^2 (erratum BM-3) differs from the
  derivation at every point, so each of its rows is not-applicable, saying so, with the derived
  and the printed values side by side (as ``skew.error.printed`` where BM-5 bites, and
  ``skew.corollary.printed`` outside its preconditions: a printed form is judged only where it
  can follow from the proof).

Example
-------
>>> from verify.suite import Context
>>> rs = skew_constants(Context(quick=True))
>>> sorted({r.verdict for r in rs}), len(rs)
(['holds', 'not-applicable'], 30)
"""

from __future__ import annotations

import functools

import mpmath

import boundlab

from ._common import judge
from ._derive import DERIVED, DPS, mp_function
from ._registry import register

_REC = ("Delta", "eta", "mu", "L", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde")
#: (L, mu, E, G, sigma, Gamma, rho_bar, rho_tilde, D0): gamma = 4L/mu, B, E - 1 active in turn
POINTS = ((2.0, 1.0, 2, 0.5, 0.3, 0.2, 1.5, 2.5, 1.0), (1.0, 1.0, 2, 1.0, 0.0, 0.5, 20.0, 8.0, 2.0),
          (1.0, 1.0, 10, 0.2, 1.0, 0.7, 2.0, 2.0, 0.5), (3.0, 0.5, 3, 2.0, 0.7, 1.3, 0.8, 3.1, 3.0),
          (1.5, 0.25, 1, 0.1, 2.0, 0.0, 4.0, 0.5, 1.2))
NAMES = ("L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde", "D0")


@functools.lru_cache(maxsize=1)
def _recursion():
    """skew.recursion as an mpmath function of :data:`_REC` (made once: sympy's lambdify is
    most of an evaluation's time)."""
    return mp_function(boundlab.get("skew.recursion"), _REC)


def recursion_coefficients(L, mu, E, G, sigma, Gamma, rho_bar, rho_tilde, dps=DPS):
    """(B, C, D) of skew.recursion = (1 - eta mu B) Delta + eta^2 C + eta D at the point
    (mpmath at ``dps`` digits)."""
    r = _recursion()
    with mpmath.workdps(dps):
        def at(delta, eta):
            return r(mpmath.mpf(delta), mpmath.mpf(eta), mu, L, E, G, sigma, Gamma, rho_bar,
                     rho_tilde)
        C = (at(0, 2) - 2 * at(0, 1)) / 2
        D = at(0, 1) - C
        B = (1 + C + D - at(1, 1)) / mpmath.mpf(mu)
        pred = (1 - mpmath.mpf("0.5") * mu * B) * 3 + C / 4 + D / 2
        if abs(at(3, "0.5") - pred) > mpmath.mpf(10) ** (8 - dps) * (1 + abs(pred)):
            raise ValueError("skew.recursion is not (1 - eta mu B) Delta + eta^2 C + eta D")
        return B, C, D


def corollary_constants(L, mu, E, G, sigma, Gamma, rho_bar, rho_tilde, D0, gamma=None,
                        dps=DPS, exact=False):
    """(V, clipped E-term, unclipped E-term) by the corollary's induction with beta = 1/mu;
    ``gamma`` default: max(4L/mu, B, E - 1); floats, or mpmath numbers at ``dps`` digits
    with ``exact``."""
    B, C, D = recursion_coefficients(L, mu, E, G, sigma, Gamma, rho_bar, rho_tilde, dps)
    with mpmath.workdps(dps):
        beta = 1 / mpmath.mpf(mu)
        g = max(4 * mpmath.mpf(L) / mu, B, mpmath.mpf(E) - 1) if gamma is None else gamma
        k = beta * mu * B - 1
        V = mpmath.mpf(L) / 2 * (g * mpmath.mpf(D0) ** 2 + beta**2 * C / k)
        err = mpmath.mpf(L) / 2 * D * beta / k
        out = V, max(0, err), err
        return out if exact else tuple(float(v) for v in out)


def vmin(L, mu, E, G, sigma, Gamma, D0, dps=DPS, exact=False):
    """lim_{rho_bar -> inf} V at gamma = 4L/mu: B, C affine in rho_bar (checked at 3 points);
    a float, or the mpmath number at ``dps`` digits with ``exact``."""
    pts = [recursion_coefficients(L, mu, E, G, sigma, Gamma, rb, rb, dps) for rb in (1, 2, 7)]
    with mpmath.workdps(dps):
        (B1, C1, _), (B2, C2, _), (B7, C7, _) = pts
        bs, cs = B2 - B1, C2 - C1
        if abs(B7 - (B1 + 6 * bs)) + abs(C7 - (C1 + 6 * cs)) > mpmath.mpf(10) ** (8 - dps) * (
                1 + abs(C7)):
            raise ValueError("B, C of skew.recursion are not affine in rho_bar")
        beta = 1 / mpmath.mpf(mu)
        v = mpmath.mpf(L) / 2 * (4 * mpmath.mpf(L) / mu * mpmath.mpf(D0) ** 2
                                 + beta**2 * cs / (beta * mu * bs))
        return v if exact else float(v)


def _row(bid, value, prm, note, extra=()):
    bound = boundlab.get(bid)
    return judge(bound, [value], prm, check="skew_constants", problem=DERIVED,
                 case=", ".join(f"{k}={v}" for k, v in prm.items() if k in bound.params),
                 deterministic=True, note=note, extra_violations=extra)


_HOW = "measured = the corollary's induction on skew.recursion's B, C, D (beta = 1/mu)"


_BM3 = ["BM-3: the printed 4L - 32 E^2 G^2 + sigma^2 (a garbled 4L(32 E^2 G^2 + sigma^2)) does "
        "not follow from the induction at any point"]


@register("skew", "skew.speed", "skew.error", "skew.error.printed", "skew.vmin",
          "skew.fedavg_speed", "skew.fedavg_speed.printed")
def skew_constants(ctx) -> list:
    """V, the E-term, V_min and V_FedAvg rebuilt from skew.recursion by the corollary's proof."""
    out = []
    for pt in POINTS:
        prm = dict(zip(NAMES, pt))
        V, err, _ = corollary_constants(*pt)
        out.append(_row("skew.speed", V, prm, _HOW))
        out.append(_row("skew.error", err, prm, _HOW))
        bites = prm["rho_tilde"] < prm["rho_bar"] and prm["Gamma"] > 0
        bm5 = ["BM-5: where rho_tilde < rho_bar the printed, unclipped E-term does not follow "
               "from the induction"] if bites else []
        out.append(_row("skew.error.printed", err, prm, _HOW, bm5))
        args = {k: prm[k] for k in ("L", "mu", "E", "G", "sigma", "Gamma", "D0")}
        out.append(_row("skew.vmin", vmin(**args), prm, "measured = lim_{rho_bar -> inf} of V "
                        "by the induction at gamma = 4L/mu (slopes of B, C in rho_bar)"))
        fa = corollary_constants(**{**prm, "rho_bar": 1.0, "rho_tilde": 1.0})[0]
        out.append(_row("skew.fedavg_speed", fa, prm, _HOW + ", at rho_bar = rho_tilde = 1"))
        out.append(_row("skew.fedavg_speed.printed", fa, prm, _HOW + ", at rho_bar = rho_tilde "
                        "= 1", _BM3))
    return out
