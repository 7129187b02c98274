"""The house style for the papers' experiments (``boundlab reproduce``): :func:`paper_axes`
makes the panels (a row at A4 text width), :func:`finish` brings a drawn figure to the house
style before it is saved (fonts >= 8 pt, titles and labels in words, algorithm ids in legends
by their papers' names, legends below the panels when they would crowd the data), and
:func:`save_item` writes it as a 300 dpi PNG + SVG.

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> fig, axes = paper_axes(1)
>>> _ = axes[0, 0].plot([1, 2], [0.5, 0.6], label="fedsoftmax")
>>> _ = axes[0, 0].set(xlabel="round t", ylabel="test accuracy")
>>> _ = axes[0, 0].axhline(0.55, color="grey", lw=0.8, label="target accuracy")
>>> _ = axes[0, 0].legend()
>>> fig = finish(fig)
>>> [t.get_text() for t in fig.legends[0].get_texts()]
['FedSoftMax', 'target accuracy']
>>> from verify.figures.lint import lint
>>> lint(fig)
[]
"""

from __future__ import annotations

import re

from .style import A4_WIDTH, case_words, integer_axes, save, style

__all__ = ["paper_axes", "finish", "save_item", "reference_line"]

_ID = re.compile(r"^[a-z][a-z0-9_.-]*$")


def paper_axes(ncols: int = 1, height: float | None = None, nrows: int = 1, **kw):
    """A figure of ``nrows`` x ``ncols`` panels at A4 text width in the house style (a panel
    row ``height`` inches, default 2.6); returns ``(fig, axes)`` with ``axes`` 2-D."""
    import matplotlib.pyplot as plt

    height = height or 2.6
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(A4_WIDTH, height * nrows + 0.5),
                                 squeeze=False, layout="constrained", **kw)
    return fig, axes


def reference_line(ax, y: float, label: str, **kw):
    """A horizontal reference line, labelled (it appears in the legend)."""
    kw = {"color": "0.4", "lw": 0.9, "ls": ":", **kw}
    return ax.axhline(y, label=label, **kw)


def _words(label: str) -> str:
    """A legend label in words: a bare id as its name, and an algorithm id inside a longer
    label ('fedavg (ours, KM median)') by its paper's name."""
    if _ID.match(label):
        return case_words(label)
    from .style import _algo

    return re.sub(r"\b[a-z][a-z0-9-]*[a-z0-9]\b", lambda m: _algo(m.group(0)) or m.group(0),
                  label)


def _fonts(fig) -> None:
    for ax in fig.axes:
        ax.title.set_fontsize(9)
        for t in (ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(),
                  *ax.get_yticklabels()):
            t.set_fontsize(8)
        ax.tick_params(labelsize=8)
    if fig._suptitle is not None:
        fig._suptitle.set_fontsize(10)


def _legends(fig) -> None:
    """Every axes legend becomes one figure legend below the panels (entries in words, each
    label once)."""
    handles: dict = {}
    for ax in fig.axes:
        if ax.get_legend() is None:
            continue
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(_words(label), h)
        ax.get_legend().remove()
    for ax in fig.axes:
        for artist in (*ax.lines, *ax.collections, *ax.patches, *ax.containers):
            label = artist.get_label()
            if not label.startswith("_"):
                artist.set_label(_words(label))
    if handles:
        width = max(map(len, handles))
        ncols = max(1, min(len(handles), int(A4_WIDTH * 72 / 4.6 // (width + 6))))
        fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                   ncols=ncols, fontsize=8, frameon=False)


def finish(fig):
    """Bring ``fig`` (drawn by a reproduce item) to the house style; returns it."""
    fig.set_layout_engine("constrained")
    if fig.get_figwidth() > A4_WIDTH:
        fig.set_size_inches(A4_WIDTH, fig.get_figheight() * A4_WIDTH / fig.get_figwidth())
    _legends(fig)
    _fonts(fig)
    for ax in fig.axes:
        ax.grid(True, alpha=0.3)
    integer_axes(fig)
    return fig


def save_item(fig, path, *, close: bool = True, name: str | None = None):
    """:func:`finish` the figure and write ``<path>.png`` (300 dpi) and ``<path>.svg``
    atomically; returns the PNG path (``name``: the item, for the lint's hook)."""
    return save(finish(fig), path, close=close, name=name)
