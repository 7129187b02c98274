"""The plot of PEP tightness brackets as a function of one parameter (matplotlib, Agg backend;
the house style of :mod:`verify.figures`); the grid itself is
:func:`verify.tightness.bracket_grid`.

The plot has two panels over the varied parameter: the bound ``B`` with the PEP's ``UB`` and
``LB`` (log scale), and the bracket relative to the bound, ``[LB/B, UB/B]`` (``ratio_lo``,
``ratio_hi``: the orientation measured / bound of every ratio, <= 1 holds). Like every figure,
it is written by :func:`verify.figures.save`: 300 dpi PNG and SVG, each atomically, through the
figure lint's hook.

The example (a grid solved and plotted) is in :mod:`verify.tightness.plots`.
"""

from __future__ import annotations

import pathlib

__all__ = ["plot_brackets"]


def plot_brackets(rows, vary, path, *, title=None) -> pathlib.Path:
    """Plot a grid of brackets (from :func:`bracket_grid`) to ``path`` and its sibling: 300 dpi
    PNG and SVG (``plateau.png`` or ``plateau.svg`` writes both), each atomically, through
    :func:`verify.figures.save`, in the house style: A4 text width, fonts >= 8 pt, the title
    in words (paper and theorem), the legends beside each panel, the panels framed in the
    verdict's colour (holds on the PEP class or VIOLATED). Returns the file named by ``path``
    (the PNG when ``path`` has neither suffix)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .style import A4_WIDTH, frame_verdict, save, style, suptitle

    rows = [r for r in rows if r is not None]
    if not rows:
        raise ValueError("no brackets to plot")
    xs = [r["params"][vary] for r in rows]
    verdict = ("VIOLATED" if any(not (r.get("ordering") or {}).get("holds", True) for r in rows)
               else "holds")
    with style():
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(A4_WIDTH * 0.8, 6.0), sharex=True)
        _values_panel(ax1, xs, rows)
        _ratio_panel(ax2, xs, rows)
        ax2.set_xlabel(_param_label(rows[0]["bound_id"], vary))
        for ax in (ax1, ax2):
            frame_verdict(ax, verdict)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        suptitle(fig, title or _title(rows[0], vary, verdict))
        path = pathlib.Path(path)
        png = save(fig, path)  # closes the figure
    return path if path.suffix == ".svg" else png


def _values_panel(ax, xs, rows) -> None:
    ax.plot(xs, [r["bound_value"] for r in rows], "k-o", ms=3, label="bound B")
    ax.plot(xs, [_nan(r["worst_case_upper"]) for r in rows], "C0-s", ms=3,
            label="PEP worst case,\nupper UB")
    ax.plot(xs, [_nan(r["worst_case_lower"]) for r in rows], "C1--^", ms=3,
            label="PEP worst case,\nlower LB")
    if any(r.get("lower_in_bound_class") is not None for r in rows):
        ax.plot(xs, [_nan(r.get("lower_in_bound_class")) for r in rows], "C2:",
                label="instance in the\nbound's class")
    ax.set_yscale("log")
    ax.set_ylabel("value of the measured quantity")


def _ratio_panel(ax, xs, rows) -> None:
    hi = [_nan(r["ratio_hi"]) for r in rows]
    lo = [_nan(r["ratio_lo"]) for r in rows]
    ax.plot(xs, hi, "C0-s", ms=3, label="UB/B: PEP upper")
    ax.plot(xs, lo, "C1--^", ms=3, label="LB/B: PEP lower")
    ax.fill_between(xs, lo, hi, color="C0", alpha=0.15, lw=0,
                    label="bracket of\nworst case / B")
    ax.axhline(1.0, color="k", lw=0.8, label="1: tight\n(> 1 violated)")
    ax.set_yscale("log")
    ax.set_ylabel("worst case / bound B")


def _param_label(bound_id, vary) -> str:
    import boundlab

    from .style import case_words

    doc = getattr(boundlab.get(bound_id).params.get(vary), "doc", "") or ""
    doc = doc.split(";")[0].split(" (")[0]
    symbol = case_words(f"{vary}=x")[:-4]
    return f"{doc} {symbol}".strip() if doc and len(doc) <= 40 else symbol


def _title(r0, vary, verdict) -> str:
    import boundlab

    from .style import scrub, source_words

    fixed = ", ".join(f"{k} = {v:g}" for k, v in r0["params"].items()
                      if k != vary and isinstance(v, (int, float)))
    rel = "exact class" if r0["exact"] else "relaxed: " + "; ".join(r0["relaxed"])
    if r0.get("scope"):
        rel += "; scope: " + "; ".join(r0["scope"])
    return scrub(f"{source_words(boundlab.get(r0['bound_id']).source)}: PEP tightness ({verdict}) "
                 f"at {fixed}; {rel}")


def _nan(v):
    """Value for a log axis: missing or non-positive (solver noise around 0) -> NaN."""
    return float("nan") if v is None or v <= 0 else v
