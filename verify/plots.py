"""Figures of the verify report, drawn from the ``series`` that checks attach to their results.

Series kinds (a check sets ``result.series = {"kind": ..., ...}``):

* ``curve`` — ``x``, ``measured`` (per round), ``bound`` (per round) and optional ``terms``
  (name -> per-round array, stacked): theory vs measured on a log scale;
* ``ushape`` — ``K``, ``measured``, ``bound``: FedAU's bias-variance U-shape in the cutoff K;
* ``contraction`` — ``rounds``, ``curves`` (name -> gap per round), ``factors`` (name -> rate);
* ``alpha_vs_p`` — ``t`` and ``err`` (||alpha_t - p||_1), or ``alpha`` (rounds x N) and ``p``;
* ``search`` — ``trace``: LHS / RHS of every instance a worst-instance search evaluated.

Every figure is coloured by its result's verdict (green holds / supported, red VIOLATED /
refuted, grey not-applicable, ...): the verdict's colour frames the axes and names the verdict
in the title; the bar chart of ratios shows bound checks only, each bar in its verdict's colour.

Example
-------
>>> import pathlib, tempfile, numpy as np
>>> from verify.compare import CheckResult
>>> r = CheckResult("c", "drift.plateau", "seed 004", "toy", "holds", ratio=2.0)
>>> r.series = {"kind": "curve", "x": np.arange(1, 5), "measured": np.ones(4),
...             "bound": 2 * np.ones(4)}
>>> [p.name for p in figures([r], pathlib.Path(tempfile.mkdtemp()))]
['curve_c.png', 'tightness_ratios.png']
"""

from __future__ import annotations

import pathlib
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from boundlab.io import atomic_savefig  # noqa: E402

from ._theory_plot import theory_vs_measured  # noqa: E402

__all__ = ["figures", "theory_vs_measured"]

_COLORS = {"holds": "tab:green", "VIOLATED": "tab:red", "not-applicable": "tab:gray",
           "order-only": "tab:blue", "diverged": "tab:orange", "error": "black",
           "supported": "tab:green", "refuted": "tab:red", "inconclusive": "tab:orange"}


def _mark(ax, r, title: str) -> None:
    """Title with the verdict, axes framed in the verdict's colour."""
    color = _COLORS.get(r.verdict, "black")
    ax.set_title(f"{title}\n[{r.verdict}]", fontsize=9, color=color)
    for side in ax.spines.values():
        side.set_edgecolor(color)
        side.set_linewidth(2.0)


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s).strip("_")[:80]


def _save(fig, path: pathlib.Path) -> pathlib.Path:
    fig.tight_layout()
    atomic_savefig(fig, path, dpi=110)
    plt.close(fig)
    return path


def _curve(r, out: pathlib.Path) -> pathlib.Path:
    s = r.series
    x = np.asarray(s["x"], dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    terms = s.get("terms") or {}
    if terms:
        vals = [np.broadcast_to(np.asarray(v, dtype=float), x.shape) for v in terms.values()]
        ax.stackplot(x, *[np.clip(v, 1e-300, None) for v in vals], labels=list(terms),
                     alpha=0.35)
    if s.get("bound") is not None:
        ax.plot(x, np.broadcast_to(np.asarray(s["bound"], dtype=float), x.shape), "k-", lw=2,
                label=f"bound {r.bound_id}")
    m = np.asarray(s["measured"], dtype=float)
    ax.plot(x, m, "C3-", lw=1.6, label="measured")
    if s.get("measured_hi") is not None:
        ax.fill_between(x, s.get("measured_lo", m), s["measured_hi"], color="C3", alpha=0.2)
    ax.set_yscale("log")
    ax.set_xlabel(s.get("xlabel", "round"))
    ax.set_ylabel(s.get("ylabel", r.bound_id))
    _mark(ax, r, s.get("title", f"{r.check} {r.case}"))
    ax.legend(fontsize=7)
    return _save(fig, out / f"curve_{_slug(r.check + '_' + r.case)}.png")


def _ushape(r, out: pathlib.Path) -> pathlib.Path:
    s = r.series
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    K = np.asarray(s["K"], dtype=float)
    ax.plot(K, s["measured"], "C3o-", label="measured (1/(NT)) sum E[(p w - 1)^2]")
    ax.plot(K, s["bound"], "k.-", label="bound (B.6.9), averaged over clients")
    for key, style in (("argmin_measured", "C3"), ("argmin_bound", "k")):
        if key in s:
            ax.axvline(s[key], color=style, ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cutoff K")
    ax.set_ylabel("weight error")
    _mark(ax, r, s.get("title", r.check))
    ax.legend(fontsize=7)
    return _save(fig, out / f"ushape_{_slug(r.check + '_' + r.case)}.png")


def _contraction(r, out: pathlib.Path) -> pathlib.Path:
    s = r.series
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    t = np.asarray(s["rounds"], dtype=float)
    for i, (name, gap) in enumerate(s["curves"].items()):
        ax.plot(t, gap, color=f"C{i}", label=f"{name} (measured)")
        q = (s.get("factors") or {}).get(name)
        if q is not None and len(gap):
            ax.plot(t, gap[0] * q ** (t - t[0]), color=f"C{i}", ls="--", lw=1,
                    label=f"{name}: factor {q:.4f}^t")
    ax.set_yscale("log")
    ax.set_xlabel("round")
    ax.set_ylabel("f(w_t) - f*")
    _mark(ax, r, s.get("title", r.check))
    ax.legend(fontsize=7)
    return _save(fig, out / f"contraction_{_slug(r.check + '_' + r.case)}.png")


def _alpha(r, out: pathlib.Path) -> pathlib.Path:
    s = r.series
    if "err" in s:
        err = np.asarray(s["err"], dtype=float)
    else:
        alpha, p = np.asarray(s["alpha"], dtype=float), np.asarray(s["p"], dtype=float)
        err = np.abs(alpha - p[None, :]).sum(axis=1)
    t = np.asarray(s.get("t", np.arange(1, err.size + 1)), dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(t, err, "C0-", label="||alpha_t - p||_1")
    ax.plot(t, err[0] * t[0] / t, "k:", lw=1, label="rate 1/t")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(s.get("xlabel", "round"))
    ax.set_ylabel("distance to p")
    _mark(ax, r, s.get("title", r.check))
    ax.legend(fontsize=7)
    return _save(fig, out / f"alpha_vs_p_{_slug(r.check + '_' + r.case)}.png")


def _search(r, out: pathlib.Path) -> pathlib.Path:
    s = r.series
    tr = np.asarray(s["trace"], dtype=float)
    ok = np.isfinite(tr) & (tr > 0)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    k = np.arange(1, tr.size + 1)
    ax.plot(k[ok], tr[ok], ".", color="0.6", ms=3, label="instance evaluated")
    best = np.maximum.accumulate(np.where(ok, tr, 0.0))
    ax.plot(k[best > 0], best[best > 0], "-", color=_COLORS.get(r.verdict, "k"),
            label="worst so far")
    ax.axhline(1.0, color="k", lw=1, label="LHS = RHS")
    ax.set_yscale("log")
    ax.set_xlabel("instance evaluated")
    ax.set_ylabel("measured LHS / RHS (> 1 = violated)")
    _mark(ax, r, s.get("title", r.check))
    ax.legend(fontsize=7)
    return _save(fig, out / f"search_{_slug(r.check + '_' + r.case)}.png")


_DRAW = {"curve": _curve, "ushape": _ushape, "contraction": _contraction, "alpha_vs_p": _alpha,
         "search": _search}


def _ratios(results, out: pathlib.Path) -> pathlib.Path | None:
    rows = [r for r in results if getattr(r, "kind", "bound") == "bound"
            and np.isfinite(r.ratio) and r.ratio > 0]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(rows) + 1.5))
    y = np.arange(len(rows))
    ax.barh(y, [r.ratio for r in rows], color=[_COLORS.get(r.verdict, "k") for r in rows])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_yticks(y, [f"{r.check} {r.case}".strip() for r in rows], fontsize=6)
    ax.set_xscale("log")
    ax.set_xlabel("bound / measured (1 = tight; < 1 = violated); colour = verdict")
    ax.set_title("bound checks: bound / measured, coloured by verdict", fontsize=9)
    from matplotlib.patches import Patch

    seen = sorted({r.verdict for r in rows})
    ax.legend(handles=[Patch(color=_COLORS.get(v, "k"), label=v) for v in seen], fontsize=7)
    return _save(fig, out / "tightness_ratios.png")


def figures(results, out_dir) -> list[pathlib.Path]:
    """Draw every figure the results ask for into ``out_dir``; returns the paths written."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in results:
        kind = (r.series or {}).get("kind")
        if kind in _DRAW:
            try:
                paths.append(_DRAW[kind](r, out))
            except Exception as exc:  # noqa: BLE001 - a bad figure must not lose the report
                r.note = (r.note + f" [figure failed: {exc}]").strip()
    p = _ratios(results, out)
    if p is not None:
        paths.append(p)
    return paths
