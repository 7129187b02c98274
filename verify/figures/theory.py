"""Theory vs measured from a tidy sweep table (:func:`verify.sweep`); re-exported as
:func:`verify.plots.theory_vs_measured` and :func:`verify.figures.theory_vs_measured`. Does not
choose a matplotlib backend.

The bound is drawn on top of its terms; a term that is <= 0 somewhere switches a log axis to a
symmetric-log one (nothing is dropped), a term that is 0 everywhere is named in the legend's
title instead of drawn; a geometric grid of x values gets a log x axis; a time-averaged bound
(its measured quantity an average over the first T rounds) against rounds is evaluated at
every T, next to the running average of the measured per-round quantity.

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
import warnings

import numpy as np

from boundlab.errors import DomainError

from .style import (
    A4_WIDTH,
    VERDICT_COLORS,
    frame_verdict,
    legend_below,
    quantity_label,
    save,
    source_words,
    style,
    suptitle,
    term_words,
    wrap,
)

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
}
#: time-averaged measured quantity -> the per-round column it averages over rounds t < T
_RUNNING = {"avg_shadow_gap": "shadow_gap", "avg_grad_norm2": "grad_norm2",
            "avg_grad_norm2_virtual": "grad_norm2_virtual"}
_TERM_COLORS = ("tab:blue", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
#: above this max/min ratio of the curves, ``yscale="auto"`` draws a log axis
LOG_SPAN = 100.0


def theory_vs_measured(frame, x="round", facet=None, *, measured=None, path=None,
                       level=0.95, title=None, yscale="auto", xlabel=None, ylabel=None,
                       panel_titles=None, ncols=3):
    """Measured curve (mean over seeds with its ``level`` confidence band), the bound and its
    named terms, one panel per value of ``facet`` (``ncols`` panels a row).

    ``frame`` is a :func:`verify.sweep` table (or any table with ``seed``, ``x``, the measured
    column and optionally ``bound_value`` / ``term_*`` / ``verdict``; ``band_lo`` /
    ``band_hi`` give a band of their own). ``measured`` defaults to the bound's ``measured``
    column, else ``gap``. ``yscale``: ``"log"`` draws the terms as lines; ``"linear"`` stacks
    them (when they are >= 0 and add up to the bound; else lines); ``"auto"`` is log when the
    curves are positive and span more than :data:`LOG_SPAN`, so no stacked area ever sits on a
    log axis. The measured curve is coloured by the panel's verdict (red if any row is
    VIOLATED); titles say the verdict in words, the figure title names the paper and theorem;
    the one legend sits below the panels, outside the data. With ``path``, writes
    ``<path>.png`` (300 dpi) and ``<path>.svg`` atomically. Returns the figure.
    """
    measured = measured or ("measured" if "measured" in frame.columns else "gap")
    for col in (x, measured, "seed", *([facet] if facet else [])):
        if col not in frame.columns:
            raise DomainError("column", col, "a column of the table: "
                              + ", ".join(map(str, frame.columns)))
    if yscale not in ("auto", "log", "linear", "symlog"):
        raise DomainError("yscale", yscale, "'auto', 'log', 'symlog' or 'linear'")
    frame = _running(frame, x, measured, facet)
    data = frame[np.isfinite(frame[measured].to_numpy(dtype=float))]
    values = list(dict.fromkeys(data[facet])) if facet else [None]
    _check_single_setting(data, x, facet)
    groups = [data if facet is None else data[data[facet] == v] for v in values]
    zero = _zero_terms(groups)
    scale = _scale(data, measured, yscale, zero)
    with style():
        fig, axes, cols = _grid(len(values), ncols)
        handles: dict = {}
        for i, (ax, v, sub) in enumerate(zip(axes, values, groups)):
            verdict = _panel(ax, sub, x, measured, level, scale, handles, zero)
            _xscale(ax, data[x])
            head = (panel_titles or {}).get(v, f"{LABELS.get(facet, facet)} = {v}" if facet
                                            else "")
            ax.set_title(wrap(": ".join(s for s in (head, verdict) if s), int(70 / cols)),
                         color=VERDICT_COLORS.get(verdict, "black"))
            frame_verdict(ax, verdict)
            if i + cols >= len(axes):  # no panel below: this one carries the x axis
                ax.xaxis.set_tick_params(labelbottom=True)
                ax.set_xlabel(xlabel or LABELS.get(x, x))
            if i % cols == 0 and len(axes) <= cols:
                ax.set_ylabel(ylabel or _ylabel(frame, measured))
        if len(axes) > cols:  # one label for every row (a row's label would overprint)
            fig.supylabel(ylabel or _ylabel(frame, measured), fontsize=8)
        suptitle(fig, title or _title(frame))
        leg = legend_below(fig, list(handles.values()), list(handles), ncols=3)
        _legend_title(leg, zero, scale, yscale)
        _fit_legend(fig, leg, -(-len(axes) // cols))
        if path is not None:
            save(fig, pathlib.Path(path), close=False)
    return fig


def _grid(n: int, ncols: int):
    import matplotlib.pyplot as plt

    cols = max(1, min(ncols, n if n != 4 or ncols < 3 else 2))
    rows = -(-n // cols)
    width = A4_WIDTH if cols > 1 else 4.2
    fig, axes = plt.subplots(rows, cols, figsize=(width, 2.1 * rows + 1.1), sharey=True,
                             sharex=True, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[n:]:
        fig.delaxes(ax)
    return fig, flat[:n], cols


def _zero_terms(groups) -> set:
    """Terms that are 0 over every panel (drawn nowhere, named in the legend's title)."""
    cols = {c for sub in groups for c in sub.columns
            if c.startswith("term_") and sub[c].notna().any()}
    return {c for c in cols if all(not (sub[c].fillna(0) != 0).any() for sub in groups)}


def _fit_legend(fig, leg, rows: int) -> None:
    """Make room for the legend below the panels so that it stays under a third of the
    figure's height."""
    lines = -(-len(leg.texts) // max(1, leg._ncols)) + (2 if leg.get_title().get_text() else 0)
    fig.set_figheight(max(fig.get_figheight(), 2.1 * rows + 0.8 + 3 * 0.16 * lines / 2))


def _legend_title(leg, zero, scale, asked) -> None:
    notes = []
    if zero:
        notes.append("= 0 everywhere, not drawn: " + ", ".join(term_words(t[5:])
                                                              for t in sorted(zero)))
    if scale == "symlog" and asked != "symlog":
        notes.append("symmetric log axis: a term is ≤ 0 somewhere")
    if notes and leg is not None:
        leg.set_title("; ".join(notes), prop={"size": 8})


def _xscale(ax, xs) -> None:
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


def _check_single_setting(data, x, facet) -> None:
    grid = list((data.attrs.get("sweep") or {}).get("points", [{}])[0])
    mixed = [g for g in grid if g not in (x, facet) and data[g].nunique(dropna=False) > 1]
    if mixed:
        raise DomainError("facet", facet, "the one grid name that varies besides x",
                          f"{', '.join(mixed)} also vary: select one value of them first")


def _scale(data, measured, yscale, zero=frozenset()) -> str:
    terms = [c for c in data.columns if c.startswith("term_") and c not in zero]
    tvals = data[terms].to_numpy(dtype=float) if terms else np.zeros(0)
    negative = bool(np.any(tvals[np.isfinite(tvals)] <= 0))
    if yscale == "log" and negative:
        return "symlog"
    if yscale != "auto":
        return yscale
    cols = [measured] + (["bound_value"] if "bound_value" in data.columns else [])
    vals = data[cols].to_numpy(dtype=float)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0 or np.any(vals <= 0):
        return "linear"
    if vals.max() / vals.min() <= LOG_SPAN:
        return "linear"
    return "symlog" if negative else "log"


def _running(frame, x, measured, facet):
    """A time-averaged bound judged on its last round only, plotted against rounds: its
    measured running average and its bound (and terms) at every T. Other tables unchanged."""
    pre = "param_" if "param_T" in frame.columns else "rhs_"  # rhs_: an older frame
    if x != "round" or measured != "measured" or f"{pre}T" not in frame.columns:
        return frame
    lhs = frame["lhs"].dropna() if "lhs" in frame.columns else frame.iloc[:0, :0]
    judged = frame.dropna(subset=["measured"])
    per_round = None
    if len(lhs) and len(judged):  # the quantity the bound's algorithm measures (PAPER_LHS)
        from .._check_lhs import measured_name

        per_round = _RUNNING.get(measured_name(lhs.iloc[0], judged[_id_column(frame)].iloc[0]))
    if per_round not in frame.columns or judged[x].nunique() > 1:
        if len(judged) and judged.groupby(facet or "seed")[x].nunique().max() == 1:
            warnings.warn("theory_vs_measured: one point per panel against rounds", stacklevel=3)
        return frame
    import boundlab

    bound = boundlab.get(judged[_id_column(frame)].iloc[0])
    keys = [k for k in (facet, "seed") if k]
    parts = [_running_group(rows, judged, keys, per_round, bound, pre)
             for _, rows in frame.groupby(keys, sort=False)]
    import pandas as pd

    return pd.concat([p for p in parts if p is not None], ignore_index=True)


def _id_column(frame) -> str:
    """The bound id's column: ``bound_id`` (:mod:`verify.schema`), or ``bound`` in an older
    frame."""
    return "bound_id" if "bound_id" in frame.columns else "bound"


def _running_group(rows, judged, keys, per_round, bound, pre="param_"):
    last = judged.loc[(judged[keys] == rows[keys].iloc[0]).all(axis=1)]
    if last.empty:
        return None
    last = last.iloc[0]
    rows = rows.sort_values("round")
    T = rows["round"].to_numpy(dtype=float)
    values = rows[per_round].to_numpy(dtype=float)
    running = np.concatenate([[np.nan], np.cumsum(values)[:-1] / np.arange(1, len(values))])
    keep = (T >= 1) & (T <= last["round"]) & np.isfinite(running)
    T, running = T[keep], running[keep]
    params = {n: float(last[f"{pre}{n}"]) for n in bound.params if f"{pre}{n}" in last}
    params["T"] = T
    out = {k: rows[k].iloc[0] for k in keys}
    out.update(round=T, measured=running, bound_id=last[_id_column(judged)], lhs=last["lhs"],
               verdict=last["verdict"], bound_value=bound.evaluate(**params) + 0 * T)
    for name, v in bound.evaluate_terms(**params).items():
        out[f"term_{name}"] = np.broadcast_to(np.asarray(v, dtype=float), T.shape)
    import pandas as pd

    return pd.DataFrame(out)


def _band(sub, x, col, level):
    from scipy import stats

    g = sub.groupby(x, sort=True)[col]
    mean, sd, n = g.mean(), g.std(ddof=1).fillna(0.0), g.count()
    half = stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(n)
    return mean.index.to_numpy(dtype=float), mean.to_numpy(), half.to_numpy()


def _panel(ax, sub, x, measured, level, scale, handles, zero=frozenset()) -> str:
    verdicts = set(sub["verdict"].dropna()) if "verdict" in sub.columns else set()
    verdict = ("VIOLATED" if "VIOLATED" in verdicts else
               next(iter(verdicts)) if len(verdicts) == 1 else
               ", ".join(sorted(verdicts)))
    color = VERDICT_COLORS.get(verdict, "tab:purple")
    xs, m, half = _band(sub, x, measured, level)
    n = int(sub["seed"].nunique())
    if "bound_value" in sub.columns and sub["bound_value"].notna().any():
        _bound(ax, sub, x, level, scale, handles, zero)
    line, = ax.plot(xs, m, "-", marker="o" if xs.size <= 30 else None, ms=3, color=color,
                    lw=1.8, zorder=5)
    handles[f"measured ({f'mean of {n} seeds' if n > 1 else '1 seed'}): {verdict}"] = line
    lo_hi = _given_band(sub, x)
    if lo_hi is not None or n > 1:
        lo, hi = lo_hi if lo_hi is not None else (m - half, m + half)
        handles[f"{level:.0%} confidence band"] = ax.fill_between(
            xs, lo, hi, color=color, alpha=0.25, lw=0, zorder=4)
    if scale != "symlog":
        ax.set_yscale(scale)
    elif ax.get_yscale() != "symlog":
        ax.set_yscale("symlog", linthresh=_linthresh(sub, [measured]))
    return verdict


def _given_band(sub, x):
    if not {"band_lo", "band_hi"} <= set(sub.columns) or sub["band_hi"].isna().all():
        return None
    g = sub.groupby(x, sort=True)
    return g["band_lo"].mean().to_numpy(), g["band_hi"].mean().to_numpy()


def _bound(ax, sub, x, level, scale, handles, zero) -> None:
    """The bound (black) and its terms: stacked on a linear axis when they are >= 0 and add
    up to the bound, else lines (always lines on a log axis)."""
    xb, b, _ = _band(sub.dropna(subset=["bound_value"]), x, "bound_value", level)
    terms = [c for c in sub.columns if c.startswith("term_") and sub[c].notna().any()
             and c not in zero]
    vals = [np.interp(xb, *_band(sub.dropna(subset=[t]), x, t, level)[:2]) for t in terms]
    stack = (scale == "linear" and xb.size > 1 and vals and all(np.all(v >= 0) for v in vals)
             and np.allclose(np.sum(vals, axis=0), b, rtol=1e-6, atol=0))
    if stack:
        polys = ax.stackplot(xb, *vals, colors=_TERM_COLORS[:len(vals)], alpha=0.35, lw=0)
        for t, poly in zip(terms, polys):
            handles[f"term (stacked): {term_words(t[5:])}"] = poly
    else:
        for i, (t, v) in enumerate(zip(terms, vals)):
            line, = ax.plot(xb, v, ls=(0, (4, 2)), lw=1.1, color=_TERM_COLORS[i % 6],
                            marker="x" if xb.size == 1 else None, zorder=3)
            handles[f"term: {term_words(t[5:])}"] = line
    # the bound on top of its terms (a dominant term equals it almost everywhere)
    handles["bound (right-hand side)"], = ax.plot(xb, b, "k-", lw=1.6, zorder=4.5,
                                                   marker="_" if xb.size == 1 else None, ms=12)
    if scale == "symlog":
        ax.set_yscale("symlog", linthresh=_linthresh(sub, terms))


def _linthresh(sub, cols) -> float:
    v = np.abs(sub[[c for c in ("bound_value", *cols) if c in sub]].to_numpy(dtype=float))
    v = v[np.isfinite(v) & (v > 0)]
    return float(10 ** np.floor(np.log10(v.min()))) if v.size else 1.0


def _ylabel(frame, measured) -> str:
    if measured == "measured" and "lhs" in frame.columns and frame["lhs"].notna().any():
        return quantity_label(frame["lhs"].dropna().iloc[0])
    return LABELS.get(measured, measured)


def _title(frame) -> str:
    col = _id_column(frame)
    if col in frame.columns and frame[col].notna().any():
        import boundlab

        b = boundlab.get(frame[col].dropna().iloc[0])
        return f"{source_words(b.source)}: measured vs bound"
    return "measured over seeds"
