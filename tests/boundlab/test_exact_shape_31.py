"""Issue 31 leftovers in bound expressions: the imaginary unit, nesting 3000 deep and a
100000-digit constant are refused at construction with a BoundlabError naming the bound (a bound
is a real-valued expression boundlab can compile); ordinary large values still evaluate."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

import boundlab
from boundlab import Bound, Precondition, make_params, sym
from boundlab._exact import MAX_DEPTH, ExactEvaluator
from boundlab.errors import BoundlabError

eta, L = sym("eta"), sym("L")


def _bound(expr, **kw):
    return Bound(id="mine.b31", source="test", expr=expr, params=make_params("eta", "L"),
                 kind="upper", lhs="final_gap", **kw)


@pytest.mark.parametrize("expr", [(1 + sp.I) * eta * L, sp.exp(sp.I * eta) * L,
                                  eta * L + sp.sqrt(-1)])
def test_imaginary_unit_refused(expr):
    # was: (1 + I) eta L evaluated to 1.0 at eta = L = 1 (the imaginary part dropped)
    with pytest.raises(BoundlabError, match=r"^mine.b31: expr: .*imaginary unit I.*real"):
        _bound(expr)


def test_imaginary_unit_in_a_term_or_precondition_refused():
    with pytest.raises(BoundlabError, match=r"term 'x'.*imaginary"):
        _bound(eta * L, terms={"x": sp.I * eta * L})
    pc = Precondition(eta, "<=", sp.I / L, "eta <= I/L")
    with pytest.raises(BoundlabError, match=r"precondition.*imaginary"):
        _bound(eta * L, preconditions=(pc,))


@pytest.mark.parametrize("inner", ["power", "sqrt1p"])
def test_nesting_3000_deep_refused_at_once(inner):
    e = eta * L
    for _ in range(3000):
        e = (sp.Pow(e, sp.S.Half, evaluate=False) if inner == "power"
             else sp.sqrt(1 + e, evaluate=False))
    with pytest.raises(BoundlabError, match=rf"nested more than {MAX_DEPTH} levels"):
        _bound(e)  # was: a RecursionError (or a hang evaluating it)


def test_nesting_below_the_limit_still_evaluates():
    e = eta * L
    for _ in range(40):
        e = sp.sqrt(1 + e, evaluate=False)
    val = float(_bound(e).evaluate(eta=2.0, L=1.0))
    assert val == pytest.approx((1 + 5**0.5) / 2, rel=1e-12)  # sqrt(1 + x)'s fixed point


def test_huge_integer_refused_huge_values_overflow_to_inf():
    # was: a raw ValueError (Python's 4300-digit limit) from the exact fallback
    with pytest.raises(BoundlabError, match=r"exact number of more than 4000 digits"):
        _bound(sp.Integer(10) ** 100000 * eta * L)
    assert math.isinf(float(_bound(sp.Integer(10) ** 300 * eta * L).evaluate(eta=1e10, L=1.0)))


def test_lambdify_path_never_drops_an_imaginary_part():
    x = sp.Symbol("x")
    ev = ExactEvaluator(sp.gamma(x), [x])  # not compiled: lambdify (numpy) path
    assert not ev.checked
    assert float(ev([np.float64(4.0)])) == pytest.approx(6.0)
    ev._plain = lambda *args: np.array(5.0 + 1.0j)  # a non-real float value: settled exactly
    assert float(ev([np.float64(4.0)])) == pytest.approx(6.0)  # (was: 5.0, its real part)


def test_catalogue_bounds_unaffected():
    for bid in boundlab.ids():
        assert boundlab.get(bid).id == bid
