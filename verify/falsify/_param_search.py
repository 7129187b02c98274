"""The seeded parameter search shared by the routes of :func:`verify.falsify` whose instances
are points of a bound's parameter space (no run): the ``argmin_route``'s defined quantities,
the ``constants_route``'s corollary constants, the ``interval_route``'s moments.

:func:`search` draws 60 % of its budget at random in the parameters' domains
(:func:`sample_param`), then moves locally around the 8 worst (:func:`moves`, shrinking
steps), ranking by :func:`score`. :func:`check_params` validates a saved instance's
parameters (they come from a file); :func:`at_exact` evaluates a catalogue expression at exact
values for a certificate.

>>> from boundlab.domains import Domain
>>> best, n = search({"x": Domain(0, 1)}, {}, lambda p: -abs(p["x"] - 0.5), 300, seed=0)
>>> n, abs(best["x"] - 0.5) < 0.02
(300, True)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

__all__ = ["sample_param", "points", "moves", "score", "search", "identity_ratios",
           "check_params", "at_exact", "identity_certificate", "measure_one",
           "outside"]


def sample_param(domain, n: int, rng, int_hi: int = 10 ** 6) -> np.ndarray:
    """n seeded values in ``domain``: a bounded real interval uniform, log-uniform towards its
    lower and towards its upper end (thirds; the closed upper end itself one time in 20); a
    positive (or non-negative) real log-uniform over lo + [1e-3, 1e3]; an integer 70 % in
    lo..lo+19, else log-uniform up to ``int_hi``.

    >>> from boundlab.domains import Domain
    >>> x = sample_param(Domain(0, 1), 1000, np.random.default_rng(0))
    >>> bool(((x > 0) & (x < 1)).all()), bool((x < 1e-3).any() and (x > 1 - 1e-3).any())
    (True, True)
    """
    lo = domain.lo if math.isfinite(domain.lo) else -1e3
    if domain.integer:
        first = math.floor(lo) + 1 if domain.lo_open else math.ceil(lo)
        top = min(int_hi, domain.hi) if math.isfinite(domain.hi) else int_hi
        big = np.floor(first * np.exp(rng.random(n) * math.log(max(top / max(first, 1), 1))))
        small = rng.integers(first, min(first + 20, int(top) + 1), n)
        return np.clip(np.where(rng.random(n) < 0.7, small, big), first, top).astype(float)
    if not math.isfinite(domain.hi):
        return lo + 10.0 ** rng.uniform(-3, 3, n)
    hi, w = domain.hi, domain.hi - lo
    u, kind = rng.random(n), rng.integers(0, 3, n)
    t = 10.0 ** (-12 * rng.random(n))  # log-uniform in [1e-12, 1]
    x = np.where(kind == 0, lo + u * w, np.where(kind == 1, lo + t * w, hi - t * w))
    if not domain.hi_open:
        x = np.where(rng.random(n) < 0.05, hi, x)
    eps = 1e-15 * max(w, 1.0)
    return np.clip(x, lo + eps if domain.lo_open else lo, hi - eps if domain.hi_open else hi)



def points(doms, fixed, n, rng):
    pts = {k: sample_param(dom, n, rng) for k, dom in doms.items()}
    return {k: np.full(n, fixed[k]) if k in fixed else v for k, v in pts.items()} | \
        {k: np.full(n, v) for k, v in fixed.items() if k not in pts}


def moves(doms, pts, fixed, n, rng, scale):
    """n local moves around ``pts``: each free real moved on a log scale (towards either
    end of a bounded domain), each free integer by a log-normal factor, kept in its domain."""
    i = rng.integers(0, len(next(iter(pts.values()))), n)
    out = {}
    for k, v in pts.items():
        v = v[i]
        dom = doms.get(k)
        if k in fixed or dom is None:
            out[k] = v
            continue
        z = rng.normal(0.0, scale, n)
        if dom.integer:
            w = np.rint(v * np.exp(z) + rng.integers(-1, 2, n))
        elif math.isfinite(dom.hi):
            up = rng.random(n) < 0.5
            w = np.where(up, dom.hi - (dom.hi - v) * np.exp(z), dom.lo + (v - dom.lo) * np.exp(z))
        else:
            w = v * np.exp(z)
        out[k] = np.where(dom.bad_mask(w), v, w)
    return out


def score(r):
    """The search's ranking of ratios: a non-finite stated side (nan ratio: the bound not
    real or overflowing in float64 there) ranks above every ratio within 1e-6 of 1 and below
    every larger one; the certificate decides it in high precision."""
    return np.where(np.isnan(r), 1 + 1e-6, r)



def at_exact(expr, vals: dict):
    """``expr`` at the exact values ``vals`` (name -> sympy number); ``sympy.nan`` where a
    Max / Min / Piecewise meets a non-real argument (sympy refuses to compare it).

    >>> import sympy as sp
    >>> at_exact(sp.Max(1, sp.log(sp.Symbol("x"))), {"x": sp.Integer(-1)})
    nan
    """
    import sympy as sp

    try:
        return expr.xreplace({x: vals[x.name] for x in expr.free_symbols if x.name in vals})
    except (ValueError, TypeError) as exc:
        if "comparable" in str(exc) or "relational" in str(exc).lower():
            return sp.nan
        raise


def search(doms: dict, fixed: dict, ratio, budget: int, seed: int, salt: int = 3003) -> tuple:
    """``(worst parameters, evaluations)`` of ``ratio(points) -> (P,) ratios`` over the
    parameters of ``doms`` (``fixed``: held at the given values): random points, then local
    moves around the 8 worst, seeded by ``[seed, salt]``."""
    rng = np.random.default_rng([int(seed), int(salt)])
    n1 = max(1, int(0.6 * budget))
    pts = points(doms, fixed, n1, rng)
    r = score(ratio(pts))
    done, scale = n1, 1.0
    while done < budget:
        top = np.argsort(-r)[:8]
        n = min(budget - done, 40)
        new = moves(doms, {k: v[top] for k, v in pts.items()}, fixed, n, rng, scale)
        rr = score(ratio(new))
        pts = {k: np.concatenate([pts[k], new[k]]) for k in pts}
        r = np.concatenate([r, rr])
        done, scale = done + n, max(scale * 0.8, 1e-3)
    b = int(np.argmax(r))
    return {k: float(v[b]) for k, v in pts.items()}, done


def identity_ratios(bound, x, pts: dict) -> tuple:
    """``(ratio, stated)`` (P,) of the identity ``bound`` whose measured side is ``x`` (P,) at
    the parameter arrays ``pts``: :func:`~verify.falsify.routes.identity_ratio` (nan where
    either side is not finite; -inf outside the bound's preconditions)."""
    from ._power_truth import _feasible
    from .routes import identity_ratio

    x = np.asarray(x, dtype=float)
    names = set(bound.params) | set(bound.extra_params)
    try:
        with np.errstate(all="ignore"):
            s = np.broadcast_to(np.asarray(bound.evaluate_from(pts), dtype=float), x.shape)
        ok = _feasible(bound, {k: v for k, v in pts.items() if k in names})
    except (ArithmeticError, ValueError, TypeError, KeyError):
        s, ok = np.full(x.shape, np.nan), np.ones(x.shape, dtype=bool)
    r = np.array([identity_ratio(float(a), float(b)) if math.isfinite(a) and math.isfinite(b)
                  else math.nan for a, b in zip(x, s)])
    return np.where(ok, r, -np.inf), s


def check_params(params, names, doms: dict) -> dict:
    """A saved instance's ``params`` (from a file) validated: an object of finite numbers
    holding each of ``names``, each in its domain in ``doms``; returned as floats."""
    if not isinstance(params, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in params.values()):
        raise DomainError("instance params", params, "an object of parameter names and "
                          "finite numbers")
    for k in names:
        if k not in params:
            raise DomainError("instance params", sorted(params), f"values of {tuple(names)}")
        if bool(doms[k].bad_mask(np.asarray(float(params[k])))):
            raise DomainError(f"instance {k}", params[k], doms[k].describe())
    return {k: float(v) for k, v in params.items()}


def identity_certificate(bound, params: dict, x, err_x, kind: str):
    """The :class:`~verify.falsify.certify.Certificate` of an identity whose measured side is
    the mpmath number ``x`` with absolute error ``err_x`` at ``params`` (floats, taken
    exactly): the stated side at 60 digits (sympy, exact parameters); the ratio's error is
    err_x / |stated| plus 1e-50 relative. A stated side that is not a finite real number
    gives ratio inf, saying so."""
    import mpmath
    import sympy as sp

    from .certify import Certificate
    from .routes import identity_ratio

    vals = {n: sp.Rational(v) for n, v in params.items()}
    stated = sp.N(at_exact(bound.expr, vals), 60)
    if stated.free_symbols:
        raise ArithmeticError(f"the bound is not a number at the instance: {stated}")
    if not (stated.is_real and stated.is_finite):  # complex, infinite or undefined
        return Certificate(kind, math.inf, 0.0, float(x), math.nan,
                           f"the bound is not a finite real number at the instance ({stated}; "
                           f"sympy, exact parameters) where {bound.lhs} = "
                           f"{mpmath.nstr(x, 17)} (certificate {kind})")
    with mpmath.workdps(60):
        s = mpmath.mpf(str(stated))
        ratio = identity_ratio(x, s)
        if s == 0:
            e = 0 if err_x == 0 else mpmath.inf
        else:
            e = err_x / abs(s) + abs(ratio) * mpmath.mpf(10) ** -50
        why = "" if float(ratio) < math.inf else (
            f"measured / bound beyond the float range: {bound.lhs} = {mpmath.nstr(x, 6)}, "
            f"the bound {mpmath.nstr(s, 6)} (mpmath)")
        return Certificate(kind, float(ratio), float(e) * (1 + 2 ** -40) + 1e-300,
                           float(x), float(s), why)


def measure_one(evaluate, params: dict) -> tuple:
    """``(ratio, measured, stated)`` floats of ``evaluate(points) -> (ratio, measured, stated)``
    arrays at the one point ``params``: a saved instance's float64 replay."""
    r, x, s = evaluate({k: np.array([v]) for k, v in params.items()})
    return float(r[0]), float(x[0]), float(s[0])


def outside(kind: str):
    """The certificate of an instance outside the bound's preconditions (ratio -inf)."""
    from .certify import Certificate

    return Certificate(kind, -math.inf, 0.0, math.nan, math.nan,
                       "the instance lies outside the bound's preconditions")
