"""A figure lint: what a reviewer would reject, read from the renderer's extents.

:func:`lint` takes a matplotlib figure (after its layout is drawn) and returns the problems
found, each a sentence naming the text or legend entry:

* text boxes that overlap (tick labels, axis labels, titles, figure title, legends);
* a figure wider than the A4 text width or taller than an A4 text height;
* a legend larger than a third of the figure;
* a legend entry whose artist is not drawn (invisible, empty, or outside the view), or a
  legend key (a dashed line, a colour) that no drawn line or area matches;
* values <= 0 on a log axis (silently dropped by matplotlib), and log limits spanning more
  than :data:`MAX_DECADES` decades (a numerical zero stretching the axis);
* titles of more than three lines;
* what a figure says (:mod:`.lint_rules`): verdicts the data support and missing points
  listed; no symmetric-log axis; no band of zero width; no legend entry hidden under another
  line; rate lines that keep their floor; every axis labelled, no "round t" under a time
  average, no doc-string labels, no raw ids, no cut titles; integer ticks on integer data.

Every figure the project saves goes through :func:`record` (called by
:func:`verify.figures.save` and :func:`verify.figures.show`): it does nothing unless a
:func:`collecting` block is active in this process or the environment variable
``BOUNDLAB_FIGURE_LINT`` names a file, to which one JSON line per figure is appended (how a
notebook kernel or a subprocess reports its figures).

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> fig, ax = plt.subplots(figsize=(4, 3))
>>> _ = ax.plot([0.1, 0.2, 0.3], [1.0, -1.0, 2.0], label="a term negative somewhere")
>>> _ = ax.set(yscale="log", xlabel="step size", ylabel="gap"); _ = ax.legend()
>>> lint(fig)
['log y axis drops 1 value(s) <= 0 of "a term negative somewhere"']
>>> plt.close(fig)
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os

import numpy as np

__all__ = ["lint", "record", "collecting", "captured", "deliver", "A4_TEXT_HEIGHT",
           "MAX_DECADES", "ENV"]

#: text width / height of an A4 page with 2.5 cm margins, inches (width as the house style)
A4_TEXT_WIDTH, A4_TEXT_HEIGHT = 6.3, 9.7
#: a log axis spanning more decades than this was stretched by a numerical zero
MAX_DECADES = 12
#: environment variable naming a JSON-lines file that receives every recorded figure's lint
ENV = "BOUNDLAB_FIGURE_LINT"
_SLACK = 1.0  # pixels two boxes may share (antialiasing)
_ACTIVE: list[list] = []


def lint(fig) -> list[str]:
    """Problems of ``fig`` (an empty list when a reviewer would accept it)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = _size(fig, renderer)
    out += _titles(fig)
    out += _overlaps(fig, renderer)
    for leg in _legends(fig):
        out += _legend(fig, leg, renderer)
    for ax in fig.axes:
        out += _log_loss(ax)
    from . import lint_rules as rules

    for rule in (rules.verdicts, rules.symlog, rules.bands, rules.hidden, rules.rates,
                 rules.labels, rules.integer_ticks):
        out += rule(fig)
    return out


@contextlib.contextmanager
def collecting():
    """Inside the block, every figure passed to :func:`record` is linted; yields the list of
    ``(name, problems)`` it fills."""
    found: list = []
    _ACTIVE.append(found)
    try:
        yield found
    finally:
        _ACTIVE.remove(found)


def record(fig, name: str) -> None:
    """Lint ``fig`` under ``name`` when a :func:`collecting` block or :data:`ENV` asks for it."""
    target = os.environ.get(ENV)
    if not _ACTIVE and not target:
        return
    problems = lint(fig)
    for found in _ACTIVE:
        found.append((str(name), problems))
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"name": str(name), "problems": problems}) + "\n")


def captured(fn, *args):
    """``(fn(*args), [(name, problems), ...])`` in a forked worker process: the figures
    :func:`record` lints there, returned for the parent to :func:`deliver` (the collecting
    lists a fork copies are filled in the child only and lost). Nothing collecting: no lint."""
    if not _ACTIVE:
        return fn(*args), []
    saved = list(_ACTIVE)  # the parent's lists, as copied by the fork: not filled here
    _ACTIVE.clear()
    try:
        with collecting() as found:
            value = fn(*args)
    finally:
        _ACTIVE[:] = saved
    return value, found


def deliver(found) -> None:
    """Add ``(name, problems)`` linted in a worker (:func:`captured`) to every active
    :func:`collecting` list of this process."""
    for target in _ACTIVE:
        target.extend(found)


def _size(fig, renderer) -> list[str]:
    box = fig.get_tightbbox(renderer)
    w, h = box.width, box.height  # inches
    out = []
    if w > A4_TEXT_WIDTH + 0.15:
        out.append(f"figure is {w:.2f} in wide (A4 text width {A4_TEXT_WIDTH} in)")
    if h > A4_TEXT_HEIGHT:
        out.append(f"figure is {h:.2f} in tall (A4 text height {A4_TEXT_HEIGHT} in)")
    return out


def _titles(fig) -> list[str]:
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title]
    return [f"title of {t.get_text().count(chr(10)) + 1} lines: {t.get_text()[:40]!r}..."
            for t in texts if t.get_visible() and t.get_text().count("\n") >= 3]


def _legends(fig) -> list:
    legs = list(fig.legends)
    legs += [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return [leg for leg in legs if leg.get_visible()]


def _tick_labels(ax) -> list:
    out = []
    for axis in (ax.xaxis, ax.yaxis):
        if not axis.get_visible():
            continue
        for tick in axis._update_ticks():  # the ticks drawn (inside the view)
            out += [t for t in (tick.label1, tick.label2) if t.get_visible() and t.get_text()]
    return out


def _text_boxes(fig, renderer) -> list[tuple[str, object]]:
    boxes = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts = _tick_labels(ax) + [ax.xaxis.label, ax.yaxis.label, ax.title,
                                    ax._left_title, ax._right_title]
        boxes += [(t.get_text(), t.get_window_extent(renderer)) for t in texts
                  if t.get_visible() and t.get_text()]
    extra = {id(t): t for t in (fig._suptitle, fig._supxlabel, fig._supylabel, *fig.texts)
             if t is not None}  # the figure's title is one of its texts too
    boxes += [(t.get_text(), t.get_window_extent(renderer)) for t in extra.values()
              if t.get_visible() and t.get_text()]
    boxes += [("legend", leg.get_window_extent(renderer)) for leg in _legends(fig)]
    return boxes


def _overlaps(fig, renderer) -> list[str]:
    out = []
    for (a, ba), (b, bb) in itertools.combinations(_text_boxes(fig, renderer), 2):
        w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
        h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
        if w > _SLACK and h > _SLACK:
            out.append(f"text {a[:30]!r} overlaps {b[:30]!r}")
    return out


def _legend(fig, leg, renderer) -> list[str]:
    out = []
    fb = fig.bbox
    box = leg.get_window_extent(renderer)
    share = min(box.width / fb.width, box.height / fb.height)  # a band below or beside
    if share > 1 / 3:
        out.append(f"legend takes {share:.0%} of the figure's height or width (at most a "
                   "third)")
    for text, handle in zip(leg.texts, leg.legend_handles):
        label = text.get_text()
        if not _drawn(fig, label, handle):
            out.append(f"legend entry {label[:40]!r} is not drawn")
    return out


def _artists(fig):
    for ax in fig.axes:
        for a in (*ax.lines, *ax.collections, *ax.patches, *ax.containers):
            yield ax, a


def _drawn(fig, label, handle) -> bool:
    named = [(ax, a) for ax, a in _artists(fig) if a.get_label() == label]
    if named:
        return any(_in_view(ax, a) for ax, a in named)
    return _proxy_matched(fig, handle)


def _in_view(ax, artist) -> bool:
    """The artist is visible and some of its data lies in the axes' view."""
    from matplotlib.container import Container

    if isinstance(artist, Container):  # bars, error bars: some part drawn
        parts = [p for p in artist.get_children() if p is not None]
        return any(_in_view(ax, p) for p in parts) if parts else True
    if not artist.get_visible():
        return False
    if hasattr(artist, "get_ydata"):  # a line with no finite point draws nothing
        x = np.asarray(artist.get_xdata(), dtype=float)
        y = np.asarray(artist.get_ydata(), dtype=float)
        if x.size and x.shape == y.shape and not np.any(np.isfinite(x) & np.isfinite(y)):
            return False
    try:
        box = artist.get_window_extent(ax.figure.canvas.get_renderer())
    except Exception:  # noqa: BLE001 - an artist without extents: trust its visibility
        return True
    view = ax.get_window_extent()
    if not np.all(np.isfinite([box.x0, box.x1, box.y0, box.y1])):
        return True
    return (min(box.x1, view.x1) >= max(box.x0, view.x0) - 1
            and min(box.y1, view.y1) >= max(box.y0, view.y0) - 1
            and (box.width > 0 or box.height > 0 or _has_marker(artist)))


def _has_marker(artist) -> bool:
    return getattr(artist, "get_marker", lambda: "None")() not in ("None", "", " ", None)


def _proxy_matched(fig, handle) -> bool:
    """A legend key made for the legend only: a line or area of its look must be drawn."""
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D

    if isinstance(handle, Line2D):
        if _no_line(handle) and not _has_marker(handle):
            return True  # a text-only entry promises nothing
        want = to_rgba(handle.get_color())
        key = np.ptp(want[:3]) < 0.05  # a grey key explains a line style, whatever its colour
        for ax, a in _artists(fig):
            if isinstance(a, Line2D) and (key or np.allclose(to_rgba(a.get_color()), want)) \
                    and _same_style(a, handle) and _in_view(ax, a):
                return True
        return False
    color = getattr(handle, "get_facecolor", lambda: None)()
    if color is None:
        return True
    want = np.atleast_2d(to_rgba(color) if np.ndim(color) == 1 else color)[0]
    for ax, a in _artists(fig):
        fc = getattr(a, "get_facecolor", lambda: None)()
        if fc is None or np.size(fc) == 0 or not _in_view(ax, a):
            continue
        if any(np.allclose(c[:3], want[:3], atol=0.02) for c in np.atleast_2d(fc)):
            return True
    return False


def _no_line(x) -> bool:
    return x.get_linestyle() in ("None", "none", "", " ")


def _same_style(a, b) -> bool:
    if _no_line(b):
        return a.get_marker() == b.get_marker()
    return not _no_line(a) and (a.get_linestyle() in ("-", "solid")) == (
        b.get_linestyle() in ("-", "solid"))


def _log_loss(ax) -> list[str]:
    out = []
    for axis, get in (("x", 0), ("y", 1)):
        if (ax.get_xscale() if axis == "x" else ax.get_yscale()) != "log":
            continue
        lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
        if lo > 0 and hi > 0 and abs(np.log10(hi / lo)) > MAX_DECADES:
            out.append(f"log {axis} axis spans {abs(np.log10(hi / lo)):.0f} decades "
                       f"(clip a numerical zero at a floor)")
        for a in ax.lines:
            if not a.get_transform().contains_branch_seperately(ax.transData)[get]:
                continue  # e.g. a vertical line's y in axes coordinates
            v = np.asarray(a.get_xdata() if get == 0 else a.get_ydata(), dtype=float)
            bad = int(np.sum(np.isfinite(v) & (v <= 0)))
            if bad and a.get_visible():
                out.append(f"log {axis} axis drops {bad} value(s) <= 0 of \"{a.get_label()}\"")
    return out
