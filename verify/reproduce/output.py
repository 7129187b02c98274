"""Writing reproductions: per item a folder ``<out>/<paper>-<item>/`` with ``results.csv``
(tidy rows), ``figure.png`` (the paper's layout), ``section.md`` and ``done.json``; each folder
is written to a temporary directory and renamed into place whole, so a finished item is
either complete or absent (the full set is resumable: finished items are skipped).
``report.md`` joins the sections (written atomically).

Example
-------
>>> slug("002:table1")
'002-table1'
"""

from __future__ import annotations

import csv
import io
import json
import os
import pathlib
import shutil
import tempfile

from boundlab.io import atomic_savefig, atomic_write_text

from .registry import TIE_RULE

__all__ = ["done", "section", "slug", "write_item", "write_report"]


def slug(item_id: str) -> str:
    return item_id.replace(":", "-")


def done(out, exp, cfg) -> bool:
    """Whether ``exp`` already finished under ``out`` with this configuration."""
    f = pathlib.Path(out) / slug(exp.id) / "done.json"
    try:
        meta = json.loads(f.read_text())
    except (OSError, ValueError):
        return False
    return meta.get("config") == cfg.key()


def _csv(rows) -> str:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in keys})
    return buf.getvalue()


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def section(exp, res, cfg, seconds: float) -> str:
    """The Markdown section of one item: paper's numbers, ours, rule, outcome."""
    how = res.how
    lines = [f"## {exp.id} — {exp.ref}: {exp.title}", "",
             f"**Outcome: {res.outcome.upper()}**" + (f" — {how}" if how else ""),
             "", f"*Stand-in:* {exp.stand_in}", "",
             f"*Paper reports:* {exp.reported}", ""]
    if res.setup:
        from .common import torch_backend

        be = cfg.backend if cfg.backend != "auto" else f"auto = {torch_backend(cfg)}"
        lines += [f"*Our setup ({cfg.size} size, backend of the MLP runs: {be}; convex "
                  f"runs on numpy):* {res.setup}", ""]
    lines += ["| claim | paper | ours | rule | outcome |", "|---|---|---|---|---|"]
    for c in res.claims:
        out = c.outcome if c.outcome == "matches" or not c.how else f"{c.outcome}: {c.how}"
        lines.append("| " + " | ".join(_cell(v) for v in (c.what, c.paper, c.ours, c.rule, out))
                     + " |")
    lines += ["", f"*Outcome rule:* a claim matches when its rule holds and differs when it does "
                  f"not; {TIE_RULE}. The item differs when any claim differs, else it matches "
                  f"when any claim matches."]
    for n in res.notes:
        lines += ["", f"- {n}"]
    lines += ["", f"Files: `{slug(exp.id)}/results.csv`, `{slug(exp.id)}/figure.png` "
                  f"({seconds:.1f} s).", ""]
    return "\n".join(lines)


def write_item(out, exp, res, cfg, seconds: float) -> pathlib.Path:
    """Write the item's folder atomically (temp dir, then rename); returns its path."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    final = out / slug(exp.id)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{slug(exp.id)}.", dir=out))
    try:
        (tmp / "results.csv").write_text(_csv(res.rows))
        if res.figure is not None:
            atomic_savefig(res.figure, tmp / "figure.png", dpi=110, bbox_inches="tight")
            import matplotlib.pyplot as plt

            plt.close(res.figure)
        (tmp / "section.md").write_text(section(exp, res, cfg, seconds))
        meta = {"id": exp.id, "ref": exp.ref, "outcome": res.outcome, "how": res.how,
                "size": cfg.size, "backend": cfg.backend, "data": cfg.data,
                "seconds": round(seconds, 2), "config": cfg.key(),
                "claims": [{"what": c.what, "paper": c.paper, "ours": c.ours, "rule": c.rule,
                            "outcome": c.outcome, "how": c.how} for c in res.claims]}
        (tmp / "done.json").write_text(json.dumps(meta, indent=1))
        old = None
        if final.exists():
            old = out / f".{slug(exp.id)}.old"
            shutil.rmtree(old, ignore_errors=True)
            os.replace(final, old)
        os.replace(tmp, final)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def write_report(out, exps) -> pathlib.Path:
    """``report.md``: a summary table and every finished item's section."""
    out = pathlib.Path(out)
    rows, secs = [], []
    for e in exps:
        d = out / slug(e.id)
        try:
            meta = json.loads((d / "done.json").read_text())
            secs.append((d / "section.md").read_text())
        except (OSError, ValueError):
            rows.append(f"| {e.id} | {e.ref} | {_cell(e.title)} | not run | |")
            continue
        rows.append(f"| {e.id} | {e.ref} | {_cell(e.title)} | {meta['outcome']} | "
                    f"{_cell(meta.get('how', ''))} |")
    text = "\n".join(["# boundlab reproduce — the papers' experiments beside ours", "",
                      "Differences from the papers are findings, reported as measured.", "",
                      f"Outcome rule: {TIE_RULE}.", "",
                      "| item | paper's ref | what | outcome | which claims do not match |",
                      "|---|---|---|---|---|", *rows, "", *secs])
    return atomic_write_text(out / "report.md", text)
