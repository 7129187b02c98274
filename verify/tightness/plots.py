"""Brackets as a function of one parameter: the grid here, its plot in the house style
(:func:`verify.figures.plot_brackets`, re-exported here under its old path).

Example
-------
>>> import tempfile, pathlib
>>> from verify.tightness.plots import bracket_grid, plot_brackets
>>> rows = bracket_grid("drift.plateau", {"eta": 0.1, "L": 1.0, "zeta": 1.0}, "tau", [1, 2],
...                     cache=False)
>>> path = plot_brackets(rows, "tau", pathlib.Path(tempfile.mkdtemp()) / "plateau.png")
>>> path.exists()
True
"""

from __future__ import annotations

from ..figures.brackets import plot_brackets
from .brackets import bracket

__all__ = ["bracket_grid", "plot_brackets"]


def bracket_grid(bound_id, base, vary, values, *, rounds=None, cache_only=False, **kw) -> list:
    """:func:`~verify.tightness.bracket` at ``base`` with ``vary`` set to each of ``values``.

    Entries are the bracket dicts (``None`` where ``cache_only`` found no cached solution).
    """
    rows = []
    for v in values:
        rows.append(bracket(bound_id, {**base, vary: v}, rounds=rounds, cache_only=cache_only,
                            **kw))
    return rows
