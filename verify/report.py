"""The verify report: a rich table for the terminal, ``report.md``, ``results.csv``, figures.

The files form one output set, swapped in whole (:func:`boundlab.io.output_set`): a reader or
an interrupted run sees the old set or the new one, never a mix. ``to_json`` is strict JSON.

Example
-------
>>> import pathlib, tempfile, numpy as np, boundlab
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), np.array([0.01, 0.02]), problem="toy",
...             params=dict(eta=0.2, tau=10, L=0.2, zeta=0.43))
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

from ._tables import FAILING, _fmt, markdown_tables, print_tables
from .plots import figure_list

__all__ = ["write_report", "check_output_path", "print_table", "to_json", "summary_counts",
           "exit_status"]


def summary_counts(results) -> dict[str, int]:
    """Verdict -> count.

    >>> summary_counts([])
    {}
    """
    return dict(Counter(r.verdict for r in results))


def exit_status(results) -> int:
    """1 when a bound check is VIOLATED (on a fixed toy or on a worst instance found), a claim
    is refuted, or a check errored; else 0.

    >>> exit_status([])
    0
    """
    return int(any(r.verdict in FAILING for r in results))


def print_table(results, console=None) -> None:
    """The terminal tables: bound checks, claims, and how informative each "holds" is."""
    from rich.console import Console

    console = console or Console(width=170)
    print_tables(results, console)
    counts = ", ".join(f"{v}: {n}" for v, n in summary_counts(results).items())
    console.print(f"{len(results)} results — {counts}")


def to_json(results) -> str:
    """All results as strict JSON (series omitted): a non-finite number is ``null`` with a
    sibling ``"<key>_status"`` (``"nan"``, ``"inf"`` or ``"-inf"``), see
    :func:`boundlab.io.json_safe`."""
    from boundlab.io import dumps_strict

    rows = []
    for r in results:
        d = r.row()
        for key in ("seeds", "setting", "terms", "constants", "preconditions_checked",
                    "preconditions_violated", "tightness"):
            d[key] = json.loads(d[key])
        rows.append(d)
    return dumps_strict(rows, indent=1, default=float)


def _details(r) -> list[str]:
    lines = [f"### {r.check} {r.case} — `{r.bound_id or '-'}` — **{r.verdict}**", "",
             f"- paper: {r.paper}",
             f"- problem: {r.problem}; setting: `{json.dumps(r.setting, default=str)}`"]
    if r.kind == "claim":
        lines.append(f"- claim: {r.statement}; statistic {_fmt(r.statistic, 4)}"
                     + ("" if math.isnan(r.statistic_lo) else
                        f" (95 % interval [{_fmt(r.statistic_lo, 4)}, {_fmt(r.statistic_hi, 4)}])")
                     + f", threshold {_fmt(r.threshold, 4)}: **{r.verdict}**")
    else:
        lines.append(f"- measured: {_fmt(r.measured, 4)} (95 % CI [{_fmt(r.measured_lo, 4)}, "
                     f"{_fmt(r.measured_hi, 4)}], {r.n_seeds} seed(s), "
                     f"{r.effective_samples} effective); bound: {_fmt(r.bound, 4)}; "
                     f"ratio bound/measured: {_fmt(r.ratio, 4)}")
    if r.reason:
        lines.append(f"- reason: {r.reason}")
    if r.worst:
        lines.append(f"- worst-instance search: max LHS/RHS {_fmt(r.worst_ratio, 4)} over "
                     f"{r.worst.get('evaluations')} instances of {r.worst.get('family')}"
                     + (f"; instance saved: `{r.worst['path']}`" if r.worst.get("path") else ""))
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


def save_worst_instances(results, out_dir) -> list[str]:
    """Write the instance of every worst-instance row whose bound it VIOLATES to
    ``out_dir/worst/<bound id>.json`` (replay with :func:`verify.worst.replay`); returns the
    paths relative to ``out_dir``."""
    out = pathlib.Path(out_dir)
    saved = []
    for r in results:
        rec = (r.worst or {}).get("record")
        if r.verdict != "VIOLATED" or not rec:
            continue
        rel = f"worst/{r.bound_id}.json"
        (out / "worst").mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / rel, json.dumps(rec, indent=1) + "\n")
        r.worst["path"] = rel
        saved.append(rel)
    return saved


def write_report(results, out_dir, *, title: str = "boundlab verify report",
                 settings: dict | None = None) -> pathlib.Path:
    """Write ``report.md``, ``results.csv``, figures (and worst instances) as one output set:
    everything goes into a staging directory that then replaces ``out_dir`` whole
    (:func:`boundlab.io.output_set`), so a reader, or a run killed mid-write, sees the old set
    or the new one, never a mix, and no figure of an older run survives. ``out_dir`` must be
    new, empty or a previous ``boundlab verify`` output whose manifest lists every file in it
    (checked first: :func:`check_output_path`); anything else is refused, never deleted.
    Returns ``out_dir`` as a path."""
    from boundlab.io import output_set

    with output_set(out_dir, name="out", kind="verify") as stage:
        _write_set(results, stage, title=title, settings=settings)
    return pathlib.Path(out_dir)


def check_output_path(out_dir, name: str = "--out") -> pathlib.Path:
    """Refuse an output directory that cannot be written, before any work (see
    :func:`boundlab.io.check_output_dir`).

    >>> check_output_path("")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: --out = '' is outside its domain: an output directory (empty path)
    """
    from boundlab.io import check_output_dir

    return check_output_dir(out_dir, name, "verify")


def _write_set(results, out: pathlib.Path, *, title: str, settings: dict | None) -> None:
    """The files of one report, written into ``out`` (a staging directory)."""
    import pandas as pd

    figs = figure_list(results, out / "figures")
    saved = save_worst_instances(results, out)
    frame = pd.DataFrame([r.row() for r in results])
    atomic_write_text(out / "results.csv", frame.to_csv(index=False))
    counts = summary_counts(results)
    md = [f"# {title}", ""]
    if settings:
        md += [f"Settings: `{json.dumps(settings, default=str)}`", ""]
    md += ["Verdicts: " + ", ".join(f"**{v}** {n}" for v, n in counts.items()), "",
           "`order-only`: an O(.) statement, shown, never judged. Exit status 1 when a bound "
           "check is VIOLATED, a claim is refuted or a check errored.", ""]
    md += markdown_tables(results)
    if saved:
        md += ["Worst instances that violate their bound (replay with "
               "`verify.worst.replay(PATH)`): " + ", ".join(f"`{p}`" for p in saved), ""]
    md += ["", "## Figures", "", "Each figure is a 300 dpi PNG with an SVG twin "
           "(`figures/<name>.svg`).", ""]
    for p, caption in figs:
        md += [f"![{p.stem}](figures/{p.name})", "", f"*{p.name}* — {caption}", ""]
    md += ["", "## Details", ""]
    for r in results:
        md += _details(r)
    atomic_write_text(out / "report.md", "\n".join(md) + "\n")
