"""The tightness figure of the report: bound / measured of every judged bound check, one
panel per paper, bars in their verdict's colour, readable at A4 width.

Only verdicts that judge a ratio get a bar (``holds``, ``VIOLATED``); every other bound check
(not-applicable, order-only, diverged, error) is left out and counted in the legend's title,
so no bar goes unexplained. A PEP tightness bracket ``[B/UB, B/LB]`` is drawn over a bar
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

from ._fig_style import (
    A4_WIDTH,
    VERDICT_COLORS,
    VERDICT_WORDS,
    legend_below,
    paper_short,
    style,
    theorem_short,
)

__all__ = ["ratio_figure", "RATIO_VERDICTS", "bar_label"]

#: verdicts whose ratio bound / measured is a judgement; the others get no bar
RATIO_VERDICTS = ("holds", "VIOLATED")
_ROW, _HEAD, _FOOT = 0.135, 0.32, 1.3  # inches: a bar, a panel's title, axis + legend


def _paper(r) -> str:
    m = re.search(r"seed (\d{3})", r.paper or "")
    return paper_short(m.group(1)) if m else (r.paper or "other")


def bar_label(r) -> str:
    """'<theorem> · <case>' in words (case pieces that repeat the theorem left out)."""
    from ._fig_series import panel_label

    thm = theorem_short(r.paper, n=1)
    case = ", ".join(p for p in panel_label(r).split(", ") if p not in thm)
    return " \u00b7 ".join(s for s in (thm, case) if s)


def _labels(groups) -> tuple[dict, dict]:
    """Bar labels per result id, and the problem keys ('a', 'b', ...) added where one bound
    was checked on several problems in a panel (explained in the legend)."""
    from ._fig_style import scrub

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
    sizes = [len(g) for g in groups.values()]
    labels, keys = _labels(groups)
    height = max(2.6, _ROW * sum(sizes) + _HEAD * len(sizes) + _FOOT + 0.09 * len(keys))
    with style():
        fig, axes = plt.subplots(len(sizes), 1, figsize=(A4_WIDTH, height), sharex=True,
                                 squeeze=False, height_ratios=[s + 1.2 for s in sizes])
        for ax, (paper, rows) in zip(axes[:, 0], groups.items()):
            _panel(ax, paper, rows, [labels[id(r)] for r in rows])
        axes[-1, 0].set_xlabel("bound / measured (log scale): 1 = tight, < 1 = violated")
        _legend(fig, shown, left, keys)
    return fig


def _panel(ax, paper, rows, labels) -> None:
    y = np.arange(len(rows))
    ax.barh(y, [r.ratio for r in rows], color=[VERDICT_COLORS[r.verdict] for r in rows],
            height=0.7)
    for yi, r in zip(y, rows):
        lo, hi = (r.tightness or {}).get("ratio_low"), (r.tightness or {}).get("ratio_high")
        if lo is not None and hi is not None and np.isfinite([lo, hi]).all() and lo > 0:
            ax.plot([lo, hi], [yi, yi], "k|-", lw=1.2, ms=5)
    ax.axvline(1.0, color="k", lw=1)
    ax.set_yticks(y, labels)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xscale("log")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    ax.grid(False, axis="y")
    ax.set_title(paper, loc="left", fontweight="bold")


def _legend(fig, shown, left, keys) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=VERDICT_COLORS[v], label=VERDICT_WORDS[v])
               for v in RATIO_VERDICTS if any(r.verdict == v for r in shown)]
    handles.append(Line2D([], [], color="k", lw=1, label="ratio 1: bound = measured"))
    if any((r.tightness or {}).get("ratio_low") is not None for r in shown):
        handles.append(Line2D([], [], color="k", marker="|", lw=1.2,
                              label="PEP bracket [B/UB, B/LB]: bound / worst case of the class"))
    for problem, key in keys.items():
        handles.append(Line2D([], [], ls="none", label=f"({key}) {problem}"))
    leg = legend_below(fig, handles, [h.get_label() for h in handles], ncols=2)
    if left:
        what = ", ".join(f"{n} {VERDICT_WORDS.get(v, v)}" for v, n in sorted(left.items()))
        leg.set_title(f"no bar (no ratio to judge): {what}", prop={"size": 8})
