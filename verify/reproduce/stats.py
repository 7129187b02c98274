"""Outcome statistics of the reproductions: rounds-to-target with censoring (Kaplan–Meier) and
the decision of a claim from intervals over seeds (:data:`DECISIONS`: ``matches`` /
``differs`` / ``differs in size`` / ``tie`` / ``not exercised`` / ``inconclusive``).

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
  arms share their data seeds), the rule's stated ``resolution`` (the equivalence margin) and,
  where the paper gives one, its ``effect`` (a - b in the claim's unit); the 95 % Student-t
  interval [lo, hi] of the difference a - b decides, on size as well as direction: *matches*
  when it excludes 0 on the paper's side and contains the paper's effect (or the claim is
  directional only); *differs in size* when it excludes the paper's effect (whether or not the
  direction is decided: the data say the paper's effect is not here); *differs* when it shows
  the reverse order; a *tie* only from an equivalence test (TOST at the stated margin: the
  interval inside (-resolution, resolution)), never from a zero-width interval (identical
  values on every seed: *not exercised*, the comparison measures nothing); else
  *inconclusive*: too few seeds to tell, the word of the bound checks. The seeds that would
  decide it (:mod:`verify.reproduce.power`: the direction, or the equivalence of an "about
  equal" claim, with 80 % power at the observed mean difference and spread) are reported with
  it. :func:`decide_intervals` does the same from the two arms' own intervals (e.g.
  Kaplan–Meier medians).

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

from .survival import KaplanMeier, kaplan_meier, km_rounds

__all__ = ["DECISIONS", "DEGENERATE", "Decision", "KaplanMeier", "Z95", "as_claim", "combine",
           "decide", "decide_intervals", "kaplan_meier", "km_rounds", "power_note",
           "reach_target", "relation"]

#: the normal 97.5 % quantile (the seeds-needed projection of a 95 % interval)
Z95 = 1.959963984540054
_EXPECT = (">", "<", "=")
#: the outcomes of a decision (the registry's OUTCOMES)
DECISIONS = ("matches", "differs", "differs in size", "tie", "not exercised", "inconclusive")


@dataclass(frozen=True)
class Decision:
    """A claim decided from intervals: ``outcome`` (one of :data:`DECISIONS`), the
    ``relation`` the interval shows (``">"``, ``"<"``, ``"tie"`` or ``"?"``), the difference
    a - b (``diff``) and its 95 % interval [``lo``, ``hi``], ``n`` seeds per arm, the
    equivalence margin ``resolution``, ``width`` = hi - lo, the paper's ``effect`` (a - b in the
    same unit; None for a directional-only claim) and ``seeds_needed`` (per arm, for an
    inconclusive outcome: the seeds that decide the direction, or show the equivalence of an
    "about equal" claim, with 80 % power at the observed difference and spread ``sd``; None
    when no number of seeds would); ``tie_seeds``, for an inconclusive directional claim, the
    seeds at which the interval would lie inside the margin instead (a tie, TOST, 80 % power;
    None when the observed difference is beyond the margin): fewer than ``seeds_needed`` when
    the difference is small against the margin, and the only way to decide a zero one."""

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
    effect: float | None = None
    sd: float = math.nan
    expect: str = ""
    tie_seeds: int | None = None

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def _v(self, v: float) -> str:
        return f"{v * self.scale:.3g}{self.unit}"

    @property
    def how(self) -> str:
        """Why it is not a match, in a few words ('' for a match)."""
        o, iv = self.outcome, f"[{self._v(self.lo)}, {self._v(self.hi)}]"
        eff = "" if self.effect is None else f"the paper's effect {self._v(self.effect)}"
        if o == "matches":
            return ""
        if o == "differs in size":
            dirn = ("its direction matches" if self.relation in (">", "<") else
                    "its direction is not decided")
            return f"95 % interval of the difference {iv} excludes {eff} ({dirn})"
        if o == "tie":
            return (f"equivalence test (TOST) at the margin ±{self._v(self.resolution)}: the "
                    f"95 % interval {iv} lies inside it" +
                    (f"; it excludes {eff}" if eff and not self.lo <= self.effect <= self.hi
                     else ""))
        if o == "inconclusive":
            return f"95 % interval of the difference {iv} {self._open()}; {self._more()}"
        return self.why or self.fmt()

    def _open(self) -> str:
        if self.relation == "?" and self.effect is not None:
            return f"contains both 0 and the paper's effect {self._v(self.effect)}"
        return (f"neither excludes 0 nor lies inside the margin ±{self._v(self.resolution)}")

    def _more(self) -> str:
        tie = self.tie_seeds is not None and (self.seeds_needed is None or
                                              self.tie_seeds < self.seeds_needed)
        tie_text = (f"about {self.tie_seeds} seeds per arm would show a tie within the margin "
                    f"±{self._v(self.resolution)} (80 % power")
        if self.seeds_needed:
            goal = ("show the equivalence" if self.expect == "=" else "decide the direction")
            return (f"about {self.seeds_needed} seeds per arm would {goal} (80 % power at the "
                    f"observed difference {self._v(self.diff)} and spread {self._v(self.sd)})" +
                    (f"; {tie_text})" if tie else ""))
        if tie:
            return (f"no number of seeds decides the direction of a zero difference; "
                    f"{tie_text} at the spread {self._v(self.sd)})")
        return self.why or (
            "the observed difference is 0 (or beyond the margin): no number of seeds decides "
            "it at this size of effect")

    def fmt(self) -> str:
        """'diff d [lo, hi] (n = ...)' of the difference a - b, in the display unit."""
        k, u = self.scale, self.unit
        return (f"diff {self.diff * k:+.3g}{u} [{self.lo * k:.3g}, {self.hi * k:.3g}] "
                f"(n = {self.n}" + ("" if self.effect is None else
                                   f"; paper {self.effect * k:+.3g}{u}") + ")")


def relation(lo: float, hi: float, resolution: float) -> str:
    """What the interval [lo, hi] of a - b shows at ``resolution``: ``"tie"`` inside
    (-resolution, resolution) (the equivalence test), else ``">"`` / ``"<"`` when it excludes
    0, else ``"?"``.

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


def _outcome(rel: str, expect: str, lo: float, hi: float, effect) -> str:
    """The outcome of ``a expect b`` from the relation of [lo, hi] and the paper's effect."""
    if expect == "=":
        return {"tie": "matches", "?": "inconclusive"}.get(rel, "differs")
    if rel == "tie":
        return "tie"
    if rel in (">", "<") and rel != expect:
        return "differs"
    if effect is not None and not lo <= effect <= hi:
        return "differs in size"
    return "matches" if rel == expect else "inconclusive"


def _check(expect, resolution, effect=None):
    if expect not in _EXPECT:
        raise DomainError("expect", expect, "'>', '<' or '=' (the paper's a vs b)")
    if not (isinstance(resolution, (int, float)) and resolution > 0 and
            math.isfinite(resolution)):
        raise DomainError("resolution", resolution, "a finite number > 0")
    if effect is None:
        return
    ok = isinstance(effect, (int, float)) and math.isfinite(effect) and (
        (expect == ">" and effect > 0) or (expect == "<" and effect < 0))
    if not ok:
        raise DomainError("effect", effect, "a finite paper's difference a - b of the claim's "
                          "sign (> 0 for '>', < 0 for '<'; none for '=')")


def _arms(a, b, paired):
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or a.size == 0 or b.size == 0:
        raise DomainError("a, b", (a.tolist(), b.tolist()), "non-empty arrays of finite "
                          "per-seed values (score diverged or censored runs first)")
    if paired and a.size != b.size:
        raise DomainError("paired", paired, f"arms of one size (got {a.size} and {b.size})")
    return a, b


#: a zero-width interval (no spread in the per-seed difference) that shows no ordering
DEGENERATE = ("every seed gives the same difference {d} (a zero-width interval): the "
              "comparison measures nothing here (e.g. every arm reaches the target at once, "
              "or two arms run bit-identically)")


def decide(a, b, *, expect: str, resolution: float, paired: bool = False,
           level: float = 0.95, scale: float = 1.0, unit: str = "",
           effect: float | None = None) -> Decision:
    """Decide the paper's claim ``a expect b`` (``">"``, ``"<"`` or ``"="``) from per-seed
    values: the Student-t interval of the mean difference (``paired``: of the per-seed
    differences a_i - b_i, for arms run on the same data seeds; else Welch's). ``effect``: the
    paper's a - b where it gives one (same unit as a, b): the interval must contain it for a
    match (else ``differs in size``). ``resolution`` is the equivalence margin: a tie (or the
    match of ``"="``) needs the interval inside (-resolution, resolution), never a zero-width
    one (``not exercised``). Fewer than two seeds in an arm: inconclusive. ``scale`` /
    ``unit``: how the texts show the numbers (``100, " pp"`` for accuracies).

    >>> decide([1.0, 1.1, 0.9], [1.0, 1.05, 0.95], expect="=", resolution=0.5,
    ...        paired=True).outcome
    'matches'
    >>> decide([3.0, 2.0, 4.0, 3.5], [3.2, 2.1, 4.1, 3.4], expect="<", resolution=0.01,
    ...        paired=True, effect=-7.0).outcome
    'differs in size'
    """
    from scipy import stats

    _check(expect, resolution, effect)
    a, b = _arms(a, b, paired)
    diff = float(a.mean() - b.mean())
    n = int(min(a.size, b.size))
    if n < 2:
        return Decision("inconclusive", "?", diff, -math.inf, math.inf, n, resolution, None,
                        "one seed: no spread to judge; run at least 2 seeds per arm", scale,
                        unit, effect, math.nan, expect)
    if paired:
        s = float(np.std(a - b, ddof=1))
        se, dof = s / math.sqrt(n), n - 1
    else:
        va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        se = float(math.sqrt(va + vb))
        dof = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1)) if se > 0 else 1
        s = se * math.sqrt(n)
    h = float(stats.t.ppf(0.5 + level / 2, dof) * se)
    big = max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    if h <= 1e-12 * big and abs(diff) < resolution:
        return Decision("not exercised", "?", diff, diff, diff, n, resolution, None,
                        DEGENERATE.format(d=f"{diff * scale:+.3g}{unit}"), scale, unit, effect,
                        s, expect)
    return _decision(diff, diff - h, diff + h, n, expect, resolution, s, scale=scale,
                     unit=unit, effect=effect, level=level)


def _decision(diff, lo, hi, n, expect, resolution, s, why_more="", scale=1.0, unit="",
              effect=None, level=0.95):
    from .power import seeds_for_direction, seeds_for_equivalence

    rel = relation(lo, hi, resolution)
    out = _outcome(rel, expect, lo, hi, effect)
    why, need, tie = "", None, None
    if out == "differs":
        why = ("an ordering where the paper has none" if expect == "=" else
               "the interval shows the reverse order")
    elif out == "inconclusive" and math.isfinite(s):
        need = (seeds_for_equivalence(diff, s, resolution, level=level) if expect == "=" else
                seeds_for_direction(diff, s, level=level))
        need = None if need is None else max(need, n + 1)
        if expect != "=" and resolution > 0 and effect is None:  # a tie decides it too
            tie = seeds_for_equivalence(diff, s, resolution, level=level)
            tie = None if tie is None else max(tie, n + 1)
        why = why_more
    elif out == "inconclusive":
        why = why_more
    return Decision(out, rel, diff, lo, hi, n, resolution, need, why, scale, unit, effect, s,
                    expect, tie)


def decide_intervals(diff: float, lo_a: float, hi_a: float, lo_b: float, hi_b: float, *,
                     expect: str, resolution: float, n: int, scale: float = 1.0,
                     unit: str = "", effect: float | None = None) -> Decision:
    """Decide ``a expect b`` from each arm's own 95 % interval (e.g. Kaplan–Meier medians):
    the difference's interval is [lo_a - hi_b, hi_a - lo_b] (conservative: it holds whenever
    both do). ``n`` seeds per arm; the projection reads the per-seed spread off the interval's
    width (s = sqrt(n) width / (2 z); none when an interval is open: the horizon, not the
    seeds, limits it).

    >>> decide_intervals(-5.0, 2, 6, 7, 14, expect="<", resolution=1, n=8).outcome
    'matches'
    """
    _check(expect, resolution, effect)
    lo, hi = lo_a - hi_b, hi_a - lo_b
    w = hi - lo
    s = math.sqrt(n) * w / (2 * Z95) if math.isfinite(w) and n >= 1 else math.nan
    why = ("" if math.isfinite(s) else "an interval reaches the horizon: a longer run, not more "
           "seeds, decides it first")
    return _decision(float(diff), float(lo), float(hi), int(n), expect, resolution, s, why,
                     scale, unit, effect)


def combine(decisions) -> str:
    """The outcome of a claim that needs every part (``"a and b"``): the first of ``differs``,
    ``differs in size``, ``not exercised`` (a part the setup cannot show: the whole cannot be
    shown), ``inconclusive``, ``tie`` that any part has, else ``matches``.

    >>> combine([decide([3.0, 3.1], [1.0, 1.1], expect=">", resolution=0.5, paired=True),
    ...          decide([1.0, 1.0], [5.0, 5.0], expect=">", resolution=0.5)])
    'differs'
    """
    outs = {getattr(d, "outcome", d) for d in decisions}
    for o in ("differs", "differs in size", "not exercised", "inconclusive", "tie"):
        if o in outs:
            return o
    return "matches"


def as_claim(what: str, paper: str, ours: str, rule: str, outcome: str, how: str = ""):
    """A :class:`~verify.reproduce.registry.Claim` with ``outcome`` (one of its outcomes)."""
    from .registry import STATUSES, Claim

    status = outcome if outcome in STATUSES else None
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
