"""Parameter domains: intervals of the reals, optionally restricted to integers.

Light on purpose (numpy only, no sympy): ``toys`` validates every hyper-parameter against these
domains without importing sympy. :mod:`boundlab.symbols` re-exports them.

Example
-------
>>> POSITIVE.describe()
'positive real (0, inf)'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Domain", "INT_GE0", "INT_GE1", "NONNEGATIVE", "POSITIVE", "REAL", "UNIT_CLOSED",
           "UNIT_HALF_OPEN", "UNIT_OPEN"]


@dataclass(frozen=True)
class Domain:
    """An interval of the reals, optionally restricted to integers.

    >>> Domain(0, 1, lo_open=True, hi_open=True).describe()
    'real in (0, 1)'
    >>> import numpy as np
    >>> Domain(1, math.inf, lo_open=False, integer=True).bad_mask(np.array([0, 1, 2.5])).tolist()
    [True, False, True]
    """

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = True
    hi_open: bool = True
    integer: bool = False

    def describe(self) -> str:
        if self.integer:
            if math.isinf(self.hi):
                return f"integer >= {int(self.lo)}"
            return f"integer in [{int(self.lo)}, {int(self.hi)}]"
        left = "(" if self.lo_open or math.isinf(self.lo) else "["
        right = ")" if self.hi_open or math.isinf(self.hi) else "]"
        interval = f"{left}{_fmt(self.lo)}, {_fmt(self.hi)}{right}"
        if self.lo == 0 and math.isinf(self.hi):
            return ("positive real " if self.lo_open else "non-negative real ") + interval
        return f"real in {interval}"

    def bad_mask(self, arr: np.ndarray) -> np.ndarray:
        """Boolean mask of the entries of ``arr`` outside the domain (NaN is always outside)."""
        arr = np.asarray(arr, dtype=float)
        bad = ~np.isfinite(arr) if not (math.isinf(self.hi) and not self.hi_open) else np.isnan(arr)
        if not math.isinf(self.lo):
            bad |= arr <= self.lo if self.lo_open else arr < self.lo
        if not math.isinf(self.hi):
            bad |= arr >= self.hi if self.hi_open else arr > self.hi
        if self.integer:
            bad |= arr != np.floor(arr)
        return bad

    def assumptions(self) -> dict:
        """Sympy assumptions implied by the domain."""
        kw: dict = {"real": True}
        if self.integer:
            kw["integer"] = True
        if self.lo > 0 or (self.lo == 0 and self.lo_open):
            kw["positive"] = True
        elif self.lo >= 0:
            kw["nonnegative"] = True
        return kw


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return str(int(x)) if float(x).is_integer() else repr(x)


POSITIVE = Domain(0.0, math.inf, lo_open=True)
NONNEGATIVE = Domain(0.0, math.inf, lo_open=False)
UNIT_OPEN = Domain(0.0, 1.0, lo_open=True, hi_open=True)
UNIT_HALF_OPEN = Domain(0.0, 1.0, lo_open=True, hi_open=False)
UNIT_CLOSED = Domain(0.0, 1.0, lo_open=False, hi_open=False)
INT_GE1 = Domain(1, math.inf, lo_open=False, integer=True)
INT_GE0 = Domain(0, math.inf, lo_open=False, integer=True)
REAL = Domain()
