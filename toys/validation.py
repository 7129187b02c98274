"""The one input validator of ``toys`` (scikit-learn ``check_scalar`` style), built on
:class:`boundlab.domains.Domain`: constructors, participation options and every algorithm
piece's hyper-parameters declare their domains and are checked here.

Every check names the parameter, the offending value and the allowed domain, and raises a
:mod:`boundlab.errors` exception.

Example
-------
>>> from toys.validation import check_int
>>> check_int("n_clients", 3, lo=1)
3
>>> check_int("n_clients", 0, lo=1)
Traceback (most recent call last):
...
boundlab.errors.DomainError: n_clients = 0 is outside its domain: integer >= 1
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from boundlab.domains import Domain
from boundlab.errors import DomainError

__all__ = ["as_rng", "check", "check_choice", "check_float", "check_int", "check_numeric",
           "check_weights"]


def check(name: str, value, domain: Domain, description: str | None = None):
    """``value`` as a Python number inside ``domain`` (a :class:`boundlab.domains.Domain`): an
    ``int`` for integer domains, else a ``float``. Bools, complex numbers, strings, NaN and
    values outside the domain raise a :class:`~boundlab.errors.DomainError` naming ``name``,
    the value and the domain (``description`` overrides the domain's own wording). Infinity is
    accepted only where the domain's closed upper end is infinite.

    >>> from boundlab.domains import INT_GE1, POSITIVE
    >>> check("local_steps", 3.0, INT_GE1), check("lr", 0.5, POSITIVE)
    (3, 0.5)
    >>> check("lr", True, POSITIVE)
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: lr = True is outside its domain: positive real (0, inf)
    """
    dom = description or domain.describe()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise DomainError(name, value, dom)
    if bool(domain.bad_mask(np.asarray(float(value)))):
        raise DomainError(name, value, dom)
    return int(value) if domain.integer else float(value)


def check_int(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as an ``int`` in ``[lo, hi]`` (bools and non-integral floats rejected).

    >>> check_int("m", 2.0, lo=1)
    2
    """
    domain = Domain(-math.inf if lo is None else lo, math.inf if hi is None else hi,
                    lo_open=lo is None, hi_open=hi is None, integer=True)
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        value = int(value)  # exact for huge ints (no float rounding in the range test)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise DomainError(name, value, _int_domain(lo, hi))
        return value
    return check(name, value, domain, _int_domain(lo, hi))


def check_float(name: str, value, lo: float | None = None, hi: float | None = None,
                lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a finite ``float`` in the interval given by ``lo``/``hi``.

    >>> check_float("l2", 0.1, lo=0.0)
    0.1
    >>> check_float("mu", 0.0, lo=0.0, lo_open=True)
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: mu = 0.0 is outside its domain: real in (0, inf)
    """
    left = "(" if (lo is None or lo_open) else "["
    right = ")" if (hi is None or hi_open) else "]"
    dom = f"real in {left}{_f(lo, '-inf')}, {_f(hi, 'inf')}{right}"
    domain = Domain(-math.inf if lo is None else lo, math.inf if hi is None else hi,
                    lo_open=lo is None or lo_open, hi_open=True if hi is None else hi_open)
    return check(name, value, domain, dom)


def check_weights(name: str, weights, n: int) -> np.ndarray:
    """Positive finite real client weights of length ``n``, normalised to sum 1 (scaled by their
    largest value first where the sum would overflow or underflow). Strings, mappings, bools
    and complex numbers are refused, not coerced.

    >>> check_weights("weights", [1, 3], 2).tolist(), check_weights("w", [1e308] * 3, 3).tolist()
    ([0.25, 0.75], [0.3333333333333333, 0.3333333333333333, 0.3333333333333333])
    >>> check_weights("weights", [True, True], 2)
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: weights = array(shape=(2,), offending values e.g. [True, True]) \
is outside its domain: array of 2 positive finite real weights (normalised to sum 1) (bools are \
not weights)
    """
    dom = f"array of {n} positive finite real weights (normalised to sum 1)"
    if isinstance(weights, (str, bytes, dict)):
        raise DomainError(name, weights, dom)
    try:
        raw = np.asarray(weights)
    except (TypeError, ValueError):
        raise DomainError(name, weights, dom, "not an array of numbers") from None
    if raw.dtype.kind not in "iuf":
        why = {"b": "bools are not weights", "c": "complex numbers are not weights"}.get(
            raw.dtype.kind, "not an array of numbers")
        raise DomainError(name, weights, dom, why)
    w = raw.astype(float)
    if w.shape != (n,):
        raise DomainError(name, weights, f"array of shape ({n},) (one weight per client)")
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise DomainError(name, w, "positive finite weights (normalised to sum 1)")
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total) or w.max() < 1e-300:
        w = w / w.max()
    return w / w.sum()


def check_numeric(name: str, values, what: str) -> np.ndarray:
    """``values`` as a rectangular array of real numbers (bool, int or float), else a
    DomainError naming ``name``: strings (even of digits), objects and ragged lists are refused.

    >>> check_numeric("ys[0]", ["a", "b"], "labels")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: ys[0] = array(shape=(2,), offending values e.g. ['a', 'b']) \
is outside its domain: labels: a rectangular array of numbers (not strings or objects; map \
string labels to integers first)
    """
    dom = f"{what}: a rectangular array of numbers (not strings or objects" + (
        "; map string labels to integers first)" if what == "labels" else ")")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):  # ragged
        raise DomainError(name, type(values).__name__, dom) from None
    if arr.dtype.kind not in "biuf":
        raise DomainError(name, arr, dom)
    return arr


def check_choice(name: str, value, choices) -> str:
    """``value`` must be one of ``choices`` (an :class:`UnknownNameError` otherwise).

    >>> check_choice("partition", "iid", ["iid", "shards"])
    'iid'
    """
    from boundlab.errors import UnknownNameError

    if value not in choices:
        raise UnknownNameError(name, value, list(choices))
    return value


def as_rng(seed) -> np.random.Generator:
    """A ``numpy.random.Generator`` from an int seed (or the generator itself).

    >>> bool(as_rng(0).integers(10) == as_rng(0).integers(10))
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(check_int("seed", seed, lo=0))


def _int_domain(lo, hi) -> str:
    if lo is not None and hi is None:
        return f"integer >= {lo}"
    if lo is not None and hi is not None:
        return f"integer in [{lo}, {hi}]"
    if hi is not None:
        return f"integer <= {hi}"
    return "integer"


def _f(x, default: str) -> str:
    if x is None:
        return default
    return str(int(x)) if float(x).is_integer() else repr(float(x))
