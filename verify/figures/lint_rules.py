"""The figure lint's rules about what a figure says (:func:`verify.figures.lint.lint` runs them
after its layout rules): each returns the problems found, as sentences.

* :func:`verdicts` -- a verdict stated in a title (VIOLATED, holds, ...) is one the data
  support: one of ``fig.data_verdicts`` when the figure carries them, and VIOLATED never
  without them; requested points the figure could not draw (``fig.missing_points``) are
  listed in its text or caption;
* :func:`symlog` -- no symmetric-log axis (it flattens data near 0 and mixes decades of both
  signs): a log axis of ``|value|`` with the sign marked, or split panels;
* :func:`bands` -- a filled band of zero width (identical runs) promised in a legend;
* :func:`hidden` -- a legend entry whose line lies entirely under another line;
* :func:`rates` -- a theorem's rate line (``gid="rate"``) below the measured curve of its
  colour (``gid="measured"``) in a figure judged supported or holds (its floor dropped);
* :func:`labels` -- every axis with numbers has a label; a time average over the first T
  rounds is not plotted against "round t"; labels are names, not doc strings (no relation
  signs); no raw ids (catalogue ids, algorithm ids, snake_case) in any text; titles not cut;
* :func:`integer_ticks` -- an axis whose data are all integers has no fractional tick.

>>> import matplotlib; matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> fig, ax = plt.subplots()
>>> _ = ax.plot([0, 1, 2], [1.5, 2.5, 3.2], label="fedsoftworse")
>>> _ = ax.set(xlabel="round index t >= 0 t", ylabel="gap"); _ = ax.legend()
>>> fig.canvas.draw()
>>> sorted(labels(fig) + integer_ticks(fig))  # doctest: +NORMALIZE_WHITESPACE
['axis label is a statement, not a name: "round index t >= 0 t"',
 'raw id in text: "fedsoftworse" (legend)',
 'x axis has fractional ticks on integer data (0.25)']
>>> plt.close(fig)
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["verdicts", "symlog", "bands", "hidden", "rates", "labels", "integer_ticks",
           "texts"]

_VERDICT_WORDS = re.compile(r"\b(VIOLATED|holds|supported|refuted)\b")
_RELATION = re.compile(r"(>=|<=|\u2265|\u2264)")
_SNAKE = re.compile(r"[a-z]{2,}[a-z0-9]*_[a-z0-9_]{2,}")
_MATH = re.compile(r"\$[^$]*\$")
_TIME_AVG = re.compile(r"\(1/T\)|1/T\b")


def _titles(fig) -> list:
    out = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax._right_title]
    return [t for t in out if t.get_visible() and t.get_text()]


def texts(fig) -> list[tuple[str, str]]:
    """Every visible text of the figure with where it is: ``(text, where)``."""
    out = [(t.get_text(), "title") for t in _titles(fig)]
    for ax in fig.axes:
        out += [(ax.xaxis.label.get_text(), "x label"), (ax.yaxis.label.get_text(), "y label")]
        out += [(t.get_text(), "tick") for t in (*ax.get_xticklabels(), *ax.get_yticklabels())]
    out += [(t.get_text(), "text") for t in fig.texts]
    for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None:
            out += [(t.get_text(), "legend") for t in (*leg.texts, leg.get_title())]
    return [(s, w) for s, w in out if s and s.strip()]


def verdicts(fig) -> list[str]:
    data = getattr(fig, "data_verdicts", None)
    out = []
    for t in _titles(fig):
        for word in set(_VERDICT_WORDS.findall(t.get_text())):
            if data is None and word == "VIOLATED":
                out.append("title says VIOLATED but the figure carries no data verdicts "
                           "(fig.data_verdicts)")
            elif data is not None and word not in data:
                out.append(f"title says {word} but the data's verdicts are "
                           f"{', '.join(sorted(data)) or 'none'}")
    words = " ".join(s for s, _ in texts(fig)) + " " + str(getattr(fig, "caption", ""))
    for v in getattr(fig, "missing_points", []) or []:
        shown = f"{v:g}" if isinstance(v, (int, float)) else str(v)
        if shown not in words:
            out.append(f"requested point {shown} is missing and not listed")
    return sorted(set(out))


def symlog(fig) -> list[str]:
    return [f"symmetric-log {a} axis (flattens data near 0): use a log axis of |value| with "
            "the sign marked, or split panels" for ax in fig.axes
            for a, scale in (("x", ax.get_xscale()), ("y", ax.get_yscale())) if scale == "symlog"]


def _area(coll) -> float:
    total = 0.0
    for path in coll.get_paths():
        v = path.vertices
        if len(v) >= 3 and np.all(np.isfinite(v)):
            total += 0.5 * abs(np.dot(v[:, 0], np.roll(v[:, 1], 1))
                               - np.dot(v[:, 1], np.roll(v[:, 0], 1)))
    return total


def _legend_pairs(fig):
    for leg in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if leg is not None and leg.get_visible():
            yield from zip((t.get_text() for t in leg.texts), leg.legend_handles)


def bands(fig) -> list[str]:
    """A band in a legend must have an area: a band of identical runs is a line."""
    from matplotlib.collections import PolyCollection

    out = []
    polys = [c for ax in fig.axes for c in ax.collections if isinstance(c, PolyCollection)]
    for label, handle in _legend_pairs(fig):
        named = [c for c in polys if c.get_label() == label]
        want = getattr(handle, "get_facecolor", lambda: None)()
        if not named and ("band" in label.lower() or "interval" in label.lower()) \
                and want is not None:
            named = [c for c in polys if np.size(c.get_facecolor()) and np.allclose(
                np.atleast_2d(c.get_facecolor())[0][:3], np.ravel(want)[:3], atol=0.02)]
        if named and all(_area(c) == 0 for c in named):
            out.append(f"legend entry {label[:40]!r} is an area of zero width (identical "
                       "runs: say they are deterministic; one point: nothing to fill)")
    return out


def hidden(fig) -> list[str]:
    """A legend entry whose line is drawn exactly under a wider (or as wide) line."""
    from matplotlib.lines import Line2D

    out = []
    for label, _ in _legend_pairs(fig):
        for ax in fig.axes:
            mine = [ln for ln in ax.lines if ln.get_label() == label and ln.get_visible()]
            for ln in mine:
                if any(_covers(other, ln) for other in ax.lines
                       if other is not ln and isinstance(other, Line2D)):
                    out.append(f"legend entry {label[:40]!r} is hidden under another line")
                    break
    return sorted(set(out))


def _covers(top, low) -> bool:
    """``top`` (drawn above, at least as wide) lies within its own width of ``low`` at every
    point of ``low``, on screen."""
    if not top.get_visible() or top.get_zorder() <= low.get_zorder() \
            or top.get_linewidth() < low.get_linewidth() or top.get_linestyle() in ("None", ""):
        return False
    pts = low.get_transform().transform(np.column_stack([np.asarray(v, dtype=float) for v in
                                                         low.get_data()]))
    over = top.get_transform().transform(np.column_stack([np.asarray(v, dtype=float) for v in
                                                          top.get_data()]))
    pts, over = pts[np.isfinite(pts).all(axis=1)], over[np.isfinite(over).all(axis=1)]
    if len(pts) == 0 or len(over) < 2 or np.any(np.diff(over[:, 0]) <= 0):
        return False
    if pts[:, 0].min() < over[0, 0] - 1 or pts[:, 0].max() > over[-1, 0] + 1:
        return False
    gap = np.abs(np.interp(pts[:, 0], over[:, 0], over[:, 1]) - pts[:, 1])
    width = top.get_linewidth() * top.figure.dpi / 72
    return bool(np.all(gap <= width / 2 + low.get_linewidth() * top.figure.dpi / 144))


def rates(fig) -> list[str]:
    """A rate line must not cross below the measured curve of its colour when the figure's
    verdict says the claim holds (a rate line with its floor dropped)."""
    from matplotlib.colors import to_rgba

    if not ({"supported", "holds"} & set(getattr(fig, "data_verdicts", ()) or ())):
        return []
    out = []
    for ax in fig.axes:
        measured = [ln for ln in ax.lines if ln.get_gid() == "measured"]
        for rate in (ln for ln in ax.lines if ln.get_gid() == "rate"):
            for m in measured:
                if to_rgba(m.get_color()) != to_rgba(rate.get_color()):
                    continue
                (xr, yr), (xm, ym) = rate.get_data(), m.get_data()
                ym = np.interp(np.asarray(xr, float), np.asarray(xm, float),
                               np.asarray(ym, float))
                if np.any(np.asarray(yr, float) < ym * (1 - 1e-6)):
                    out.append(f"rate line crosses below the measured curve "
                               f"{m.get_label()[:30]!r} of a supported claim (its floor?)")
    return out


def labels(fig) -> list[str]:
    out = []
    for ax in fig.axes:
        out += _unlabelled(fig, ax)
        x, y = ax.get_xlabel(), ax.get_ylabel() or (fig._supylabel.get_text()
                                                    if fig._supylabel else "")
        if re.search(r"\bround t\b", x) and _TIME_AVG.search(y):
            out.append(f"x label {x!r} under a time average over the first T rounds "
                       "(its x is T)")
    for s, where in texts(fig):
        plain = _MATH.sub("", s)
        if where in ("x label", "y label") and (_RELATION.search(plain) or " index " in plain):
            out.append(f"axis label is a statement, not a name: {s!r}".replace("'", '"'))
        out += [f'raw id in text: "{w}" ({where})' for w in _raw_ids(plain)]
        if where == "title" and ("\u2026" in s or s.rstrip().endswith("...")):
            out.append(f"title is cut: {s[-40:]!r}")
    return sorted(set(out))


def _raw_ids(text: str) -> list[str]:
    import boundlab
    import toys

    words = set(re.findall(r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]", text))
    out = [w for w in words if w in boundlab.ids() or w in toys.ALGORITHMS
           or re.fullmatch(r"fed[a-z]+", w) or _SNAKE.fullmatch(w)]
    return sorted(out)


def _unlabelled(fig, ax) -> list[str]:
    out = []
    for name, axis, sup in (("x", ax.xaxis, fig._supxlabel), ("y", ax.yaxis, fig._supylabel)):
        ticks = [t.get_text() for t in (ax.get_xticklabels() if name == "x" else
                                        ax.get_yticklabels()) if t.get_visible()]
        numeric = [t for t in ticks if re.fullmatch(r"[\s\u2212\-+0-9.,e$^{}\\a-z]*", t)
                   and re.search(r"[0-9]", t)]
        if not axis.get_visible() or not numeric or axis.label.get_text():
            continue
        if sup is not None and sup.get_text():
            continue
        if _sibling_labelled(fig, ax, name):
            continue
        out.append(f"{name} axis without a label (panel {ax.get_title()[:30]!r})")
    return out


def _sibling_labelled(fig, ax, name) -> bool:
    """A panel in the same column (x) or row (y) carries the label for both."""
    box = ax.get_position()
    for other in fig.axes:
        if other is ax:
            continue
        ob = other.get_position()
        same = abs(ob.x0 - box.x0) < 0.02 if name == "x" else abs(ob.y0 - box.y0) < 0.02
        label = other.get_xlabel() if name == "x" else other.get_ylabel()
        if same and label:
            return True
    return False


def integer_ticks(fig) -> list[str]:

    out = []
    for ax in fig.axes:
        for name, axis, i in (("x", ax.xaxis, 0), ("y", ax.yaxis, 1)):
            if axis.get_scale() != "linear" or not integer_data(ax, i):
                continue
            lo, hi = sorted(ax.get_xlim() if i == 0 else ax.get_ylim())
            locs = [v for v in axis.get_majorticklocs() if lo - 1e-9 <= v <= hi + 1e-9]
            bad = [v for v in locs if abs(v - round(v)) > 1e-9]
            if bad and any(t.get_text() for t in axis.get_ticklabels()):
                out.append(f"{name} axis has fractional ticks on integer data ({bad[0]:g})")
    return out


def integer_data(ax, i: int) -> bool:
    """The lines of ``ax`` have data on axis ``i`` (0: x, 1: y), all integers, at least two
    distinct values (lines in axes coordinates, such as ``axhline``'s x, do not count)."""
    import numpy as np

    vals = []
    for line in ax.lines:
        if not line.get_transform().contains_branch_seperately(ax.transData)[i]:
            continue
        v = np.asarray(line.get_xdata() if i == 0 else line.get_ydata(), dtype=float)
        vals.append(v[np.isfinite(v)])
    if not vals:
        return False
    v = np.concatenate(vals)
    return v.size > 1 and np.unique(v).size > 1 and bool(np.all(v == np.round(v)))
