"""Verdicts: what "holds" means, in one place.

A check measures a bound's left-hand side over several seeds and evaluates its right-hand side
with measured constants; :func:`compare` turns the two into a :class:`CheckResult`.

Rules
-----
* ``order`` bounds (hidden constants) are shown, never judged: verdict ``order-only``.
* A run that diverged (NaN/inf iterates) is never compared: ``diverged``.
* A failed precondition (step size, gamma rule, ...) makes the bound ``not-applicable``; the
  failed precondition is named.
* Otherwise a bound stated in expectation is judged against the **upper confidence limit** of the
  mean over seeds (Student t, 95 % two-sided by default): ``holds`` when UCL <= RHS (up to a
  relative tolerance of 1e-9 for floating point), else ``VIOLATED``. The lower limit is reported
  too, so a reader can tell a significant violation (LCL > RHS) from an inconclusive one.
* ``identity`` bounds compare |measured - value| <= max(CI half-width, 1e-9 |value|).

Example
-------
>>> import boundlab, numpy as np
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.012, 0.011]), 2.27)
>>> r.verdict, round(r.ratio)
('holds', 206)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

__all__ = ["CheckResult", "compare", "mean_ci", "VERDICTS", "errored"]

VERDICTS = ("holds", "VIOLATED", "not-applicable", "order-only", "diverged", "error")
REL_TOL = 1e-9


def mean_ci(samples, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean.

    One sample (or zero spread) gives a zero-width interval.

    >>> m, lo, hi = mean_ci([1.0, 2.0, 3.0])
    >>> m, round(lo, 3), round(hi, 3)
    (2.0, -0.484, 4.484)
    """
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("no samples")
    m = float(x.mean())
    if x.size == 1:
        return m, m, m
    from scipy import stats

    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


@dataclass
class CheckResult:
    """One verdict: measured left side, bound value, ratio, and everything used to get them."""

    check: str
    bound_id: str
    paper: str
    problem: str
    verdict: str
    measured: float = float("nan")
    measured_lo: float = float("nan")
    measured_hi: float = float("nan")
    bound: float = float("nan")
    ratio: float = float("nan")
    n_seeds: int = 0
    seeds: list = field(default_factory=list)
    setting: dict = field(default_factory=dict)
    terms: dict = field(default_factory=dict)
    constants: dict = field(default_factory=dict)
    preconditions_checked: list = field(default_factory=list)
    preconditions_violated: list = field(default_factory=list)
    note: str = ""
    error: str = ""
    seconds: float = 0.0
    series: dict = field(default_factory=dict, repr=False)
    tightness: dict = field(default_factory=dict)

    @property
    def dominant_term(self) -> str:
        """Name of the largest term of the bound ('' if the bound has no terms)."""
        if not self.terms:
            return ""
        return max(self.terms, key=lambda k: abs(self.terms[k]))

    def row(self) -> dict[str, Any]:
        """Flat dict for results.csv (series left out)."""
        d = asdict(self)
        d.pop("series")
        for key in ("seeds", "setting", "terms", "constants", "preconditions_checked",
                    "preconditions_violated", "tightness"):
            d[key] = _compact(d[key])
        d["dominant_term"] = self.dominant_term
        return d


def _compact(v) -> str:
    import json

    return json.dumps(v, default=float, sort_keys=True)


def compare(bound, lhs_samples, rhs, *, check: str = "", problem: str = "", seeds=(),
            setting=None, terms=None, constants=None, preconditions_violated=(),
            diverged: bool = False, note: str = "", level: float = 0.95) -> CheckResult:
    """Judge one bound against measured samples of its left-hand side.

    ``lhs_samples``: one value per seed (the quantity the bound speaks about). ``rhs``: the
    bound's value (a float). Returns a :class:`CheckResult`.

    >>> import boundlab
    >>> compare(boundlab.get("drift.plateau"), [3.0, 3.1], 2.27).verdict
    'VIOLATED'
    """
    checked = [pc.text for pc in bound.preconditions]
    base = dict(check=check or bound.id, bound_id=bound.id, paper=bound.source, problem=problem,
                seeds=list(seeds), setting=dict(setting or {}), terms=dict(terms or {}),
                constants=dict(constants or {}), preconditions_checked=checked,
                preconditions_violated=list(preconditions_violated), note=note)
    x = np.asarray(lhs_samples, dtype=float).ravel()
    rhs = float(rhs)
    if diverged or x.size == 0 or not np.all(np.isfinite(x)):
        return CheckResult(verdict="diverged", n_seeds=int(x.size), bound=rhs, **base)
    m, lo, hi = mean_ci(x, level)
    ratio = rhs / m if m != 0 else (math.inf if rhs > 0 else float("nan"))
    common = dict(measured=m, measured_lo=lo, measured_hi=hi, bound=rhs, ratio=ratio,
                  n_seeds=int(x.size), **base)
    if bound.kind == "order":
        return CheckResult(verdict="order-only", **common)
    if preconditions_violated:
        return CheckResult(verdict="not-applicable", **common)
    tol = REL_TOL * max(abs(rhs), abs(m), 1e-300)
    if bound.kind == "identity":
        ok = abs(m - rhs) <= max(hi - m, tol)
    else:
        ok = hi <= rhs + tol
    return CheckResult(verdict="holds" if ok else "VIOLATED", **common)


def errored(check: str, bound_id: str, exc: BaseException, *, problem: str = "") -> CheckResult:
    """Record of a check that crashed (the suite goes on).

    >>> errored("x", "drift.plateau", RuntimeError("boom")).verdict
    'error'
    """
    paper = ""
    try:
        import boundlab

        paper = boundlab.get(bound_id).source
    except Exception:  # noqa: BLE001 - the id itself may be the problem
        pass
    import traceback

    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    at = f" (at {where[0].filename.rsplit('/', 2)[-1]}:{where[0].lineno})" if where else ""
    return CheckResult(check=check, bound_id=bound_id, paper=paper, problem=problem,
                       verdict="error", error=f"{type(exc).__name__}: {exc}{at}")
