"""The generic check of any bound (catalogue or user) on a run or on a recorded log:
:func:`check` and :func:`check_log` (also ``verify.check`` and ``verify.check_log``).

Layout: ``api.py`` (the two entry points, and what they measure and evaluate), ``lhs.py`` (the
left-hand sides a run measures: :data:`LHS`, :data:`NOT_MEASURABLE`), ``rhs.py`` (the right
side's parameters: :data:`HYPER`, :data:`ALGORITHM_SYMBOLS`, :func:`symbols`,
:func:`rhs_params`), ``judge.py`` (each seed's log measured, the right side evaluated, the
seeds of a round judged together), ``log.py`` (a recorded log is judged only when whole) and
``preconditions.py`` (a bound's preconditions at given values, for
:func:`verify.compare.compare`).

Example
-------
>>> from verify.check import LHS, check
>>> "final_gap" in LHS and callable(check)
True
"""

from .api import (
                  ALGORITHM_SYMBOLS,
                  HYPER,
                  LHS,
                  NOT_MEASURABLE,
                  PAPER_LHS,
                  Quantity,
                  check,
                  check_log,
                  rhs_params,
                  symbols,
)

__all__ = ["check", "check_log", "LHS", "NOT_MEASURABLE", "PAPER_LHS", "HYPER",
           "ALGORITHM_SYMBOLS", "rhs_params", "symbols", "Quantity"]
