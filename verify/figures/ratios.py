"""The tightness figure of the report: measured / bound (the ratio of :mod:`verify.schema`) of
every judged bound check, one panel per paper, readable at A4 width and never taller than an A4
page.

Bars are coloured by verdict and, for ``holds``, by how loose the bound is (:data:`BANDS`:
tight >= 0.1, loose >= 1e-3, vacuous below). Ratios below 1 / :data:`RATIO_CLIP` (a measured
value at a numerical zero) are drawn at the clip and say so. When the bars would not fit on a page,
the cases of one statement become one bar (its tightest case) with the range over its cases.

Only verdicts that judge a ratio get a bar (``holds``, ``VIOLATED``); every other bound check
(not-applicable, order-only, diverged, error) is left out and counted in the legend's title,
so no bar goes unexplained. A PEP tightness bracket ``[LB/B, UB/B]`` is drawn over a bar
when the result has one.

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> import numpy as np, boundlab
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), np.array([0.01]), problem="toy",
...             params=dict(eta=0.2, tau=10, L=0.2, zeta=0.43), case="tau=10")
>>> fig = ratio_figure([r])
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
['eq. (2) · τ = 10']
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from .style import (
    A4_HEIGHT,
    A4_WIDTH,
    VERDICT_COLORS,
    VERDICT_WORDS,
    legend_below,
    paper_short,
    style,
    theorem_short,
)

__all__ = ["ratio_figure", "RATIO_VERDICTS", "bar_label"]

#: verdicts whose ratio measured / bound is a judgement; the others get no bar
RATIO_VERDICTS = ("holds", "VIOLATED")
#: bands of measured / bound for a bound that holds: (lower edge, colour, words)
BANDS = ((0.1, VERDICT_COLORS["holds"], "holds, tight: bound \u2264 10 \u00d7 measured"),
         (1e-3, "#98df8a", "holds, loose: 10 to 10\u00b3 \u00d7 measured"),
         (0.0, "tab:olive", "holds, vacuous: > 10\u00b3 \u00d7 measured"))
#: ratios beyond this (or below its inverse) are drawn at it
RATIO_CLIP = 1e8
_ROW, _HEAD, _FOOT = 0.135, 0.32, 1.45  # inches: a bar, a panel's title, axis + legend
_PAGE = A4_HEIGHT - 0.3  # the tallest figure
_LABEL = 42  # characters of a bar label


def bar_color(r) -> str:
    """A bar's colour: its verdict's, and for ``holds`` its band's (:data:`BANDS`)."""
    if r.verdict != "holds":
        return VERDICT_COLORS[r.verdict]
    return next(c for low, c, _ in BANDS if r.ratio >= low)


def _paper(r) -> str:
    m = re.search(r"seed (\d{3})", r.paper or "")
    return paper_short(m.group(1)) if m else (r.paper or "other")


def bar_label(r) -> str:
    """'<theorem> · <case>' in words (case pieces that repeat the theorem left out)."""
    import textwrap

    from .series import panel_label

    thm = _thm(r.paper)
    case = ", ".join(p for p in panel_label(r).split(", ") if p not in thm)
    return textwrap.shorten(" \u00b7 ".join(s for s in (thm, case) if s), _LABEL,
                            placeholder="\u2026")


def _thm(paper) -> str:
    """The statement in a few words (at most 28 characters: a printed formula is cut)."""
    import textwrap

    return textwrap.shorten(theorem_short(paper, n=1), 28, placeholder="\u2026")


def _labels(groups) -> tuple[dict, dict]:
    """Bar labels per result id, and the problem keys ('a', 'b', ...) added where one bound
    was checked on several problems in a panel (explained in the legend)."""
    from .style import scrub

    labels, keys = {}, {}
    for rows in groups.values():
        for r in rows:
            label = bar_label(r)
            mixed = len({g.problem for g in rows if g.bound_id == r.bound_id
                         and not g.worst}) > 1
            problem = scrub(r.problem)
            if mixed and not r.worst and problem.split(" (")[0] not in label:
                key = keys.setdefault(problem, "abcdefghijklmnopqrstuvwxyz"[len(keys) % 26])
                label += f" ({key})"
            labels[id(r)] = label
    return labels, keys


def _rows(results):
    bounds = [r for r in results if getattr(r, "kind", "bound") == "bound"]
    shown = [r for r in bounds if r.verdict in RATIO_VERDICTS and np.isfinite(r.ratio)
             and r.ratio > 0]
    ids = {id(r) for r in shown}
    left = Counter(r.verdict if r.verdict not in RATIO_VERDICTS else "no finite ratio"
                   for r in bounds if id(r) not in ids)
    return shown, left


def ratio_figure(results):
    """The figure (or ``None`` when no bound check has a ratio to show)."""
    import matplotlib.pyplot as plt

    shown, left = _rows(results)
    if not shown:
        return None
    groups: dict[str, list] = {}
    for r in shown:
        groups.setdefault(_paper(r), []).append(r)
    spans = _collapse(groups)
    sizes = [len(g) for g in groups.values()]
    labels, keys = _labels(groups)
    for r, (n, _, _) in spans.items():
        labels[r] = f"{_thm(_by_id(groups, r).paper)} \u00b7 tightest of {n}"
    height = min(_PAGE, max(2.6, _ROW * sum(sizes) + _HEAD * len(sizes) + _FOOT
                            + 0.12 * len(keys)))
    with style():
        fig, axes = plt.subplots(len(sizes), 1, figsize=(A4_WIDTH, height), sharex=True,
                                 squeeze=False, height_ratios=[s + 1.2 for s in sizes])
        for ax, (paper, rows) in zip(axes[:, 0], groups.items()):
            _panel(ax, paper, rows, [labels[id(r)] for r in rows], spans)
        axes[-1, 0].set_xlabel("measured / bound (log scale): 1 = tight, > 1 = violated")
        axes[-1, 0].set_xlim(*_limits(groups, spans))
        _legend(fig, [r for g in groups.values() for r in g], left, keys, spans)
        _fit_legend(fig)
    return fig


def _by_id(groups, key):
    return next(r for g in groups.values() for r in g if id(r) == key)


def _collapse(groups) -> dict:
    """While the bars would not fit on a page, replace the cases of the statement with the
    most bars by its tightest case; returns ``{id(kept): (n cases, lowest, highest)}``."""
    spans: dict = {}
    room = int((_PAGE - _FOOT - 0.4 - _HEAD * len(groups)) / _ROW)
    short = {id(r): theorem_short(r.paper, n=1) for g in groups.values() for r in g}
    while sum(len(g) for g in groups.values()) > room:
        # a statement's cases of one verdict, per panel, in the order their first row appears
        sets: dict = {}
        for p, g in groups.items():
            for x in g:
                sets.setdefault((p, short[id(x)], x.verdict), []).append(x)
        (paper, _, _), rows = max(sets.items(), key=lambda kv: len(kv[1]))
        if len(rows) < 2:
            break
        keep = max(rows, key=lambda x: x.ratio)
        ratios = [x.ratio for x in rows]
        spans[id(keep)] = (sum(spans.get(id(x), (1,))[0] for x in rows),
                           min(ratios + [spans.get(id(x), (0, np.inf))[1] for x in rows]),
                           max(ratios + [spans.get(id(x), (0, 0, 0))[2] for x in rows]))
        groups[paper] = [x for x in groups[paper] if x is keep or x not in rows]
    return spans


def _clip(v):
    return float(np.clip(v, 1 / RATIO_CLIP, RATIO_CLIP))


def _limits(groups, spans):
    vals = [_clip(r.ratio) for g in groups.values() for r in g] + [1.0]
    vals += [_clip(v) for _, lo, hi in spans.values() for v in (lo, hi)]
    return min(vals) / 3, max(vals) * 3


def _panel(ax, paper, rows, labels, spans) -> None:
    y = np.arange(len(rows))
    ax.barh(y, [_clip(r.ratio) for r in rows], color=[bar_color(r) for r in rows],
            height=0.7)
    for yi, r in zip(y, rows):
        lo, hi = _pep(r)
        if lo is not None:
            ax.plot([_clip(lo), _clip(hi)], [yi, yi], "k|-", lw=1.2, ms=5)
        if id(r) in spans:
            _, lo, hi = spans[id(r)]
            ax.plot([_clip(lo), _clip(hi)], [yi, yi], "-", color="0.45", lw=1.0,
                    marker="|", ms=6)
    clipped = [f"{lab} (< {1 / RATIO_CLIP:.0e})" if r.ratio < 1 / RATIO_CLIP else lab
               for r, lab in zip(rows, labels)]
    ax.axvline(1.0, color="k", lw=1)
    ax.set_yticks(y, clipped)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xscale("log")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    ax.grid(False, axis="y")
    ax.set_title(paper, loc="left", fontweight="bold")


def _pep(r):
    """The PEP bracket [LB/B, UB/B] of ``r`` (the tightness record's ``ratio_lo``,
    ``ratio_hi``), or (None, None)."""
    lo, hi = (r.tightness or {}).get("ratio_lo"), (r.tightness or {}).get("ratio_hi")
    if lo is None or hi is None or not np.isfinite([lo, hi]).all() or min(lo, hi) <= 0:
        return None, None
    return lo, hi


def _fit_legend(fig) -> None:
    """Grow a short figure until its legend takes at most a third of its height."""
    # the legend's own extent (its height does not depend on where the layout puts it): no
    # draw of the whole figure
    legend = fig.legends[0].get_window_extent(fig.canvas.get_renderer()).height / fig.dpi
    if legend > fig.get_figheight() / 3.2:
        fig.set_figheight(min(_PAGE, 3.3 * legend))


def _legend(fig, shown, left, keys, spans) -> None:
    import textwrap

    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    colors = {bar_color(r) for r in shown}
    handles = [Patch(color=c, label=w) for _, c, w in BANDS if c in colors]
    if any(r.verdict == "VIOLATED" for r in shown):
        handles.append(Patch(color=VERDICT_COLORS["VIOLATED"], label=VERDICT_WORDS["VIOLATED"]))
    handles.append(Line2D([], [], color="k", lw=1, label="ratio 1: bound = measured"))
    if any(_pep(r)[0] is not None for r in shown):
        handles.append(Line2D([], [], color="k", marker="|", lw=1.2,
                              label="PEP bracket [LB/B, UB/B]: worst case of the class / bound"))
    if spans:
        handles.append(Line2D([], [], color="0.45", marker="|", lw=1.0,
                              label="range over a statement's cases (tightest drawn)"))
    for problem, key in keys.items():
        handles.append(Line2D([], [], ls="none", label=f"({key}) {problem}"))
    leg = legend_below(fig, handles, [h.get_label() for h in handles], ncols=2)
    notes = []
    if left:
        notes.append("no bar (no ratio to judge): " + ", ".join(
            f"{n} {VERDICT_WORDS.get(v, v)}" for v, n in sorted(left.items())))
    if any(r.ratio < 1 / RATIO_CLIP for r in shown):
        notes.append(f"ratios below {1 / RATIO_CLIP:.0e} (a measured value at numerical zero) "
                     "are drawn at it")
    if notes:
        width = int(fig.get_figwidth() * 72 / 4.6)
        leg.set_title("\n".join(textwrap.fill(n, width) for n in notes), prop={"size": 8})
