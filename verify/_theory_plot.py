"""Theory vs measured from a tidy sweep table (:func:`verify.sweep`); re-exported as
:func:`verify.plots.theory_vs_measured`. Does not choose a matplotlib backend.

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

import numpy as np

from boundlab.errors import DomainError

__all__ = ["theory_vs_measured", "LABELS"]

#: column -> axis label: the quantity in words and its symbol
LABELS = {
    "round": "round t", "seed": "seed", "lr": "step size \u03b7",
    "local_steps": "local steps \u03c4", "gap": "optimality gap F(x_t) \u2212 F*",
    "loss": "loss F(x_t)", "dist2": "squared distance \u2016x_t \u2212 x*\u2016\u00b2",
    "grad_norm2": "squared gradient norm \u2016\u2207F(x_t)\u2016\u00b2",
    "shadow_gap": "shadow-sequence gap", "drift_max": "client drift (max)",
    "n_clients": "clients N", "heterogeneity": "heterogeneity",
    "batch_size": "batch size b", "prox": "proximal weight \u03b1",
}
_TERM_COLORS = ("tab:blue", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan")
_VERDICT_COLORS = {"holds": "tab:green", "VIOLATED": "tab:red", "not-applicable": "tab:gray",
                   "order-only": "tab:blue", "diverged": "tab:orange"}


def theory_vs_measured(frame, x="round", facet=None, *, measured=None, path=None,
                       level=0.95, title=None):
    """Measured curve (mean over seeds with its ``level`` confidence band), the bound and its
    named terms as lines on a log axis, one panel per value of ``facet``.

    ``frame`` is a :func:`verify.sweep` table (or any table with ``seed``, ``x``, the measured
    column and optionally ``bound_value`` / ``term_*`` / ``verdict``). ``measured`` defaults
    to the bound's ``measured`` column, else ``gap``. The measured curve is coloured by the
    panel's verdict (red if any row is VIOLATED); titles say the verdict in words; the legend
    sits outside the panels. With ``path``, writes ``<path>.png`` (300 dpi) and ``<path>.svg``
    atomically. Returns the figure.
    """
    import matplotlib.pyplot as plt

    measured = measured or ("measured" if "measured" in frame.columns else "gap")
    for col in (x, measured, "seed", *([facet] if facet else [])):
        if col not in frame.columns:
            raise DomainError("column", col, "a column of the table: "
                              + ", ".join(map(str, frame.columns)))
    data = frame[np.isfinite(frame[measured].to_numpy(dtype=float))]
    values = list(dict.fromkeys(data[facet])) if facet else [None]
    _check_single_setting(data, x, facet)
    fig, axes = plt.subplots(1, len(values), figsize=(3.6 * len(values) + 1.6, 3.4),
                             sharey=True, squeeze=False)
    for ax, v in zip(axes[0], values):
        sub = data if facet is None else data[data[facet] == v]
        verdict = _panel(ax, sub, x, measured, level)
        head = "" if facet is None else f"{LABELS.get(facet, facet)} = {v}"
        ax.set_title(": ".join(s for s in (head, verdict) if s), fontsize=10,
                     color=_VERDICT_COLORS.get(verdict, "black"))
        ax.set_xlabel(LABELS.get(x, x))
    axes[0][0].set_ylabel(_ylabel(frame, measured))
    fig.suptitle(title or _title(frame), fontsize=11)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
               frameon=False)
    fig.tight_layout()
    if path is not None:
        _save(fig, pathlib.Path(path))
    return fig


def _check_single_setting(data, x, facet) -> None:
    grid = list((data.attrs.get("sweep") or {}).get("points", [{}])[0])
    mixed = [g for g in grid if g not in (x, facet) and data[g].nunique(dropna=False) > 1]
    if mixed:
        raise DomainError("facet", facet, "the one grid name that varies besides x",
                          f"{', '.join(mixed)} also vary: select one value of them first")


def _band(sub, x, col, level):
    from scipy import stats

    g = sub.groupby(x, sort=True)[col]
    mean, sd, n = g.mean(), g.std(ddof=1).fillna(0.0), g.count()
    half = stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(n)
    return mean.index.to_numpy(dtype=float), mean.to_numpy(), half.to_numpy()


def _panel(ax, sub, x, measured, level) -> str:
    verdicts = set(sub["verdict"].dropna()) if "verdict" in sub.columns else set()
    verdict = ("VIOLATED" if "VIOLATED" in verdicts else
               next(iter(verdicts)) if len(verdicts) == 1 else
               ", ".join(sorted(verdicts)))
    color = _VERDICT_COLORS.get(verdict, "tab:purple")
    xs, m, half = _band(sub, x, measured, level)
    n = int(sub["seed"].nunique())
    ax.plot(xs, m, "-o", ms=3, color=color, lw=1.8, label=f"measured (mean of {n} seeds)")
    ax.fill_between(xs, m - half, m + half, color=color, alpha=0.25, lw=0,
                    label=f"{level:.0%} confidence band")
    if "bound_value" in sub.columns and sub["bound_value"].notna().any():
        xb, b, _ = _band(sub.dropna(subset=["bound_value"]), x, "bound_value", level)
        ax.plot(xb, b, "k-", lw=2, label="bound (right-hand side)")
        terms = [c for c in sub.columns if c.startswith("term_")]
        for i, t in enumerate(terms):
            if sub[t].notna().any():
                xt, tv, _ = _band(sub.dropna(subset=[t]), x, t, level)
                ax.plot(xt, tv, ls=(0, (4, 2)), lw=1, color=_TERM_COLORS[i % 6],
                        label=f"term: {t[5:].replace('_', ' ')}")
    if np.all(np.asarray(ax.get_lines()[0].get_ydata(), dtype=float) > 0):
        ax.set_yscale("log")  # lines only: never stacked areas on a log axis
    ax.grid(True, which="major", alpha=0.3)
    return verdict


def _ylabel(frame, measured) -> str:
    if measured == "measured" and "lhs" in frame.columns:
        from .check import LHS

        lhs = frame["lhs"].dropna().iloc[0]
        return f"{lhs.replace('_', ' ')}: {LHS[lhs].doc}" if lhs in LHS else lhs
    return LABELS.get(measured, measured)


def _title(frame) -> str:
    if "bound" in frame.columns and frame["bound"].notna().any():
        import boundlab

        b = boundlab.get(frame["bound"].dropna().iloc[0])
        return f"{b.source}: measured vs bound"
    return "measured over seeds"


def _save(fig, path: pathlib.Path) -> None:
    from boundlab.io import atomic_savefig

    stem = path.with_suffix("") if path.suffix in (".png", ".svg") else path
    for suffix in (".png", ".svg"):
        atomic_savefig(fig, stem.with_suffix(suffix), dpi=300, bbox_inches="tight")
