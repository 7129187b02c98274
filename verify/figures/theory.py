"""Theory vs measured from a tidy sweep table (:func:`verify.sweep`); re-exported as
:func:`verify.figures.theory_vs_measured`. Does not
choose a matplotlib backend.

The bound is drawn on top of its terms; a term that is 0 everywhere is named in the legend's
title instead of drawn, and so is a term equal to the bound everywhere (it would hide under
the bound's line). A term that is < 0 somewhere puts the axis on a log scale of ``|value|``
with every negative value marked (a hollow triangle), never on a symmetric-log axis (which
flattens the measured curve onto 0); values below 1e-10 of the largest are drawn at that floor
and the legend says so. A band over seeds is drawn only where the seeds differ; else the legend
says the runs are identical. A geometric grid of x values gets a log x axis; a time-averaged
bound (its measured quantity an average over the first T rounds) against rounds is evaluated
at every T, next to the running average of the measured per-round quantity, over ``rounds T``.

``facet`` is a column (one panel per value) or two (rows x columns); ``overlay`` draws the
values of a column (e.g. ``"algorithm"``) as curves of their own colour on the same axes.

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> import verify
>>> df = verify.sweep("seed004-toy", "fedavg", grid={"local_steps": [2, 4]}, seeds=2,
...                   rounds=6, bound="drift.round_progress", lr=0.1)
>>> fig = theory_vs_measured(df, facet="local_steps")
>>> [ax.get_title() for ax in fig.axes]
['local steps \u03c4 = 2: holds', 'local steps \u03c4 = 4: holds']
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError

from .style import (
    VERDICT_COLORS,
    case_words,
    frame_verdict,
    integer_axes,
    legend_below,
    quantity_label,
    save,
    source_words,
    style,
    suptitle,
    wrap,
)
from .theory_data import check_single_setting, running, scale_of, zero_terms
from .theory_draw import bound_and_terms, grid, measured_curve, overlay_curves, xscale

__all__ = ["theory_vs_measured", "LABELS"]

#: column -> axis label: the quantity in words and its symbol
LABELS = {
    "round": "round t", "seed": "seed", "lr": "step size \u03b7",
    "local_steps": "local steps \u03c4", "gap": "optimality gap F(x_t) \u2212 F*",
    "loss": "loss F(x_t)", "dist2": "squared distance \u2016x_t \u2212 x*\u2016\u00b2",
    "grad_norm2": "squared gradient norm \u2016\u2207F(x_t)\u2016\u00b2",
    "grad_norm2_virtual": "squared gradient norm at the virtual averages (mean over k)",
    "shadow_gap": "shadow-sequence gap", "drift_max": "client drift (max)",
    "n_clients": "clients N", "heterogeneity": "heterogeneity",
    "batch_size": "batch size b", "prox": "proximal weight \u03b1",
    "algorithm": "algorithm", "K": "cutoff K",
}
#: magnitudes below this fraction of the largest are a numerical zero on a log axis
FLOOR = 1e-10


@dataclass
class Canvas:
    """What the panels share: the y scale, the floor of a log axis, the legend entries, and
    notes for the legend's title."""
    scale: str
    floor: float = 0.0
    level: float = 0.95
    handles: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    colors: dict = field(default_factory=dict)


def theory_vs_measured(frame, x="round", facet=None, *, overlay=None, measured=None,
                       path=None, level=0.95, title=None, yscale="auto", xlabel=None,
                       ylabel=None, panel_titles=None, ncols=3):
    """Measured curve (mean over seeds with its ``level`` confidence band where the seeds
    differ), the bound and its named terms, one panel per value of ``facet`` (``ncols``
    panels a row), or per pair of values of two facet columns (rows x columns).

    ``frame`` is a :func:`verify.sweep` table (or any table with ``seed``, ``x``, the measured
    column and optionally ``bound_value`` / ``term_*`` / ``verdict``; ``band_lo`` /
    ``band_hi`` give a band of their own). ``measured`` defaults to the bound's ``measured``
    column, else ``gap``. ``overlay`` (a column, e.g. ``"algorithm"``): its values share one
    axes, each measured curve (solid) and bound (dashed) in a colour of its own (terms are
    not drawn then). ``yscale``: ``"log"`` draws the terms as lines (``|value|`` with negative
    values marked when a term is < 0 somewhere; ``"symlog"`` asks for the same); ``"linear"``
    stacks them (when they are >= 0 and add up to the bound; else lines); ``"auto"`` is log
    when the curves are positive and span more than 100x. The measured curve is coloured by
    the panel's verdict; titles say the verdict in words, the figure title names the paper
    and theorem; the one legend sits below the panels, outside the data. With ``path``,
    writes ``<path>.png`` (300 dpi) and ``<path>.svg`` atomically. Returns the figure.
    """
    measured = measured or ("measured" if "measured" in frame.columns else "gap")
    facets = _facets(facet)
    keys = facets + ([overlay] if overlay else [])
    for col in (x, measured, "seed", *keys):
        if col not in frame.columns:
            raise DomainError("column", col, "a column of the table: "
                              + ", ".join(map(str, frame.columns)))
    if yscale not in ("auto", "log", "linear", "symlog"):
        raise DomainError("yscale", yscale, "'auto', 'log', 'symlog' or 'linear'")
    frame = running(frame, x, measured, keys)
    data = frame[np.isfinite(frame[measured].to_numpy(dtype=float))]
    check_single_setting(data, x, keys)
    panels = _panels(data, facets)
    zero = zero_terms([sub for _, sub in panels])
    canvas = Canvas(scale_of(data, measured, yscale, zero), level=level)
    canvas.floor = _floor(data, measured, canvas.scale)
    if overlay:
        canvas.colors = {v: f"C{j % 10}" for j, v in enumerate(dict.fromkeys(data[overlay]))}
    with style():
        fig, axes, cols = grid(len(panels), ncols, len(dict.fromkeys(data[facets[1]]))
                               if len(facets) == 2 else None)
        for ax, (key, sub) in zip(axes, panels):
            verdict = (overlay_curves(ax, sub, x, measured, overlay, canvas) if overlay else
                       _single(ax, sub, x, measured, canvas, zero))
            xscale(ax, data[x])
            head = _head(panel_titles, facets, key)
            ax.set_title(wrap(": ".join(s for s in (head, verdict) if s), int(70 / cols)),
                         color=VERDICT_COLORS.get(verdict, "black"))
            frame_verdict(ax, verdict)
        _axis_labels(fig, axes, cols, xlabel or _xlabel(frame, x), ylabel or _ylabel(frame,
                                                                                    measured))
        suptitle(fig, title or _title(frame))
        _legend(fig, canvas, zero, -(-len(axes) // cols))
        fig.data_verdicts = {str(v) for v in data.get("verdict", []) if v == v}
        integer_axes(fig)
        if path is not None:
            save(fig, pathlib.Path(path), close=False)
    return fig


def _running(frame, x, measured, facet):
    """The running averages of a time-averaged bound (old name; see
    :func:`verify.figures.theory_data.running`)."""
    return running(frame, x, measured, _facets(facet))


def _facets(facet) -> list:
    if facet is None:
        return []
    if isinstance(facet, str):
        return [facet]
    facets = list(facet)
    if not 1 <= len(facets) <= 2 or not all(isinstance(f, str) for f in facets):
        raise DomainError("facet", facet, "a column name, or a list of two (rows, columns)")
    return facets


def _panels(data, facets) -> list:
    """``(key, rows)`` per panel: one per value of a facet, or per present pair of two."""
    if not facets:
        return [((), data)]
    groups = {k if isinstance(k, tuple) else (k,): g
              for k, g in data.groupby(facets, sort=False)}
    if len(facets) == 1:
        return [((v,), groups[(v,)]) for v in dict.fromkeys(data[facets[0]])]
    rows, cols = (list(dict.fromkeys(data[f])) for f in facets)
    missing = [(a, b) for a in rows for b in cols if (a, b) not in groups]
    if missing:
        raise DomainError("facet", facets, "two columns with a run at every pair of values",
                          f"no rows at {facets[0]} = {missing[0][0]}, "
                          f"{facets[1]} = {missing[0][1]}")
    return [((a, b), groups[(a, b)]) for a in rows for b in cols]


def _head(panel_titles, facets, key) -> str:
    if panel_titles and len(key) == 1 and key[0] in panel_titles:
        return panel_titles[key[0]]
    if panel_titles and key in panel_titles:
        return panel_titles[key]
    return ", ".join(f"{LABELS.get(f, case_words(f))} = {case_words(str(v))}"
                     if f in LABELS or not isinstance(v, str) else case_words(v)
                     for f, v in zip(facets, key))


def _verdict(sub) -> str:
    verdicts = set(sub["verdict"].dropna()) if "verdict" in sub.columns else set()
    return ("VIOLATED" if "VIOLATED" in verdicts else
            next(iter(verdicts)) if len(verdicts) == 1 else ", ".join(sorted(verdicts)))


def _single(ax, sub, x, measured, canvas, zero) -> str:
    verdict = _verdict(sub)
    if "bound_value" in sub.columns and sub["bound_value"].notna().any():
        bound_and_terms(ax, sub, x, canvas, zero)
    measured_curve(ax, sub, x, measured, VERDICT_COLORS.get(verdict, "tab:purple"), canvas,
                   f": {verdict}" if verdict else "")
    return verdict


def _floor(data, measured, scale) -> float:
    if scale == "linear":
        return 0.0
    cols = [c for c in data.columns if c in (measured, "bound_value") or c.startswith("term_")]
    v = np.abs(data[cols].to_numpy(dtype=float))
    v = v[np.isfinite(v)]
    return float(v.max() * FLOOR) if v.size else 0.0


def _axis_labels(fig, axes, cols, xlabel, ylabel) -> None:
    """x labels under the last panel of each column, y labels on the first of each row (one
    figure-wide y label when there are several rows)."""
    n = len(axes)
    for i, ax in enumerate(axes):
        if i + cols >= n:  # no panel below: this one carries the x axis
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(xlabel)
        if i % cols == 0 and n <= cols:
            ax.set_ylabel(ylabel)
    if n > cols:  # one label for every row (a row's label would overprint)
        fig.supylabel(ylabel, fontsize=8)


def _legend(fig, canvas, zero, rows) -> None:
    from .style import term_words

    notes = dict(canvas.notes)
    if zero:
        notes["zero"] = "= 0 everywhere, not drawn: " + ", ".join(
            term_words(t[5:]) for t in sorted(zero))
    leg = legend_below(fig, list(canvas.handles.values()), list(canvas.handles), ncols=3)
    if notes:
        width = int(fig.get_figwidth() * 72 / 4.6)
        import textwrap

        leg.set_title("\n".join(textwrap.fill(n, width) for n in notes.values()),
                      prop={"size": 8})
    lines = -(-len(leg.texts) // max(1, leg._ncols)) + 1.2 * len(
        leg.get_title().get_text().splitlines())
    fig.set_figheight(max(fig.get_figheight(), 2.1 * rows + 0.8 + 3 * 0.16 * lines / 2))


def _xlabel(frame, x) -> str:
    if x == "round" and frame.attrs.get("x_is_T"):
        return "rounds T (the average's horizon)"
    return LABELS.get(x, x)


def _ylabel(frame, measured) -> str:
    if measured == "measured" and "lhs" in frame.columns and frame["lhs"].notna().any():
        return quantity_label(frame["lhs"].dropna().iloc[0])
    return LABELS.get(measured, measured)


def _title(frame) -> str:
    from .theory_data import id_column

    col = id_column(frame)
    if col in frame.columns and frame[col].notna().any():
        import boundlab

        b = boundlab.get(frame[col].dropna().iloc[0])
        return f"{source_words(b.source)}: measured vs bound"
    return "measured over seeds"

