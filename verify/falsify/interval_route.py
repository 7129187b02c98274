""":func:`verify.falsify` for the moments of FedAU's cutoff participation interval (seed 002,
Lemma B.6.1 and the bias step of (B.6.8)): lhs ``interval_mean``, ``interval_var``,
``interval_second_moment``, ``interval_factorial_moment``, ``interval_bias_sq``.

A client participating with probability p each round (Bernoulli) has K-cutoff geometric
intervals S: Pr{S = k} = p (1-p)^(k-1) for 1 <= k < K and the tail mass Pr{S = K} =
(1-p)^(K-1). The left-hand sides are E[S], Var[S], E[S^2], E[S(S-1)] and (p E[S] - 1)^2,
computed **exactly** by :func:`interval_moments`: the finite sums over k = 1..K of this
distribution, in integers by binary splitting (p is the exact rational a / 2^e of its float,
so every value is a dyadic rational n / 2^s and no gcd is ever taken). An instance is
``(p, K)``, p in the domain of the bound's ``p``, K an integer in 1..:data:`K_HI`.
Identities are judged two-sided (:func:`verify.falsify.routes.identity_ratio`), upper bounds
(kind ``upper`` on the same quantities) as measured / bound.

Search (seeded; ``budget`` instances): 60 % random (p uniform, log-uniform towards 0 and
towards 1, p = 1 where the domain allows; K 70 % in 1..20, else log-uniform up to
:data:`K_HI`), then local moves around the 8 worst. The measured side is exact for every
instance (a few big-integer products; about 0.6 s at K = 10^4, pure Python integers), the
stated side ranked in float64 (``bound.evaluate``). Certificate: the stated side an exact
sympy Rational (K <= :data:`EXACT_K`: ``exact-rational``, the ratio exact up to its one
rounding to a float) or at 60 digits by mpmath at doubling precision until two precisions
agree (``mpmath-50``); a stated side that is not a finite real number where the measured
moment is one is a violation of the statement (ratio inf, the reason says so).

>>> from fractions import Fraction
>>> m = interval_moments(0.5, 3)   # Pr{S = 1, 2, 3} = 1/2, 1/4, 1/4
>>> as_fraction(m["interval_mean"]), as_fraction(m["interval_second_moment"])
(Fraction(7, 4), Fraction(15, 4))
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from boundlab.errors import DomainError

from ._param_search import at_exact, sample_param
from .routes import identity_ratio

__all__ = ["FAMILY", "LHS", "KINDS", "K_HI", "EXACT_K", "interval_moments", "as_fraction",
           "to_float", "falsify_route", "measure_instance", "certify"]

FAMILY = "identity.interval"
LHS = ("interval_mean", "interval_var", "interval_second_moment", "interval_factorial_moment",
       "interval_bias_sq")
KINDS = ("identity", "upper")
#: the largest cutoff searched (and accepted in a saved instance)
K_HI = 10 ** 4
#: the largest K whose stated side is certified as an exact sympy Rational
EXACT_K = 1000


@functools.lru_cache(maxsize=4096)
def interval_moments(p: float, K: int) -> dict:
    """Every left-hand side of :data:`LHS` at ``(p, K)``, exactly, as dyadic pairs
    ``(n, s)`` = n / 2^s: the sums over k of k^m Pr{S = k} (m = 0, 1, 2), the K-1 geometric
    terms a b^(k-1) / D^k (p = a / D, 1 - p = b / D, D = 2^e) and the tail b^(K-1) / D^(K-1),
    over the common denominator D^K (:func:`_split`).

    >>> {k: as_fraction(v) for k, v in interval_moments(1.0, 4).items()}["interval_var"]
    Fraction(0, 1)
    """
    p, K = _check_pk(p, K)
    a, D = Fraction(p).as_integer_ratio()
    e, b = D.bit_length() - 1, D - a
    pb, *z = _split(1, K, a, b, e)  # b^(K-1); sum_{k<K} k^m a b^(k-1) D^(K-1-k), m = 0, 1, 2
    s = e * K  # denominator D^K; the tail b^(K-1) D over it
    n0, n1, n2 = ((zm << e) + K ** m * (pb << e) for m, zm in enumerate(z))
    if n0 != 1 << s:
        raise ArithmeticError(f"the interval distribution at p={p}, K={K} sums to {n0}/2^{s}")
    bias = (a * n1) - (1 << (e + s))  # p E[S] - 1 over 2^(e + s)
    return {"interval_mean": (n1, s), "interval_second_moment": (n2, s),
            "interval_factorial_moment": (n2 - n1, s),
            "interval_var": ((n2 << s) - n1 * n1, 2 * s),
            "interval_bias_sq": (bias * bias, 2 * (e + s))}


def _split(lo: int, hi: int, a: int, b: int, e: int) -> tuple:
    """``(b^(hi-lo), z_0, z_1, z_2)``, z_m = sum_{lo <= k < hi} k^m a b^(k-lo) D^(hi-1-k), D =
    2^e: Horner in D on short ranges, else the two halves joined (binary splitting: the
    big products are few and balanced, O(M(n) log K) instead of O(K n))."""
    if hi - lo <= 32:
        z, pb = [0, 0, 0], 1
        for k in range(lo, hi):
            t = a * pb
            z = [(z[0] << e) + t, (z[1] << e) + k * t, (z[2] << e) + k * k * t]
            pb *= b
        return (pb, *z)
    mid = (lo + hi) // 2
    left, right = _split(lo, mid, a, b, e), _split(mid, hi, a, b, e)
    shift = e * (hi - mid)
    return (left[0] * right[0],
            *((zl << shift) + left[0] * zr for zl, zr in zip(left[1:], right[1:])))


def as_fraction(v: tuple) -> Fraction:
    """The dyadic pair ``(n, s)`` as a Fraction n / 2^s."""
    return Fraction(v[0], 1 << v[1])


def to_float(v: tuple) -> float:
    """The dyadic pair ``(n, s)`` as the nearest float (Python's int division is correctly
    rounded; 0.0 below the float range)."""
    return v[0] / (1 << v[1])


def _check_pk(p, K) -> tuple:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise DomainError("instance p", p, "a participation probability in (0, 1]")
    if isinstance(K, bool) or not isinstance(K, int) or not 1 <= K <= K_HI:
        raise DomainError("instance K", K, f"an integer in 1..{K_HI}")
    return float(p), int(K)


def _fixed(bound, setting) -> dict:
    """The setting's p, K and other parameters of the bound; a parameter that is neither
    searched nor given: NotApplicable."""
    from .plan import NotApplicable

    fixed = {k: float(v) for k, v in setting.items()
             if k in ("p", "K") or k in bound.params or k in bound.extra_params}
    missing = sorted(n for n in bound.params if n not in ("p", "K") and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} of an interval "
                            f"moment are neither p, K nor given in the setting{_why(bound)}")
    if "K" in fixed and not (fixed["K"].is_integer() and 1 <= fixed["K"] <= K_HI):
        raise DomainError("K", fixed["K"], f"an integer in 1..{K_HI} (exact sums)")
    return fixed


def _why(bound) -> str:
    """The measures registry's word on the lhs (not a run quantity, and why)."""
    from ..measures import NOT_MEASURED

    why = NOT_MEASURED.get(bound.lhs)
    return f" ({bound.lhs}: {why}; judged here from p and K only)" if why else ""


def _ratio(kind, m, s):
    if kind == "identity":
        return identity_ratio(m, s)
    if m == 0:
        return 0.0
    return m / s if s > 0 else math.inf


def evaluate(bound, p, K, fixed=None) -> tuple:
    """``(ratio, measured, stated)`` (P,) float64 at the instances ``(p, K)``: the measured
    side exact then rounded, the stated side ``bound.evaluate`` (nan where it fails); -inf
    outside the bound's preconditions."""
    from ._power_truth import _feasible

    p, K = np.asarray(p, dtype=float), np.asarray(K, dtype=float)
    m = np.array([to_float(interval_moments(float(a), int(k))[bound.lhs])
                  for a, k in zip(p.tolist(), K.tolist())])
    pts = {"p": p, "K": K, **{k: np.full(p.shape, v) for k, v in (fixed or {}).items()
                              if k not in ("p", "K")}}
    try:
        with np.errstate(all="ignore"):
            s = np.broadcast_to(np.asarray(bound.evaluate_from(pts), dtype=float), p.shape)
        ok = _feasible(bound, pts)
    except (ArithmeticError, ValueError, TypeError, KeyError):
        s, ok = np.full(p.shape, np.nan), np.ones(p.shape, dtype=bool)
    r = np.array([_ratio(bound.kind, float(a), float(b)) if math.isfinite(b) else math.nan
                  for a, b in zip(m, s)])
    return np.where(ok, r, -np.inf), m, s


def _sample(bound, fixed, n, rng):
    p_dom = bound.params["p"].domain if "p" in bound.params else \
        _catalogue_domain("p")
    p = np.full(n, fixed["p"]) if "p" in fixed else sample_param(p_dom, n, rng)
    K = np.full(n, fixed["K"]) if "K" in fixed else \
        sample_param(_catalogue_domain("K"), n, rng, int_hi=K_HI)
    return p, K


def _catalogue_domain(name):
    import boundlab

    return boundlab.get("weight_error.interval_mean").params[name].domain


def _moves(bound, p, K, fixed, n, rng, scale):
    """n local moves: p on a log scale towards 0 or 1, K by a log-normal factor and +-1."""
    p_dom = bound.params["p"].domain if "p" in bound.params else _catalogue_domain("p")
    i = rng.integers(0, p.size, n)
    z = rng.normal(0.0, scale, n)
    q = np.where(rng.random(n) < 0.5, 1 - (1 - p[i]) * np.exp(z), p[i] * np.exp(z))
    q = np.where(p_dom.bad_mask(q), p[i], q)
    k = np.clip(np.rint(K[i] * np.exp(rng.normal(0, scale, n)) + rng.integers(-1, 2, n)),
                1, K_HI)
    return (np.full(n, fixed["p"]) if "p" in fixed else q,
            np.full(n, fixed["K"]) if "K" in fixed else k)


def _score(r):
    """The search's ranking of ratios: a non-finite stated side (nan ratio: the bound not
    real or overflowing in float64 there) ranks above every ratio within 1e-6 of 1 and below
    every larger one; the certificate decides it in high precision."""
    return np.where(np.isnan(r), 1 + 1e-6, r)


def search(bound, budget: int, seed: int, fixed: dict) -> tuple:
    """``(p, K, evaluations)`` of the worst instance found (module docstring)."""
    rng = np.random.default_rng([int(seed), 2061])
    n1 = max(1, int(0.6 * budget))
    p, K = _sample(bound, fixed, n1, rng)
    r = _score(evaluate(bound, p, K, fixed)[0])
    done, scale = n1, 1.0
    while done < budget:
        top = np.argsort(-r)[:8]
        n = min(budget - done, 40)
        q, k = _moves(bound, p[top], K[top], fixed, n, rng, scale)
        rr = _score(evaluate(bound, q, k, fixed)[0])
        p, K, r = np.concatenate([p, q]), np.concatenate([K, k]), np.concatenate([r, rr])
        done, scale = done + n, max(scale * 0.8, 1e-3)
    b = int(np.argmax(r))
    return float(p[b]), int(K[b]), done


def falsify_route(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    fixed = _fixed(bound, setting)
    p, K, n = search(bound, int(budget), int(seed), fixed)
    data = {"p": p, "K": K, "fixed": {k: v for k, v in fixed.items() if k not in ("p", "K")}}
    r, lhs, rhs = measure_instance(bound, data)
    inst = Instance(bound.id, FAMILY, data, {"quantity": bound.lhs, "p": p, "K": K}, r, lhs,
                    rhs, None, bound)
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r},
                         notes=[f"{bound.lhs}: the exact moment of the K-cutoff geometric "
                                "interval (finite sum of its distribution, p's exact rational)"],
                         exact_reason="an exact finite sum; no PEP model")


def _check_data(data) -> tuple:
    if not isinstance(data, dict):
        raise DomainError("instance data", data, "an object with p, K and fixed")
    p, K = _check_pk(data.get("p"), data.get("K"))
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in fixed.values()):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    return p, K, {k: float(v) for k, v in fixed.items()}


def measure_instance(bound, data) -> tuple:
    """``(ratio, measured, stated)`` of one saved instance (float64; ``data`` validated)."""
    if bound.lhs not in LHS:
        raise DomainError("bound lhs", bound.lhs, " or ".join(LHS))
    p, K, fixed = _check_data(data)
    r, m, s = evaluate(bound, np.array([p]), np.array([float(K)]), fixed)
    return float(r[0]), float(m[0]), float(s[0])


def certify(inst, float_ratio: float):
    """The exact certificate (module docstring); ``float64-only`` with the reason where the
    exact replay fails."""
    from .routes import or_float64

    return or_float64(_certify, inst, float_ratio, "exact")


def _certify(inst):
    from .certify import Certificate

    bound = inst.judged_bound()
    p, K, fixed = _check_data(inst.data)
    if measure_instance(bound, inst.data)[0] == -math.inf:
        return Certificate("exact-rational", -math.inf, 0.0, math.nan, math.nan,
                           "the instance lies outside the bound's preconditions")
    n, s = interval_moments(p, K)[bound.lhs]
    stated = _stated_rational(bound, p, K, fixed) if K <= EXACT_K else None
    if stated == "not real":
        return Certificate("exact-rational", math.inf, 0.0, to_float((n, s)), math.nan,
                           f"the bound is not a finite real number at p = {p!r}, K = {K} "
                           f"(sympy, exact parameters) where {bound.lhs} = "
                           f"{as_fraction((n, s)) if s < 256 else to_float((n, s))} exactly")
    if stated is not None:
        P, Q = stated  # the exact ratio, then one rounding (error: one unit in the last place)
        ratio = _exact_ratio(bound.kind, n, s, P, Q)
        return Certificate("exact-rational", ratio, ratio * 2.0 ** -52 + 1e-300,
                           to_float((n, s)), _quotient(P, Q),
                           _beyond(ratio, bound.lhs, (n, 1 << s), (P, Q), p, K))
    return _certify_mp(bound, n, s, p, K, fixed)


def _quotient(a: int, b: int) -> float:
    """a / b (integers, b > 0) as the nearest float; +-inf beyond the float range."""
    try:
        return a / b
    except OverflowError:
        return math.inf if a > 0 else -math.inf


def _beyond(ratio, lhs, m, stated, p, K) -> str:
    """The reason of a ratio beyond the float range: both sides to 6 digits (mpmath)."""
    if ratio != math.inf:
        return ""
    import mpmath

    with mpmath.workdps(30):
        m, b = (mpmath.mpf(x[0]) / x[1] for x in (m, stated))
        return (f"measured / bound beyond the float range at p = {p!r}, K = {K}: {lhs} = "
                f"{mpmath.nstr(m, 6)}, the bound {mpmath.nstr(b, 6)} (exact)")


def _stated_rational(bound, p, K, fixed):
    """``(P, Q)`` with the bound = P / Q exactly (sympy); ``"not real"`` where it is
    complex, infinite or undefined; None where it is another number (mpmath judges)."""
    import sympy as sp

    vals = {"p": sp.Rational(p), "K": sp.Integer(K), **{k: sp.Rational(v)
                                                          for k, v in fixed.items()}}
    v = at_exact(bound.expr, vals)
    if v.is_Rational:
        return int(v.p), int(v.q)
    if v.is_number and (v.is_finite is False or v.is_real is False or v is sp.nan):
        return "not real"
    return None


def _exact_ratio(kind, n, s, P, Q) -> float:
    """measured n / 2^s against stated P / Q (Q > 0), exactly, rounded once to a float."""
    if kind == "identity":
        num = abs(n * Q - (P << s))
        if num == 0:
            return 1.0
        return math.inf if P == 0 else 1.0 + _quotient(num, abs(P) << s)
    if n == 0:
        return 0.0
    return _quotient(n * Q, P << s) if P > 0 else math.inf


def _certify_mp(bound, n, s, p, K, fixed):
    """The stated side in mpmath at doubling precision until two agree to 10^-60; the
    measured side exact (an integer scaled by 2^-s)."""
    import mpmath
    import sympy as sp

    from .certify import Certificate

    lhs_name = bound.lhs
    names = sorted({"p", "K", *fixed} & {x.name for x in bound.expr.free_symbols})
    fn = sp.lambdify([sp.Symbol(x) for x in names],
                     bound.expr.xreplace({x: sp.Symbol(x.name) for x in bound.expr.free_symbols}),
                     modules="mpmath")
    vals = {"p": p, "K": K, **fixed}
    prev, prec = None, 256
    while prec <= 1 << 16:
        with mpmath.workprec(prec):
            try:
                cur = fn(*[mpmath.mpf(vals[x]) for x in names])
            except ZeroDivisionError:
                cur = mpmath.nan
        if not (isinstance(cur, mpmath.mpf) and mpmath.isfinite(cur)):
            return Certificate("mpmath-50", math.inf, 0.0, to_float((n, s)), math.nan,
                               f"the bound is not a finite real number at p = {p!r}, K = {K} "
                               f"(mpmath at {prec} bits: {cur}) where {bound.lhs} = "
                               f"{to_float((n, s))!r}")
        if prev is not None and abs(cur - prev) <= abs(cur) * mpmath.mpf(10) ** -60:
            break
        prev, prec = cur, 2 * prec
    else:
        raise ArithmeticError("the bound does not settle to 60 digits below 65536 bits")
    with mpmath.workprec(prec):
        m = mpmath.ldexp(mpmath.mpf(n), -s)
        ratio = _ratio(bound.kind, m, cur)
        e = abs(cur - prev) / abs(cur) * abs(ratio) + abs(ratio) * mpmath.mpf(10) ** -55 \
            if cur != 0 else mpmath.mpf(0)
        why = "" if float(ratio) < math.inf else (
            f"measured / bound beyond the float range at p = {p!r}, K = {K}: {lhs_name} = "
            f"{mpmath.nstr(m, 6)}, the bound {mpmath.nstr(cur, 6)} (mpmath, {prec} bits)")
        return Certificate("mpmath-50", float(ratio), float(e) * (1 + 2 ** -40) + 1e-300,
                           float(m), float(cur), why)
