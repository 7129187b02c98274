"""Every catalogue bound evaluates to its exact value: mpmath (50+ digits) vs ``evaluate``.

For each id, hypothesis draws points (a) over the whole domain, log-uniform in magnitude
(positive reals 1e-150..1e150, (0, 1] down to 1e-300 and up to 1 - 1e-17, integers up to 1e12),
preconditions ignored — a superset of the valid points; (b) inside every precondition
(:func:`boundlab.testing.params`, bounded magnitudes). The property: ``evaluate`` is within
``RTOL`` = 1e-10 relative of the exact value of the *published* expression (``Bound.expr``, not
the stable form), or within the bound's absolute floor (:data:`ABS_FLOOR`: 1e-300 for every
bound, i.e. only the subnormal range is excused); ``inf`` exactly where the exact value exceeds
float64; never nan. The reference has 50 correct digits however much the form cancels: sympy's
adaptive ``evalf`` at the exact (dyadic) float inputs.

Bounds with a stable form (``Bound.stable``): weight_error.interval_mean, interval_var,
interval_factorial_moment, interval_second_moment — each also checked symbolically-by-value
against its closed form below.
"""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boundlab
from boundlab.testing import params as valid_params

RTOL = 1e-10
ABS_FLOOR: dict[str, float] = {}  # per-id overrides; none needed
DEFAULT_FLOOR = 1e-300
FMAX = np.finfo(float).max
IDS = boundlab.ids()
STABLE = [b.id for b in boundlab.catalogue() if b.stable is not None]


def _mag(draw, lo, hi):
    return 10.0 ** draw(st.floats(lo, hi))


@st.composite
def whole_domain(draw, bound):
    out = {}
    for name, prm in {**bound.params, **bound.extra_params}.items():
        d = prm.domain
        if d.integer:
            lo = int(d.lo)
            v = lo + int(_mag(draw, 0, 12)) - 1 if draw(st.booleans()) else \
                lo + draw(st.integers(0, 20))
        elif d.lo == 0 and d.hi == 1:
            kind = draw(st.sampled_from(["small", "near1", "mid"]))
            v = {"small": lambda: _mag(draw, -300, -1),
                 "near1": lambda: 1 - _mag(draw, -16.5, -1),
                 "mid": lambda: draw(st.floats(0.01, 0.99))}[kind]()
            if not d.hi_open and draw(st.integers(0, 9)) == 0:
                v = 1.0
            if d.hi_open:
                v = min(v, float(np.nextafter(1.0, 0.0)))
        elif d.lo == 1 and math.isinf(d.hi):
            v = 1 + _mag(draw, -17, 150)
        elif math.isinf(d.lo):
            v = draw(st.sampled_from([-1.0, 1.0])) * _mag(draw, -150, 150)
        else:
            v = 0.0 if (not d.lo_open and draw(st.integers(0, 9)) == 0) else _mag(draw, -150, 150)
        if d.bad_mask(np.asarray(v)).any():
            v = float(d.lo) + 1.0 if not d.integer else int(d.lo) + 1
        out[name] = v
    return out


def _reference(bound, point):
    """Exact value of the published expression at the float inputs (as exact rationals):
    sympy's adaptive ``evalf`` guarantees 50 correct digits, however much the form cancels."""
    subs = {bound.params[n].symbol: sp.Rational(float(point[n])) for n in bound.params}
    try:
        v = bound.expr.evalf(50, subs=subs, maxn=6000, strict=True)
    except Exception:  # noqa: BLE001 - a value ~0 (PrecisionExhausted), Max of an exact 0
        fn = sp.lambdify(list(subs), bound.expr, modules="mpmath")
        with mpmath.workdps(1000):
            return mpmath.mpf(fn(*[mpmath.mpf(float(point[n])) for n in bound.params]))
    assert v.is_Number and v.is_real, f"{bound.id}: exact value {v} at {point}"
    return mpmath.mpf(sp.Float(v, 50)._mpf_) if v != 0 else mpmath.mpf(0)


def _check(bound, point):
    got = bound.evaluate(**point)
    ref = _reference(bound, point)
    assert not math.isnan(got), f"{bound.id} returned nan at {point}"
    if abs(ref) > FMAX:
        assert math.isinf(got) and (got > 0) == (ref > 0), \
            f"{bound.id} at {point}: exact {mpmath.nstr(ref, 8)} overflows, got {got}"
        return
    floor = ABS_FLOOR.get(bound.id, DEFAULT_FLOOR)
    err = abs(mpmath.mpf(got) - ref)
    assert err <= RTOL * abs(ref) + floor, \
        f"{bound.id} at {point}: got {got!r}, exact {mpmath.nstr(ref, 17)}"


_SETTINGS = settings(max_examples=15, derandomize=True, deadline=None, database=None,
                     suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("bound_id", IDS)
def test_exact_over_whole_domain(bound_id):
    bound = boundlab.get(bound_id)

    @_SETTINGS
    @given(whole_domain(bound))
    def prop(point):
        _check(bound, point)
    prop()


@pytest.mark.parametrize("bound_id", IDS)
def test_exact_inside_preconditions(bound_id):
    bound = boundlab.get(bound_id)

    @settings(_SETTINGS, max_examples=6)
    @given(valid_params(bound))
    def prop(point):
        _check(bound, point)
    prop()


def test_every_catalogue_id_is_covered():
    assert len(IDS) == len(set(IDS)) and len(IDS) >= 77


@pytest.mark.parametrize("bound_id", STABLE)
def test_stable_form_equals_closed_form(bound_id):
    """The stable form is the same function: equal to 1e-15 relative at 200 points at 120
    digits (its small-K p branch is a truncated Taylor series, so not equal to 60 digits), on
    both sides of the series threshold K p = 1/100."""
    from sympy.codegen.cfunctions import expm1, log1p

    bound = boundlab.get(bound_id)
    syms = [p.symbol for p in bound.params.values()]
    stable = bound.stable.replace(log1p, lambda x: sp.log(1 + x)).replace(
        expm1, lambda x: sp.exp(x) - 1)
    f_closed = sp.lambdify(syms, bound.expr, modules="mpmath")
    f_stable = sp.lambdify(syms, stable, modules="mpmath")
    rng = np.random.default_rng(0)
    with mpmath.workdps(120):
        for _ in range(200):
            p = mpmath.mpf(10.0 ** rng.uniform(-12, 0))
            K = mpmath.mpf(int(10 ** rng.uniform(0, 6)) + 1)
            a, b = f_closed(p, K), f_stable(p, K)
            assert abs(a - b) <= mpmath.mpf(10) ** -15 * abs(a), (bound_id, p, K, a, b)


@pytest.mark.parametrize("p, K", [(1e-9, 50), (1e-17, 50)])
def test_issue_points(p, K):
    var = boundlab.get("weight_error.interval_var")
    mean = boundlab.get("weight_error.interval_mean")
    for b in (var, mean):
        ref = _reference(b, {"p": p, "K": K})
        assert abs(b.evaluate(p=p, K=K) - float(ref)) <= 1e-12 * abs(float(ref))
    # the bare closed form really cancels there (so the stable form is needed)
    naive = sp.lambdify([var.params["p"].symbol, var.params["K"].symbol], var.expr, "numpy")
    naive_mean = sp.lambdify([mean.params["p"].symbol, mean.params["K"].symbol], mean.expr,
                             "numpy")
    b = var if p == 1e-9 else mean
    got = (naive if p == 1e-9 else naive_mean)(p, K)  # issue 15 saw -2858 and 0.0
    assert abs(got - float(_reference(b, {"p": p, "K": K}))) > 1.0
