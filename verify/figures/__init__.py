"""One house style for every figure boundlab draws: the report's figures, ``boundlab
reproduce``, the tightness brackets, :func:`theory_vs_measured`, and the notebooks.

* :mod:`.style` -- the style file (``house.mplstyle``), verdict colours, words for titles and
  labels, :func:`save` (300 dpi PNG + SVG at A4 text width, atomically);
* :mod:`.theory` -- :func:`theory_vs_measured` (measured vs bound and its terms);
* :mod:`.series`, :mod:`.ratios`, :mod:`.report_figures` -- the report's figures
  (:func:`figure_list`);
* :mod:`.brackets` -- :func:`plot_brackets` (PEP tightness brackets);
* :mod:`.reproduce` -- the house style for the papers' experiments (:func:`paper_axes`);
* :mod:`.lint` -- :func:`lint` (what a reviewer would reject), the hook every save passes;
* :mod:`.notebook` -- :func:`show` and :func:`interpret` (the finding in words).

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> from verify.figures import lint, style
>>> with style():
...     fig, ax = plt.subplots()
...     _ = ax.plot([0.5, 1.5], [3.2, 4.1], label="measured")
...     _ = ax.set(xlabel="step size \u03b7", ylabel="optimality gap")
...     _ = fig.legend(loc="outside lower center")
>>> lint(fig)
[]
>>> plt.close(fig)
"""

from __future__ import annotations

from .brackets import plot_brackets
from .lint import collecting, lint
from .notebook import interpret, show
from .report_figures import figure_list, figures
from .reproduce import paper_axes
from .style import A4_HEIGHT, A4_WIDTH, STYLE_FILE, VERDICT_COLORS, save, style
from .theory import theory_vs_measured

__all__ = ["A4_HEIGHT", "A4_WIDTH", "STYLE_FILE", "VERDICT_COLORS", "collecting",
           "figure_list", "figures", "interpret", "lint", "paper_axes", "plot_brackets",
           "save", "show", "style", "theory_vs_measured"]
