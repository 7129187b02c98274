"""The pandas-free half of :mod:`verify.schema`: the ratio, and result dicts whose old keys
still read.

:mod:`verify.schema` documents the one result schema; its frames need pandas. What the light
paths need (``boundlab tightness``, :func:`verify.tightness.bracket`, a report row's PEP
record) lives here, so that they do not import pandas: :func:`ratio` (measured / bound, the
one orientation) and :class:`ResultDict`, the PEP tightness bracket as a dict in the schema's
names whose old keys (:data:`BRACKET_RENAMED`) still read for one release, with a
:class:`DeprecationWarning`.

The bracket used to be reported as bound / worst case (``ratio_low`` = B/UB, ``ratio_high`` =
B/LB, the id as ``id``, the bound's value as ``bound``); it is now the PEP's worst case
relative to the bound, in the orientation of every other ratio: ``ratio_lo`` = LB / bound,
``ratio_hi`` = UB / bound (``ratio_hi`` <= 1: the bound holds on the PEP's class).

>>> import warnings
>>> r = ResultDict({"bound_id": "drift.plateau", "bound_value": 2.0, "ratio_lo": 0.02,
...                 "ratio_hi": 0.025})
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     r["id"], r["ratio_low"], r.get("ratio_high"), w[0].category.__name__
('drift.plateau', 40.0, 50.0, 'DeprecationWarning')
>>> sorted(r)  # only the new keys are stored
['bound_id', 'bound_value', 'ratio_hi', 'ratio_lo']
"""

from __future__ import annotations

import math
import warnings

__all__ = ["ratio", "fraction", "ResultDict", "BRACKET_RENAMED", "EVAL_RENAMED",
           "with_old_keys"]


def ratio(measured, bound_value) -> float:
    """measured / bound_value (nan when either is not a number; +-inf over a zero bound).

    >>> ratio(1.0, 4.0), ratio(0.0, 2.0), ratio(1.0, 0.0)
    (0.25, 0.0, inf)
    """
    try:
        m, b = float(measured), float(bound_value)
    except (TypeError, ValueError):
        return float("nan")
    if math.isnan(m) or math.isnan(b):
        return float("nan")
    if b == 0:
        return float("nan") if m == 0 else math.copysign(math.inf, m)
    return m / b


def fraction(value, bound_value) -> float | None:
    """``value`` / ``bound_value`` as :func:`ratio`, or None where ``value`` is missing or not
    a finite number, or the ratio is undefined (0 / 0): a side of a PEP bracket.

    >>> fraction(0.5, 2.0), fraction(None, 2.0), fraction(0.0, 0.0), fraction(1.0, 0.0)
    (0.25, None, None, inf)
    """
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(v):
        return None
    r = ratio(v, bound_value)
    return None if math.isnan(r) else r


def _inverse(v):
    """The old orientation (bound / worst case) of a new ratio: 1 / v for v > 0 (0 for inf),
    else None (the old keys were None without a positive worst case)."""
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) or v <= 0 else 1.0 / v


#: old key of a PEP tightness bracket -> (its new key, the old value from the new one or None
#: when it is the same, what the old key meant)
BRACKET_RENAMED = {
    "id": ("bound_id", None, "the bound's id"),
    "bound": ("bound_value", None, "the bound's value B"),
    "ratio_low": ("ratio_hi", _inverse, "B / UB = 1 / ratio_hi"),
    "ratio_high": ("ratio_lo", _inverse, "B / LB = 1 / ratio_lo"),
}


def _old_value(d: dict, key, stacklevel: int):
    new, how, meant = BRACKET_RENAMED[key]
    warnings.warn(f"key {key!r} ({meant}) is deprecated: read {new!r}"
                  + ("" if how is None else " (= worst case / bound, the orientation of every "
                     "ratio in verify.schema: <= 1 holds)")
                  + "; the old key goes in the next release", DeprecationWarning,
                  stacklevel=stacklevel)
    v = dict.__getitem__(d, new)
    return v if how is None else how(v)


class ResultDict(dict):
    """A result as a dict in the schema's names whose old keys (:data:`BRACKET_RENAMED`) still
    read, with a DeprecationWarning naming the new key (until the next release). Only the new
    keys are stored: ``in``, iteration, ``dict(r)`` and JSON see those."""

    def __missing__(self, key):
        if key in BRACKET_RENAMED and BRACKET_RENAMED[key][0] in self:
            return _old_value(self, key, stacklevel=3)
        raise KeyError(key)

    def get(self, key, default=None):
        if key in self:
            return dict.__getitem__(self, key)
        if key in BRACKET_RENAMED and BRACKET_RENAMED[key][0] in self:
            return _old_value(self, key, stacklevel=3)
        return default


#: old key of ``boundlab bounds eval --json`` -> (its new key, None: the same value, what the
#: old key meant), as :data:`BRACKET_RENAMED`
EVAL_RENAMED = {
    "id": ("bound_id", None, "the bound's id"),
    "value": ("bound_value", None, "the bound's value"),
}


def with_old_keys(d: dict, renamed: dict | None = None) -> dict:
    """``d`` (a PEP bracket, or the result of another table of ``renamed`` keys such as
    :data:`EVAL_RENAMED`) with its old keys added, for ``--json`` until the next release, and
    ``deprecated``: each old key and what to read instead (JSON carries no warning).

    >>> out = with_old_keys({"bound_id": "a.b", "ratio_hi": 0.5})
    >>> out["id"], out["ratio_low"], out["deprecated"]["ratio_low"]
    ('a.b', 2.0, 'B / UB = 1 / ratio_hi: read ratio_hi')
    >>> with_old_keys({"bound_id": "a.b", "bound_value": 1.5}, EVAL_RENAMED)["deprecated"]
    {'id': "the bound's id: read bound_id", 'value': "the bound's value: read bound_value"}
    """
    out = dict(d)
    gone = {}
    for old, (new, how, meant) in (BRACKET_RENAMED if renamed is None else renamed).items():
        if new in d and old not in d:
            v = d[new]
            out[old] = v if how is None else how(v)
            gone[old] = f"{meant}: read {new}"
    if gone:
        out["deprecated"] = gone
    return out
