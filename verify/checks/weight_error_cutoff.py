"""FedAU's two cutoffs K, rebuilt from the entries that define them (seed 002; no run).

* ``weight_error.cutoff_cor4`` -- Corollary 4's K = log_c T is the real K at which the squared
  relative bias of Algorithm 2's K-cutoff interval estimate equals 1/T. That bias is
  ``weight_error.interval_bias`` (p E[S] - 1)^2 = (1 - p)^(2K), itself judged on Algorithm 2's
  completed intervals (:mod:`verify.checks.weight_error_paths`); the K where it is 1/T is found
  by root finding.
* ``weight_error.cutoff_opt`` -- the minimiser over real K >= 1 of the (B.6.9) bound
  ``weight_error.average`` (3K + 2K ln T)/T + (1-p)^(2K), found numerically.

Each is judged at points spread over p and T (an identity: equal to 1e-9 relative).

Example
-------
>>> from verify.suite import Context
>>> rs = weight_error_cutoffs(Context(quick=True))
>>> sorted({r.verdict for r in rs}), len(rs)
(['holds'], 10)
"""

from __future__ import annotations

import boundlab

from ._common import judge
from ._derive import DERIVED, argmin, mp_function, root
from ._registry import register

#: (p, T) points: rare to frequent clients, short to long horizons
POINTS = ((0.05, 20000), (0.1, 2000), (0.3, 10), (0.6, 300), (0.93, 5000))


def cutoff_cor4(p: float, T: int) -> float:
    """The real K with weight_error.interval_bias(p, K) = 1/T."""
    bias = mp_function(boundlab.get("weight_error.interval_bias"), ("p", "K"))
    return root(lambda K: bias(p, K), 1.0 / T, 1e-6, 1e7)


def cutoff_opt(p: float, T: int) -> float:
    """The minimiser over real K >= 1 of weight_error.average(p, K, T)."""
    avg = mp_function(boundlab.get("weight_error.average"), ("p", "K", "T"))
    return argmin(lambda K: avg(p, K, T), 1.0, 1e7)


_HOW = {"weight_error.cutoff_cor4": (cutoff_cor4, "root in real K of weight_error.interval_bias"
                                     " (p, K) = 1/T"),
        "weight_error.cutoff_opt": (cutoff_opt, "minimiser over real K >= 1 of "
                                    "weight_error.average (p, K, T), the (B.6.9) bound")}


@register("weight_error", *_HOW)
def weight_error_cutoffs(ctx) -> list:
    """Corollary 4's cutoff and the (B.6.9)-optimal cutoff, rebuilt from their definitions."""
    out = []
    for bid, (fn, how) in _HOW.items():
        bound = boundlab.get(bid)
        for p, T in POINTS:
            out.append(judge(bound, [fn(p, T)], {"p": p, "T": T}, check="weight_error_cutoffs",
                             case=f"p={p}, T={T}", problem=DERIVED, deterministic=True,
                             note=f"measured = {how}"))
    return out
