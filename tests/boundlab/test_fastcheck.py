"""boundlab._fastcheck.judge: a precondition's relation, with a relative slack for the
non-strict ones, agrees with the exact comparison wherever the slack cannot matter (infinite or
nan sides, far-apart values) and admits only a relative 1e-12 where it does."""

import itertools

import numpy as np
import pytest

from boundlab._fastcheck import PRECONDITION_RTOL, judge

EXACT = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater}
VALUES = [-np.inf, -1e300, -1.0, 0.0, 1.0, 1e300, np.inf, np.nan]


@pytest.mark.parametrize("op", sorted(EXACT))
def test_infinite_and_nan_sides_are_judged_exactly(op):
    a, b = np.array(list(itertools.product(VALUES, VALUES))).T
    with np.errstate(invalid="raise", over="raise"):  # no inf - inf on the way
        got = judge(op, a, b)
    assert got.tolist() == EXACT[op](a, b).tolist()


def test_equal_infinities_satisfy_both_non_strict_relations():
    inf = np.inf
    assert judge(">=", inf, inf) and judge("<=", inf, inf)
    assert judge(">=", -inf, -inf) and judge("<=", -inf, -inf)
    assert not judge(">", inf, inf) and not judge("<", -inf, -inf)


def test_the_slack_is_relative_and_only_for_non_strict_relations():
    x = 3.0e7
    inside, outside = x * (1 + 0.5 * PRECONDITION_RTOL), x * (1 + 4 * PRECONDITION_RTOL)
    assert judge("<=", inside, x) and not judge("<=", outside, x)
    assert judge(">=", x, inside) and not judge(">=", x, outside)
    assert not judge("<", inside, x) and not judge(">", x, inside)
