"""Metrics of the reproductions. ``smoothness`` is seed 000's Table 4 "smoothness value" ("a
lag one autocorrelation measure based on the normalized standard deviation of the variations
over one round"): the formula is not reconstructible, so both of the spec's candidates are
provided and labelled *assumption*: S1 = std(Δacc_r) / |mean(Δacc_r)| (the normalised standard
deviation of the per-round variations) and S2 = the lag-1 autocorrelation of Δacc_r.

Example
-------
>>> import numpy as np
>>> acc = np.array([0.5, 0.6, 0.65, 0.7, 0.72])
>>> round(smoothness(acc, "S1"), 3), round(smoothness(acc, "S2"), 4)   # by hand: 0.0332 / 0.055
(0.603, -0.0076)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

__all__ = ["smoothness"]


def smoothness(acc, kind: str = "S1") -> float:
    """Smoothness of an accuracy curve ``acc`` (per round); NaN when undefined (fewer than
    three rounds, or no variation)."""
    d = np.diff(np.asarray(acc, dtype=float))
    d = d[np.isfinite(d)]
    if kind not in ("S1", "S2"):
        raise DomainError("kind", kind, "'S1' or 'S2'")
    if d.size < 2:
        return math.nan
    if kind == "S1":
        m = abs(d.mean())
        return float(d.std(ddof=1) / m) if m > 0 else math.nan
    c = d - d.mean()
    den = float(np.dot(c, c))
    return float(np.dot(c[1:], c[:-1]) / den) if den > 0 else math.nan
