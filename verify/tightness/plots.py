"""Brackets as a function of one parameter: the grid and its plot (matplotlib, Agg backend).

The plot has two panels over the varied parameter: the bound ``B`` with the PEP's ``UB`` and
``LB`` (log scale), and the tightness band ``[B/UB, B/LB]``. Figures are written to a temporary
file in the target directory and renamed (atomic).

Example
-------
>>> import tempfile, pathlib
>>> from verify.tightness.plots import bracket_grid, plot_brackets
>>> rows = bracket_grid("drift.plateau", {"eta": 0.1, "L": 1.0, "zeta": 1.0}, "tau", [1, 2],
...                     cache=False)
>>> path = plot_brackets(rows, "tau", pathlib.Path(tempfile.mkdtemp()) / "plateau.png")
>>> path.exists()
True
"""

from __future__ import annotations

import os
import pathlib
import tempfile

from .brackets import bracket

__all__ = ["bracket_grid", "plot_brackets"]


def bracket_grid(bound_id, base, vary, values, *, rounds=None, cache_only=False, **kw) -> list:
    """:func:`~verify.tightness.bracket` at ``base`` with ``vary`` set to each of ``values``.

    Entries are the bracket dicts (``None`` where ``cache_only`` found no cached solution).
    """
    rows = []
    for v in values:
        rows.append(bracket(bound_id, {**base, vary: v}, rounds=rounds, cache_only=cache_only,
                            **kw))
    return rows


def plot_brackets(rows, vary, path, *, title=None) -> pathlib.Path:
    """Plot a grid of brackets (from :func:`bracket_grid`) to ``path`` (PNG/SVG by suffix)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r is not None]
    if not rows:
        raise ValueError("no brackets to plot")
    xs = [r["params"][vary] for r in rows]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.4, 6.4), sharex=True)
    ax1.plot(xs, [r["bound"] for r in rows], "k-o", label="bound B")
    ax1.plot(xs, [_nan(r["worst_case_upper"]) for r in rows], "C0-s", label="PEP upper UB")
    ax1.plot(xs, [_nan(r["worst_case_lower"]) for r in rows], "C1--^", label="PEP lower LB")
    if any(r.get("lower_in_bound_class") is not None for r in rows):
        ax1.plot(xs, [_nan(r.get("lower_in_bound_class")) for r in rows], "C2:",
                 label="instance in the bound's class")
    ax1.set_yscale("log")
    ax1.set_ylabel("value")
    ax1.legend(fontsize=8)
    lo = [_nan(r["ratio_low"]) for r in rows]
    hi = [_nan(r["ratio_high"]) for r in rows]
    ax2.plot(xs, lo, "C0-s", label="B/UB (certified looseness)")
    ax2.plot(xs, hi, "C1--^", label="B/LB")
    ax2.fill_between(xs, lo, hi, color="C0", alpha=0.15)
    ax2.axhline(1.0, color="k", lw=0.8)
    ax2.set_yscale("log")
    ax2.set_xlabel(vary)
    ax2.set_ylabel("tightness ratio")
    ax2.legend(fontsize=8)
    r0 = rows[0]
    fixed = ", ".join(f"{k}={v:g}" for k, v in r0["params"].items()
                      if k != vary and isinstance(v, (int, float)))
    rel = "exact class" if r0["exact"] else "relaxed: " + "; ".join(r0["relaxed"])
    if r0.get("scope"):
        rel += "\nscope: " + "; ".join(r0["scope"])
    ax1.set_title(title or f"{r0['id']}\n{fixed}\n{rel}", fontsize=7)
    fig.tight_layout()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix or ".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    return path


def _nan(v):
    """Value for a log axis: missing or non-positive (solver noise around 0) -> NaN."""
    return float("nan") if v is None or v <= 0 else v
