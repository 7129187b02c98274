"""The outcome rules of seed 002's Table D.6.1 (FedAU without a floor on p_n): whether a rare
client took part (the precondition of the known-statistics collapse) and the claims decided by
paired 95 % intervals over the data seeds (:mod:`verify.reproduce.stats`). Kept apart from
:mod:`verify.reproduce.seed002_appendix` so that each module stays small.

A client is *rare* when one participation of it weighs at least :data:`RARE_WEIGHT` full rounds
under the known statistics: omega_n / N = 1 / (N p_n) >= 10 (a round's aggregate has weight 1 in
expectation). The collapse of Table D.6.1 needs such a participation; a run without one cannot
show it (*not exercised*).

Example
-------
>>> import numpy as np
>>> rare_clients(np.array([0.5, 0.001, 0.2, 0.02])).tolist()
[False, True, False, True]
"""

from __future__ import annotations

import math

import numpy as np

from .stats import as_claim, combine, decide

__all__ = ["CHANCE", "RARE_WEIGHT", "RareTookPart", "d6_claims",
           "rare_clients", "scored"]

CHANCE = 0.1  # 10 classes
RARE_WEIGHT = 10.0


def rare_clients(p) -> np.ndarray:
    """Which clients are rare: 1 / (N p_n) >= :data:`RARE_WEIGHT`."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return 1.0 / (p.size * p) >= RARE_WEIGHT


class RareTookPart:
    """Round callback: the number of rare clients (:func:`rare_clients` of the factory's
    current participation probabilities) that took part in the round, as metric
    ``rare_part``."""

    def __init__(self, factory):
        self.factory = factory

    def __call__(self, info):
        mask = np.asarray(info.state.participation[info.round], dtype=bool)
        info.record("rare_part", float(np.sum(mask & rare_clients(self.factory.process.probs))))


def scored(v) -> np.ndarray:
    """Per-seed accuracies with a diverged run (NaN) scored at chance: its model carries no
    information about the labels."""
    v = np.asarray(v, dtype=float)
    return np.where(np.isfinite(v), v, CHANCE)


def _best(vals, key, names):
    ok = [n for n in names if n != "FedAU K=50"]
    return max(ok, key=lambda n: float(np.mean(scored(vals[key, n]))))


def _fedau_best(vals, keys, names, res):
    parts, text = [], []
    for k in keys:
        b = _best(vals, k, names)
        d = decide(scored(vals[k, "FedAU K=50"]), scored(vals[k, b]), expect=">",
                   resolution=res, paired=True, scale=100, unit=" pp")
        parts.append(d)
        text.append(f"{k}: FedAU - {b} {d.fmt()}")
    out = combine(parts)
    return as_claim("FedAU (K=50) best at every E[p_n]", "best in all three columns",
                    "; ".join(text), "FedAU above the best other method by the paired 95 % "
                    f"interval (within ±{res * 100:g} pp: a tie; diverged = chance)", out,
                    "; ".join(f"{k}: {d.how}" for k, d in zip(keys, parts) if d.how)), parts


def _collapse(vals, rare, low):
    """Known statistics at chance in the runs (E[p_n] <= .01) where a rare client took part."""
    took = [(k, i) for k in low for i, c in enumerate(rare[k]) if c > 0]
    seen = sum(sum(rare[k]) for k in low)
    if not took:
        return as_claim("known statistics (1 / p_n weights) collapse without a floor",
                        "10 % (chance) at E[p_n] <= .01",
                        f"no rare client (1 / (N p_n) >= {RARE_WEIGHT:g}) took part in "
                        f"{sum(len(rare[k]) for k in low)} run(s)",
                        "in the runs where a rare client took part: within ±5 pp of chance "
                        "(paired 95 % interval; diverged = chance)", "not exercised",
                        "no rare client took part"), []
    v = scored([vals[k, "Known stats"][i] for k, i in took])
    d = decide(v, np.full(v.size, CHANCE), expect="=", resolution=0.05, paired=True,
               scale=100, unit=" pp")
    return as_claim("known statistics (1 / p_n weights) collapse without a floor",
                    "10 % (chance) at E[p_n] <= .01",
                    f"{', '.join(f'{x * 100:.1f}' for x in v)} % in the {len(took)} run(s) with "
                    f"a rare participation ({seen} in all); minus chance {d.fmt()}",
                    "in the runs where a rare client took part: within ±5 pp of chance "
                    "(paired 95 % interval; diverged = chance)", d.outcome, d.how), [d]


def d6_claims(vals, rare, keys, names, res):
    """Table D.6.1's claims: FedAU best in every column, the known-statistics collapse (only
    where a rare client took part) and every method lower at the smallest E[p_n]; returns
    (claims, decisions)."""
    c1, p1 = _fedau_best(vals, keys, names, res)
    c2, p2 = _collapse(vals, rare, keys[1:])
    drops = [decide(scored(vals[keys[0], n]), scored(vals[keys[-1], n]), expect=">",
                    resolution=res, paired=True, scale=100, unit=" pp") for n in names]
    n_drop = sum(d.outcome == "matches" for d in drops)
    c3 = as_claim("every method degrades as E[p_n] falls", "all six",
                  f"{n_drop} of {len(names)} lower at {keys[-1]} by the paired interval (" +
                  ", ".join(f"{n} {d.fmt()}" for n, d in zip(names, drops)) + ")",
                  f"each method higher at {keys[0]} than at {keys[-1]} (paired 95 % interval; "
                  f"within ±{res * 100:g} pp: a tie)", combine(drops),
                  "; ".join(f"{n}: {d.outcome}" for n, d in zip(names, drops)
                            if d.outcome != "matches"))
    return [c1, c2, c3], p1 + p2 + drops


def fmt_acc(v) -> str:
    """An accuracy in %, or 'diverged'."""
    return "diverged" if math.isnan(v) else f"{v * 100:.1f}"
