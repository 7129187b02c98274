"""Writing reproductions: per item a folder ``<out>/<paper>-<item>/`` with ``results.csv``
(tidy rows), ``figure.png`` (the paper's layout), ``section.md`` and ``done.json`` (sealed: see
:mod:`verify.reproduce.store`, which also keeps the folder safe); each folder is written to a
hidden temporary directory and renamed into place whole, so a finished item is either complete
or absent (the full set is resumable: finished items are skipped). An item that raised gets a
folder too, whose section says the error (it is not "done": the next run tries it again).
``report.md`` joins the sections of every item finished in ``out`` (written atomically). Each
section and ``done.json`` name the data and the model the item's run used (``Result.data``,
``Result.model``: :mod:`verify.reproduce.data`), beside the item's default stand-in.

Example
-------
>>> slug("002:table1")
'002-table1'
"""

from __future__ import annotations

import csv
import io
import pathlib

from boundlab.integrity import escape

from ..figures.reproduce import save_item
from . import store
from .registry import TIE_RULE
from .store import slug

__all__ = ["done", "error_section", "section", "slug", "write_item", "write_report"]


def done(out, exp, cfg) -> bool:
    """Whether ``exp`` already finished under ``out`` with the item's configuration ``cfg``
    (:func:`~verify.reproduce.data.item_config`) and this code (a damaged or foreign
    ``done.json`` is "not done")."""
    return store.done(out, exp.id, cfg.key())


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


def _stand_in(exp, res) -> str:
    """The item's stand-in, its default data replaced by "the data above" when the run used
    other data."""
    from .data import DIGITS

    s = exp.stand_in
    if res.data and s.startswith(DIGITS) and not res.data.startswith(DIGITS):
        return ("the data above (not the stand-in's fallback, scikit-learn's bundled digits, "
                "used only when neither --data nor MNIST-5k gives other data)" + s[len(DIGITS):])
    return s


#: the Seeds line of an item that draws no seeds
NO_SEEDS = ("one run per arm (n = 1: the paper's single deterministic protocol; --seeds does "
            "not apply)")


def section(exp, res, cfg, seconds: float) -> str:
    """The Markdown section of one item: the data and model used, paper's numbers, ours, rule,
    outcome."""
    how = res.how
    lines = [f"## {exp.id} — {exp.ref}: {exp.title}", "",
             f"**Outcome: {res.outcome.upper()}**" + (f" — {how}" if how else ""), ""]
    lines += [f"*Data:* {res.data}", ""] if res.data else []
    lines += [f"*Model:* {res.model}", ""] if res.model else []
    lines += [f"*Seeds:* {res.seeds or NO_SEEDS}", ""]
    lines += [f"*Stand-in and departures from the paper:* {_stand_in(exp, res)}", "",
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
                  f"not; {TIE_RULE}. The item differs when any claim differs, else it differs in "
                  "size when any claim does, else it is inconclusive when any claim is, else it "
                  "ties when any claim ties, else it is not exercised when any claim is, else "
                  "(every claim matches) it matches."]
    for n in res.notes:
        lines += ["", f"- {n}"]
    lines += ["", f"Files: `{slug(exp.id)}/results.csv`, `{slug(exp.id)}/figure.png` "
                  f"({seconds:.1f} s).", ""]
    return "\n".join(lines)


def error_section(exp, error: str, seconds: float) -> str:
    """The Markdown section of an item that raised ``error`` (``"Type: message"``)."""
    msg = escape(error).replace("`", "'")
    return "\n".join([f"## {exp.id} — {exp.ref}: {exp.title}", "",
                      f"**Outcome: ERROR** — `{msg}`", "",
                      f"The item raised an exception after {seconds:.1f} s; the other items ran. "
                      "It runs again on the next `boundlab reproduce` into this folder.", ""])


def _meta(exp, res, cfg, seconds, error):
    claims = [] if res is None else res.claims
    return {"format": store.FORMAT, "id": exp.id, "ref": exp.ref,
            "outcome": "error" if error else res.outcome, "how": "" if error else res.how,
            "size": cfg.size, "backend": cfg.backend, "data": cfg.data,
            "data_used": "" if error else res.data, "model": "" if error else res.model,
            "seeds_per_arm": "" if error else res.seeds,
            "seconds": round(float(seconds), 2), "config": cfg.key(),
            "error": None if error is None else {"type": error[0], "message": error[1]},
            "claims": [{"what": str(c.what), "paper": str(c.paper), "ours": str(c.ours),
                        "rule": str(c.rule), "outcome": c.outcome, "how": str(c.how)}
                       for c in claims]}


def write_item(out, exp, res, cfg, seconds: float, error=None) -> pathlib.Path:
    """Write the item's folder atomically (a hidden temp dir, then rename); returns its path.
    ``error`` ``(type name, message)``: the item raised (``res`` is None). An existing folder is
    replaced only when boundlab's manifest lists all of it (else ``DomainError``). ``cfg`` is
    the item's configuration (:func:`~verify.reproduce.data.item_config`), which it is sealed
    with."""
    from boundlab.integrity import sha256

    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = store.stage_item(out, exp.id)
    try:
        if error is None:
            (tmp / "results.csv").write_text(_csv(res.rows), encoding="utf-8")
            if res.figure is not None:
                save_item(res.figure, tmp / "figure.png", close=False, name=exp.id)
            text = section(exp, res, cfg, seconds)
        else:
            text = error_section(exp, f"{error[0]}: {error[1]}", seconds)
        (tmp / "section.md").write_text(text, encoding="utf-8")
        meta = _meta(exp, res, cfg, seconds, error)
        meta["files"] = {f.name: sha256(f.read_bytes()) for f in sorted(tmp.iterdir())}
        (tmp / "done.json").write_text(store.sealed_meta(meta, exp.id, cfg.key()))
        return store.replace_item(out, exp.id, tmp)
    finally:
        if res is not None and res.figure is not None:
            import matplotlib.pyplot as plt

            plt.close(res.figure)
        if tmp.exists():
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
        store.unstage(out)


def _row(out, e, key):
    """(summary row, section or None) of experiment ``e`` from its folder under ``out``."""
    from boundlab.errors import BoundlabError

    head = f"| {e.id} | {e.ref} | {_cell(e.title)} | "
    if not (out / slug(e.id)).exists():
        return head + "not run | |", None
    try:
        rec = store.read_item(out, e.id, key)
    except (BoundlabError, OSError) as exc:
        why = "its folder is damaged or of another run: " + escape(str(exc))
        return head + f"not run | {_cell(why)} |", None
    if rec.outcome == "error":
        return head + f"error | {_cell(rec.error[:300])} |", rec.section
    return head + f"{rec.outcome} | {_cell(rec.how)} |", rec.section


def write_report(out, exps=None, cfg=None) -> pathlib.Path:
    """``report.md``: a summary table and the section of every item finished in ``out`` with
    configuration ``cfg`` by this code (None: any configuration); ``exps`` the experiments
    listed (default every registered one, so items finished by earlier runs are kept)."""
    from .data import item_config
    from .registry import experiments

    out = pathlib.Path(out)
    rows, secs = [], []
    for e in experiments() if exps is None else exps:
        row, sec = _row(out, e, None if cfg is None else item_config(e, cfg).key())
        rows.append(row)
        if sec is not None:
            secs.append(sec)
    text = "\n".join(["# boundlab reproduce — the papers' experiments beside ours", "",
                      "Differences from the papers are findings, reported as measured. Each "
                      "section names the data and the model its run used.", "",
                      f"Outcome rule: {TIE_RULE}.", "",
                      "| item | paper's ref | what | outcome | which claims do not match |",
                      "|---|---|---|---|---|", *rows, "", *secs])
    return store.replace_file(out, "report.md", text)
