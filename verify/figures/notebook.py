"""What a notebook needs from the house style: :func:`show` a figure under any backend, and
:func:`interpret` a table of judged results as sentences a reader can quote.

Example
-------
>>> import pandas as pd
>>> df = pd.DataFrame({"bound": "drift.fedavg_convex", "local_steps": [10, 50, 300],
...                    "measured": [0.1, 0.01, 0.001], "bound_value": [5.0, 20.0, 90.0],
...                    "verdict": "holds", "term_init": [4.0, 1.0, 0.5],
...                    "term_drift_het": [1.0, 19.0, 89.5]})
>>> print(interpret(df, x="local_steps"))  # doctest: +NORMALIZE_WHITESPACE
Dhasade et al. (DKR), Theorem 2.1 holds on all 3 runs. It is very loose: the bound is 50
to 9e+04 times the measured value. The client drift (heterogeneity) term dominates on 2 of 3
runs. From τ = 50 on the bound is vacuous (more than 1e+03 times the measured value).
"""

from __future__ import annotations

import io
import re

import numpy as np

from .style import VERDICT_WORDS, scrub, source_words, term_words

__all__ = ["show", "interpret", "VACUOUS"]

#: a bound more than this many times the measured value (the ratio measured / bound of
#: :mod:`verify.schema` below 1 / VACUOUS) says nothing useful: vacuous
VACUOUS = 1e3
_SYMBOLS = {"local_steps": "\u03c4", "tau": "\u03c4", "lr": "\u03b7", "eta": "\u03b7",
            "rounds": "T", "round": "T", "T": "T", "K": "K", "n_clients": "N"}


def show(fig, *, dpi: int = 110) -> None:
    """Display ``fig`` as a PNG in a notebook and close it, under any matplotlib backend
    (under a non-interactive one such as Agg a figure does not show itself). The figure goes
    through the figure lint's hook first (:func:`verify.figures.lint.record`)."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    from .lint import record
    from .style import integer_axes

    try:
        integer_axes(fig)
        record(fig, fig.get_suptitle()[:60] or "notebook figure")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    display(Image(buf.getvalue()))


def _judged(frame):
    cols = {"measured", "bound_value", "verdict"}
    missing = cols - set(frame.columns)
    if missing:
        from boundlab.errors import DomainError

        raise DomainError("frame", f"a table without {', '.join(sorted(missing))}",
                          "a results table with measured, bound_value and verdict columns")
    rows = frame.dropna(subset=["measured", "bound_value", "verdict"])
    return rows.assign(_loose=rows["bound_value"].to_numpy(float)
                       / rows["measured"].to_numpy(float))


def _name(rows) -> str:
    col = "bound_id" if "bound_id" in rows.columns else "bound"
    ids = rows[col].dropna().unique() if col in rows.columns else []
    if len(ids) != 1 or not isinstance(ids[0], str):
        return "The bound"
    try:
        import boundlab

        source = boundlab.get(ids[0]).source.split(" = ")[0]
    except Exception:  # noqa: BLE001 - a user bound no longer registered
        return "The bound"
    # a long parenthetical (other numberings) goes; '(corrected)', 'eq. (3)' stay
    parts = [re.sub(r" \((?=[^()]{12,}|[^()]*\().*$", "", p) for p in source.split(", ")[:2]]
    return scrub(source_words(", ".join(parts)))


def _holds(rows, unit) -> str:
    n = len(rows)
    counts = rows["verdict"].value_counts()
    if counts.get("holds", 0) == n:
        return f"holds on all {n} {unit}" if n > 1 else "holds"
    parts = [f"{k} of {n}: {VERDICT_WORDS.get(v, v)}" for v, k in counts.items() if v != "holds"]
    head = "is VIOLATED" if "VIOLATED" in counts else "does not hold everywhere"
    return f"{head} ({'; '.join(parts)})"


def _loose(rows) -> str:
    r = rows["_loose"].to_numpy(float)
    r = r[np.isfinite(r) & (r > 0)]
    if r.size == 0:
        return ""
    if r.max() < 1:
        return f"The measured value exceeds the bound by up to {1 / r.min():.3g} times."
    word = "tight" if r.max() <= 2 else "loose" if r.max() <= VACUOUS else "very loose"
    span = f"{r.min():.2g}" if np.isclose(r.min(), r.max(), rtol=0.05) else (
        f"{r.min():.2g} to {r.max():.2g}")
    return f"It is {word}: the bound is {span} times the measured value."


def _dominant(rows, unit) -> str:
    terms = [c for c in rows.columns if c.startswith("term_") and rows[c].notna().any()]
    if not terms:
        return ""
    top = rows[terms].abs().fillna(-np.inf).idxmax(axis=1).str.removeprefix("term_")
    name, k = top.value_counts().index[0], int(top.value_counts().iloc[0])
    where = "everywhere" if k == len(top) else f"on {k} of {len(top)} {unit}"
    words = term_words(name).removesuffix(" term")
    return f"The {words} term dominates {where}."


def _vacuous(rows, x) -> str:
    if x is None or x not in rows.columns:
        return ""
    worst = rows.groupby(x)["_loose"].max().sort_index()
    over = worst > VACUOUS
    symbol = _SYMBOLS.get(x, scrub(x))
    if not over.any():
        return f"It is not vacuous anywhere on this grid (at most {worst.max():.2g} times)."
    first = next(v for i, v in enumerate(worst.index) if over.iloc[i:].all()) \
        if over.iloc[-1] else None
    if first is None:
        return (f"It is vacuous (more than {VACUOUS:.0e} times the measured value) at "
                + ", ".join(f"{symbol} = {v:g}" for v in worst.index[over]) + ".")
    return (f"From {symbol} = {first:g} on the bound is vacuous (more than {VACUOUS:.0e} "
            "times the measured value).")


def interpret(frame, x: str | None = None, *, name: str | None = None,
              unit: str = "runs") -> str:
    """The finding of a results table in words, computed from it: whether the bound holds,
    how loose it is (in words, "the bound is N times the measured value": N = 1 / ratio, the
    ratio measured / bound of :mod:`verify.schema`), which term dominates (by name in words),
    and, with ``x`` (a column of the grid, e.g. ``"local_steps"``), from which value on the
    bound is vacuous (more than :data:`VACUOUS` times the measured value from there on).
    ``name`` names the bound (default: its paper and statement, from the table's bound id);
    ``unit`` what a row is (``"runs"``, ``"rounds"``, ...).

    ``frame`` needs ``measured``, ``bound_value`` and ``verdict`` columns (a
    :func:`verify.check` / :func:`verify.sweep` table); rows without a judgement are skipped.
    """
    rows = _judged(frame)
    if rows.empty:
        return "No run was judged: the table has no row with a measured value and a bound."
    parts = [f"{name or _name(rows)} {_holds(rows, unit)}.", _loose(rows),
             _dominant(rows, unit), _vacuous(rows, x)]
    return " ".join(p for p in parts if p)
