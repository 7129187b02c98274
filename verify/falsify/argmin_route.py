""":func:`verify.falsify` for the catalogue's *defined* quantities: a cutoff K or a number of
local steps E that a paper defines as the root or the minimiser of one of its own expressions
(lhs ``cutoff``, ``e_opt``; kind ``identity``: the bound states it in closed form).

The measured side is the **defining property**, solved numerically, never the closed form:

* ``cutoff_cor4`` -- Corollary 4's cutoff (seed 002): the real K >= 0 with (1-p)^(2K) = 1/T,
  the left side taken from ``weight_error.interval_bias``'s expression;
* ``cutoff_opt`` -- the minimiser over real K >= 1 of the (B.6.9) bound
  (``weight_error.average``'s expression, convex in K);
* ``e_opt`` -- the minimiser over real E > 0 of Theorem 4's bound r(E) (``contraction.beta_nc``'s
  expression, convex in E; seed 003 Corollary 1).

Each is ``x* = argmin`` or root of a function whose derivative ``g`` (sympy's derivative of the
catalogue expression, or the root equation itself) increases in x: x* is the lower end of the
range where g >= 0 there, else the sign change of g, found by bracketing and bisection --
in float64 for the search (vectorized over the instances) and in mpmath for the certificate.
Two ``cutoff`` definitions share the name; a bound's ``source`` chooses (it names (B.6.9), or
Corollary 4 / Lemma B.7.1), and the instance's data keep the choice.

Search (seeded; ``budget`` instances): 60 % random parameters in their domains
(:func:`sample_param`: reals in (0, 1) uniform and log-uniform towards both ends, positive
reals log-uniform over [1e-3, 1e3], integers mostly small), then local moves around the 8
worst. Certificate (:func:`certify`): x* at 50 and 70 digits, each enclosed by a bracket whose
end signs are checked; the error is their difference plus the bracket, the stated side at 60
digits (sympy); ``mpmath-50``.

>>> import verify
>>> res = verify.falsify("weight_error.cutoff_cor4", budget=40, seed=0)
>>> res.verdict, res.certificate, abs(res.worst_ratio - 1) < 1e-12
('holds', 'mpmath-50', True)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

from . import _param_search as _ps
from ._param_search import at_exact, sample_param  # noqa: F401 - this module's API

__all__ = ["FAMILY", "LHS", "KINDS", "DEFINITIONS", "definition_of", "params_of", "solve",
           "solve_mp",
           "sample_param", "at_exact", "falsify_route", "measure_instance", "certify"]

FAMILY = "identity.argmin"
LHS = ("cutoff", "e_opt")
KINDS = ("identity",)
CERTIFICATE = "mpmath-50"
_BRACKET = 1100  # doublings / halvings before a bracket is given up (2^1100 > float max)


@dataclass(frozen=True)
class Definition:
    """x* of a catalogue expression: the root of ``equation = 0`` (increasing in ``var``) or
    the minimiser of the expression of ``source_id`` over ``var`` in [lo, inf) (lo excluded
    where ``lo_open``)."""

    name: str
    source_id: str
    var: str
    lo: float
    lo_open: bool
    root_of_bias: bool = False  # cutoff_cor4: (1-p)^(2K) = 1/T


DEFINITIONS = {
    "cutoff_cor4": Definition("cutoff_cor4", "weight_error.interval_bias", "K", 0.0, False, True),
    "cutoff_opt": Definition("cutoff_opt", "weight_error.average", "K", 1.0, False),
    "e_opt": Definition("e_opt", "contraction.beta_nc", "E", 0.0, True),
}


def definition_of(bound) -> Definition:
    """The definition of ``bound``'s left-hand side (``cutoff``: chosen by its source)."""
    from .plan import NotApplicable

    if bound.lhs == "e_opt":
        return DEFINITIONS["e_opt"]
    src = str(getattr(bound, "source", ""))
    if "(B.6.9)" in src:
        return DEFINITIONS["cutoff_opt"]
    if "Corollary 4" in src or "B.7.1" in src:
        return DEFINITIONS["cutoff_cor4"]
    raise NotApplicable(f"{bound.id}: lhs 'cutoff' names two quantities (Corollary 4's K with "
                        "(1-p)^(2K) = 1/T, and the minimiser of the (B.6.9) bound); the bound's "
                        "source names neither '(B.6.9)' nor 'Corollary 4' / 'B.7.1'")


@functools.lru_cache(maxsize=None)
def _g(name: str):
    """``(parameter names, g for numpy, g for mpmath)`` of a definition: g(x, *parameters),
    the derivative of the catalogue expression in its variable, or the root equation."""
    import sympy as sp

    import boundlab
    from boundlab.symbols import sym

    d = DEFINITIONS[name]
    src = boundlab.get(d.source_id)
    x = src.params[d.var].symbol
    if d.root_of_bias:
        g, names = 1 / sym("T") - src.expr, ("T", "p")
    else:
        g = sp.diff(src.expr, x)
        names = tuple(sorted(n for n in src.params if n != d.var))
    syms = [x, *[src.params[n].symbol if n in src.params else sym(n) for n in names]]
    return names, sp.lambdify(syms, g, modules="numpy"), sp.lambdify(syms, g, modules="mpmath")


def params_of(name: str) -> tuple:
    """The parameters of definition ``name`` (its expression's, less the variable)."""
    return _g(name)[0]


def solve(name: str, params: dict) -> np.ndarray:
    """x* (float64) of definition ``name`` at the parameter arrays ``params`` (P,): bracket,
    then 200 bisection steps (geometric while the bracket spans a factor > 4); nan where no
    bracket is found.

    >>> round(float(solve("cutoff_cor4", {"p": np.array([0.5]), "T": np.array([16.0])})[0]), 12)
    2.0
    """
    d = DEFINITIONS[name]
    names, g_np, _ = _g(name)
    args = [np.asarray(params[n], dtype=float) for n in names]
    P = np.broadcast(*args).shape

    def g(x):
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(g_np(x, *args), dtype=float), P)

    lo = np.full(P, 1.0 if d.lo_open else d.lo)
    for _ in range(_BRACKET if d.lo_open else 0):  # an open end: halve until g < 0 (to 0)
        up = ~(g(lo) < 0) & (lo > 0)
        if not up.any():
            break
        lo = np.where(up, lo / 2, lo)
    at_lo = ((lo == 0) & d.lo_open) | (g(lo) >= 0)  # the minimiser (root) is the lower end
    hi = np.maximum(2 * lo, 1.0)
    for _ in range(_BRACKET):
        down = g(hi) < 0
        if not down.any():
            break
        hi = np.where(down, hi * 2, hi)
    for _ in range(200):
        mid = np.where((lo > 0) & (hi > 4 * lo), np.sqrt(lo * hi), (lo + hi) / 2)
        neg = g(mid) < 0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    x = np.where(np.isfinite(hi) & (g(hi) >= 0), (lo + hi) / 2, np.nan)
    return np.where(at_lo, 0.0 if d.lo_open else d.lo, x)


def solve_mp(name: str, params: dict, dps: int, guess: float):
    """``(x*, width)`` in mpmath at ``dps`` digits: a bracket [a, b] with g(a) < 0 <= g(b)
    (checked at its ends), narrowed by bisection to 10^-(dps-5) relative; ``width`` = b - a.
    The lower end of the range, exactly, where g >= 0 there. Parameters enter as the exact
    values of their floats."""
    import mpmath

    d = DEFINITIONS[name]
    names, _, g_mp = _g(name)
    with mpmath.workdps(dps + 10):
        args = [mpmath.mpf(float(params[n])) for n in names]

        def g(x):
            return g_mp(x, *args)

        lo = mpmath.mpf(d.lo)
        if not d.lo_open and g(lo) >= 0:
            return lo, mpmath.mpf(0)
        a, b = _mp_bracket(g, d, guess)
        if a is None:
            return (mpmath.mpf(0), mpmath.mpf(0)) if d.lo_open else (None, None)
        tol = mpmath.mpf(10) ** (-(dps - 5))
        while b - a > tol * abs(b):
            m = mpmath.sqrt(a * b) if a > 0 and b > 4 * a else (a + b) / 2
            a, b = (m, b) if g(m) < 0 else (a, m)
        return (a + b) / 2, b - a


def _mp_bracket(g, d, guess):
    """[a, b] with g(a) < 0 <= g(b), starting around the float64 ``guess`` (g(lo) < 0 is
    known at a closed lower end); (None, None) for an open lower end where g >= 0 down to
    2^-3000 (x* is that end, 0)."""
    import mpmath

    x0 = mpmath.mpf(guess) if guess and math.isfinite(guess) and guess > 0 else mpmath.mpf(1)
    a, b = x0 * (1 - mpmath.mpf(10) ** -6), x0 * (1 + mpmath.mpf(10) ** -6)
    if not d.lo_open and (a <= d.lo or g(a) >= 0):
        a = mpmath.mpf(d.lo)
    for _ in range(3000 if d.lo_open else 0):
        if g(a) < 0:
            break
        a = a / 2
    else:
        if d.lo_open:
            return None, None
    for _ in range(3000):
        if g(b) >= 0:
            return a, b
        b = b * 2
    raise ArithmeticError("no bracket of the defining equation's root below 2^3000")


def _domains(bound, d: Definition) -> dict:
    """The domain of each searched parameter: the judged bound's where it has one, else the
    catalogue expression's, else the symbol's default (T of Corollary 4's equation)."""
    import boundlab
    from boundlab.symbols import domain_of

    src = boundlab.get(d.source_id)
    out = {}
    for n in params_of(d.name):
        p = bound.params.get(n) or bound.extra_params.get(n) or src.params.get(n)
        out[n] = p.domain if p is not None else domain_of(n)
    return out


def _fixed(bound, d: Definition, setting: dict) -> dict:
    """The setting's values of searched parameters; a parameter of the bound that the
    definition lacks and the setting does not give: NotApplicable."""
    from .plan import NotApplicable

    own = set(params_of(d.name))
    fixed = {k: float(v) for k, v in setting.items() if k in own}
    extra = sorted(n for n in bound.params if n not in own and n not in setting)
    if extra:
        from ..measures import NOT_MEASURED

        why = NOT_MEASURED.get(bound.lhs)
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(extra)} are not parameters "
                            f"of {d.name}'s defining expression ({d.source_id}) nor given"
                            + (f" ({bound.lhs}: {why})" if why else ""))
    fixed.update({k: float(v) for k, v in setting.items()
                  if k in bound.params and k not in own})
    return fixed


def evaluate(bound, d: Definition, pts: dict) -> tuple:
    """``(ratio, measured x*, stated)`` (P,) float64 at the parameter arrays ``pts``: ratio
    :func:`identity_ratio` (nan where either side is not finite; -inf outside the bound's
    preconditions)."""
    x = solve(d.name, pts)
    r, s = _ps.identity_ratios(bound, x, pts)
    return r, x, s


def search(bound, d: Definition, budget: int, seed: int, fixed: dict) -> tuple:
    """``(worst parameters, evaluations)``: :func:`verify.falsify._param_search.search` of
    :func:`evaluate`'s ratio (module docstring)."""
    return _ps.search(_domains(bound, d), fixed, lambda pts: evaluate(bound, d, pts)[0],
                      budget, seed)


def falsify_route(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    d = definition_of(bound)
    fixed = _fixed(bound, d, setting)
    params, n = search(bound, d, int(budget), int(seed), fixed)
    data = {"definition": d.name, "params": params}
    r, lhs, rhs = measure_instance(bound, data)
    inst = Instance(bound.id, FAMILY, data, {"quantity": d.name, **params}, r, lhs, rhs,
                    None, bound)
    how = (f"{d.var} with (1-p)^(2K) = 1/T ({d.source_id}'s expression)" if d.root_of_bias
           else f"the minimiser over {d.var} {'>' if d.lo_open else '>='} {d.lo:g} of "
                f"{d.source_id}'s expression")
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r},
                         notes=[f"{bound.lhs}: {how}, solved by bisection (float64 search, "
                                "mpmath certificate); identity ratio 1 + |measured - stated| / "
                                "|stated|"],
                         exact_reason="a defined quantity solved numerically; no PEP model")


def _check_data(bound, data) -> tuple:
    name, params = data.get("definition"), data.get("params")
    if name not in DEFINITIONS:
        raise DomainError("instance definition", name, " or ".join(DEFINITIONS))
    d = DEFINITIONS[name]
    if d.name != definition_of(bound).name:
        raise DomainError("instance definition", name, f"{definition_of(bound).name} (the "
                          f"bound's lhs {bound.lhs!r})")
    return d, _ps.check_params(params, params_of(name), _domains(bound, d))


def measure_instance(bound, data) -> tuple:
    """``(ratio, measured x*, stated)`` of one saved instance (float64; ``data`` validated)."""
    d, params = _check_data(bound, data)
    return _ps.measure_one(lambda pts: evaluate(bound, d, pts), params)


def certify(inst, float_ratio: float):
    """The ``mpmath-50`` certificate (module docstring); ``float64-only`` with the reason
    where the high-precision replay fails."""
    from .routes import or_float64

    return or_float64(_certify_mp, inst, float_ratio)


def _certify_mp(inst):
    bound = inst.judged_bound()
    d, params = _check_data(bound, inst.data)
    r, x_f, _ = measure_instance(bound, inst.data)
    if r == -math.inf:
        return _ps.outside(CERTIFICATE)
    (x50, w50), (x70, w70) = (solve_mp(d.name, params, dps, x_f) for dps in (50, 70))
    if x50 is None or x70 is None:
        raise ArithmeticError("no bracket of the defining root at the instance")
    return _ps.identity_certificate(bound, params, x70, abs(x50 - x70) + w50 + w70,
                                    CERTIFICATE)
