"""The plot of PEP tightness brackets as a function of one parameter (matplotlib, Agg backend;
the house style of :mod:`verify.figures`); the grid itself is
:func:`verify.tightness.bracket_grid`.

The plot has two panels over the varied parameter: the bound ``B`` with the PEP's ``UB`` and
``LB`` (log scale), and the bracket relative to the bound, ``[LB/B, UB/B]`` (``ratio_lo``,
``ratio_hi``: the orientation measured / bound of every ratio, <= 1 holds). Like every figure,
it is written by :func:`verify.figures.save`: 300 dpi PNG and SVG, each atomically, through the
figure lint's hook.

The figure states only what its points support (:func:`point_state`): a bracket whose solve
was ``inaccurate`` (LB > UB, or a solver tolerance missed) is drawn hollow and named as such,
never read as VIOLATED; VIOLATED needs a certified instance (LB > B on the bound's exact
class). Requested points without a bracket (``None`` rows: ``--cache-only`` found no cached
solution) are listed under the panels, never silently dropped.

The example (a grid solved and plotted) is in :mod:`verify.tightness.plots`.
"""

from __future__ import annotations

import pathlib

__all__ = ["plot_brackets", "point_state", "figure_verdict"]

#: a bracket point's state -> words for the title
_STATE_WORDS = {"holds": "holds", "VIOLATED": "VIOLATED (certified instance)",
                "inaccurate": "inaccurate solve", "inconclusive": "inconclusive",
                "no worst case": "no worst case"}


def point_state(r) -> str:
    """What one bracket supports: ``holds`` (UB <= B), ``VIOLATED`` (LB > B on the bound's
    exact class, from an accurate solve), ``inaccurate`` (the solve is not to be trusted),
    ``no worst case`` (no UB) or ``inconclusive``."""
    if r.get("bracket") == "inaccurate" or str(r.get("verdict", "")).startswith("inaccurate"):
        return "inaccurate"
    ub, lb, B = r.get("worst_case_upper"), r.get("worst_case_lower"), r.get("bound_value")
    if ub is not None and lb is not None and lb > ub * (1 + 1e-9) + 1e-300:
        return "inaccurate"  # an inverted bracket whatever the record says
    if r.get("exact", True) and lb is not None and B is not None and lb > B * (1 + 1e-12):
        return "VIOLATED"
    holds = (r.get("ordering") or {}).get("holds")
    if holds is None and ub is None:
        return "no worst case"
    if holds or (holds is None and ub is not None and B is not None and ub <= B):
        return "holds"
    return "inconclusive"


def figure_verdict(states) -> str:
    """The figure's one verdict: VIOLATED if a point certifies it, else ``inaccurate`` if a
    solve is, ``holds`` when every point holds, else ``inconclusive``."""
    states = set(states)
    for v in ("VIOLATED", "inaccurate"):
        if v in states:
            return v
    return "holds" if states == {"holds"} else "inconclusive"


def plot_brackets(rows, vary, path, *, title=None, requested=None,
                  option=None) -> pathlib.Path:
    """Plot a grid of brackets (from :func:`bracket_grid`) to ``path`` and its sibling: 300 dpi
    PNG and SVG (``plateau.png`` or ``plateau.svg`` writes both), each atomically, through
    :func:`verify.figures.save`, in the house style: A4 text width, fonts >= 8 pt, the title
    in words (paper and theorem), the legends beside each panel, the panels framed in the
    colour of what the points support (:func:`figure_verdict`). ``requested``: the values of
    ``vary`` asked for, one per row (default: ``rows.requested`` when :func:`bracket_grid`
    made the rows); rows that are ``None`` are listed as missing. ``option``: ``path`` is a
    user's file named by this option (``--plot``): what is there is replaced only if boundlab
    wrote it (:func:`verify.figures.save`). Returns the file named by ``path`` (the PNG when
    ``path`` has neither suffix)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .style import A4_WIDTH, frame_verdict, integer_axes, save, style, suptitle

    requested = requested if requested is not None else getattr(rows, "requested", None)
    rows = list(rows)
    missing = _missing(rows, requested)
    rows = [r for r in rows if r is not None]
    if not rows:
        raise ValueError("no brackets to plot")
    xs = [r["params"][vary] for r in rows]
    states = [point_state(r) for r in rows]
    verdict = figure_verdict(states)
    with style():
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(A4_WIDTH * 0.8, 6.0), sharex=True)
        _values_panel(ax1, xs, rows, states)
        _ratio_panel(ax2, xs, rows, states)
        ax2.set_xlabel(param_label(vary))
        for ax in (ax1, ax2):
            frame_verdict(ax, verdict)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        suptitle(fig, title or _title(rows[0], vary, _summary(xs, states, vary)))
        _missing_note(fig, missing, vary)
        fig.data_verdicts, fig.missing_points = set(states), list(missing)
        integer_axes(fig)
        path = pathlib.Path(path)
        png = save(fig, path, option=option)  # closes the figure
    return path if path.suffix == ".svg" else png


def _missing(rows, requested) -> list:
    """The requested values without a bracket (their count as strings when not known)."""
    gone = [i for i, r in enumerate(rows) if r is None]
    if requested is not None and len(requested) == len(rows):
        return [requested[i] for i in gone]
    return [f"point {i + 1} of {len(rows)}" for i in gone]


def _missing_note(fig, missing, vary) -> None:
    if not missing:
        return
    from .style import case_words

    values = ", ".join(f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in missing)
    symbol = case_words(f"{vary}=x")[:-4]
    fig.text(0.02, 0.0, f"Requested but not plotted (no bracket: not solved or not in the "
             f"cache): {symbol} = {values}", fontsize=8, ha="left", va="top", wrap=True,
             color="tab:brown")


def _summary(xs, states, vary) -> str:
    """'holds at every τ', or each state with the points where it is."""
    from .style import case_words

    symbol = case_words(f"{vary}=x")[:-4]
    if len(set(states)) == 1:
        return f"{_STATE_WORDS[states[0]]} at every {symbol}"
    parts = []
    for s in dict.fromkeys(states):
        at = ", ".join(f"{x:g}" for x, st in zip(xs, states) if st == s)
        parts.append(f"{_STATE_WORDS[s]} at {symbol} = {at}")
    return "; ".join(parts)


def _values_panel(ax, xs, rows, states) -> None:
    ax.plot(xs, [r["bound_value"] for r in rows], "k-o", ms=3, label="bound B")
    ax.plot(xs, [_nan(r["worst_case_upper"]) for r in rows], "C0-s", ms=3,
            label="PEP worst case,\nupper UB")
    ax.plot(xs, [_nan(r["worst_case_lower"]) for r in rows], "C1--^", ms=3,
            label="PEP worst case,\nlower LB")
    if any(r.get("lower_in_bound_class") is not None for r in rows):
        ax.plot(xs, [_nan(r.get("lower_in_bound_class")) for r in rows], "C2:",
                label="instance in the\nbound's class")
    _mark_inaccurate(ax, xs, [_nan(r["worst_case_upper"]) for r in rows], states)
    ax.set_yscale("log")
    ax.set_ylabel("value of the measured quantity")


def _ratio_panel(ax, xs, rows, states) -> None:
    hi = [_nan(r["ratio_hi"]) for r in rows]
    lo = [_nan(r["ratio_lo"]) for r in rows]
    ax.plot(xs, hi, "C0-s", ms=3, label="UB/B: PEP upper")
    ax.plot(xs, lo, "C1--^", ms=3, label="LB/B: PEP lower")
    ok = [s != "inaccurate" for s in states]
    if any(a and b for a, b in zip(ok, ok[1:])):  # two neighbours to fill between
        ax.fill_between(xs, lo, hi, where=ok, color="C0", alpha=0.15, lw=0,
                        label="bracket of\nworst case / B")
    ax.axhline(1.0, color="k", lw=0.8, label="1: tight\n(> 1 violated)")
    _mark_inaccurate(ax, xs, hi, states)
    ax.set_yscale("log")
    ax.set_ylabel("worst case / bound B")


def _mark_inaccurate(ax, xs, ys, states) -> None:
    """Hollow rings on the points whose solve was inaccurate (no verdict there)."""
    pts = [(x, y) for x, y, s in zip(xs, ys, states) if s == "inaccurate" and y == y]
    if pts:
        from .style import VERDICT_COLORS

        ax.plot(*zip(*pts), "o", ms=9, mfc="none", mec=VERDICT_COLORS["inaccurate"], mew=1.4,
                ls="none", label="inaccurate solve:\nno verdict there")


def param_label(vary) -> str:
    """The varied parameter in words and its symbol (never a doc string)."""
    from .style import PARAM_WORDS, case_words

    return PARAM_WORDS.get(vary, case_words(f"{vary}=x")[:-4])


def _title(r0, vary, summary) -> str:
    import boundlab

    from .style import scrub, source_words

    fixed = ", ".join(f"{k} = {v:g}" for k, v in r0["params"].items()
                      if k != vary and isinstance(v, (int, float)))
    rel = "exact class" if r0["exact"] else "relaxed: " + "; ".join(r0["relaxed"])
    if r0.get("scope"):
        rel += "; scope: " + "; ".join(r0["scope"])
    return scrub(f"{source_words(boundlab.get(r0['bound_id']).source)}: PEP tightness "
                 f"({summary}) at {fixed}; {rel}")


def _nan(v):
    """Value for a log axis: missing or non-positive (solver noise around 0) -> NaN."""
    return float("nan") if v is None or v <= 0 else v
