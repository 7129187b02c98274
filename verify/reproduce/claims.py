"""Building the reproductions' claims from decisions over seeds (:mod:`verify.reproduce.stats`):
the shapes of claim that recur across the papers' items, so that every item decides them the
same way.

* :func:`acc_pair` / :func:`rounds_pair`: one paired decision of accuracies (shown in pp) or of
  rounds-to-target (runs that never reach it counted at the horizon: the restricted mean's terms,
  never dropped);
* :func:`against_all`: "a is above (below) every other arm": one paired decision per rival, the
  claim the :func:`~.stats.combine` of them;
* :func:`at_least`: "in at least k of n settings": the outcome from the parts' outcomes;
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

from .stats import combine, decide

__all__ = ["UNREACHED", "acc_pair", "against_all", "at_least", "hows", "no_interval_note",
           "rounds_pair", "unreached"]

#: the ``how`` of a rounds-to-target claim whose runs never reach the target
UNREACHED = "no run reached the target within the horizon"


def acc_pair(a, b, expect: str, resolution: float):
    """The paired decision of ``a expect b`` for per-seed accuracies (fractions; shown in pp)."""
    return decide(a, b, expect=expect, resolution=resolution, paired=True, scale=100,
                  unit=" pp")


def rounds_pair(a, b, expect: str, resolution: float, horizon: int | None = None):
    """The paired decision of ``a expect b`` for per-seed rounds-to-target; with ``horizon``,
    NaN (never reached) counts as the horizon (min(R_x, H): the restricted mean's terms)."""
    if horizon is not None:
        a, b = (np.where(np.isfinite(v), np.minimum(v, horizon), float(horizon))
                for v in (np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
    return decide(a, b, expect=expect, resolution=resolution, paired=True, unit=" rd")


def unreached(*rs) -> bool:
    """Whether no run of ``rs`` (R_x per seed, NaN: never reached) reached the target: their
    rounds all equal the horizon, and a comparison of them is *not exercised*.

    >>> unreached([float("nan")], [float("nan"), float("nan")]), unreached([3.0, float("nan")])
    (True, False)
    """
    return not any(np.isfinite(np.asarray(r, dtype=float)).any() for r in rs)


def against_all(head, rivals: dict, expect: str, pair=acc_pair, **kw):
    """``head expect r`` for every rival ``{name: per-seed values}`` (``pair``:
    :func:`acc_pair` or :func:`rounds_pair`, ``kw`` its resolution, ...): (outcome by
    :func:`~.stats.combine`, {name: decision})."""
    dec = {n: pair(head, v, expect, **kw) for n, v in rivals.items()}
    return combine(dec.values()), dec


def hows(decisions: dict) -> str:
    """Why the parts that do not match do not, one clause each ('' when all match)."""
    return "; ".join(f"{n}: {d.outcome}" + (f" ({d.how})" if d.how else "")
                     for n, d in decisions.items() if d.outcome != "matches")


def at_least(decisions, need: int) -> str:
    """The outcome of a claim that needs ``need`` of its parts to match ("in >= 2 of 3
    patterns"): ``matches`` when at least ``need`` match; ``inconclusive`` while the
    inconclusive parts could still make up the count; else ``differs`` when a part differs
    (the count cannot be reached and an interval shows the reverse), else ``tie``.

    >>> at_least(["matches", "inconclusive", "tie"], 2), at_least(["tie", "differs"], 1)
    ('inconclusive', 'differs')
    >>> at_least(["tie", "tie", "matches"], 2)
    'tie'
    """
    outs = [getattr(d, "outcome", d) for d in decisions]
    if not 1 <= need <= len(outs):
        raise DomainError("need", need, f"1 <= need <= {len(outs)} (the number of parts)")
    m, u = outs.count("matches"), outs.count("inconclusive")
    if m >= need:
        return "matches"
    if m + u >= need:
        return "inconclusive"
    return "differs" if "differs" in outs else "tie"


def no_interval_note(why: str) -> str:
    """The power line of a section whose claims compare no values over seeds: ``why`` there is
    no interval.

    >>> no_interval_note("one deterministic run")[:41]
    'Power: no interval: one deterministic run'
    """
    return (f"Power: no interval: {why}. The rules read that run's numbers directly, each "
            "with its stated resolution or tolerance.")
