"""A local-step count pinned by a bound's preconditions, judged on runs at an integer count.

Corollary 1 of seed 003 (``contraction.corollary1``) is Theorem 4 at E = E_opt =
(A_c/(2 B_c))^(2/3) T^(1/3), A_c = 4 L Delta + S sigma^2/2, B_c = G^2 A(beta): its preconditions
pin E to that real value (``E <= E_opt`` and ``E >= E_opt``), which a run cannot take (E counts
local steps). Two treatments are unsound or empty:

* judging a run at an integer E != E_opt against the corollary's value r* = min over real E of
  Theorem 4's r(E) claims more than the corollary does (it speaks of E = E_opt only; at another
  E the theorem gives r(E) > r*), so a run above r* there would not falsify it;
* keeping the pin as it is judges nothing (no searched instance meets it exactly).

The sound one used here: **choose the instance's constants so that E_opt is the run's integer
E.** G (Assumption 3: E||g_i||^2 <= G^2) and sigma (Assumption 2: the noise variance <= sigma^2)
are upper bounds, so any larger value is a valid constant of the *same* run. E_opt falls as G
grows and rises as sigma grows. For a run with its measured G and sigma (0: exact gradients):
if E_opt(G, sigma) >= E, G is raised to the G' with E_opt(G', sigma) = E; else sigma is raised to
the sigma' with E_opt(G, sigma') = E. At (G', sigma') the corollary's preconditions hold exactly
and its statement bounds this run, so a run above its value at (G', sigma') falsifies it; and
a mutant >= the corollary everywhere on its (pinned) domain is >= it there too (never falsely
VIOLATED). :func:`unpin` writes this as one bound: the expression at
G' = sqrt(Max(G^2, G_E^2)), sigma' = sqrt(Max(sigma^2, sigma_E(G')^2)) (G_E, sigma_E: the pin
solved for each), with the pin kept as the precondition E_opt(G', sigma') / E = 1 (checked on
every instance, so a construction that misses leaves the instance out, never judges it). For
the corollary itself this is max(3 A_c/(2 sqrt(T E)), 3 B_c E/T) >= Theorem 4's r(E): it holds
wherever Theorem 4 does. This is what :mod:`verify.checks.contraction_nonconvex` does with G
alone (then the runs with E_opt(G) < E are left out).

The corollary's step is Theorem 4's, gamma = 1/(2 L sqrt(T E)): the catalogue states it as a
precondition (after the pin, so that the truth grid of :mod:`verify.falsify._power_truth` meets
both); without it the plan would run the default step 1/L, which the corollary does not cover.

A pin of T, or one that neither constant can move, stays not applicable
(:func:`~verify.falsify._plan_parts.check_no_pinned_setting`).

>>> import boundlab
>>> b = unpin(boundlab.get("contraction.corollary1"))
>>> print(b.preconditions[0].text)
E_opt(G', sigma') / E <= 1
>>> v = dict(L=1.0, Delta=0.5, S=0.25, sigma=0.0, G=1.0, beta=0.5, T=64, E=2)
>>> round(float(b.evaluate(**v)), 6) >= round(float(boundlab.get("contraction.beta_nc")
...     .evaluate(**v)), 6)
True
"""

from __future__ import annotations

import functools

import sympy as sp

from ._plan_parts import LOCAL_NAMES

__all__ = ["unpin", "SLACK", "power_law"]

#: constants of an assumption that bound a quantity from above: any larger value is valid
SLACK = {"G": "Assumption 3's second-moment bound", "sigma": "Assumption 2's noise bound"}


def _pins(bound) -> dict:
    """{name: pinned expression} of the local-step counts pinned by ``<=`` and ``>=``."""
    seen = {}
    for pc in bound.preconditions:
        name = getattr(pc.lhs, "name", None)
        if name in LOCAL_NAMES and pc.op in ("<=", ">="):
            seen.setdefault((name, sp.srepr(pc.rhs)), (set(), pc.rhs))[0].add(pc.op)
    return {name: rhs for (name, _), (ops, rhs) in seen.items() if ops == {"<=", ">="}}


def _positive(expr, keep=()):
    """``expr`` with its symbols (but ``keep``) replaced by positive ones (to read a sign)."""
    return expr.subs({s: sp.Dummy(s.name, positive=True) for s in expr.free_symbols
                      if s not in keep})


def power_law(g, x):
    """``(A, p)`` with g = A x**p (A free of x, p a real number), or None.

    >>> from boundlab.symbols import sym
    >>> power_law(3 * sym("a") / sym("e") ** 2, sym("e"))
    (3*a, -2)
    """
    A, dep = sp.expand_power_base(g).as_independent(x, as_Add=False)
    if dep == 1:
        return A, sp.Integer(0)
    base, p = dep.as_base_exp()
    if base == x and p.is_number and p.is_real:
        return A, p
    return None


@functools.lru_cache(maxsize=256)
def _solved(X, c, E):
    """``(c_E^2, direction)``: the square of the c at which X = E (an expression of the other
    symbols) and the sign of dX/dc (+1, -1), or None. X must be A * B**q with A free of c and B
    = c (a power law) or B affine in c^2 (Corollary 1's A_c = 4 L Delta + S sigma^2/2)."""
    ap = power_law(X, c)
    if ap is not None and ap[1] != 0:
        A, k = ap
        return (E / A) ** (2 / k), (1 if k > 0 else -1)
    A, dep = sp.expand_power_base(X).as_independent(c, as_Add=False)
    base, q = dep.as_base_exp()
    u = sp.Dummy("u", positive=True)
    try:
        poly = sp.Poly(sp.expand(base.subs(c, sp.sqrt(u))), u)
    except sp.PolynomialError:
        return None
    if poly.degree() != 1 or not q.is_number or q == 0 or \
            any(u in co.free_symbols for co in poly.all_coeffs()):
        return None
    b1, b0 = poly.all_coeffs()
    sign = _positive(q * b1)
    direction = 1 if sign.is_positive else -1 if sign.is_negative else None
    if direction is None:
        return None
    return ((E / A) ** (1 / q) - b0) / b1, direction


def _canonical(expr):
    """``expr`` as its printed text reads back (:mod:`verify.falsify._file`'s whitelist
    grammar, no evaluation): a saved result of the unpinned bound then matches its digest."""
    from ._expr_text import parse

    return parse(sp.sstr(expr), {s.name for s in expr.free_symbols}, "the unpinned bound")


def unpin(bound):
    """``bound`` itself when no local-step count is pinned; else the bound judged at the run's
    integer count with raised constants (module docstring), same id; ``bound`` unchanged when
    the pin cannot be met that way (then it stays not applicable)."""
    from boundlab import Bound, Precondition

    pins = _pins(bound)
    if len(pins) != 1:
        return bound
    (name, X), = pins.items()
    allp = {**bound.params, **bound.extra_params}
    E = allp[name].symbol
    slack = {c: _solved(X, allp[c].symbol, E) for c in SLACK if c in allp and
             allp[c].symbol in X.free_symbols}
    slack = {c: v for c, v in slack.items() if v is not None}
    if not slack:
        return bound
    raised = {}
    for c, (sq, _) in sorted(slack.items(), key=lambda kv: kv[1][1]):  # falling ones first
        s = allp[c].symbol
        raised[s] = sp.sqrt(sp.Max(s**2, sq.subs(raised)))
    expr = _canonical(bound.expr.subs(raised, simultaneous=True))
    at = X.subs(raised, simultaneous=True) / E
    text = f"E_opt({', '.join(c + chr(39) for c in sorted(slack, key=len))}) / {name}"
    pcs = [Precondition(at, op, sp.Integer(1), f"{text} {op} 1", "the pin, met by raised "
                        f"{', '.join(SLACK[c] for c in slack)}") for op in ("<=", ">=")]
    pcs += [pc for pc in bound.preconditions
            if not (getattr(pc.lhs, "name", None) == name and pc.rhs == X)]
    names = {s.name for s in expr.free_symbols}
    used = set().union(*[pc.names for pc in pcs]) - names
    return Bound(id=bound.id, source=bound.source, expr=expr,
                 params={n: allp[n] for n in sorted(names)},
                 extra_params={n: allp[n] for n in sorted(used)}, kind=bound.kind,
                 lhs=bound.lhs, description=f"{bound.id} at the run's integer {name}: "
                 f"{', '.join(slack)} raised to the valid constants at which its pin "
                 f"{name} = {sp.sstr(X)} holds (verify.falsify._plan_pins)",
                 preconditions=tuple(pcs), errata=bound.errata)
