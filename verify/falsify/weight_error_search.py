""":func:`verify.falsify` for FedAU's weight-error bounds: lhs ``avg_weight_error`` or
``round_weight_error`` (seed 002, Section 3.1.6-3.1.7 of the spec).

These left-hand sides are expectations over the Bernoulli participation of one client, not
values of an optimiser's run, and they are computed exactly
(:mod:`verify.falsify.weight_error_exact`: every participation path, toys' estimator). An
instance is ``(p, K, T)``: the probability p in the domain of the bound's ``p`` ((0, 1] or
(0, 1)), the cutoff K (an integer >= 1; a bound without ``K`` -- Lemma B.7.1 -- gets
Corollary 4's integer cutoff K = max(1, ceil(ln T / (-2 ln(1-p))))), the horizon T in
:data:`T_GRID` (every T <= T_MAX, then up to 100).
The measured array is ``weight_error`` (P, T), E[(p omega_t - 1)^2] per round t < T;
:mod:`verify.measures` turns it into ``avg_weight_error`` (its mean) or ``round_weight_error``
(per round, parameter t), and :func:`verify.falsify.judge.judge` takes the worst admissible
round, as for every other bound.

The search (seeded; ``budget`` = instances evaluated): 60 % random instances (p uniform,
log-uniform towards 0 and towards 1, p = 1 where the domain allows it; K mostly in 1..20,
some up to 10^4; T in :data:`T_GRID` -- its longest for a per-round lhs, whose every round is
judged), then rounds of local moves around the best instances (p moved on a log scale towards
0 and towards 1, K by one, T to a neighbour on the grid). The worst instance is replayed
(:func:`measure_instance`) and certified (:func:`certify_exact`): the left-hand side as an
exact fraction (T <= T_MAX, ``exact-rational``) or in 256-bit fixed point within a proved
error (``fixed-point-256``), the bound at 60 digits (sympy): ``VIOLATED`` means measured /
bound - 1 exceeds that error plus 1e-40 |ratio|.

>>> import boundlab, verify
>>> res = verify.falsify("weight_error.average", budget=60, seed=0)
>>> res.verdict, res.certificate in ("exact-rational", "fixed-point-256"), res.worst_ratio < 1
('holds', True, True)
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from boundlab.errors import DomainError

from ._keys import WEIGHT_ERROR_LHS
from .weight_error_exact import T_MAX, dp_errors, effective_k, exact_errors

__all__ = ["LHS", "KINDS", "FAMILY", "T_GRID", "routes", "falsify_weight_error", "falsify_route",
           "measure_instance",
           "certify", "certify_exact", "evaluate", "CERTIFICATE"]

#: the left-hand sides judged here
LHS = WEIGHT_ERROR_LHS
#: the statement kinds judged here (:mod:`verify.falsify.routes`)
KINDS = ("upper",)
#: the instance family of a result
FAMILY = "fedau.weight_error"
CERTIFICATE = "exact-rational"
#: the horizons searched: every T <= T_MAX (exactly enumerable) and longer ones (the dynamic
#: programme); a per-round lhs is judged at every round of the longest
T_GRID = (*range(1, T_MAX + 1), 16, 20, 24, 32, 40, 48, 64, 80, 100)
#: bits of the fixed-point replay of a horizon beyond T_MAX
BITS = 256
_VARS = ("p", "K", "T", "t")
_K_HI = 10 ** 4


def routes(bound) -> bool:
    """Whether :func:`verify.falsify` judges ``bound`` here (an upper bound on one of LHS)."""
    return getattr(bound, "kind", None) == "upper" and getattr(bound, "lhs", None) in LHS


def corollary4_k(p, T):
    """Corollary 4's integer cutoff max(1, ceil(ln T / (-2 ln(1-p)))) (1 at p = 1).

    >>> corollary4_k(np.array([0.5, 1.0]), np.array([16, 16])).tolist()
    [2, 1]
    """
    p, T = np.asarray(p, dtype=float), np.asarray(T, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.ceil(np.log(T) / (-2.0 * np.log1p(-p)))
    return np.where(p >= 1, 1, np.clip(np.nan_to_num(k, nan=1.0), 1, _K_HI)).astype(int)


def _fixed(bound, setting) -> dict:
    """The bound's parameters the setting holds (p, K, T, t or any other parameter); a
    parameter neither searched nor given: NotApplicable."""
    from .plan import NotApplicable

    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names or k in _VARS}
    missing = sorted(n for n in bound.params if n not in _VARS and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} of a weight-error "
                            "bound are neither p, K, T, t nor given in the setting")
    hi = T_GRID[-1]
    if "T" in fixed and not (fixed["T"].is_integer() and 1 <= fixed["T"] <= hi):
        raise DomainError("T", fixed["T"], f"an integer in 1..{hi} (exact expectation)")
    if "t" in fixed and not (fixed["t"].is_integer() and 1 <= fixed["t"] < hi):
        raise DomainError("t", fixed["t"], f"an integer in 1..{hi - 1} (exact expectation)")
    return fixed


def evaluate(bound, p, K, T, fixed=None):
    """``(ratio, lhs, rhs, round)`` (P,) of the instances ``(p, K, T)`` (arrays of P): exact
    expectations (:func:`dp_errors`, one programme per effective K up to the group's longest
    T, read for every shorter one), judged by :func:`verify.falsify.judge.judge` (worst
    admissible round) once per horizon T."""
    from .judge import judge

    fixed = dict(fixed or {})
    p = np.asarray(p, dtype=float)
    K, T = np.asarray(K, dtype=float), np.asarray(T, dtype=int)
    out = [np.full(p.size, -np.inf), np.full(p.size, np.nan), np.full(p.size, np.nan),
           np.zeros(p.size, dtype=int)]
    keff = np.array([effective_k(k, t) for k, t in zip(K.tolist(), T.tolist())], dtype=int)
    scalars = {k: v for k, v in fixed.items() if k not in ("p", "K", "T", "t")}
    rows = np.full((p.size, int(T.max())), np.nan)
    for ke in sorted(set(keff.tolist())):  # one programme per cutoff, to its longest T
        h = np.flatnonzero(keff == ke)
        tt = int(T[h].max())
        rows[h, :tt] = dp_errors(p[h], min(ke, tt), tt)
    for tt in sorted(set(T.tolist())):  # one judge per horizon
        g = np.flatnonzero(T == tt)
        E = rows[g, :tt]
        if "t" in fixed:  # one round only
            E = np.where(np.arange(tt)[None] == int(fixed["t"]), E, np.nan)
        zero = np.zeros((g.size, 1))
        per = {"p": p[g], "K": K[g], "T": np.full(g.size, float(tt))}
        res = judge(bound, {"weight_error": E, "gap": zero, "dist2": zero}, scalars, per)
        for o, r in zip(out, res):
            o[g] = r
    return tuple(out)


def _sample(rng, n, p_dom, t_free, fixed, per_round):
    """n random instances (p, K, T) inside the domains (module docstring)."""
    u = rng.random(n)
    kind = rng.integers(0, 3, n)
    lo = np.exp(np.log(1e-4) * (1 - u))  # log-uniform in [1e-4, 1]
    p = np.where(kind == 0, u, np.where(kind == 1, lo, 1.0 - lo))
    p = np.clip(p, 1e-6, 1.0)
    if not p_dom.hi_open and n > 1:
        p[:max(1, n // 20)] = 1.0
    p = np.where(p >= 1.0, 1.0 if not p_dom.hi_open else 1 - 1e-6, p)
    if "p" in fixed:
        p[:] = fixed["p"]
    T = rng.choice(T_GRID, n) if t_free else np.full(n, _horizon(fixed, per_round))
    big = np.exp(rng.random(n) * np.log(_K_HI)).astype(int)
    K = np.where(rng.random(n) < 0.7, rng.integers(1, 21, n), big).astype(float)
    if "K" in fixed:
        K[:] = fixed["K"]
    return p, K, T


def _horizon(fixed, per_round) -> int:
    if "t" in fixed:
        return int(fixed["t"]) + 1
    return int(fixed.get("T", T_GRID[-1]))


def _moves(rng, p, K, T, n, p_dom, fixed, t_free, scale):
    """n local moves around the instances (p, K, T)."""
    i = rng.integers(0, p.size, n)
    z = rng.normal(0.0, scale, n)
    towards_one = rng.random(n) < 0.5
    q = np.where(towards_one, 1 - (1 - p[i]) * np.exp(z), p[i] * np.exp(z))
    q = np.clip(q, 1e-6, 1.0 - (1e-6 if p_dom.hi_open else 0.0))
    q = q if "p" not in fixed else np.full(n, fixed["p"])
    k = K[i] if "K" in fixed else np.clip(K[i] + rng.integers(-1, 2, n), 1, _K_HI)
    j = np.searchsorted(T_GRID, T[i]) + rng.integers(-1, 2, n)
    t = np.asarray(T_GRID)[np.clip(j, 0, len(T_GRID) - 1)] if t_free else T[i]
    return q, k.astype(float), t.astype(int)


def search(bound, budget: int, seed: int, fixed: dict):
    """The worst instance found, ``(p, K, T, evaluations)``: :data:`T_GRID` x integer K x
    p in its domain, random then local moves around the 8 best (module docstring)."""
    rng = np.random.default_rng([int(seed), 2002])
    per_round = bound.lhs == "round_weight_error"
    p_dom = bound.params["p"].domain if "p" in bound.params else SimpleNamespace(hi_open=False)
    k_free, t_free = "K" in bound.params, not per_round and "T" not in fixed
    n1 = max(1, int(0.6 * budget))
    p, K, T = _sample(rng, n1, p_dom, t_free, fixed, per_round)
    pts = [p, K, T]
    r = evaluate(bound, *_with_k(p, K, T, k_free, fixed), fixed)[0]
    done, scale = n1, 1.0
    while done < budget:
        top = np.argsort(-r)[:8]
        n = min(budget - done, 40)
        q, k, t = _moves(rng, pts[0][top], pts[1][top], pts[2][top], n, p_dom, fixed,
                         t_free, scale)
        rr = evaluate(bound, *_with_k(q, k, t, k_free, fixed), fixed)[0]
        pts = [np.concatenate([a, b]) for a, b in zip(pts, (q, k, t))]
        r = np.concatenate([r, rr])
        done, scale = done + n, max(scale * 0.8, 1e-3)
    b = int(np.argmax(r))
    p, K, T = _with_k(pts[0][b:b + 1], pts[1][b:b + 1], pts[2][b:b + 1], k_free, fixed)
    return float(p[0]), int(K[0]), int(T[0]), done


def _with_k(p, K, T, k_free, fixed):
    """(p, K, T) with Corollary 4's cutoff where the bound has no K of its own."""
    if k_free or "K" in fixed:
        return p, K, T
    return p, corollary4_k(p, T).astype(float), T


def falsify_weight_error(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    fixed = _fixed(bound, setting)
    p, K, T, n = search(bound, int(budget), int(seed), fixed)
    data = {"p": p, "K": K, "T": T, "fixed": fixed,
            "K_rule": "searched" if "K" in bound.params or "K" in fixed else "corollary4"}
    r, lhs, rhs, k = measure_instance(bound, data)
    run = {"algorithm": "fedau", "rounds": T, "K": K, "p": p}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    notes = [f"{bound.lhs}: the exact expectation over the participation paths of one client "
             f"(T in {T_GRID[0]}..{T_GRID[-1]}; toys' Algorithm 2 estimator, paths summed by "
             "its state)",
             "K = Corollary 4's integer cutoff ceil(ln T / (-2 ln(1-p)))"
             if data["K_rule"] == "corollary4" else "K searched (integers >= 1)"]
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=notes,
                         exact_reason="the expectation is exact (every participation path); "
                                      "no PEP model")


falsify_route = falsify_weight_error  # the route's search (:mod:`verify.falsify.routes`)


def _check_data(data) -> tuple:
    p, K, T = data.get("p"), data.get("K"), data.get("T")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise DomainError("instance p", p, "a participation probability in (0, 1]")
    for name, v in (("K", K), ("T", T)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise DomainError(f"instance {name}", v, "an integer >= 1")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict) or not all(isinstance(v, (int, float)) and
                                              not isinstance(v, bool) for v in fixed.values()):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    return float(p), int(K), int(T), {k: float(v) for k, v in fixed.items()}


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs, round)`` of one saved instance (float64, exact expectation)."""
    p, K, T, fixed = _check_data(data)
    r, lhs, rhs, k = evaluate(bound, np.array([p]), np.array([float(K)]), np.array([T]), fixed)
    return float(r[0]), float(lhs[0]), float(rhs[0]), int(k[0])


def _exact_lhs(bound, p, K, T, k):
    """``(lhs, kind, per-round parameters, error)``: the measured value at round k as a
    Fraction, exact (T <= T_MAX: every path, error 0) or in fixed point to :data:`BITS` bits
    (longer T: the dynamic programme, within the proved ``error``)."""
    from fractions import Fraction

    from ..measures import measure

    if T <= T_MAX:
        E, kind, err = exact_errors(p, K, T), CERTIFICATE, Fraction(0)
    else:
        (E, err), kind = dp_errors([p], min(K, T), T, bits=BITS), f"fixed-point-{BITS}"
    values, per = measure(bound.lhs, {"weight_error": np.array([E], dtype=object)})
    return values[0][k if values.shape[1] > 1 else 0], kind, per, err


def certify(inst, float_ratio: float):
    """:func:`certify_exact`, or a float64-only certificate (with why) where the exact replay
    fails (:func:`verify.falsify.api` calls it for this module's instances)."""
    from .routes import or_float64

    return or_float64(certify_exact, inst, float_ratio, "exact")


def certify_exact(inst):
    """The :class:`~verify.falsify.certify.Certificate` of a weight-error instance at its
    worst round: the lhs as a fraction (:func:`_exact_lhs`), the bound at 60 digits (sympy,
    at the float parameters' exact rationals); the certified error on the ratio is the lhs's
    proved error over the bound plus 1e-40 |ratio|."""
    import mpmath
    import sympy as sp

    from .certify import Certificate

    bound = inst.judged_bound()
    p, K, T, fixed = _check_data(inst.data)
    r, _, _, k = measure_instance(bound, inst.data)
    if r == -math.inf:
        return Certificate(CERTIFICATE, -math.inf, 0.0, math.nan, math.nan,
                           "no round of the instance lies inside the bound's preconditions")
    lhs, kind, per, err = _exact_lhs(bound, p, K, T, k)
    vals = {"p": sp.Rational(p), "K": sp.Integer(K), "T": sp.Integer(T),
            **{n: sp.Rational(v) for n, v in fixed.items()},
            **{n: sp.Rational(float(v[0][k])) for n, v in per.items()}}
    syms = {s: vals[s.name] for s in bound.expr.free_symbols if s.name in vals}
    rhs = sp.N(bound.expr.subs(syms), 60)
    if not rhs.is_real:
        raise ArithmeticError(f"the bound is not real at the instance: {rhs}")
    with mpmath.workdps(60):
        lhs_m, rhs_m = mpmath.mpf(lhs.numerator) / lhs.denominator, mpmath.mpf(str(rhs))
        if lhs <= err:  # indistinguishable from 0
            return Certificate(kind, 0.0, 0.0, float(lhs_m), float(rhs_m))
        if rhs_m <= 0:
            return Certificate(kind, math.inf, 0.0, float(lhs_m), float(rhs_m))
        ratio = lhs_m / rhs_m
        e = (mpmath.mpf(err.numerator) / err.denominator) / rhs_m + abs(ratio) * 1e-40
        if ratio - e > mpmath.mpf(2) ** 1000:  # beyond the float range: say how far
            return Certificate(kind, math.inf, math.inf, float(lhs_m), float(rhs_m),
                               f"certificate {kind}: measured / bound = "
                               f"{mpmath.nstr(ratio, 6)} +- {mpmath.nstr(e, 3)} (the bound "
                               f"is {mpmath.nstr(rhs_m, 6)} > 0, beyond the float range)")
        return Certificate(kind, float(ratio), float(e) * (1 + 2 ** -40) + 1e-300,
                           float(lhs_m), float(rhs_m))
