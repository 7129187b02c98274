"""Value checks shared by :class:`boundlab.core.Bound` and its cached form (numpy only).

Validation of parameter values against their domains, broadcasting, the judgement of a
precondition from its two evaluated sides, and the shaping of results. :mod:`boundlab.core`
(sympy) and :mod:`boundlab._fastbound` (the evaluator cache, no sympy) both call these very
functions, so a cached evaluation raises the same errors and returns the same bits.

Example
-------
>>> import numpy as np
>>> from boundlab.domains import POSITIVE
>>> validate("demo.b", {"eta": POSITIVE}, {}, {"eta": 0.5})
{'eta': array(0.5)}
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .errors import DomainError, MissingParameterError, UnknownNameError

__all__ = ["PRECONDITION_RTOL", "MAX_EXACT_INT", "as_real_array", "check_shapes", "validate",
           "judge", "failed_preconditions", "unchecked_preconditions", "shape_output"]

# relative tolerance used when judging a precondition (eta = 1/(4L) computed in floating point
# must count as satisfied)
PRECONDITION_RTOL = 1e-12


def validate(owner: str, params: Mapping, extra: Mapping, values: Mapping, *,
             allow_extra: bool = False) -> dict[str, np.ndarray]:
    """``values`` as float64 arrays, checked against the domains (``name -> Domain``).

    ``params`` are required, ``extra`` optional; an unknown name raises
    :class:`UnknownNameError` unless ``allow_extra``; shapes must broadcast together.
    """
    known = set(params) | set(extra)
    unknown = [k for k in values if k not in known]
    if unknown and not allow_extra:
        raise UnknownNameError(f"parameter of {owner}", unknown[0], list(known))
    missing = [n for n in params if n not in values]
    if missing:
        raise MissingParameterError(owner, missing, {n: params[n].describe() for n in missing})
    out: dict[str, np.ndarray] = {}
    for n, domain in {**params, **extra}.items():
        if n not in values:
            continue
        arr = as_real_array(n, values[n], domain.describe())
        bad = domain.bad_mask(arr)
        if bad.any():
            shown = arr[bad].ravel()[0] if arr.ndim else float(arr)
            raise DomainError(n, _num(shown), domain.describe())
        if domain.integer:
            _check_exact_integers(n, arr, domain.describe())
        out[n] = arr
    check_shapes(out, owner)
    return out


#: the largest integer parameter accepted: every integer up to it is a float64
MAX_EXACT_INT = 2**53


def _check_exact_integers(name: str, arr: np.ndarray, domain: str) -> None:
    """Refuse integers that float64 cannot represent exactly (|n| > 2**53): their neighbours
    are not representable, so the value given is not the integer meant, and a formula in it
    overflows (``tau = 1e308`` would give ``inf``).

    >>> _check_exact_integers("tau", np.array([1.0, 1e308]), "integer >= 1")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: tau = 1e+308 is outside its domain: integer >= 1 (an integer \
parameter must be exactly representable in float64: |tau| <= 2**53 = 9007199254740992)
    """
    big = np.abs(arr) > MAX_EXACT_INT
    if big.any():
        shown = float(arr[big].ravel()[0]) if arr.ndim else float(arr)
        raise DomainError(name, shown, domain, "an integer parameter must be exactly "
                          f"representable in float64: |{name}| <= 2**53 = {MAX_EXACT_INT}")


def judge(op: str, lhs, rhs) -> np.ndarray:
    """Boolean array: where ``lhs <op> rhs`` holds, with a relative slack of
    :data:`PRECONDITION_RTOL` for the non-strict relations (nan on either side: it does not).
    An infinite side gets no slack: ``inf >= inf`` holds, as ``inf <= inf`` does (a slack of
    inf would make it ``inf >= inf - inf``, nan, "fails").

    >>> judge("<=", 0.25 * (1 + 1e-14), 0.25).tolist(), judge("<", 0.25, 0.25).tolist()
    (True, False)
    >>> inf = float("inf")
    >>> judge(">=", [inf, 1.0, -inf], [inf, inf, -inf]).tolist()
    [True, False, True]
    """
    lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
    scale = np.maximum(np.abs(lhs), np.abs(rhs))
    slack = PRECONDITION_RTOL * np.where(np.isfinite(scale), scale, 0.0)
    if op == "<=":
        return lhs <= rhs + slack
    if op == "<":
        return lhs < rhs
    if op == ">=":
        return lhs >= rhs - slack
    return lhs > rhs


def failed_preconditions(preconditions, arrs: Mapping[str, np.ndarray]) -> list[str]:
    """Texts of the preconditions (objects with ``names``, ``text``, ``holds``) that fail
    somewhere; those whose parameters are not all in ``arrs`` are not judged."""
    failed = []
    for pc in preconditions:
        if all(n in arrs for n in pc.names) and not np.all(pc.holds(arrs)):
            failed.append(pc.text)
    return failed


def unchecked_preconditions(preconditions, values: Mapping) -> list[str]:
    """Texts of the preconditions that name a parameter absent from ``values``."""
    return [pc.text for pc in preconditions if not all(n in values for n in pc.names)]


def as_real_array(name: str, value, domain: str) -> np.ndarray:
    """``value`` as a float64 array: real numbers only (no bool, complex, text, None, objects).

    >>> as_real_array("eta", [0.1, 2], "positive real (0, inf)").tolist()
    [0.1, 2.0]
    >>> as_real_array("tau", True, "integer >= 1")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: tau = True is outside its domain: integer >= 1 (a bool is not \
a number)
    """
    if isinstance(value, (bool, np.bool_)):
        raise DomainError(name, value, domain, "a bool is not a number")
    if isinstance(value, (str, bytes, dict, set)) or value is None:
        raise DomainError(name, value, domain, "not a number")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise DomainError(name, value, domain, "not a number") from None
    kind = raw.dtype.kind
    if kind == "b":
        raise DomainError(name, value, domain, "a bool is not a number")
    if kind == "c":
        raise DomainError(name, value, domain, "a complex number is not real")
    if kind == "O":
        items = raw.ravel().tolist()
        if any(isinstance(x, (bool, np.bool_, complex, str, bytes)) or x is None for x in items):
            raise DomainError(name, value, domain, "not a number")
    elif kind not in "iuf":
        raise DomainError(name, value, domain, "not a number")
    try:
        return np.asarray(raw, dtype=float)
    except OverflowError:
        raise DomainError(name, value, domain, "too large for float64") from None
    except (TypeError, ValueError):
        raise DomainError(name, value, domain, "not a number") from None


def check_shapes(arrays: Mapping[str, np.ndarray], owner: str = "") -> tuple:
    """The common broadcast shape of named arrays, or a DomainError naming the two that clash.

    >>> check_shapes({"eta": np.ones(2), "tau": np.ones((3, 1))})
    (3, 2)
    >>> check_shapes({"eta": np.ones(2), "tau": np.ones(3)}, "drift.plateau")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: tau = 'shape (3,)' is outside its domain: an array that \
broadcasts with eta (shape (2,)) (drift.plateau: parameter shapes do not agree)
    """
    shape: tuple = ()
    first = None
    for n, a in arrays.items():
        try:
            shape = np.broadcast_shapes(shape, a.shape)
        except ValueError:
            clash = next(m for m, b in arrays.items()
                         if _no_broadcast(a.shape, b.shape)) if first else first
            raise DomainError(n, f"shape {a.shape}", f"an array that broadcasts with {clash} "
                              f"(shape {arrays[clash].shape})",
                              f"{owner + ': ' if owner else ''}parameter shapes do not agree"
                              ) from None
        first = first or n
    return shape


def _no_broadcast(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return True
    return False


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def shape_output(value, arrs):
    """Broadcast the lambdified result to the inputs' shape; plain float for scalar inputs."""
    shape = np.broadcast_shapes(*(a.shape for a in arrs.values())) if arrs else ()
    out = np.asarray(value, dtype=float)
    if out.shape != shape:
        out = np.broadcast_to(out, shape).copy()
    if out.ndim == 0:
        return float(out)
    return out
