"""Property-based testing helpers for any :class:`~boundlab.core.Bound` (catalogue or user).

:func:`params` is a hypothesis strategy of parameter dicts inside every domain and every
precondition, built by construction (no filtering, so no health-check failures):

1. fixed values (keyword arguments) come first;
2. every precondition gets a *target*: the parameter adjusted to satisfy it. Step sizes
   (:data:`STEP_NAMES`: ``eta``, then ``gamma``) are preferred, then a parameter standing alone
   on one side (``mu`` in ``mu <= L``), then the one in most preconditions;
3. parameters that are no target are drawn from their domains; targets are drawn afterwards, in
   dependency order, from the set where all their preconditions hold given the values drawn
   before: the boundary points are solved for (sympy, or a numeric scan where sympy cannot),
   and the draw is a fraction of the feasible interval: ``eta`` as a fraction of ``1/(4L)``,
   ``gamma`` exactly ``1/(2 E (L + alpha))`` where a precondition pins it.

Magnitudes are bounded (documented, so that evaluation stays finite; see issue 15 for exact
evaluation at extreme points): an unbounded side of a real interval is cut at
``lo + MAGNITUDE * max(1, |lo|)`` (``MAGNITUDE`` = 1e3, so an unconstrained positive real lies
in [1e-3, 1e3]); a draw never comes closer than ``MIN_FRACTION`` (1e-6) of the interval's
length to an open end; integers go at most ``INT_SPAN`` (1000) above their lower end. Extra
parameters (those only preconditions use) are drawn too, so every precondition is judged.
Where ``evaluate`` is not finite, the expression is evaluated exactly (sympy, 50 digits): a
point whose exact value exceeds ``MAX_VALUE`` (1e300) in magnitude, like ``(1 - gamma mu)^E``
at gamma mu = 1e3, E = 900, is rejected (a bound on magnitude, the only filter); a point whose
exact value is representable is kept, so a nan or inf of ``evaluate`` there is never hidden.

Example
-------
>>> import boundlab
>>> from hypothesis import given
>>> from boundlab.testing import params
>>> b = boundlab.get("drift.plateau")
>>> @given(params(b, tau=10))
... def test_plateau(p):
...     assert p["eta"] <= 1 / (4 * p["L"]) * (1 + 1e-12) and p["tau"] == 10
...     assert b.violated_preconditions(**p) == []
>>> test_plateau()
>>> from boundlab.testing import assert_monotone
>>> assert_monotone(b, "eta", "increasing", max_examples=30)
"""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy as sp
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ._exact import check_functions
from .errors import BoundlabError, DomainError, PreconditionError, UnknownNameError

__all__ = ["params", "assert_monotone", "STEP_NAMES", "MAGNITUDE", "MIN_FRACTION", "INT_SPAN",
           "MAX_VALUE"]

STEP_NAMES = ("gamma", "eta")  # preferred targets, last = most preferred
MAGNITUDE = 1e3
MIN_FRACTION = 1e-6
INT_SPAN = 1000
MAX_VALUE = 1e300  # points whose exact value is larger in magnitude are not drawn
_SCAN = 400  # grid points of the numeric root scan (preconditions sympy cannot solve)


def params(bound, **fixed):
    """Hypothesis strategy of dicts of every parameter (and extra parameter) of ``bound``,
    inside every domain and every precondition; ``fixed`` values are kept as given.

    Raises :class:`DomainError` / :class:`PreconditionError` when the fixed values themselves
    are outside a domain or violate a precondition that only they enter.

    >>> import boundlab
    >>> from hypothesis import given, settings
    >>> @settings(max_examples=5)
    ... @given(params(boundlab.get("drift.client_drift"), tau=3))
    ... def show(p):
    ...     assert sorted(p) == ['L', 'eta', 'sigma', 'tau', 'zeta'] and p["tau"] == 3
    >>> show()
    """
    from .registry import resolve

    bound = resolve(bound)  # judged by its own expression; a clashing id is refused
    plan = _plan(bound, _check_fixed(bound, fixed))
    return st.composite(lambda draw: _draw_point(draw, plan))()


def assert_monotone(bound, param: str, direction: str, *, max_examples: int = 100,
                    rtol: float = 1e-12, **fixed) -> None:
    """Search (hypothesis, derandomized) for a point where ``bound`` is not monotone in
    ``param``; raise ``AssertionError`` naming the first counterexample found.

    Each example is a point from :func:`params` plus a second value of ``param`` from the set
    where every precondition still holds; ``direction`` is ``"increasing"`` or
    ``"decreasing"`` (non-strict, up to a relative tolerance ``rtol``). A non-finite value is
    reported as a counterexample too.

    >>> import boundlab
    >>> assert_monotone(boundlab.get("drift.fedavg_convex"), "eta", "increasing",
    ...                 max_examples=50)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: drift.fedavg_convex is not increasing in eta: ...
    """
    if direction not in ("increasing", "decreasing"):
        raise UnknownNameError("direction", direction, ["increasing", "decreasing"])
    from .registry import resolve

    bound = resolve(bound)
    names = {**bound.params, **bound.extra_params}
    if param not in bound.params:
        raise UnknownNameError(f"parameter of {bound.id}", param, list(bound.params))
    if param in fixed:
        raise DomainError(param, fixed[param], "not fixed (it is the parameter that varies)")
    plan = _plan(bound, _check_fixed(bound, fixed))
    sign = 1.0 if direction == "increasing" else -1.0

    @settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow], report_multiple_bugs=False,
              phases=[Phase.explicit, Phase.generate])  # the first counterexample, unshrunk
    @given(st.data())
    def search(data):
        point = data.draw(st.composite(lambda draw: _draw_point(draw, plan))(), label="point")
        pieces = plan.pieces(param, point, every=True)
        other = _draw_value(data.draw, pieces, names[param].domain.integer)
        lo, hi = sorted((point[param], other))
        if lo == hi:
            return
        f_lo = float(bound.evaluate(**{**point, param: lo}))
        f_hi = float(bound.evaluate(**{**point, param: hi}))
        tol = rtol * max(abs(f_lo), abs(f_hi))
        if not (math.isfinite(f_lo) and math.isfinite(f_hi)) or sign * (f_hi - f_lo) < -tol:
            rest = {k: v for k, v in point.items() if k != param}
            raise AssertionError(
                f"{bound.id} is not {direction} in {param}: at {rest}, {param} = {lo!r} gives "
                f"{f_lo!r} but {param} = {hi!r} gives {f_hi!r}")

    search()


# ------------------------------------------------------------------------------ the plan
def _check_fixed(bound, fixed: dict) -> dict:
    names = {**bound.params, **bound.extra_params}
    out = {}
    for k, v in fixed.items():
        if k not in names:
            raise UnknownNameError(f"parameter of {bound.id}", k, list(names))
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise DomainError(k, v, names[k].domain.describe(), "not a number") from None
        if names[k].domain.bad_mask(np.asarray(x)).any():
            raise DomainError(k, v, names[k].domain.describe())
        out[k] = v
    return out


_PLANS: dict = {}  # (id(bound), fixed items) -> (bound, plan); the bound keeps its id alive


def _plan(bound, fixed: dict) -> _Plan:
    key = (id(bound), tuple(sorted((k, float(v)) for k, v in fixed.items())))
    hit = _PLANS.get(key)
    if hit is None or hit[0] is not bound:
        if len(_PLANS) > 512:
            _PLANS.clear()
        hit = _PLANS[key] = (bound, _Plan(bound, fixed))
    return hit[1]


class _Plan:
    """Draw order, the target of each precondition and the solved boundary points."""

    def __init__(self, bound, fixed):
        self.bound, self.fixed = bound, fixed
        self.params = {**bound.params, **bound.extra_params}
        self.pcs = list(bound.preconditions)
        assigned: dict[str, list] = {}
        for pc in self.pcs:
            free = [n for n in pc.names if n not in fixed]
            if not free:
                if not np.all(pc.holds({n: np.asarray(float(fixed[n])) for n in pc.names})):
                    raise PreconditionError(bound.id, [pc.text])
                continue
            assigned.setdefault(max(free, key=lambda n: self._score(n, pc)), []).append(pc)
        self.assigned = assigned
        self.order = self._order(assigned)

    def _score(self, name, pc):
        bare = [p for p in self.pcs if name in _bare(p)]
        rank = STEP_NAMES.index(name) + 1 if name in STEP_NAMES else 0
        return (rank, name in _bare(pc), len(bare),
                sum(name in p.names for p in self.pcs), name)

    def _order(self, assigned):
        free = [n for n in self.params if n not in self.fixed]
        order = [n for n in free if n not in assigned]
        deps = {t: {n for pc in pcs for n in pc.names if n != t and n in assigned}
                for t, pcs in assigned.items()}
        while deps:
            ready = [t for t in deps if not deps[t] - set(order)]
            if not ready:
                raise BoundlabError(f"{self.bound.id}: cannot order the preconditions' "
                                    f"parameters {sorted(deps)} (a cycle); fix one of them")
            order.append(ready[0])
            del deps[ready[0]]
        return order

    # -- the feasible set of one parameter given the others
    def pieces(self, name, values, every=False):
        """Feasible pieces ``(a, b, a_ok, b_ok)`` of ``name`` given ``values`` (the others)."""
        dom = self.params[name].domain
        pcs = [pc for pc in self.pcs if name in pc.names] if every \
            else self.assigned.get(name, [])
        lo = dom.lo if math.isfinite(dom.lo) else -MAGNITUDE
        if not pcs:  # the whole domain window
            closed = not dom.lo_open or not math.isfinite(dom.lo)
            return [(lo, dom.hi, closed, math.isfinite(dom.hi) and not dom.hi_open)]
        pts = {lo}
        if math.isfinite(dom.hi):
            pts.add(dom.hi)
        for pc in pcs:
            pts.update(float(r) for r in self._roots(pc, name, values, lo, dom.hi))
        pts = sorted(p for p in pts if lo <= p <= dom.hi)
        env = {k: np.asarray(float(v)) for k, v in values.items() if k != name}

        def ok(x):
            if dom.bad_mask(np.asarray(x)).any():
                return False
            return all(bool(np.all(pc.holds({**env, name: np.asarray(x)}))) for pc in pcs)

        ends = pts + ([math.inf] if not math.isfinite(dom.hi) else [])
        point_ok = [ok(p) for p in pts]
        seg_ok = [ok(a + (b - a) / 2 if math.isfinite(b) else a + max(1.0, abs(a)))
                  for a, b in zip(ends, ends[1:])]
        out, start = [], None
        for i, a in enumerate(ends[:-1]):
            if seg_ok[i]:
                if start is None:
                    start = (a, point_ok[i])
                if i + 1 == len(seg_ok) or not seg_ok[i + 1]:
                    b = ends[i + 1]
                    out.append((start[0], b, start[1], i + 1 < len(pts) and point_ok[i + 1]))
                    start = None
            elif point_ok[i] and (i == 0 or not seg_ok[i - 1]):
                out.append((a, a, True, True))
        if point_ok and point_ok[-1] and (not seg_ok or not seg_ok[-1]) and \
                len(ends) == len(pts):
            out.append((pts[-1], pts[-1], True, True))
        return out

    def _roots(self, pc, name, values, lo, hi):
        fn, syms = _solved(pc, name)
        args = [np.float64(values[s]) for s in syms]
        with np.errstate(all="ignore"):
            if fn is not None:
                r = np.atleast_1d(np.asarray(fn(*args), dtype=complex)).ravel()
                r = r[np.abs(r.imag) <= 1e-12 * np.abs(r.real)].real
            else:
                r = _scan(pc, name, dict(zip(syms, args)), lo, hi)
        return r[np.isfinite(r)]


def _bare(pc) -> set:
    return {e.name for e in (pc.lhs, pc.rhs) if isinstance(e, sp.Symbol)}


@functools.lru_cache(maxsize=1024)
def _solved(pc, name):
    """Lambdified boundary points of ``pc`` solved for ``name`` (None: sympy cannot)."""
    syms = {s.name: s for s in (sp.sympify(pc.lhs) - sp.sympify(pc.rhs)).free_symbols}
    x = syms[name]
    others = sorted(n for n in syms if n != name)
    try:
        roots = sp.solve(sp.Eq(pc.lhs, pc.rhs), x)
    except (NotImplementedError, ValueError, TypeError):
        return None, others
    if not isinstance(roots, list) or any(isinstance(r, (dict, tuple)) for r in roots):
        return None, others
    if not roots:
        return (lambda *a: np.array([])), others
    for r in roots:  # nothing but sympy's own functions is turned into code
        check_functions(r, f"precondition {pc.text!r} solved for {name}")
    return sp.lambdify([syms[n] for n in others], roots, modules="numpy"), others


@functools.lru_cache(maxsize=1024)
def _difference(pc):
    expr = sp.sympify(pc.lhs) - sp.sympify(pc.rhs)
    check_functions(expr, f"precondition {pc.text!r}")
    syms = sorted(expr.free_symbols, key=lambda s: s.name)
    return sp.lambdify(syms, expr, modules="numpy"), [s.name for s in syms]


def _scan(pc, name, values, lo, hi):
    """Sign changes of lhs - rhs on a grid of the window, refined by bisection."""
    g, free = _difference(pc)
    top = hi if math.isfinite(hi) else lo + MAGNITUDE * max(1.0, abs(lo))
    grid = (np.geomspace(max(lo, top * 1e-9), top, _SCAN) if lo >= 0
            else np.linspace(lo, top, _SCAN))

    def f(x):
        return np.asarray(g(*[x if n == name else values[n] for n in free]), dtype=float) \
            * np.ones_like(x)

    y = f(grid)
    i = np.nonzero(np.sign(y[:-1]) * np.sign(y[1:]) <= 0)[0]
    a, b = grid[i], grid[i + 1]
    for _ in range(80):
        m = (a + b) / 2
        left = np.sign(f(a)) * np.sign(f(m)) <= 0
        a, b = np.where(left, a, m), np.where(left, m, b)
    return np.concatenate([a, b])


# ------------------------------------------------------------------------------ drawing
def _draw_point(draw, plan: _Plan) -> dict:
    values = dict(plan.fixed)
    for name in plan.order:
        pieces = plan.pieces(name, values)
        values[name] = _draw_value(draw, pieces, plan.params[name].domain.integer)
    point = {n: values[n] for n in plan.params}
    with np.errstate(all="ignore"):
        value = np.asarray(plan.bound.evaluate(**point), dtype=float)
    if not np.all(np.isfinite(value)) and _out_of_range(plan.bound, point):
        from hypothesis import reject

        reject()  # the exact value itself exceeds MAX_VALUE: a magnitude bound, not a nan
    return point


def _out_of_range(bound, point) -> bool:
    """True when the exact value (50 digits) at ``point`` exceeds MAX_VALUE in magnitude."""
    subs = {p.symbol: sp.Rational(repr(float(point[n]))) for n, p in bound.params.items()}
    exact = sp.sympify(bound.expr).xreplace(subs).evalf(50)
    if exact.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or not exact.is_number:
        return exact.has(sp.zoo, sp.oo, -sp.oo)
    return bool(abs(exact) > MAX_VALUE)


# static strategies (building strategies per draw costs hypothesis validation time)
_UNIT = st.floats(0.0, 1.0)
_LOG = st.floats(math.log10(MIN_FRACTION), 0.0)
_FRACTION = st.one_of(_UNIT, _LOG.map(lambda v: 10.0 ** v), _LOG.map(lambda v: 1.0 - 10.0 ** v))


_PAIR = st.tuples(_UNIT, _FRACTION)


def _draw_value(draw, pieces, integer: bool):
    """One value from the feasible ``pieces`` (a fraction of a piece's length)."""
    pieces = [q for q in (_bounds(*p, integer=integer) for p in pieces) if q is not None]
    if not pieces:
        from hypothesis import reject

        reject()  # no feasible value given the earlier draws (rare; health-checked)
    return _place(pieces, *draw(_PAIR), integer=integer)


def _bounds(a, b, a_ok, b_ok, *, integer):
    """``(a, b, u_lo, u_hi)`` of a piece: reals are a + (b - a) u with u in [u_lo, u_hi]."""
    if not math.isfinite(b):
        b, b_ok = a + MAGNITUDE * max(1.0, abs(a)), True
    if integer:
        lo = math.ceil(a) + (1 if not a_ok and float(a).is_integer() else 0)
        hi = min(math.floor(b) - (1 if not b_ok and float(b).is_integer() else 0),
                 lo + INT_SPAN)
        return (lo, hi, 0.0, 1.0) if lo <= hi else None
    if a == b:
        return (a, b, 0.0, 0.0)
    return (a, b, 0.0 if a_ok else MIN_FRACTION, 1.0 if b_ok else 1.0 - MIN_FRACTION)


def _place(pieces, pick, u, *, integer):
    a, b, u_lo, u_hi = pieces[min(int(pick * len(pieces)), len(pieces) - 1)]
    u = min(max(u, u_lo), u_hi)
    if integer:
        return int(a + min(int(u * (b - a + 1)), b - a))
    return float(min(max(a + (b - a) * u, a), b))
