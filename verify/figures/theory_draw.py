"""The drawing side of :func:`verify.figures.theory_vs_measured`: the panel grid, the measured
curve and its band, the bound and its terms, the overlay of several algorithms, and
:func:`line`, which draws a series on a linear, log or signed-log axis (``|value|`` on a log
axis, each negative value marked by a hollow triangle: never a symmetric-log axis).

>>> import matplotlib; matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> from verify.figures.theory import Canvas
>>> fig, ax = plt.subplots()
>>> canvas = Canvas("signed", floor=1e-12)
>>> _ = line(ax, [1, 2, 3], [1.0, -0.1, 0.01], canvas, color="C0")
>>> ax.get_yscale(), [ln.get_ydata().tolist() for ln in ax.lines]
('log', [[1.0, 0.1, 0.01], [0.1]])
>>> sorted(canvas.handles)
['value < 0 (its |value| drawn)']
>>> plt.close(fig)
"""

from __future__ import annotations

import numpy as np

from .style import A4_WIDTH, case_words, term_words
from .theory_data import band, given_band, seeds_vary

__all__ = ["grid", "xscale", "line", "measured_curve", "bound_and_terms", "overlay_curves"]

_TERM_COLORS = ("tab:blue", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
#: a term this close to the bound everywhere would hide under its line: within this factor
#: on a log axis (0.04 decades), within this fraction of the bound's largest value on a
#: linear one
_SAME_LOG, _SAME_LINEAR = 1.1, 0.01
NEGATIVE = "value < 0 (its |value| drawn)"


def grid(n: int, ncols: int, cols: int | None = None):
    """``n`` panels, ``ncols`` a row (``cols`` exactly: a two-way facet); returns
    ``(fig, axes, cols)``."""
    import matplotlib.pyplot as plt

    if cols is None:
        cols = max(1, min(ncols, n if n != 4 or ncols < 3 else 2))
    rows = -(-n // cols)
    width = A4_WIDTH if cols > 1 else 4.2
    fig, axes = plt.subplots(rows, cols, figsize=(width, 2.1 * rows + 1.1), sharey=True,
                             sharex=True, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        fig.delaxes(ax)
    return fig, flat[:n], cols


def xscale(ax, xs) -> None:
    """A log x axis for a geometric grid of positive values (ticks at the values when few)."""
    v = np.unique(np.asarray(xs, dtype=float))
    v = v[np.isfinite(v)]
    if v.size < 3 or v[0] <= 0 or v[-1] / v[0] < 20:
        return
    steps = np.diff(np.log(v))
    if steps.max() > 3 * steps.min() and v.size > 12:
        return  # an arithmetic grid such as rounds 1..T
    ax.set_xscale("log")
    if v.size <= 8:
        ax.set_xticks(v, [f"{t:g}" for t in v], minor=False)
        ax.set_xticks([], minor=True)


def line(ax, x, v, canvas, **kw):
    """Draw ``v`` over ``x`` on the canvas's scale; returns the line. On a log or signed axis
    magnitudes below the floor are drawn at it, zeros are not drawn (both noted), and on a
    signed axis each negative value is marked."""
    x, v = np.asarray(x, dtype=float), np.asarray(v, dtype=float)
    if canvas.scale == "linear":
        ax.set_yscale("linear")
        return ax.plot(x, v, **kw)[0]
    ax.set_yscale("log")
    mag = np.abs(v) if canvas.scale == "signed" else v.copy()
    low = np.isfinite(mag) & (mag > 0) & (mag < canvas.floor)
    if low.any():
        mag[low] = canvas.floor
        canvas.notes["floor"] = (f"|values| below {canvas.floor:.0e} (a numerical zero) are "
                                 "drawn at it")
    if np.any(np.isfinite(mag) & (mag <= 0)):
        canvas.notes["zero"] = "values exactly 0 are not drawn on the log axis"
        mag[mag <= 0] = np.nan
    out = ax.plot(x, mag, **kw)[0]
    neg = np.isfinite(v) & (v < 0)
    if canvas.scale == "signed" and neg.any():
        ax.plot(x[neg], mag[neg], ls="none", marker="v", ms=4, mfc="none", mew=0.9,
                mec=out.get_color(), zorder=out.get_zorder() + 0.1)
        if NEGATIVE not in canvas.handles:
            from matplotlib.lines import Line2D

            canvas.handles[NEGATIVE] = Line2D([], [], ls="none", marker="v", ms=4,
                                              mfc="none", mec="0.3")
    return out


def _seed_words(sub, x, col) -> tuple[str, bool]:
    n = int(sub["seed"].nunique())
    if n == 1:
        return "1 seed", False
    if seeds_vary(sub, x, col):
        return f"mean of {n} seeds", True
    return f"{n} seeds, identical: deterministic runs", False


def _band(ax, sub, x, xs, m, half, vary, color, canvas):
    given = given_band(sub, x)
    if given is not None and np.any(given[1] > given[0]):
        lo, hi, what = given[0], given[1], "band given with the data"
    elif vary:
        lo, hi, what = m - half, m + half, f"{canvas.level:.0%} confidence band over seeds"
    else:
        return
    if canvas.scale != "linear":
        lo = np.where(lo > 0, lo, np.nan)  # a band's part at or below 0 is off a log axis
    canvas.handles.setdefault(what, ax.fill_between(xs, lo, hi, color=color, alpha=0.25,
                                                    lw=0, zorder=4))


def measured_curve(ax, sub, x, measured, color, canvas, suffix="", name="measured") -> None:
    """The mean over seeds (a band only where the seeds differ)."""
    xs, m, half = band(sub, x, measured, canvas.level)
    seeds, vary = _seed_words(sub, x, measured)
    ln = line(ax, xs, m, canvas, ls="-", marker="o" if xs.size <= 30 else None, ms=3,
              color=color, lw=1.8, zorder=5)
    canvas.handles.setdefault(f"{name} ({seeds}){suffix}", ln)
    _band(ax, sub, x, xs, m, half, vary, color, canvas)


def bound_and_terms(ax, sub, x, canvas, zero) -> None:
    """The bound (black) and its terms: stacked on a linear axis when they are >= 0 and add
    up to the bound, else lines; a term equal to the bound everywhere is named, not drawn."""
    xb, b, _ = band(sub.dropna(subset=["bound_value"]), x, "bound_value", canvas.level)
    terms = [c for c in sub.columns if c.startswith("term_") and sub[c].notna().any()
             and c not in zero]
    vals = [np.interp(xb, *band(sub.dropna(subset=[t]), x, t, canvas.level)[:2])
            for t in terms]
    stack = (canvas.scale == "linear" and xb.size > 1 and vals
             and all(np.all(v >= 0) for v in vals)
             and np.allclose(np.sum(vals, axis=0), b, rtol=1e-6, atol=0))
    if stack:
        polys = ax.stackplot(xb, *vals, colors=_TERM_COLORS[:len(vals)], alpha=0.35, lw=0)
        for t, poly in zip(terms, polys):
            canvas.handles[f"term (stacked): {term_words(t[5:])}"] = poly
    else:
        _term_lines(ax, xb, b, terms, vals, canvas)
    # the bound on top of its terms (a dominant term equals it almost everywhere)
    canvas.handles["bound (right-hand side)"] = line(
        ax, xb, b, canvas, ls="-", color="k", lw=1.6, zorder=4.5,
        marker="_" if xb.size == 1 else None, ms=12)


def _term_lines(ax, xb, b, terms, vals, canvas) -> None:
    for i, (t, v) in enumerate(zip(terms, vals)):
        words = term_words(t[5:])
        if len(terms) > 1 and _under(v, b, canvas.scale):
            hidden = canvas.notes.get("same", "")
            if words not in hidden:
                canvas.notes["same"] = (hidden + ", " if hidden else
                                        "equal to the bound (under its line): ") + words
            continue
        canvas.handles.setdefault(f"term: {words}", line(
            ax, xb, v, canvas, ls=(0, (4, 2)), lw=1.1, color=_TERM_COLORS[i % 6],
            marker="x" if xb.size == 1 else None, zorder=3))


def _under(v, b, scale) -> bool:
    """``v`` would be drawn within the bound's line everywhere."""
    ok = np.isfinite(v) & np.isfinite(b)
    if not ok.any():
        return False
    v, b = v[ok], b[ok]
    if scale == "linear":
        return bool(np.all(np.abs(v - b) <= _SAME_LINEAR * np.max(np.abs(b))))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(v) / np.abs(b)
    return bool(np.all((r <= _SAME_LOG) & (r >= 1 / _SAME_LOG)))


def overlay_curves(ax, sub, x, measured, overlay, canvas) -> str:
    """Each value of ``overlay`` in a colour of its own: measured (solid), its bound
    (dashed); returns the panel's verdict in words."""
    from matplotlib.lines import Line2D

    verdicts: dict = {}
    for value, part in sub.groupby(overlay, sort=False):
        color, name = canvas.colors[value], _name(value)
        if "bound_value" in part.columns and part["bound_value"].notna().any():
            xb, b, _ = band(part.dropna(subset=["bound_value"]), x, "bound_value",
                            canvas.level)
            line(ax, xb, b, canvas, ls="--", color=color, lw=1.2, zorder=4)
            canvas.handles.setdefault("dashed: bound", Line2D([], [], color="0.3", ls="--",
                                                              lw=1.2))
        measured_curve(ax, part, x, measured, color, canvas, name=name)
        if "verdict" in part.columns and part["verdict"].notna().any():
            verdicts.setdefault(_verdict_of(part), []).append(name)
    if any(c.startswith("term_") for c in sub.columns):
        canvas.notes["overlay"] = "overlay: the bounds' terms are not drawn"
    if len(verdicts) == 1:
        return next(iter(verdicts))
    return "; ".join(f"{v}: {', '.join(names)}" for v, names in
                     sorted(verdicts.items(), key=lambda kv: kv[0] != "VIOLATED"))


def _verdict_of(part) -> str:
    v = set(part["verdict"].dropna())
    return "VIOLATED" if "VIOLATED" in v else next(iter(v)) if len(v) == 1 else "mixed"


def _name(value) -> str:
    return case_words(str(value)) if isinstance(value, str) else f"{value:g}"
