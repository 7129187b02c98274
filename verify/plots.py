"""The report's figures and :func:`theory_vs_measured` (old path, kept working): the figure
code lives in :mod:`verify.figures`, one house style for every figure the project draws.

>>> from verify.plots import theory_vs_measured
>>> import verify.figures
>>> theory_vs_measured is verify.figures.theory_vs_measured
True
"""

from __future__ import annotations

from .figures.report_figures import _COLORS, _KINDS, figure_list, figures
from .figures.theory import theory_vs_measured

__all__ = ["figures", "figure_list", "theory_vs_measured", "_COLORS", "_KINDS"]
