"""The verify report: a rich table for the terminal, ``report.md``, ``results.csv``, figures.

Both the terminal output and ``report.md`` open with what the run found
(:mod:`verify.report.summary`): the counts per verdict, the bounds at risk (ratio measured / bound
>= 0.1), those vacuous by more than 1e3 and the term responsible, what to run next, and the
versions (boundlab, code, python, numpy, sympy, pepit, cvxpy, the git commit where there is
one). The terminal tables fit 100 columns; the long texts (reasons, PEP commands, settings)
are in ``report.md`` only. ``results.csv`` and ``--json`` use the schema of
:mod:`verify.schema`.

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

from ..figures.report_figures import figure_list
from . import summary as _summary
from .tables import FAILING, _fmt, markdown_tables, setting_text
from .terminal import print_tables

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
    """The terminal output, 100 columns wide: the summary and versions, then the tables (bound
    checks, claims, how informative each "holds" is) with the long texts left to the report,
    then the summary's first line again."""
    import textwrap

    from rich.console import Console

    console = console or Console(width=100)
    lines = _summary.summary_lines(results)
    for line in lines:
        console.print(line, markup=False, highlight=False)
    console.print(textwrap.fill(_summary.versions_line(), 100, subsequent_indent="  "),
                  markup=False, highlight=False)
    print_tables(results, console)
    console.print(lines[0], markup=False, highlight=False)


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
             f"- problem: {r.problem}; setting: `{setting_text(r.setting)}`"]
    if r.kind == "claim":
        lines.append(f"- claim: {r.statement}; statistic {_fmt(r.statistic, 4)}"
                     + ("" if math.isnan(r.statistic_lo) else
                        f" (95 % interval [{_fmt(r.statistic_lo, 4)}, {_fmt(r.statistic_hi, 4)}])")
                     + f", threshold {_fmt(r.threshold, 4)}: **{r.verdict}**")
    else:
        lines.append(f"- measured: {_fmt(r.measured, 4)} (95 % CI [{_fmt(r.measured_lo, 4)}, "
                     f"{_fmt(r.measured_hi, 4)}], {r.n_seeds} seed(s), "
                     f"{r.effective_samples} effective); bound: {_fmt(r.bound, 4)}; "
                     f"ratio measured / bound: {_fmt(r.ratio, 4)}")
    if r.reason:
        lines.append(f"- reason: {r.reason}")
    if r.worst:
        lines.append(f"- worst-instance search: max measured / bound {_fmt(r.worst_ratio, 4)} "
                     "over "
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


def _results_frame(pd, results):
    """results.csv: the schema's columns first (:mod:`verify.schema`), then ``term_*`` and
    ``param_*`` of every bound, then the rest; counts as integers."""
    from ..schema import CORE

    frame = pd.DataFrame([r.row() for r in results])
    cols = list(frame.columns)
    first = [c for c in CORE if c in cols]
    first += sorted(c for c in cols if c.startswith("term_"))
    first += sorted(c for c in cols if c.startswith("param_"))
    frame = frame[first + [c for c in cols if c not in first]]
    counts = ("seed", "round", "n_seeds", "effective_samples")
    for c in [c for c in first if c in counts or c.startswith("param_")]:
        col = pd.to_numeric(frame[c], errors="coerce")
        whole = col.dropna()
        if len(whole) and (whole == whole.round()).all() and (whole.abs() < 2**53).all():
            frame[c] = col.astype("Int64")  # integers as integers (10, not 10.0)
    return frame


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
                 settings: dict | None = None, name: str = "out",
                 jobs: int = 1) -> pathlib.Path:
    """Write ``report.md``, ``results.csv``, figures (and worst instances) as one output set:
    everything goes into a staging directory that then replaces ``out_dir`` whole
    (:func:`boundlab.io.output_set`), so a reader, or a run killed mid-write, sees the old set
    or the new one, never a mix, and no figure of an older run survives. ``out_dir`` must be
    new, empty or a previous ``boundlab verify`` output whose manifest lists every file in it
    (checked first: :func:`check_output_path`); anything else is refused, never deleted. A
    write that fails (even a figure's) leaves the previous set as it was and raises
    :class:`~boundlab.errors.WriteError` naming the file and ``name``. ``jobs`` > 1: the
    figures are drawn side by side in that many processes (same files). Returns ``out_dir``
    as a path."""
    from boundlab.io import output_set

    with output_set(out_dir, name=name, kind="verify") as stage:
        _write_set(results, stage, title=title, settings=settings, jobs=jobs)
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


def _write_set(results, out: pathlib.Path, *, title: str, settings: dict | None,
               jobs: int = 1) -> None:
    """The files of one report, written into ``out`` (a staging directory)."""
    import pandas as pd

    figs = figure_list(results, out / "figures", jobs=jobs)
    saved = save_worst_instances(results, out)
    frame = _results_frame(pd, results)
    atomic_write_text(out / "results.csv", frame.to_csv(index=False))
    md = [f"# {title}", "", "## Summary", ""]
    md += [f"{line}  " if line and not line.startswith("- ") else line
           for line in _summary.summary_lines(results, markdown=True, limit=None)]
    md += ["", "Verdicts and the ratio (measured / bound) are defined in the README's "
           "\"Verdicts\" and \"Result schema\" sections (`verify.schema`). Exit status 1 when "
           "a bound check is VIOLATED, a claim is refuted or a check errored.", "",
           "## Versions", ""]
    md += [f"- {k}: `{v}`" for k, v in _summary.versions().items()] + [""]
    if settings:
        md += [f"Settings: `{setting_text(settings)}`", ""]
    md += markdown_tables(results)
    md += _summary.references(results)
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
