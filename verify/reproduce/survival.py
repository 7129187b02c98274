"""Rounds-to-target with censoring for the reproductions (re-exported by
:mod:`verify.reproduce.stats`): a run that never reaches the target within the horizon H is
right-censored at H (we know only R_x > H). :func:`kaplan_meier` gives the survival curve
S(t) = P(R_x > t), its median with a 95 % interval (Brookmeyer–Crowley: the times whose
pointwise band contains 1/2, the band from Greenwood's variance on the log(-log) scale,
Kalbfleisch–Prentice; ``transform="linear"`` gives the original linear band), the restricted
mean E[min(R_x, H)] (the area under S up to H: the mean when nothing is censored) and the
number of censored runs. No run is dropped. A numpy implementation (a few lines, tested against
hand-computed curves) instead of a survival library: the ones on the index pull a modelling
stack this package does not need.

Example
-------
>>> km = kaplan_meier([1, 2, 2, 3, 5], reached=[True, True, True, False, True])
>>> km.survival.tolist(), km.median, km.censored
([0.8, 0.4, 0.0], 2.0, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

__all__ = ["KaplanMeier", "kaplan_meier", "km_rounds"]


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
