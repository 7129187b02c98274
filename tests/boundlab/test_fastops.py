"""The float program's certified cases: exact integer floor/ceil division, TwoSum-exact sums.

Expected values come from Python's integer ``//`` and exact rational arithmetic (fractions),
not from the code under test.
"""

from fractions import Fraction

import numpy as np
import pytest

import boundlab
from boundlab._fastops import OPS, RTOL, run_program


def _int_pairs(rng, n):
    a = rng.integers(-2**53 + 1, 2**53, n).astype(np.int64)
    b = np.where(rng.random(n) < 0.5, rng.integers(1, 100, n), rng.integers(1, 2**53, n))
    b = b * rng.choice([-1, 1], n)
    b[:50] = rng.integers(1, 10**6, 50)
    a[:50] = b[:50] * rng.integers(-10**6, 10**6, 50)  # exact multiples (t/K an integer)
    return a, b


@pytest.mark.parametrize("op, want", [("floordiv", lambda a, b: a // b),
                                      ("ceildiv", lambda a, b: -(-a // b))])
def test_integer_division_is_exact(op, want):
    rng = np.random.default_rng(7)
    a, b = _int_pairs(rng, 4000)
    v, e = OPS[op]([(a.astype(float), 0.0), (b.astype(float), 0.0)], None, None)
    assert np.all(e == 0)
    assert [int(x) for x in v] == [want(int(x), int(y)) for x, y in zip(a, b)]


def test_inexact_division_near_an_integer_is_uncertain():
    # 0.3 / 0.1 rounds to 2.9999999999999996; non-integer inputs: no exactness claimed
    v, e = OPS["floordiv"]([(np.array([0.3, 0.7, -1e-300]), 0.0),
                            (np.array([0.1, 0.2, 1e300]), 0.0)], None, None)
    assert np.isinf(e[0]) and e[1] == 0 and v[1] == 3.0
    assert np.isinf(e[2])  # the quotient underflowed to -0.0; the true floor is -1


def test_sum_error_bound_holds_and_is_exact_when_the_sum_is():
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.standard_normal((3, n)) * 10.0 ** rng.integers(-20, 20, (3, n))
    x[1, :1000] = -x[0, :1000] * (1 + rng.integers(-4, 5, 1000) * 2.0**-52)  # cancellation
    x[2, :500] = 0.0
    v, e = OPS["add"]([(x[0], 0.0), (x[1], 0.0), (x[2], 0.0)], None, None)
    for i in range(n):
        exact = Fraction(x[0, i]) + Fraction(x[1, i]) + Fraction(x[2, i])
        err = abs(exact - Fraction(v[i]))
        assert err <= Fraction(e[i]), i
        assert (err == 0) == (e[i] == 0) or i >= 500, i  # two terms: the bound is the error


def test_one_minus_p_at_p_one_is_exact():
    prog = [("const", (), (1.0, 0.0)), ("arg", (), 0), ("const", (), (-1.0, 0.0)),
            ("mul", (2, 1), None), ("add", (0, 3), None),  # 1 - p
            ("arg", (), 1), ("pow1p", (3, 5), None)]  # (1 - p)^K
    args = [np.array([1.0, 0.5]), np.array([3.0, 3.0])]
    with np.errstate(all="ignore"):  # log1p(-1) = -inf inside pow1p, as in evaluate_program
        v, e = run_program(prog, 4, args)
        assert v.tolist() == [0.0, 0.5] and e.tolist() == [0.0, 0.0]
        v, e = run_program(prog, 6, args)
    assert v[0] == 0.0 and e[0] == 0.0


def test_round_var_form_grid_needs_no_fallback():
    """floor(t/K) is exact, 1 - p at p = 1 is exact: the derivation test's grid is certified
    by the float path (the exact fallback once ran at half of its 15,600 points)."""
    ev = boundlab.get("weight_error.round_var_form").evaluator
    assert any(op == "floordiv" for op, _, _ in ev._prog)
    p = np.linspace(0.001, 1, 200)[:, None]
    t = np.arange(2, 80)[None, :].astype(float)
    for K in (1.0, 2.0, 7.0, 50.0):
        with np.errstate(all="ignore"):
            v, e = run_program(ev._prog, ev._out, [p, np.float64(K), t])
        assert np.all(np.isfinite(v)) and np.all(e <= RTOL * np.abs(v)), K
    env = boundlab.get("weight_error.round_envelope")
    assert env.evaluate(p=1.0, K=3, t=np.arange(1, 6)).tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
