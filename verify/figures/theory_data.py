"""The data side of :func:`verify.figures.theory_vs_measured`: checks of the table, the running
averages of a time-averaged bound, means and bands over seeds, and the axis scale.

>>> import pandas as pd
>>> df = pd.DataFrame({"round": [1, 1, 2, 2], "seed": [0, 1, 0, 1], "gap": [1.0, 1.0, .5, .5]})
>>> xs, mean, half = band(df, "round", "gap", 0.95)
>>> mean.tolist(), half.tolist()
([1.0, 0.5], [0.0, 0.0])
>>> seeds_vary(df, "round", "gap")
False
"""

from __future__ import annotations

import warnings

import numpy as np

from boundlab.errors import DomainError

__all__ = ["RUNNING", "LOG_SPAN", "band", "given_band", "running", "check_single_setting",
           "zero_terms", "seeds_vary", "scale_of", "id_column"]

#: time-averaged measured quantity -> the per-round column it averages over rounds t < T
RUNNING = {"avg_shadow_gap": "shadow_gap", "avg_grad_norm2": "grad_norm2",
           "avg_grad_norm2_virtual": "grad_norm2_virtual"}
#: above this max/min ratio of the curves, ``yscale="auto"`` draws a log axis
LOG_SPAN = 100.0


def check_single_setting(data, x, keys) -> None:
    """Every grid name of a sweep besides ``x`` and the panel / overlay ``keys`` has one
    value (else two settings would be averaged into one curve)."""
    grid = list((data.attrs.get("sweep") or {}).get("points", [{}])[0])
    mixed = [g for g in grid if g not in (x, *keys) and data[g].nunique(dropna=False) > 1]
    if mixed:
        raise DomainError("facet", keys[0] if len(keys) == 1 else list(keys),
                          "the grid names that vary besides x (facet or overlay)",
                          f"{', '.join(mixed)} also vary: select one value of them first, "
                          "or facet / overlay them")


def running(frame, x, measured, keys=()):
    """A time-averaged bound judged on its last round only, plotted against rounds: its
    measured running average and its bound (and terms) at every T. Other tables unchanged."""
    pre = "param_" if "param_T" in frame.columns else "rhs_"  # rhs_: an older frame
    if x != "round" or measured != "measured" or f"{pre}T" not in frame.columns:
        return frame
    lhs = frame["lhs"].dropna() if "lhs" in frame.columns else frame.iloc[:0, :0]
    judged = frame.dropna(subset=["measured"])
    per_round = None
    if len(lhs) and len(judged):  # the quantity the bound's algorithm measures (PAPER_LHS)
        from ..check.lhs import measured_name

        per_round = RUNNING.get(measured_name(lhs.iloc[0], judged[id_column(frame)].iloc[0]))
    if per_round not in frame.columns or judged[x].nunique() > 1:
        if len(judged) and judged.groupby(list(keys) or "seed")[x].nunique().max() == 1:
            warnings.warn("theory_vs_measured: one point per panel against rounds", stacklevel=3)
        return frame
    import boundlab

    bound = boundlab.get(judged[id_column(frame)].iloc[0])
    keys = [*keys, "seed"]
    parts = [running_group(rows, judged, keys, per_round, bound, pre)
             for _, rows in frame.groupby(keys, sort=False)]
    import pandas as pd

    out = pd.concat([p for p in parts if p is not None], ignore_index=True)
    out.attrs["x_is_T"] = True  # x is the horizon T of the average, not a round t
    return out


def id_column(frame) -> str:
    """The bound id's column: ``bound_id`` (:mod:`verify.schema`), or ``bound`` in an older
    frame."""
    return "bound_id" if "bound_id" in frame.columns else "bound"


def running_group(rows, judged, keys, per_round, bound, pre="param_"):
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
    out.update(round=T, measured=running, bound_id=last[id_column(judged)], lhs=last["lhs"],
               verdict=last["verdict"], bound_value=bound.evaluate(**params) + 0 * T)
    for name, v in bound.evaluate_terms(**params).items():
        out[f"term_{name}"] = np.broadcast_to(np.asarray(v, dtype=float), T.shape)
    import pandas as pd

    return pd.DataFrame(out)


def band(sub, x, col, level):
    """Mean of ``col`` over seeds at each ``x`` and the half-width of its ``level`` t-interval
    (0 where the seeds agree)."""
    from scipy import stats

    g = sub.groupby(x, sort=True)[col]
    mean, sd, n = g.mean(), g.std(ddof=1).fillna(0.0), g.count()
    half = stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(n)
    return mean.index.to_numpy(dtype=float), mean.to_numpy(), half.to_numpy()


def given_band(sub, x):
    """A band the table gives itself (``band_lo`` / ``band_hi``), averaged at each ``x``."""
    if not {"band_lo", "band_hi"} <= set(sub.columns) or sub["band_hi"].isna().all():
        return None
    g = sub.groupby(x, sort=True)
    return g["band_lo"].mean().to_numpy(), g["band_hi"].mean().to_numpy()


def zero_terms(groups) -> set:
    """Terms that are 0 over every panel (drawn nowhere, named in the legend's title)."""
    cols = {c for sub in groups for c in sub.columns
            if c.startswith("term_") and sub[c].notna().any()}
    return {c for c in cols if all(not (sub[c].fillna(0) != 0).any() for sub in groups)}




def seeds_vary(sub, x, col) -> bool:
    """Whether the runs over seeds differ anywhere (a band over seeds shows something)."""
    if sub["seed"].nunique() < 2:
        return False
    spread = sub.groupby(x)[col].agg(lambda v: np.nanmax(v) - np.nanmin(v))
    scale = np.nanmax(np.abs(sub[col].to_numpy(dtype=float)), initial=0.0)
    return bool(np.any(spread.to_numpy(dtype=float) > 1e-12 * max(scale, 1e-300)))


def scale_of(data, measured, yscale, zero=frozenset()) -> str:
    """``linear``, ``log`` or ``signed`` (a log axis of ``|value|``, negative values marked:
    a term <= 0 somewhere; never a symmetric-log axis, which flattens the data near 0)."""
    terms = [c for c in data.columns if c.startswith("term_") and c not in zero]
    tvals = data[terms].to_numpy(dtype=float) if terms else np.zeros(0)
    negative = bool(np.any(tvals[np.isfinite(tvals)] <= 0))
    if yscale in ("log", "symlog"):
        return "signed" if negative or yscale == "symlog" else "log"
    if yscale != "auto":
        return yscale
    cols = [measured] + (["bound_value"] if "bound_value" in data.columns else [])
    vals = data[cols].to_numpy(dtype=float)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0 or np.any(vals <= 0) or vals.max() / vals.min() <= LOG_SPAN:
        return "linear"
    return "signed" if negative else "log"
