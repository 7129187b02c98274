"""The one result schema of every verify result: one name per concept, one ratio orientation.

Every producer -- :func:`verify.check`, :func:`verify.check_log`, :func:`verify.sweep` (with a
``bound``), :meth:`verify.Falsification.to_frame` (one row), ``results.csv`` and every
``--json`` of ``boundlab verify`` -- names its columns as below. For one bound they share the
same schema columns (:func:`columns`); a producer adds its own (a sweep's measured
``loss``, ``gap``, ..., the report's ``paper``, ``note``, ``constants``, ...) but never
renames one of these.

==================  ===========================================================================
column              meaning
==================  ===========================================================================
``bound_id``        the bound's id (``family.name``, e.g. ``drift.fedavg_convex``)
``lhs``             the name of the measured quantity it bounds (``bound.lhs``)
``check``           the registered check (``boundlab verify --only CHECK``), or the producer
                    (``check``, ``check_log``, ``sweep``, ``falsify``)
``case``            tells the rows of one check apart (e.g. ``tau=10``)
``problem``         the problem's name; ``algorithm`` the algorithm's
``seed``            the run's seed (empty on a row judged over several seeds)
``round``           the round of a per-round quantity (empty for a per-run one)
``measured``        the measured left-hand side (this seed's value on a per-seed row, the
                    mean over seeds on a judged row)
``measured_mean``   the mean over the seeds that were judged together
``measured_lo/hi``  the 95 % confidence interval of ``measured_mean``
``bound_value``     the bound's right-hand side evaluated at the row's parameters
``ratio``           **measured / bound_value**: <= 1 holds, > 1 violated, small = loose
``worst_ratio``     the largest ratio a search found (``verify.falsify``; same orientation)
``verdict``         see :data:`verify.compare.VERDICTS` and :data:`verify.compare.OUTCOMES`
``reason``          why a verdict is not-applicable, inconclusive, diverged or an error
``n_seeds``         seeds judged; ``effective_samples`` those that differ
``term_<name>``     each named term of the bound (they add up to ``bound_value``)
``param_<name>``    each parameter of the bound (and of its preconditions) the row used
==================  ===========================================================================

A PEP tightness bracket (:func:`verify.tightness.bracket`, ``boundlab tightness --json``, and a
report row's ``tightness`` record) names its columns alike (:data:`BRACKET`), with these:

====================  =========================================================================
column                meaning
====================  =========================================================================
``worst_case_lower``  LB: the PEP's primal value, a concrete instance of the PEP's class
``worst_case_upper``  UB: the PEP's dual value, at least the worst case over the PEP's class
``ratio_lo``          **LB / bound_value**, the bracket in the ratio's orientation: > 1 with
                      nothing relaxed shows the bound false
``ratio_hi``          **UB / bound_value**: <= 1 certifies that the bound holds on the PEP's
                      class, and is loose there by at least 1 / ratio_hi
====================  =========================================================================

The ratio is always measured / bound (the orientation of :attr:`Falsification.worst_ratio`);
a bound that is vacuous by more than 1e3 has a ratio below 1e-3. Every row is complete: a
column that is defined for a row is filled on it (a sweep fills ``bound_id``, ``term_*`` and
``param_*`` on every row of a run, not only on the judged one).

Old names (until the next release)
----------------------------------
The frames of :func:`verify.check`, :func:`verify.check_log` and :func:`verify.sweep` are
:class:`ResultFrame` objects: reading an old column name (``df["bound"]`` for the id,
``df["rhs_eta"]`` or ``df["eta"]`` for ``param_eta``) still works and warns with a
:class:`DeprecationWarning` naming the new one. The old ratio of those frames and of
``results.csv`` was bound / measured; ``results.csv`` called the bound's value ``bound``.
:func:`read_results` reads a ``results.csv`` back as a :class:`ResultFrame` that maps
``bound`` to ``bound_value`` with the same warning, and reads an older file in the schema.
A tightness bracket used to be bound / worst case (``ratio_low`` = B/UB, ``ratio_high`` =
B/LB, ``id``, ``bound``): it is a :class:`ResultDict`, whose old keys
(:data:`BRACKET_RENAMED`) still read, in their old orientation, with a DeprecationWarning;
``boundlab tightness --json`` still carries them, listed under ``deprecated``.

>>> import warnings, pandas as pd
>>> df = ResultFrame({"bound_id": ["a.b"], "param_eta": [0.1]}, aliases={"bound": "bound_id"})
>>> with warnings.catch_warnings(record=True) as w:
...     warnings.simplefilter("always")
...     df["bound"].iloc[0], float(df["rhs_eta"].iloc[0]), w[0].category.__name__
('a.b', 0.1, 'DeprecationWarning')
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from .result_keys import BRACKET_RENAMED, ResultDict, ratio

__all__ = ["CORE", "RATIO", "BRACKET", "BRACKET_RENAMED", "columns", "param_names", "complete",
           "ResultFrame", "ResultDict", "read_results", "ratio", "VERDICT_MEANINGS",
           "complete_result"]

#: one line per verdict (bound checks) and outcome (claims): the README's list
VERDICT_MEANINGS = {
    "holds": "the measured value is at most the bound (upper 95 % confidence limit of the mean)",
    "VIOLATED": "the measured value exceeds the bound (lower confidence limit above it)",
    "inconclusive": "the confidence interval contains the bound (bound check) or the statistic's "
                    "interval contains the threshold (claim): more seeds are needed",
    "not-applicable": "a precondition fails or cannot be evaluated (the reason names it)",
    "order-only": "an O(.) statement with hidden constants: shown, never judged",
    "diverged": "the run diverged (non-finite or beyond 1e100): never judged",
    "error": "the bound's value is not finite, or the check crashed (the reason says)",
    "supported": "a paper's claim (ordering, rate, monotonicity) agrees with the runs",
    "refuted": "a paper's claim disagrees with the runs",
}

#: what the ratio column means, everywhere
RATIO = "measured / bound_value (<= 1: holds; > 1: violated; small: loose)"

#: the columns every producer emits, in this order, before term_* and param_*
CORE = ("bound_id", "lhs", "check", "case", "problem", "algorithm", "seed", "round",
        "measured", "measured_mean", "measured_lo", "measured_hi", "bound_value", "ratio",
        "worst_ratio", "verdict", "reason", "n_seeds", "effective_samples")

#: the columns of a PEP tightness bracket (:func:`verify.tightness.bracket`, ``boundlab
#: tightness --json``) that the schema names; a report row's ``tightness`` record holds
#: ``worst_case_lower`` .. ``ratio_hi``
BRACKET = ("bound_id", "bound_value", "worst_case_lower", "worst_case_upper", "ratio_lo",
           "ratio_hi")


def param_names(bound) -> list[str]:
    """The bound's parameters and its preconditions' extra ones, sorted."""
    return sorted({*bound.params, *(getattr(bound, "extra_params", {}) or {})})


def columns(bound) -> list[str]:
    """The schema columns of ``bound``'s results: :data:`CORE`, ``term_*``, ``param_*``.

    >>> import boundlab
    >>> columns(boundlab.get("drift.plateau"))[-4:]
    ['param_L', 'param_eta', 'param_tau', 'param_zeta']
    """
    terms = [f"term_{t}" for t in (getattr(bound, "terms", None) or {})]
    return [*CORE, *terms, *(f"param_{n}" for n in param_names(bound))]


def complete(row: dict, bound) -> dict:
    """``row`` with every schema column of ``bound`` present (nan / '' where not defined),
    schema columns first."""
    out = {}
    for c in columns(bound):
        out[c] = row.get(c, "" if c in ("lhs", "check", "case", "problem", "algorithm",
                                        "verdict", "reason", "bound_id") else float("nan"))
    out.update({k: v for k, v in row.items() if k not in out})
    return out


def _new_name(key, cols, aliases: dict):
    if key in aliases and aliases[key] in cols:
        return aliases[key]
    for old, new in (("rhs_", "param_"),):
        if key.startswith(old) and new + key[len(old):] in cols:
            return new + key[len(old):]
    if f"param_{key}" in cols:
        return f"param_{key}"
    return None


class ResultFrame(pd.DataFrame):
    """A DataFrame whose old column names still read, with a DeprecationWarning (one release).

    ``aliases`` maps an old name to its new one; ``rhs_<name>`` and a bare parameter name map
    to ``param_<name>`` where that column exists.
    """

    _metadata = ["_aliases"]

    def __init__(self, *args, aliases=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._aliases = dict(aliases or getattr(self, "_aliases", None) or {})

    @property
    def _constructor(self):
        return ResultFrame

    def __getitem__(self, key):
        if isinstance(key, str) and key not in self.columns:
            new = _new_name(key, self.columns, getattr(self, "_aliases", None) or {})
            if new is not None:
                _warn(key, new)
                key = new
        elif isinstance(key, list) and all(isinstance(k, str) for k in key):
            key = [self._mapped(k) for k in key]
        return super().__getitem__(key)

    def _mapped(self, k):
        if k in self.columns:
            return k
        new = _new_name(k, self.columns, getattr(self, "_aliases", None) or {})
        if new is None:
            return k
        _warn(k, new)
        return new


def _warn(old, new) -> None:
    warnings.warn(f"column {old!r} is deprecated (renamed {new!r}; the schema is in "
                  "verify.schema); the old name goes in the next release",
                  DeprecationWarning, stacklevel=3)


def read_results(path) -> ResultFrame:
    """A ``results.csv`` of ``boundlab verify`` as a :class:`ResultFrame`: ``df["bound"]``
    reads ``bound_value`` with a DeprecationWarning, and an older file (``bound``, ratio =
    bound / measured) is read in the schema (``bound_value``, ratio = measured / bound), with
    a DeprecationWarning."""
    from boundlab.errors import IntegrityError

    try:
        frame = pd.read_csv(path)
    except Exception as exc:  # noqa: BLE001 - pandas' errors, all of them
        raise IntegrityError(path, "results.csv", "a results table boundlab wrote",
                             f"{type(exc).__name__}: {exc}") from None
    if "bound_value" not in frame.columns and "bound" in frame.columns:  # an older file
        warnings.warn(f"{path}: an older results.csv (bound, ratio = bound / measured); read as "
                      "bound_value and ratio = measured / bound", DeprecationWarning,
                      stacklevel=2)
        frame = frame.rename(columns={"bound": "bound_value"})
        m = pd.to_numeric(frame.get("measured"), errors="coerce")
        frame["ratio"] = [ratio(a, b) for a, b in zip(m, frame["bound_value"])]
    return ResultFrame(frame, aliases={"bound": "bound_value"})


def frame(rows, bound=None, aliases=None) -> ResultFrame:
    """Rows (dicts) as a :class:`ResultFrame`, completed to ``bound``'s schema when given."""
    if bound is not None:
        rows = [complete(r, bound) for r in rows]
    return ResultFrame(pd.DataFrame(rows), aliases=aliases)


def complete_result(d: dict, bound_id: str, terms: dict, sources) -> dict:
    """A :class:`verify.compare.CheckResult` row ``d`` with ``lhs``, ``term_*`` and the
    bound's ``param_*`` (from ``sources``: dicts of values, or of ``{"value": ...}``) filled,
    completed to the bound's schema when the bound is known."""
    d.update({f"term_{k}": _num(v) for k, v in (terms or {}).items()})
    values = {}
    for src in sources:
        for k, v in (src or {}).items():
            v = v.get("value") if isinstance(v, dict) else v
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
                values[k] = v
    bound = _known_bound(bound_id)
    d["lhs"] = getattr(bound, "lhs", "") or ""
    if bound is None:
        d.update({f"param_{k}": _num(v) for k, v in (sources[-1] or {}).items()})
        return d
    d.update({f"param_{k}": _num(values[k]) for k in param_names(bound) if k in values})
    return complete(d, bound)


def _known_bound(bound_id: str):
    if not bound_id:
        return None
    try:
        import boundlab

        return boundlab.get(bound_id)
    except Exception:  # noqa: BLE001 - an id no longer registered
        return None


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")
