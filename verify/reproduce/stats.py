"""Outcome statistics of the reproductions: rounds-to-target with censoring (Kaplan–Meier) and
the decision of a claim from intervals over seeds (``matches`` / ``differs`` / ``tie`` /
``inconclusive``).

Why. A reproduction compares two arms (two rules, two settings) over a few seeds. Comparing
their means alone calls a sub-resolution wobble a difference; dropping the runs that never
reach a target biases R_x towards the fast runs. Here:

* **R_x with censoring.** A run that never reaches the target within the horizon H is
  right-censored at H (we know only R_x > H). :func:`kaplan_meier` gives the survival curve
  S(t) = P(R_x > t), its median with a 95 % interval (Brookmeyer–Crowley: the times whose
  pointwise band contains 1/2, the band from Greenwood's variance on the log(-log) scale,
  Kalbfleisch–Prentice; ``transform="linear"`` gives the original linear band), the restricted
  mean E[min(R_x, H)] (the area under S up to H: the mean when nothing is censored) and the
  number of censored runs. No run is dropped. A numpy implementation (a few lines, tested
  against hand-computed curves) instead of a survival library: the ones on the index pull a
  modelling stack this package does not need.
* **Decisions.** :func:`decide` takes the per-seed values of two arms (paired by seed when the
  arms share their data seeds) and the rule's stated ``resolution``; the 95 % Student-t
  interval [lo, hi] of the difference a - b decides (:func:`relation`): a *tie* when it lies
  inside (-resolution, resolution) (an equivalence test at the resolution), an ordering when
  it excludes 0 (a significance test) and no tie is shown, else *inconclusive*: too few seeds
  to tell, the word of the bound checks (:mod:`verify.compare`: "the interval contains the
  threshold"). An interval narrower than the resolution always decides, so the seeds that
  would decide it are n = (2 z s / resolution)^2 (s: the standard deviation of the per-seed
  difference, z = 1.96), reported with an inconclusive outcome. :func:`decide_intervals`
  does the same from the two arms' own intervals (e.g. Kaplan–Meier medians).

Example
-------
>>> km = kaplan_meier([1, 2, 2, 3, 5], reached=[True, True, True, False, True])
>>> km.survival.tolist(), km.median, km.censored
([0.8, 0.4, 0.0], 2.0, 1)
>>> d = decide([10.0, 12.0, 11.0, 13.0], [5.0, 6.0, 5.5, 7.0], expect=">", resolution=1.0)
>>> d.outcome, d.relation
('matches', '>')
>>> decide([1.0, 3.0], [2.0, 1.0], expect=">", resolution=0.5).outcome
'inconclusive'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

__all__ = ["Decision", "KaplanMeier", "Z95", "as_claim", "combine", "decide", "decide_intervals",
           "kaplan_meier", "km_rounds", "power_note", "reach_target", "relation"]

#: the normal 97.5 % quantile (the seeds-needed projection of a 95 % interval)
Z95 = 1.959963984540054
_EXPECT = (">", "<", "=")


@dataclass(frozen=True)
class KaplanMeier:
    """A Kaplan–Meier estimate: ``times`` (the distinct event times), ``survival`` S(t) just
    after each, its Greenwood variance ``var``, the pointwise band ``lower`` / ``upper``,
    ``n`` runs of which ``censored`` never reached, ``horizon`` (the largest time seen) and
    the ``median`` with its interval [``median_lo``, ``median_hi``] (``inf``: S never falls
    to 1/2 within the horizon, only "> horizon" is known)."""

    times: np.ndarray
    survival: np.ndarray
    var: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    n: int
    censored: int
    horizon: float
    median: float
    median_lo: float
    median_hi: float

    def restricted_mean(self, tau: float | None = None) -> float:
        """E[min(T, tau)] = the area under S(t) on [0, tau] (default: the horizon); equals the
        plain mean when no run is censored before tau."""
        tau = self.horizon if tau is None else float(tau)
        t = np.concatenate([[0.0], self.times[self.times < tau], [tau]])
        s = np.concatenate([[1.0], self.survival[self.times < tau]])
        return float(np.sum(np.diff(t) * s))

    def fmt(self, unit: str = "") -> str:
        """'median [lo, hi]' plus the censored count, e.g. ``'9 [7, 14]'`` or
        ``'> 50 [31, > 50] (5/8 censored)'``."""
        def f(v):
            return f"> {self.horizon:g}" if math.isinf(v) else f"{v:g}"

        tail = f" ({self.censored}/{self.n} censored)" if self.censored else ""
        return f"{f(self.median)}{unit} [{f(self.median_lo)}, {f(self.median_hi)}]" + tail


def _bands(S, g, z, transform):
    """Pointwise (lower, upper) of S given Greenwood's sum ``g`` = sum d / (n (n - d))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if transform == "linear":
            se = S * np.sqrt(g)
            lo, hi = np.clip(S - z * se, 0.0, 1.0), np.clip(S + z * se, 0.0, 1.0)
        else:  # log(-log S): Kalbfleisch-Prentice
            se = np.sqrt(g) / np.abs(np.log(S))
            lo, hi = S ** np.exp(z * se), S ** np.exp(-z * se)
    edge = (S <= 0) | (S >= 1) | ~np.isfinite(g)
    return np.where(edge, S, lo), np.where(edge, S, hi)


def _first_below(times, curve, half=0.5) -> float:
    idx = np.flatnonzero(curve <= half)
    return float(times[idx[0]]) if idx.size else math.inf


def kaplan_meier(times, reached=None, *, level: float = 0.95,
                 transform: str = "loglog") -> KaplanMeier:
    """The Kaplan–Meier estimate of ``times`` (event or censoring times); ``reached`` says
    which are events (default: all). Ties: events at t leave before the runs censored at t.

    >>> kaplan_meier([3.0, 3.0], reached=[False, False]).median
    inf
    """
    t = np.asarray(times, dtype=float).ravel()
    e = np.ones(t.shape, bool) if reached is None else np.asarray(reached, bool).ravel()
    if t.size == 0 or e.shape != t.shape or not np.all(np.isfinite(t)):
        raise DomainError("times", times, "a non-empty array of finite times with one "
                                          "'reached' flag each")
    if transform not in ("loglog", "linear"):
        raise DomainError("transform", transform, "'loglog' or 'linear'")
    if not 0 < level < 1:
        raise DomainError("level", level, "0 < level < 1")
    ut = np.unique(t[e])
    at_risk = (t[None, :] >= ut[:, None]).sum(axis=1).astype(float)
    d = ((t[None, :] == ut[:, None]) & e[None, :]).sum(axis=1).astype(float)
    S = np.cumprod(1.0 - d / at_risk)
    with np.errstate(divide="ignore"):
        g = np.cumsum(d / (at_risk * (at_risk - d)))
    z = float(_z(level))
    lo, hi = _bands(S, g, z, transform)
    var = np.where(S > 0, S ** 2 * np.where(np.isfinite(g), g, 0.0), 0.0)
    return KaplanMeier(ut, S, var, lo, hi, int(t.size), int((~e).sum()),
                       float(t.max()), _first_below(ut, S), _first_below(ut, lo),
                       _first_below(ut, hi))


def _z(level):
    from scipy import stats

    return stats.norm.ppf(0.5 + level / 2)


def km_rounds(R, horizon: int, **kw) -> KaplanMeier:
    """:func:`kaplan_meier` of R_x values (:func:`verify.reproduce.common.rounds_to`: NaN =
    never reached), the unreached censored at ``horizon``.

    >>> km_rounds([4.0, float("nan"), 6.0], horizon=50).fmt()
    '6 [4, > 50] (1/3 censored)'
    """
    r = np.asarray(R, dtype=float).ravel()
    hit = np.isfinite(r)
    return kaplan_meier(np.where(hit, r, float(horizon)), hit, **kw)


@dataclass(frozen=True)
class Decision:
    """A claim decided from intervals: ``outcome`` (``matches`` / ``differs`` / ``tie`` /
    ``inconclusive``), the ``relation`` the interval shows (``">"``, ``"<"``, ``"tie"`` or
    ``"?"``), the difference a - b (``diff``) and its 95 % interval [``lo``, ``hi``],
    ``n`` seeds per arm, ``width`` = hi - lo (the resolution these seeds give) and
    ``seeds_needed`` (per arm, for an inconclusive outcome; None when it cannot be said)."""

    outcome: str
    relation: str
    diff: float
    lo: float
    hi: float
    n: int
    resolution: float
    seeds_needed: int | None = None
    why: str = ""
    scale: float = 1.0
    unit: str = ""

    @property
    def width(self) -> float:
        return self.hi - self.lo

    @property
    def how(self) -> str:
        """Why it is not a match, in a few words ('' for a match)."""
        if self.outcome == "matches":
            return ""
        if self.outcome == "inconclusive":
            more = (f"about {self.seeds_needed} seeds per arm would decide it"
                    if self.seeds_needed else self.why or "more seeds needed")
            k = self.scale
            return (f"95 % interval of the difference [{self.lo * k:.3g}, {self.hi * k:.3g}]"
                    f"{self.unit} is wider than the resolution {self.resolution * k:g}"
                    f"{self.unit}; {more}")
        return self.why or self.fmt()

    def fmt(self) -> str:
        """'diff d [lo, hi] (n = ...)' of the difference a - b, in the display unit."""
        k, u = self.scale, self.unit
        return (f"diff {self.diff * k:+.3g}{u} [{self.lo * k:.3g}, {self.hi * k:.3g}] "
                f"(n = {self.n})")


def relation(lo: float, hi: float, resolution: float) -> str:
    """What the interval [lo, hi] of a - b shows at ``resolution``: ``"tie"`` inside
    (-resolution, resolution), else ``">"`` / ``"<"`` when it excludes 0, else ``"?"``.

    >>> relation(-0.2, 0.3, 0.5), relation(0.1, 2.0, 0.5), relation(-1.0, 2.0, 0.5)
    ('tie', '>', '?')
    """
    if math.isnan(lo) or math.isnan(hi):
        return "?"
    if -resolution < lo and hi < resolution:
        return "tie"
    if lo > 0:
        return ">"
    if hi < 0:
        return "<"
    return "?"


def _outcome(rel: str, expect: str) -> str:
    if rel == "?":
        return "inconclusive"
    if expect == "=":
        return "matches" if rel == "tie" else "differs"
    if rel == "tie":
        return "tie"
    return "matches" if rel == expect else "differs"


def _check(expect, resolution):
    if expect not in _EXPECT:
        raise DomainError("expect", expect, "'>', '<' or '=' (the paper's a vs b)")
    if not (isinstance(resolution, (int, float)) and resolution > 0 and
            math.isfinite(resolution)):
        raise DomainError("resolution", resolution, "a finite number > 0")


def _arms(a, b, paired):
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or a.size == 0 or b.size == 0:
        raise DomainError("a, b", (a.tolist(), b.tolist()), "non-empty arrays of finite "
                          "per-seed values (score diverged or censored runs first)")
    if paired and a.size != b.size:
        raise DomainError("paired", paired, f"arms of one size (got {a.size} and {b.size})")
    return a, b


def decide(a, b, *, expect: str, resolution: float, paired: bool = False,
           level: float = 0.95, scale: float = 1.0, unit: str = "") -> Decision:
    """Decide the paper's claim ``a expect b`` (``">"``, ``"<"`` or ``"="``) from per-seed
    values at ``resolution``: the Student-t interval of the mean difference (``paired``: of
    the per-seed differences a_i - b_i, for arms run on the same data seeds; else Welch's).
    Fewer than two seeds in an arm: inconclusive (no spread to judge). ``scale`` / ``unit``:
    how the texts show the numbers (``100, " pp"`` for accuracies).

    >>> decide([1.0, 1.1, 0.9], [1.0, 1.05, 0.95], expect="=", resolution=0.5,
    ...        paired=True).outcome
    'matches'
    """
    from scipy import stats

    _check(expect, resolution)
    a, b = _arms(a, b, paired)
    diff = float(a.mean() - b.mean())
    n = int(min(a.size, b.size))
    if n < 2:
        return Decision("inconclusive", "?", diff, -math.inf, math.inf, n, resolution, None,
                        "one seed: no spread to judge; run at least 2 seeds per arm", scale,
                        unit)
    if paired:
        s = float(np.std(a - b, ddof=1))
        se, dof = s / math.sqrt(n), n - 1
    else:
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = float(math.sqrt(va + vb))
        dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else 1
        s = se * math.sqrt(n)
    h = float(stats.t.ppf(0.5 + level / 2, dof) * se)
    return _decision(diff, diff - h, diff + h, n, expect, resolution,
                     _needed(s, resolution, _z(level)), scale=scale, unit=unit)


def _needed(s: float, resolution: float, z: float) -> int:
    """Seeds per arm whose interval of the difference (spread ``s`` per seed) is narrower
    than ``resolution``: n > (2 z s / resolution)^2."""
    return int(math.floor((2 * z * s / resolution) ** 2)) + 1


def _decision(diff, lo, hi, n, expect, resolution, needed, why_more="", scale=1.0, unit=""):
    rel = relation(lo, hi, resolution)
    out = _outcome(rel, expect)
    why = ""
    if out == "differs":
        why = ("an ordering where the paper has none" if expect == "=" else
               "the interval shows the reverse order")
    return Decision(out, rel, diff, lo, hi, n, resolution,
                    max(needed, n + 1) if out == "inconclusive" and needed else None,
                    why or (why_more if out == "inconclusive" else ""), scale, unit)


def decide_intervals(diff: float, lo_a: float, hi_a: float, lo_b: float, hi_b: float, *,
                     expect: str, resolution: float, n: int, scale: float = 1.0,
                     unit: str = "") -> Decision:
    """Decide ``a expect b`` from each arm's own 95 % interval (e.g. Kaplan–Meier medians):
    the difference's interval is [lo_a - hi_b, hi_a - lo_b] (conservative: it holds whenever
    both do). ``n`` seeds per arm; the seeds needed scale the width as 1 / sqrt(n) (None
    when an interval is open: the horizon, not the seeds, limits it).

    >>> decide_intervals(-5.0, 2, 6, 7, 14, expect="<", resolution=1, n=8).outcome
    'matches'
    """
    _check(expect, resolution)
    lo, hi = lo_a - hi_b, hi_a - lo_b
    w = hi - lo
    needed = (int(math.floor(n * (w / resolution) ** 2)) + 1) if math.isfinite(w) and n >= 1 \
        else None
    why = ("" if needed else "an interval reaches the horizon: a longer run, not more seeds, "
           "decides it first")
    return _decision(float(diff), float(lo), float(hi), int(n), expect, resolution, needed, why,
                     scale, unit)


def combine(decisions) -> str:
    """The outcome of a claim that needs every part (``"a and b"``): ``differs`` when any part
    differs, else ``inconclusive`` when any is, else ``tie`` when any ties, else ``matches``.

    >>> combine([decide([3.0, 3.1], [1.0, 1.1], expect=">", resolution=0.5, paired=True),
    ...          decide([1.0, 1.0], [5.0, 5.0], expect=">", resolution=0.5)])
    'differs'
    """
    outs = {getattr(d, "outcome", d) for d in decisions}
    for o in ("differs", "inconclusive", "tie", "not exercised"):
        if o in outs:
            return o
    return "matches"


def as_claim(what: str, paper: str, ours: str, rule: str, outcome: str, how: str = ""):
    """A :class:`~verify.reproduce.registry.Claim` with ``outcome`` (one of its outcomes)."""
    from .registry import Claim

    status = outcome if outcome in ("tie", "inconclusive", "not exercised") else None
    return Claim(what, paper, ours, rule, outcome == "matches",
                 "" if outcome == "matches" else how, status=status)


def reach_target(accs, paper: float, share: float = 0.9, step: float = 0.01) -> float:
    """The accuracy target of R_x that the runs reach: the largest multiple of ``step`` not
    above the ``paper`` 's target that at least ``share`` of all the runs ``accs`` (rows: runs,
    columns: rounds; every arm pooled, so no arm gets its own) reach within the horizon.

    >>> reach_target([[0.5, 0.86, 0.88], [0.4, 0.7, 0.87]], paper=0.9, share=1.0)
    0.87
    """
    best = np.nanmax(np.atleast_2d(np.asarray(accs, dtype=float)), axis=1)
    grid = np.round(np.arange(round(paper / step), 0, -1) * step, 10)
    ok = (best[None, :] >= grid[:, None] - 1e-12).mean(axis=1) >= share
    return float(grid[np.argmax(ok)]) if ok.any() else float(step)


def power_note(n: int, resolution: float, widths, unit: str = "", paired: bool = False) -> str:
    """The power line of a section: the seeds used and the resolution they give (the widths
    of the 95 % intervals of the differences the claims compare) beside the stated resolution.

    >>> power_note(8, 1.0, [3.2, 4.0], " rd")[:60]
    'Power: 8 seeds per arm; the 95 % intervals of the difference'
    """
    w = np.asarray(widths, dtype=float).ravel()
    w = w[np.isfinite(w)]
    if w.size == 0:
        given = "cannot be estimated (fewer than 2 seeds)"
    else:
        lo, hi = float(w.min()), float(w.max())
        given = f"are {lo:.3g}{unit}" + ("" if hi - lo < 1e-9 * max(1, hi) else
                                         f" to {hi:.3g}{unit}") + " wide"
    return (f"Power: {n} seed{'s' if n != 1 else ''} per arm"
            f"{' (paired by data seed)' if paired else ''}; the 95 % intervals of the "
            f"differences the claims compare {given} (stated resolution {resolution:g}{unit}; "
            "an interval narrower than it always decides).")
