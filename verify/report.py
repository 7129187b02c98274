"""The verify report: a rich table for the terminal, ``report.md``, ``results.csv``, figures.

Every file is written atomically (temporary file, then rename).

Example
-------
>>> import pathlib, tempfile, numpy as np, boundlab
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.02]), 2.27, problem="toy")
>>> out = write_report([r], pathlib.Path(tempfile.mkdtemp()))
>>> sorted(p.name for p in out.iterdir() if p.suffix in (".md", ".csv"))
['report.md', 'results.csv']
"""

from __future__ import annotations

import json
import math
import pathlib
from collections import Counter

from boundlab.io import atomic_write_text

from .plots import figures

__all__ = ["write_report", "print_table", "to_json", "summary_counts", "exit_status"]


def _fmt(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float):
        if x == 0:
            return "0"
        if math.isinf(x):
            return "inf"
        return f"{x:.{digits}g}"
    return str(x)


def summary_counts(results) -> dict[str, int]:
    """Verdict -> count.

    >>> summary_counts([])
    {}
    """
    return dict(Counter(r.verdict for r in results))


def exit_status(results) -> int:
    """1 when any check is VIOLATED or errored, else 0.

    >>> exit_status([])
    0
    """
    return int(any(r.verdict in ("VIOLATED", "error") for r in results))


def _tight(r) -> str:
    t = r.tightness or {}
    if not t:
        return "—"
    if "ratio_low" in t:
        return f"[{_fmt(t.get('ratio_low'))}, {_fmt(t.get('ratio_high'))}]"
    return str(t.get("status", "—"))


def print_table(results, console=None) -> None:
    """The terminal table: bound, paper, measured, bound value, ratio, verdict."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=170)
    table = Table(title="boundlab verify")
    for col in ("check", "bound", "paper", "problem", "measured", "bound value", "ratio",
                "tightness (PEP)", "verdict"):
        table.add_column(col, overflow="fold")
    style = {"holds": "green", "VIOLATED": "bold red", "not-applicable": "dim",
             "order-only": "blue", "diverged": "yellow", "error": "bold magenta"}
    for r in results:
        table.add_row(r.check, r.bound_id, r.paper.split(",")[0], r.problem, _fmt(r.measured),
                      _fmt(r.bound), _fmt(r.ratio), _tight(r),
                      f"[{style.get(r.verdict, '')}]{r.verdict}[/]")
    console.print(table)
    counts = ", ".join(f"{v}: {n}" for v, n in summary_counts(results).items())
    console.print(f"{len(results)} results — {counts}")


def to_json(results) -> str:
    """All results as JSON (series omitted)."""
    rows = []
    for r in results:
        d = r.row()
        for key in ("seeds", "setting", "terms", "constants", "preconditions_checked",
                    "preconditions_violated", "tightness"):
            d[key] = json.loads(d[key])
        rows.append(d)
    return json.dumps(rows, indent=1, default=float)


def _details(r) -> list[str]:
    lines = [f"### {r.check} — `{r.bound_id}` — **{r.verdict}**", "",
             f"- paper: {r.paper}",
             f"- problem: {r.problem}; setting: `{json.dumps(r.setting, default=float)}`",
             f"- measured: {_fmt(r.measured, 4)} (95 % CI [{_fmt(r.measured_lo, 4)}, "
             f"{_fmt(r.measured_hi, 4)}], {r.n_seeds} seed(s)); bound: {_fmt(r.bound, 4)}; "
             f"ratio bound/measured: {_fmt(r.ratio, 4)}"]
    if r.terms:
        terms = ", ".join(f"{k} = {_fmt(v, 3)}" for k, v in r.terms.items())
        lines.append(f"- terms: {terms}; dominant: **{r.dominant_term}**")
    if r.constants:
        consts = "; ".join(f"{k} = {_fmt(v.get('value') if isinstance(v, dict) else v, 4)}"
                           + (f" ({v.get('how')})" if isinstance(v, dict) and v.get("how") else "")
                           for k, v in r.constants.items())
        lines.append(f"- constants: {consts}")
    if r.preconditions_checked:
        lines.append(f"- preconditions checked: {'; '.join(r.preconditions_checked)}")
    if r.preconditions_violated:
        lines.append(f"- **preconditions violated**: {'; '.join(r.preconditions_violated)}")
    if r.tightness:
        lines.append(f"- tightness (PEP): `{json.dumps(r.tightness, default=float)}`")
    if r.note:
        lines.append(f"- note: {r.note}")
    if r.error:
        lines.append(f"- error: `{r.error}`")
    return lines + [""]


def write_report(results, out_dir, *, title: str = "boundlab verify report",
                 settings: dict | None = None) -> pathlib.Path:
    """Write ``report.md``, ``results.csv`` and figures into ``out_dir``; returns the dir."""
    import pandas as pd

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = figures(results, out / "figures")
    frame = pd.DataFrame([r.row() for r in results])
    atomic_write_text(out / "results.csv", frame.to_csv(index=False))
    counts = summary_counts(results)
    md = [f"# {title}", ""]
    if settings:
        md += [f"Settings: `{json.dumps(settings, default=str)}`", ""]
    md += ["Verdicts: " + ", ".join(f"**{v}** {n}" for v, n in counts.items()), "",
           "A bound stated in expectation is judged against the upper 95 % confidence limit of "
           "the mean over seeds. `not-applicable`: a precondition fails (named below). "
           "`order-only`: an O(.) statement, shown, never judged. Ratio = bound / measured.", "",
           "| check | bound | paper | problem | measured | bound value | ratio | dominant term "
           "| tightness (PEP) | verdict |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        md.append(f"| {r.check} | `{r.bound_id}` | {r.paper.split(',')[0]} | {r.problem} | "
                  f"{_fmt(r.measured)} | {_fmt(r.bound)} | {_fmt(r.ratio)} | {r.dominant_term} | "
                  f"{_tight(r)} | **{r.verdict}** |")
    md += ["", "## Figures", ""]
    md += [f"![{p.stem}](figures/{p.name})" for p in figs]
    md += ["", "## Details", ""]
    for r in results:
        md += _details(r)
    atomic_write_text(out / "report.md", "\n".join(md) + "\n")
    return out
