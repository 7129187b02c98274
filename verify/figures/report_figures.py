"""Figures of the verify report, drawn from the ``series`` that checks attach to their results,
and :func:`theory_vs_measured` for sweep tables.

Series kinds (a check sets ``result.series = {"kind": ..., ...}``):

* ``curve`` — ``x``, ``measured`` (per round), ``bound`` (per round) and optional ``terms``
  (name -> per-round array), ``measured_lo`` / ``measured_hi`` (a band), ``xlabel``: theory
  vs measured. The curves of one check form ONE figure, a panel per case, drawn by
  :func:`theory_vs_measured` (terms as lines on a log axis, stacked on a linear one);
* ``ushape`` — ``K``, ``measured``, ``bound``: FedAU's bias-variance U-shape in the cutoff K;
* ``contraction`` — ``rounds``, ``curves`` (name -> gap per round), ``factors`` (name -> rate);
* ``alpha_vs_p`` — ``t`` and ``err`` (||alpha_t - p||_1), or ``alpha`` (rounds x N) and ``p``;
  optional ``rate`` (claimed log-log slope, default -1) and ``fit_window``: the claimed rate
  is drawn as a labelled reference line;
* ``search`` — ``trace``: LHS / RHS of every instance a worst-instance search evaluated (the
  searches of one check form one figure).

House style (:mod:`verify.figures.style`): fonts >= 8 pt, A4 text width (6.3 in), titles in
words naming the paper and theorem (from the bounds' metadata, never internal ids), legends
below the panels (outside the data), colours following the verdict (green holds / supported,
red VIOLATED / refuted, ...), each figure saved as a 300 dpi PNG and an SVG, atomically.
The tightness figure (``tightness_ratios.png``) shows measured / bound of the judged bound
checks, one panel per paper.

Example
-------
>>> import pathlib, tempfile, numpy as np
>>> from verify.compare import CheckResult
>>> r = CheckResult("c", "drift.plateau", "seed 004", "toy", "holds", ratio=0.5)
>>> r.series = {"kind": "curve", "x": np.arange(1, 5), "measured": np.ones(4),
...             "bound": 2 * np.ones(4)}
>>> [p.name for p in figures([r], pathlib.Path(tempfile.mkdtemp()))]
['curve_c.png', 'tightness_ratios.png']
"""

from __future__ import annotations

import pathlib
import re

# No backend is chosen here (a notebook keeps its inline backend); the command line picks Agg.
from . import series as _series
from .ratios import ratio_figure
from .style import VERDICT_COLORS, save
from .theory import theory_vs_measured

__all__ = ["figures", "figure_list", "theory_vs_measured"]

#: verdict -> colour (kept under its old name)
_COLORS = VERDICT_COLORS

#: kind -> (draw a group of results, grouped per check?, caption after the figure's title)
_KINDS = {
    "curve": (_series.curve_group, True,
              "One panel per case: the measured curve in its verdict's colour, the bound in "
              "black and its terms (dashed lines on a log axis, stacked on a linear one)."),
    "search": (_series.search_group, True,
               "Every instance the search evaluated (grey) and the worst so far (verdict "
               "colour); above 1 the bound is violated."),
    "ushape": (lambda g: _series.ushape(g[0]), False,
               "Weight error against the cutoff K, measured and bound, with both minima."),
    "contraction": (lambda g: _series.contraction(g[0]), False,
                    "Measured gaps per method (solid); dashed, where the series gives it: "
                    "each theorem's contraction rate from the first gap."),
    "alpha_vs_p": (lambda g: _series.alpha_vs_p(g[0]), False,
                   "Distance of the aggregation weights to p (log-log) with the claimed "
                   "rate's reference line and the measured slope."),
}


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")[:80]


def _groups(results) -> dict[tuple, list]:
    """(kind, check[, case]) -> results, in the order of the results."""
    groups: dict[tuple, list] = {}
    for r in results:
        kind = (r.series or {}).get("kind")
        if kind not in _KINDS:
            continue
        key = (kind, r.check) if _KINDS[kind][1] else (kind, r.check, r.case)
        groups.setdefault(key, []).append(r)
    return groups


def _name(key, keys) -> str:
    kind, check = key[0], key[1]
    alone = sum(1 for k in keys if k[:2] == (kind, check)) == 1
    return _slug(f"{kind}_{check}" if alone else f"{kind}_{check}_{key[2]}")


_RATIO_CAPTION = ("Measured / bound of every judged bound check, one panel per paper; colour = "
                  "verdict; checks without a ratio to judge are counted in the legend.")


def figure_list(results, out_dir, jobs: int = 1) -> list[tuple[pathlib.Path, str]]:
    """Draw every figure the results ask for into ``out_dir`` (a PNG and an SVG each);
    returns ``(png path, caption)`` pairs. A figure that fails adds a note to its results
    instead of losing the report. ``jobs`` > 1: the figures are drawn side by side in that
    many forked processes (each figure is independent; the files and the list are the same
    as with one)."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    groups = _groups(results)
    tasks = [(key, _name(key, groups)) for key in groups] + [(None, "tightness_ratios")]
    items = []
    for (key, _), (png, caption, failed) in zip(tasks, _draw_all(tasks, groups, results, out,
                                                                 jobs)):
        for r in groups[key] if failed is not None else ():
            r.note = (r.note + f" [figure failed: {failed}]").strip()
        if png is not None:
            items.append((png, caption))
    return items


def _draw(task, groups, results, out):
    """One figure drawn and saved: ``(png path or None, caption, error text or None)``."""
    key, name = task
    if key is None:
        fig = ratio_figure(results)
        if fig is None:
            return None, None, None
        return save(fig, out / f"{name}.png"), _RATIO_CAPTION, None
    draw, _, what = _KINDS[key[0]]
    try:
        fig = draw(groups[key])
        title = getattr(fig, "full_title", None) or " ".join(fig.get_suptitle().split())
        what = getattr(fig, "caption", what)
        return save(fig, out / f"{name}.png"), f"{title}. {what}", None
    except Exception as exc:  # noqa: BLE001 - a bad figure must not lose the report
        return None, None, str(exc)


#: what the forked figure workers draw (set before the pool forks; read in the children)
_WORK: tuple = ()


def _work(i: int):
    from .lint import captured

    tasks, groups, results, out = _WORK
    drawn, linted = captured(_draw, tasks[i], groups, results, out)
    return i, drawn, linted


def _draw_all(tasks, groups, results, out, jobs: int) -> list[tuple]:
    """``_draw`` of every task, in order; side by side in ``jobs`` forked processes (the
    tightness figure, the largest, first) where fork is available."""
    import multiprocessing

    jobs = min(jobs, len(tasks))
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [_draw(t, groups, results, out) for t in tasks]
    from ..sweep.forked import imap_forked
    from .lint import deliver

    global _WORK
    _WORK = (tasks, groups, results, out)
    drawn: list = [None] * len(tasks)
    order = [len(tasks) - 1] + list(range(len(tasks) - 1))
    try:
        for i, one, linted in imap_forked(_work, order, jobs):
            drawn[i] = one
            deliver(linted)
    finally:
        _WORK = ()
    return drawn


def figures(results, out_dir) -> list[pathlib.Path]:
    """Draw every figure the results ask for into ``out_dir``; returns the PNG paths written
    (each has an SVG twin)."""
    return [p for p, _ in figure_list(results, out_dir)]
