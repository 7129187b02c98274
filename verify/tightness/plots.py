"""Brackets as a function of one parameter: the grid here, its plot in the house style
(:func:`verify.figures.plot_brackets`, re-exported here under its old path).

Example
-------
>>> import tempfile, pathlib
>>> from verify.tightness.plots import bracket_grid, plot_brackets
>>> rows = bracket_grid("drift.plateau", {"eta": 0.1, "L": 1.0, "zeta": 1.0}, "tau", [1, 2],
...                     cache=False)
>>> rows.requested
[1, 2]
>>> path = plot_brackets(rows, "tau", pathlib.Path(tempfile.mkdtemp()) / "plateau.png")
>>> path.exists()
True
"""

from __future__ import annotations

from ..figures.brackets import plot_brackets
from .brackets import bracket

__all__ = ["BracketGrid", "bracket_grid", "plot_brackets"]


class BracketGrid(list):
    """The brackets of a grid (a list, ``None`` where no bracket was found) that remembers
    the values asked for (``requested``) and the parameter varied (``vary``), so that a plot
    lists the points it could not draw."""

    def __init__(self, rows, vary, requested):
        super().__init__(rows)
        self.vary, self.requested = vary, list(requested)


def bracket_grid(bound_id, base, vary, values, *, rounds=None, cache_only=False, **kw) -> list:
    """:func:`~verify.tightness.bracket` at ``base`` with ``vary`` set to each of ``values``.

    Entries are the bracket dicts (``None`` where ``cache_only`` found no cached solution),
    in a :class:`BracketGrid` (a list with ``requested``: ``values``).
    """
    rows = []
    for v in values:
        rows.append(bracket(bound_id, {**base, vary: v}, rounds=rounds, cache_only=cache_only,
                            **kw))
    return BracketGrid(rows, vary, values)
