"""Verdicts: what "holds" means, in one place.

Two kinds of result, never mixed:

* a **bound check** (``kind="bound"``) compares a measured left-hand side with a bound's value:
  ``measured`` (mean over seeds, with its confidence interval), ``bound`` (the bound's value;
  ``bound_value`` in every table), ``ratio`` = measured / bound (<= 1 holds, the one
  orientation of :mod:`verify.schema`), ``verdict``;
* a **claim** (``kind="claim"``, :func:`claim_result`) is a paper's qualitative statement (an
  ordering, a rate, a monotonicity) tested on measured runs: ``statement``, ``statistic`` (with
  an interval where it has one), ``threshold``, ``outcome`` (``supported`` / ``refuted`` /
  ``inconclusive``).

Rules of :func:`compare` (a bound check)
----------------------------------------
* The bound's preconditions are evaluated **here**, from ``params``, always. One that fails
  makes the verdict ``not-applicable`` (named); one that cannot be evaluated (a parameter not
  given, or a nan/inf value) makes it ``not-applicable`` too, with the reason: a verdict is
  never given under assumptions nobody checked. ``preconditions_violated`` adds assumption
  failures the bound's own preconditions cannot see (e.g. partial participation).
* ``order`` bounds (hidden constants) are shown, never judged: ``order-only``.
* A run that diverged is never judged: ``diverged``, with the reason. A run diverged when the
  caller says so (``diverged=True`` or a reason string), when a measured value is not finite,
  or when its magnitude exceeds :data:`DIVERGENCE_THRESHOLD` (1e100: no meaningful measurement
  of these toys is that large; :func:`trace_diverged` also flags runs whose squared distance to
  the optimum grew by more than :data:`GROWTH_THRESHOLD` = 1e12 over its start).
* A right-hand side that is nan or +-inf is never compared: ``error`` with the reason.
* Otherwise a bound stated in expectation is judged with the confidence interval of the mean
  over seeds (Student t, 95 % two-sided by default): ``holds`` when its upper limit is <= RHS
  (up to a relative tolerance of 1e-9 for floating point), ``VIOLATED`` when its lower limit is
  above RHS, and ``inconclusive`` when the interval contains RHS (too few seeds to tell; the
  reason says so: a wide interval is not evidence of a violation). Runs that are identical
  over seeds (deterministic settings) count as **one effective sample**: no interval, so
  ``holds`` or ``VIOLATED``.
* ``identity`` bounds compare |measured - value| <= max(CI half-width, 1e-9 |value|).

Example
-------
>>> import boundlab, numpy as np
>>> from verify.compare import compare
>>> prm = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)
>>> r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.012, 0.011]), params=prm)
>>> r.verdict, round(r.ratio, 4)
('holds', 0.0041)
>>> compare(boundlab.get("drift.plateau"), [0.01], params={**prm, "eta": 2.0}).verdict
'not-applicable'
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .check.preconditions import precondition_status

__all__ = ["CheckResult", "compare", "claim_result", "mean_ci", "VERDICTS", "OUTCOMES",
           "errored", "trace_diverged", "DIVERGENCE_THRESHOLD", "GROWTH_THRESHOLD",
           "BOUND_COLUMNS", "CLAIM_COLUMNS"]

VERDICTS = ("holds", "VIOLATED", "inconclusive", "not-applicable", "order-only", "diverged",
            "error")
OUTCOMES = ("supported", "refuted", "inconclusive")
REL_TOL = 1e-9
#: a measured value of larger magnitude means the run diverged (documented in the module doc)
DIVERGENCE_THRESHOLD = 1e100
#: growth of ||x_t - x*||^2 over max(||x_0 - x*||^2, 1) that marks a run as diverged
GROWTH_THRESHOLD = 1e12

#: results.csv columns of a bound check, and of a claim (the other kind leaves them empty)
BOUND_COLUMNS = ("measured", "measured_mean", "measured_lo", "measured_hi", "bound_value",
                 "ratio", "n_seeds", "effective_samples", "worst_ratio", "worst_instance")
CLAIM_COLUMNS = ("statement", "statistic", "statistic_lo", "statistic_hi", "threshold",
                 "outcome")


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
    """One result: a bound check (measured, bound, ratio, verdict) or a claim (statement,
    statistic, threshold, outcome), with everything used to get it.

    ``check`` is the registered check's name (``boundlab verify --only CHECK`` runs it);
    ``case`` tells the rows of one check apart (e.g. ``tau=10``). ``reason`` says why a
    result is not-applicable, diverged or an error.
    """

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
    kind: str = "bound"
    case: str = ""
    reason: str = ""
    effective_samples: int = 0
    statement: str = ""
    statistic: float = float("nan")
    statistic_lo: float = float("nan")
    statistic_hi: float = float("nan")
    threshold: float = float("nan")
    worst: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)

    @property
    def bound_value(self) -> float:
        """The bound's value (the schema's name for :attr:`bound`)."""
        return self.bound

    @property
    def outcome(self) -> str:
        """A claim's outcome (its verdict); '' for a bound check."""
        return self.verdict if self.kind == "claim" else ""

    @property
    def dominant_term(self) -> str:
        """Name of the largest term of the bound ('' if the bound has no terms)."""
        if not self.terms:
            return ""
        return max(self.terms, key=lambda k: abs(self.terms[k]))

    @property
    def worst_ratio(self) -> float:
        """Largest measured / bound the worst-instance search found (nan if not run)."""
        return float(self.worst.get("ratio", float("nan"))) if self.worst else float("nan")

    def row(self) -> dict[str, Any]:
        """Flat dict for results.csv and ``--json`` in the schema of :mod:`verify.schema`
        (series left out); bound-check and claim columns apart."""
        d = asdict(self)
        d.pop("series")
        d.pop("worst")
        params = d.pop("params")
        d["bound_value"] = d.pop("bound")
        for key in ("seeds", "setting", "terms", "constants", "preconditions_checked",
                    "preconditions_violated", "tightness"):
            d[key] = _compact(d[key])
        d["dominant_term"] = self.dominant_term
        d["outcome"] = self.outcome
        d["worst_ratio"] = self.worst_ratio
        d["worst_instance"] = str(self.worst.get("path", "")) if self.worst else ""
        d["measured_mean"] = self.measured
        d.update(seed=float("nan"), round=float("nan"),
                 algorithm=str(self.setting.get("algorithm", "")))
        if self.kind == "claim":
            for k in BOUND_COLUMNS:
                d[k] = None
        else:
            for k in CLAIM_COLUMNS:
                d[k] = None
        from .schema import complete_result

        return complete_result(d, self.bound_id, self.terms, (self.constants, self.setting,
                                                                params))


def _compact(v) -> str:
    return json.dumps(v, default=_plain, sort_keys=True)


def _plain(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def trace_diverged(trace) -> str:
    """Why a :class:`toys.Trace` counts as diverged ('' when it does not).

    Diverged: the engine marked it (non-finite iterates), or ``dist2`` (or ``gap``) grew by
    more than :data:`GROWTH_THRESHOLD` over max(its start, 1).

    >>> import toys
    >>> tr = toys.run(toys.quadratic(2, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.01)
    >>> trace_diverged(tr)
    ''
    """
    if getattr(trace, "diverged_at", None) is not None:
        return f"iterates not finite from round {trace.diverged_at}"
    for name in ("dist2", "gap"):
        try:
            v = np.asarray(getattr(trace, name), dtype=float)
        except AttributeError:
            continue
        if v.size == 0 or not np.isfinite(v[0]):
            continue
        start = max(abs(float(v[0])), 1.0)
        grown = np.nonzero(np.abs(v) > GROWTH_THRESHOLD * start)[0]
        if grown.size:
            return (f"{name} grew past {GROWTH_THRESHOLD:g} x max(start, 1) at round "
                    f"{int(grown[0])} ({float(v[grown[0]]):.3g})")
    return ""


def compare(bound, lhs_samples, rhs=None, *, params=None, check: str = "", case: str = "",
            problem: str = "", seeds=(), setting=None, terms=None, constants=None,
            preconditions_violated=(), diverged=False, note: str = "", level: float = 0.95,
            deterministic: bool = False) -> CheckResult:
    """Judge one bound against measured samples of its left-hand side.

    ``lhs_samples``: one value per seed (the quantity the bound speaks about). ``params``:
    the values of the bound's parameters (and of the extra ones its preconditions use): the
    preconditions are evaluated from them, always, and ``rhs`` is evaluated from them when not
    given. ``diverged``: True or a reason. ``deterministic``: the samples come from identical
    runs (one effective sample). Returns a :class:`CheckResult`.

    >>> import boundlab
    >>> prm = dict(eta=0.2, tau=10, L=0.2, zeta=0.43)
    >>> compare(boundlab.get("drift.plateau"), [3.0, 3.1, 3.05], params=prm).verdict
    'VIOLATED'
    >>> r = compare(boundlab.get("drift.plateau"), [0.1], 2.66)   # eta <= 1/(4L) unevaluable
    >>> r.verdict, r.reason
    ('not-applicable', "precondition 'eta <= 1/(4*L)' cannot be evaluated: L, eta not given")
    """
    params = dict(params or {})
    names = set(bound.params) | set(getattr(bound, "extra_params", {}) or {})
    usable = {k: v for k, v in params.items() if k in names}
    violated, unknown = precondition_status(bound, usable)
    violated = violated + [v for v in preconditions_violated if v not in violated]
    checked = [pc.text for pc in bound.preconditions]
    base = dict(check=check or bound.id, case=case, bound_id=bound.id, paper=bound.source,
                problem=problem, seeds=list(seeds), setting=dict(setting or {}),
                terms=dict(terms or {}), constants=dict(constants or {}),
                preconditions_checked=checked, preconditions_violated=violated, note=note,
                params={k: v for k, v in usable.items() if np.ndim(v) == 0})
    x = _as_real(lhs_samples, np.ravel, "lhs_samples", "real numbers (one per seed)")
    if rhs is None:
        try:
            rhs = bound.evaluate(**usable)
        except Exception as exc:  # noqa: BLE001 - the reason is the verdict
            return CheckResult(verdict="error", n_seeds=int(x.size),
                               reason=f"bound not evaluable: {type(exc).__name__}: {exc}",
                               error=f"{type(exc).__name__}: {exc}", **base)
    rhs = _as_real(rhs, float, "rhs", "a real number (the bound's value)")
    why = _diverged_reason(x, diverged)
    if why:
        return CheckResult(verdict="diverged", n_seeds=int(x.size), bound=rhs, reason=why,
                           **base)
    if not math.isfinite(rhs):
        return CheckResult(verdict="error", n_seeds=int(x.size), bound=rhs,
                           reason=f"bound value is {rhs} (overflow or a degenerate parameter): "
                                  "nothing to compare with", error=f"bound value {rhs}", **base)
    return _judge(bound, x, rhs, violated, unknown, base, level, deterministic)


def _as_real(value, convert, name: str, domain: str):
    """``convert`` of ``value`` as a float array, or DomainError naming the input."""
    try:
        return convert(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        from boundlab.errors import DomainError

        raise DomainError(name, value, domain) from None


def _judge(bound, x: np.ndarray, rhs: float, violated, unknown, base: dict, level: float,
           deterministic: bool) -> CheckResult:
    """The verdict on finite samples ``x`` against a finite ``rhs`` (the module doc's rules
    from ``order`` bounds on); ``base`` holds the fields every result carries."""
    same = x.size > 1 and bool(np.all(x == x[0]))
    if deterministic and not same and x.size > 1:
        raise ValueError("deterministic=True but the samples differ")
    eff = 1 if (same or deterministic) else int(x.size)
    m, lo, hi = mean_ci(x[:1] if eff == 1 else x, level)
    from .schema import ratio as schema_ratio  # lazily: verify.schema imports pandas

    ratio = schema_ratio(m, rhs)
    if same and x.size > 1:
        base["note"] = (base["note"] + f" [{x.size} seeds gave identical runs: one effective "
                                       "sample, no confidence interval]").strip()
    common = dict(measured=m, measured_lo=lo, measured_hi=hi, bound=rhs, ratio=ratio,
                  n_seeds=int(x.size), effective_samples=eff, **base)
    if bound.kind == "order":
        return CheckResult(verdict="order-only", reason="O(.) statement with hidden constants",
                           **common)
    if violated:
        return CheckResult(verdict="not-applicable",
                           reason="precondition violated: " + "; ".join(violated), **common)
    if unknown:
        return CheckResult(verdict="not-applicable",
                           reason="precondition " + "; ".join(unknown), **common)
    tol = REL_TOL * max(abs(rhs), abs(m), 1e-300)
    if bound.kind == "identity":
        ok = abs(m - rhs) <= max(hi - m, tol)
    elif hi > rhs + tol and lo <= rhs + tol:
        return CheckResult(verdict="inconclusive", reason=(
            f"the {level:.0%} interval [{lo:.4g}, {hi:.4g}] of the mean over {eff} seeds "
            f"contains the bound {rhs:.4g}: more seeds are needed to decide"), **common)
    else:
        ok = hi <= rhs + tol
    return CheckResult(verdict="holds" if ok else "VIOLATED", **common)


def _diverged_reason(x: np.ndarray, diverged) -> str:
    if isinstance(diverged, str) and diverged:
        return diverged
    if diverged is True:
        return "the run diverged"
    if x.size == 0:
        return "no measurement"
    if not np.all(np.isfinite(x)):
        return "measured value not finite"
    big = np.abs(x) > DIVERGENCE_THRESHOLD
    if np.any(big):
        return f"measured value {float(x[big][0]):.3g} beyond {DIVERGENCE_THRESHOLD:g}"
    return ""


def claim_result(check: str, paper: str, problem: str, *, statement: str, statistic: float,
                 threshold: float, outcome: str, interval=None, bound_id: str = "",
                 case: str = "", note: str = "", setting=None, series=None, seeds=(),
                 effective_samples: int = 1) -> CheckResult:
    """A paper's qualitative claim judged on measured runs (no bound value, no ratio).

    ``statistic`` is what was measured (e.g. a fitted slope), ``interval`` its confidence
    interval if it has one, ``threshold`` what the claim compares it with, ``outcome`` one of
    :data:`OUTCOMES`.

    >>> r = claim_result("c", "seed 000, Fig. 6", "toy", statement="slope = -1",
    ...                  statistic=-1.02, interval=(-1.1, -0.95), threshold=-1.0,
    ...                  outcome="supported")
    >>> r.kind, r.verdict, r.outcome
    ('claim', 'supported', 'supported')
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}; got {outcome!r}")
    lo, hi = interval if interval is not None else (float("nan"), float("nan"))
    return CheckResult(check=check, case=case, bound_id=bound_id, paper=paper, problem=problem,
                       verdict=outcome, kind="claim", statement=statement,
                       statistic=float(statistic), statistic_lo=float(lo),
                       statistic_hi=float(hi), threshold=float(threshold),
                       n_seeds=len(seeds) or 1, effective_samples=effective_samples,
                       seeds=list(seeds), setting=dict(setting or {}), note=note,
                       series=series or {})


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
    msg = f"{type(exc).__name__}: {exc}{at}"
    return CheckResult(check=check, bound_id=bound_id, paper=paper, problem=problem,
                       verdict="error", error=msg, reason=msg)
