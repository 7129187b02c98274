"""The report's figures drawn from the ``series`` of check results (see :mod:`verify.figures`):
one function per series kind, each returning a matplotlib figure in the house style
(:mod:`verify.figures.style`). Curves of one check become one multi-panel figure drawn by
:func:`verify.figures.theory_vs_measured`.

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> import numpy as np
>>> from verify.compare import CheckResult
>>> r = CheckResult("c", "drift.plateau", "seed 004, main text eq. (2)", "toy", "holds")
>>> r.series = {"kind": "curve", "x": np.arange(1, 5), "measured": np.ones(4),
...             "bound": 2 * np.ones(4)}
>>> fig = curve_group([r])
>>> fig.axes[0].get_title()
'holds'
"""

from __future__ import annotations

import numpy as np

from .style import (
    A4_WIDTH,
    VERDICT_COLORS,
    case_words,
    frame_verdict,
    legend_below,
    quantity_label,
    scrub,
    source_words,
    style,
    suptitle,
    theorem_short,
    wrap,
)

__all__ = ["curve_group", "search_group", "ushape", "contraction", "alpha_vs_p", "panel_label",
           "group_title"]


def _bound(r):
    import boundlab

    try:
        return boundlab.get(r.bound_id) if r.bound_id else None
    except Exception:  # noqa: BLE001 - a user bound no longer registered: no metadata
        return None


def panel_label(r, group=()) -> str:
    """A result's panel / bar label in words: its case, and its problem when the group
    mixes problems; a worst-instance search says so."""
    if r.worst or r.case == r.bound_id:
        return "worst instance found"
    label = case_words(r.case) if r.case else ""
    kind = scrub(r.problem.split(" (")[0])
    if len({g.problem for g in group}) > 1 and kind not in label:
        label = ", ".join(s for s in (label, kind) if s)
    return label


def group_title(results, what: str) -> str:
    """'<paper>, <theorem(s)>: <what>', from the bounds' sources; the paper named once when
    they share it (then each statement by its number)."""
    raw = []
    for r in results:
        b = _bound(r)
        src = b.source if b is not None else r.paper
        if src not in raw:
            raw.append(src)
    sources = [scrub(source_words(s)) for s in raw]
    head = sources[0].split(", ")[0] if sources else ""
    if len(sources) > 1 and all(s.startswith(head + ", ") for s in sources):
        parts = [theorem_short(s, n=1 if len(raw) > 2 else 2) for s in raw]
        text = head + ", " + ", ".join(parts[:-1]) + " and " + parts[-1]
    else:
        text = "; ".join(sources)
    return f"{text}: {what}"


def _labels(results) -> list[str]:
    out = []
    for r in results:
        label = panel_label(r, results)
        out.append(label if label not in out else f"{label} ({len(out) + 1})")
    return out


def _curve_frame(results):
    import pandas as pd

    parts = []
    for r, label in zip(results, _labels(results)):
        s = r.series
        x = np.asarray(s["x"], dtype=float)
        col = {"x": x, "seed": 0, "verdict": r.verdict, "panel": label}
        col["measured"] = np.broadcast_to(np.asarray(s["measured"], dtype=float), x.shape)
        if s.get("bound") is not None:
            col["bound_value"] = np.broadcast_to(np.asarray(s["bound"], dtype=float), x.shape)
        for name, v in (s.get("terms") or {}).items():
            col[f"term_{name}"] = np.broadcast_to(np.asarray(v, dtype=float), x.shape)
        if s.get("measured_hi") is not None:
            col["band_lo"] = np.broadcast_to(np.asarray(s.get("measured_lo", col["measured"]),
                                                        dtype=float), x.shape)
            col["band_hi"] = np.broadcast_to(np.asarray(s["measured_hi"], dtype=float), x.shape)
        parts.append(pd.DataFrame(col))
    return pd.concat(parts, ignore_index=True)


def curve_group(results):
    """Theory vs measured of one check's results, one panel per case, via
    :func:`verify.figures.theory_vs_measured` (terms as lines on a log axis, stacked on a
    linear one)."""
    from .theory import theory_vs_measured

    frame = _curve_frame(results)
    labels = {v: v for v in _labels(results)}
    s, b = results[0].series, _bound(results[0])
    problem = scrub(results[0].problem)
    return theory_vs_measured(
        frame, x="x", facet="panel", panel_titles=labels,
        title=group_title(results, f"measured vs bound on {problem}"),
        xlabel=scrub(s.get("xlabel") or _default_x(b)),
        ylabel=quantity_label(b.lhs if b is not None else None, s.get("ylabel", "measured")))


def _default_x(b) -> str:
    """A time average over the first T rounds is plotted against its horizon T."""
    from .style import QUANTITIES

    avg = b is not None and "(1/T)" in QUANTITIES.get(b.lhs, "")
    return "rounds T" if avg else "round t"


def _single(title: str, verdict: str, details: str = ""):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(A4_WIDTH, 3.4))
    suptitle(fig, title)
    ax.set_title(": ".join(s for s in (details, verdict) if s),
                 color=VERDICT_COLORS.get(verdict, "black"))
    frame_verdict(ax, verdict)
    return fig, ax


def _claim_title(r) -> str:
    return f"{source_words(r.paper)}: {scrub(r.statement or r.case)}"


def _finish(fig, ax, ncols: int = 2):
    handles, labels = ax.get_legend_handles_labels()
    legend_below(fig, handles, labels, ncols=ncols)
    return fig


def ushape(r):
    """FedAU's weight error against the cutoff K: measured (verdict colour) and the bound."""
    s = r.series
    with style():
        fig, ax = _single(_claim_title(r), r.verdict, wrap(scrub(s.get("title", "")), 55))
        K = np.asarray(s["K"], dtype=float)
        color = VERDICT_COLORS.get(r.verdict, "tab:purple")
        ax.plot(K, s["measured"], "o-", color=color, ms=3, label="measured, mean over clients")
        ax.plot(K, s["bound"], "k.-", label="bound (B.6.9), mean over clients")
        for key, c, what in (("argmin_measured", color, "measured"), ("argmin_bound", "k",
                                                                      "bound")):
            if key in s:
                ax.axvline(s[key], color=c, ls=":", lw=1.2,
                           label=f"minimum of the {what}: K = {s[key]:g}")
        ax.set(xscale="log", yscale="log", xlabel="cutoff K",
               ylabel=quantity_label("avg_weight_error"))
        return _finish(fig, ax)


def contraction(r):
    """Measured gaps of several methods (solid, one colour each), each with its theorem's
    contraction rate (dashed, same colour) when the series gives the factor q: the transient
    ``(gap_0 - floor) q^t`` over the floor the theorem's other terms leave (``series["floors"]``,
    else the measured final gap, the floor the check fits the rate over), so a rate line never
    dives below a curve that contracts as fast as it claims. One legend entry per method (its
    rate in the label) and one key per line style; the figure's ``caption`` says which lines
    are drawn."""
    from matplotlib.lines import Line2D

    s = r.series
    with style():
        fig, ax = _single(_claim_title(r), r.verdict)
        t = np.asarray(s["rounds"], dtype=float)
        rated = 0
        for i, (name, gap) in enumerate(s["curves"].items()):
            gap = np.asarray(gap, dtype=float)
            q = (s.get("factors") or {}).get(name)
            rate = f", rate {q:.4f}\u1d57" if q is not None and gap.size else ""
            ax.plot(t, gap, color=f"C{i}", label=f"{case_words(name)}{rate}", gid="measured")
            if rate:
                rated += 1
                floor = float((s.get("floors") or {}).get(name, gap[-1]))
                ax.plot(t, floor + (gap[0] - floor) * q ** (t - t[0]), color=f"C{i}", ls="--",
                        lw=1, gid="rate")
        ax.set(yscale="log", xlabel="round t", ylabel=quantity_label("gap_t"))
        handles, labels = ax.get_legend_handles_labels()
        if rated:
            handles += [Line2D([], [], color="0.3"), Line2D([], [], color="0.3", ls="--", lw=1)]
            labels += ["solid: measured", "dashed: theorem's rate, over the floor"]
        legend_below(fig, handles, labels, ncols=2)
        fig.data_verdicts = {r.verdict}
        fig.caption = ("Measured gaps per method (solid) with each theorem's contraction "
                       "rate from the first gap down to the floor (the final gap; dashed, same "
                       "colour)." if rated else
                       "Measured gaps per method; the check gives no theorem's rate to draw.")
        return fig


def _rate_words(rate: float) -> str:
    return "1/t" if rate == -1 else f"t^{rate:g}"


def alpha_vs_p(r):
    """||alpha_t - p||_1 on log-log axes with the claimed rate drawn: a reference line of
    slope ``series["rate"]`` (default -1, i.e. 1/t) fitted in level over the fitting window
    (``series["fit_window"]``, default [t_max/16, t_max], the check's rule), and the measured
    slope with its interval when the claim has one."""
    s = r.series
    if "err" in s:
        err = np.asarray(s["err"], dtype=float)
    else:
        alpha, p = np.asarray(s["alpha"], dtype=float), np.asarray(s["p"], dtype=float)
        err = np.abs(alpha - p[None, :]).sum(axis=1)
    t = np.asarray(s.get("t", np.arange(1, err.size + 1)), dtype=float)
    rate = float(s.get("rate", -1.0))
    lo, hi = s.get("fit_window", (t.max() / 16, t.max()))
    win = (t >= lo) & (t <= hi) & (err > 0)
    with style():
        fig, ax = _single(_claim_title(r), r.verdict, wrap(scrub(s.get("title", "")), 55))
        color = VERDICT_COLORS.get(r.verdict, "tab:purple")
        ax.axvspan(lo, hi, color="0.92", lw=0, label=f"fitting window t \u2208 [{lo:g}, {hi:g}]")
        ax.plot(t, err, "-", color=color, lw=1.4,
                label="measured \u2016\u03b1\u209c \u2212 p\u2016\u2081")
        _slope_line(ax, t, err, win, rate, "k", ":",
                    f"claimed rate {_rate_words(rate)} (slope {rate:g}), level fitted")
        if np.isfinite(r.statistic):
            ci = ("" if not np.isfinite(r.statistic_lo) else
                  f", 95 % CI [{r.statistic_lo:.2f}, {r.statistic_hi:.2f}]")
            _slope_line(ax, t, err, win, r.statistic, color, "--",
                        f"measured slope {r.statistic:.2f}{ci}")
        ax.set(xscale="log", yscale="log", xlabel="round t",
               ylabel=r"distance to $p$: $\|\alpha_t - p\|_1$")
        return _finish(fig, ax, ncols=1)


def _slope_line(ax, t, err, win, slope, color, ls, label) -> None:
    """A line of the given log-log slope over the window, its level fitted to the data."""
    if not np.any(win):
        return
    level = np.mean(np.log(err[win]) - slope * np.log(t[win]))
    tw = t[win]
    ax.plot(tw, np.exp(level) * tw ** slope, color=color, ls=ls, lw=1.6, label=label)


def search_group(results):
    """Worst-instance searches of one check: LHS/RHS of every instance evaluated and the
    worst so far (verdict colour), one panel per bound searched."""
    import matplotlib.pyplot as plt

    with style():
        n = len(results)
        cols = min(n, 3)
        fig, axes = plt.subplots(-(-n // cols), cols, figsize=(A4_WIDTH, 2.3 * -(-n // cols)
                                                             + 1.0), squeeze=False, sharey=True)
        flat = list(axes.ravel())
        for ax in flat[n:]:
            fig.delaxes(ax)
        for ax, r in zip(flat, results):
            _search_panel(ax, r)
        for ax in flat[:n:cols]:
            ax.set_ylabel("measured / bound\n(> 1: violated)")
        suptitle(fig, group_title(results, "worst-instance search"))
        handles, labels = flat[0].get_legend_handles_labels()
        legend_below(fig, handles, labels, ncols=3)
        return fig


#: measured / bound below this is drawn at it (a numerical zero would stretch a log axis)
RATIO_FLOOR = 1e-6


def _search_panel(ax, r) -> None:
    tr = np.asarray(r.series["trace"], dtype=float)
    if np.any((tr > 0) & (tr < RATIO_FLOOR)):
        ax.text(0.02, 0.03, f"values < {RATIO_FLOOR:g} drawn at {RATIO_FLOOR:g}",
                transform=ax.transAxes, fontsize=8, color="0.35")
    tr = np.where((tr > 0) & (tr < RATIO_FLOOR), RATIO_FLOOR, tr)
    ok = np.isfinite(tr) & (tr > 0)
    k = np.arange(1, tr.size + 1)
    ax.plot(k[ok], tr[ok], ".", color="0.6", ms=2, label="instance evaluated")
    best = np.maximum.accumulate(np.where(ok, tr, 0.0))
    ax.plot(k[best > 0], best[best > 0], "-", color=VERDICT_COLORS.get(r.verdict, "k"),
            label="worst so far (colour: verdict)")
    ax.axhline(1.0, color="k", lw=1, label="measured = bound")
    b = _bound(r)
    ax.set_title(f"{theorem_short(b.source) if b is not None else scrub(r.case)}: {r.verdict}",
                 color=VERDICT_COLORS.get(r.verdict, "black"))
    frame_verdict(ax, r.verdict)
    ax.set(yscale="log", xlabel="instance evaluated")
