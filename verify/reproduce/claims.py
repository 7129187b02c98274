"""Building the reproductions' claims from decisions over seeds (:mod:`verify.reproduce.stats`):
the shapes of claim that recur across the papers' items, so that every item decides them the
same way.

* :func:`acc_pair` / :func:`rounds_pair`: one paired decision of accuracies (shown in pp) or of
  rounds-to-target (runs that never reach it counted at the horizon: the restricted mean's terms,
  never dropped), each with the paper's ``effect`` where it gives one; a rounds comparison with
  more than :data:`~.registry.CENSORED_SHARE` of its runs censored at the horizon is *not
  exercised* (min(R_x, H) is then H whatever the arm: the horizon, not the rule, decides it);
* :func:`against_all`: "a is above (below) every other arm": one paired decision per rival, the
  claim the :func:`~.stats.combine` of them;
* :func:`at_least`: "in at least k of n settings": the outcome from the parts' outcomes (a part
  that is not exercised or tied never counts as a match);
* :func:`no_interval_note`: the power line of a section with nothing to put an interval on (one
  deterministic run).

Example
-------
>>> d = acc_pair([0.90, 0.91, 0.92], [0.80, 0.82, 0.81], ">", 0.005)
>>> d.outcome, d.unit
('matches', ' pp')
>>> at_least(["matches", "tie", "matches"], 2)
'matches'
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from .registry import CENSORED_SHARE
from .stats import Decision, combine, decide

__all__ = ["UNREACHED", "acc_pair", "against_all", "at_least", "censored", "hows",
           "no_interval_note", "rounds_pair", "target_note", "unreached"]

#: the ``how`` of a rounds-to-target claim whose runs never reach the target
UNREACHED = "no run reached the target within the horizon"


def acc_pair(a, b, expect: str, resolution: float, effect: float | None = None):
    """The paired decision of ``a expect b`` for per-seed accuracies (fractions; shown in pp);
    ``effect`` the paper's a - b (a fraction) where it gives one."""
    return decide(a, b, expect=expect, resolution=resolution, paired=True, scale=100,
                  unit=" pp", effect=effect)


def censored(*rs, horizon: float) -> tuple[int, int]:
    """(runs that never reached the target within ``horizon``, runs) over the arms ``rs`` (R_x
    per seed, NaN or > horizon: never reached).

    >>> censored([3.0, float("nan")], [60.0, 4.0], horizon=50)
    (2, 4)
    """
    v = np.concatenate([np.asarray(r, dtype=float).ravel() for r in rs])
    return int(np.sum(~(np.isfinite(v) & (v <= horizon)))), int(v.size)


def rounds_pair(a, b, expect: str, resolution: float, horizon: int | None = None,
                effect: float | None = None):
    """The paired decision of ``a expect b`` for per-seed rounds-to-target; with ``horizon``,
    NaN (never reached) counts as the horizon (min(R_x, H): the restricted mean's terms), and
    more than :data:`~.registry.CENSORED_SHARE` of the runs censored makes it *not exercised*.
    ``effect``: the paper's a - b in rounds where it gives one.

    >>> rounds_pair([3.0, float("nan"), float("nan")], [float("nan")] * 3, "<", 1.0,
    ...             horizon=50).outcome
    'not exercised'
    """
    if horizon is not None:
        c, n = censored(a, b, horizon=horizon)
        if c > CENSORED_SHARE * n:
            return _censored(a, b, expect, resolution, horizon, effect, c, n)
        a, b = (np.where(np.isfinite(v), np.minimum(v, horizon), float(horizon))
                for v in (np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
    return decide(a, b, expect=expect, resolution=resolution, paired=True, unit=" rd",
                  effect=effect)


def _censored(a, b, expect, resolution, horizon, effect, c, n):
    """The *not exercised* decision of a rounds comparison censored in ``c`` of ``n`` runs."""
    d = decide(*(np.where(np.isfinite(v), np.minimum(v, horizon), float(horizon))
                 for v in (np.asarray(a, dtype=float), np.asarray(b, dtype=float))),
               expect=expect, resolution=resolution, paired=True, unit=" rd", effect=effect)
    why = (f"{c} of {n} runs never reach the target within the horizon H = {horizon:g} (more "
           f"than {CENSORED_SHARE:.0%} censored: min(R_x, H) is H for most runs whatever the "
           "arm; a longer horizon, not more seeds, would exercise it)")
    return Decision("not exercised", "?", d.diff, d.lo, d.hi, d.n, resolution, None, why,
                    d.scale, d.unit, effect, d.sd, expect)


def unreached(*rs) -> bool:
    """Whether no run of ``rs`` (R_x per seed, NaN: never reached) reached the target: their
    rounds all equal the horizon, and a comparison of them is *not exercised*.

    >>> unreached([float("nan")], [float("nan"), float("nan")]), unreached([3.0, float("nan")])
    (True, False)
    """
    return not any(np.isfinite(np.asarray(r, dtype=float)).any() for r in rs)


def against_all(head, rivals: dict, expect: str, pair=acc_pair, effects: dict | None = None,
                **kw):
    """``head expect r`` for every rival ``{name: per-seed values}`` (``pair``:
    :func:`acc_pair` or :func:`rounds_pair`, ``kw`` its resolution, ...; ``effects``: the
    paper's head - rival per rival name, where it gives one): (outcome by
    :func:`~.stats.combine`, {name: decision})."""
    eff = effects or {}
    dec = {n: pair(head, v, expect, **kw, **({"effect": eff[n]} if n in eff else {}))
           for n, v in rivals.items()}
    return combine(dec.values()), dec


def hows(decisions: dict) -> str:
    """Why the parts that do not match do not, one clause each ('' when all match)."""
    return "; ".join(f"{n}: {d.outcome}" + (f" ({d.how})" if d.how else "")
                     for n, d in decisions.items() if d.outcome != "matches")


def at_least(decisions, need: int) -> str:
    """The outcome of a claim that needs ``need`` of its parts to match ("in >= 2 of 3
    patterns"): ``matches`` when at least ``need`` match; ``inconclusive`` while the
    inconclusive parts could still make up the count; else (the count cannot be reached) the
    first of ``differs``, ``differs in size``, ``tie`` that a part has, else ``not exercised``
    (a tie or a part that is not exercised never counts towards a match).

    >>> at_least(["matches", "inconclusive", "tie"], 2), at_least(["tie", "differs"], 1)
    ('inconclusive', 'differs')
    >>> at_least(["tie", "tie", "matches"], 2), at_least(["not exercised", "matches"], 2)
    ('tie', 'not exercised')
    """
    outs = [getattr(d, "outcome", d) for d in decisions]
    if not 1 <= need <= len(outs):
        raise DomainError("need", need, f"1 <= need <= {len(outs)} (the number of parts)")
    m, u = outs.count("matches"), outs.count("inconclusive")
    if m >= need:
        return "matches"
    if m + u >= need:
        return "inconclusive"
    for o in ("differs", "differs in size", "tie"):
        if o in outs:
            return o
    return "not exercised"


def target_note(R: dict, H: int, target: str, paper: str) -> str:
    """The departures line of a rounds-to-target item: the ``target`` (e.g. ``"60 %"``) beside
    the ``paper`` 's rounds to it, and the rounds at which our runs ``R`` ({arm: R_x per seed,
    NaN: never}) reach it within ``H``: a target every run reaches within a few rounds leaves
    the arms no room to differ (identical rounds: *not exercised*), one most runs miss is
    censored (*not exercised* above the stated share).

    >>> t = target_note({"a": [2.0, 3.0], "b": [2.0, float("nan")]}, 30, "60 %", "5-6 rounds")
    >>> "rounds 2 to 3 (median 2)" in t and "1 of 4 runs never reach" in t
    True
    """
    v = np.concatenate([np.asarray(r, dtype=float).ravel() for r in R.values()])
    hit = v[np.isfinite(v) & (v <= H)]
    c, n = censored(*R.values(), horizon=H)
    seen = (f"our runs reach it at rounds {hit.min():g} to {hit.max():g} (median "
            f"{np.median(hit):g})" if hit.size else "none of our runs reaches it")
    return (f"Departure (it decides the R_x outcomes): the target {target} is the paper's "
            f"(reached there in {paper}); on this data and model {seen}, and {c} of {n} runs "
            f"never reach it within H = {H} rounds. A target every run reaches within a round "
            "or two, or one most runs never reach, cannot show an ordering of the arms: such "
            "comparisons are *not exercised*, not ties.")


def no_interval_note(why: str) -> str:
    """The power line of a section whose claims compare no values over seeds: ``why`` there is
    no interval.

    >>> no_interval_note("one deterministic run")[:41]
    'Power: no interval: one deterministic run'
    """
    return (f"Power: no interval: {why}. The rules read that run's numbers directly, each "
            "with its stated resolution or tolerance.")
