"""The tables of ``boundlab verify`` on the terminal (rich), at most 100 columns wide.

Nothing is cut: a long case label, a PEP bracket or a search summary wraps inside its column,
and the sample count's column is as wide as its largest number. The bound checks are grouped
by check and bound (a heading line ``check · bound id``, then one row per case), so two rows
never read the same. Reasons, statements and PEP commands are in ``report.md``
(:func:`verify.report.tables.markdown_tables`).

Example
-------
>>> import io
>>> import boundlab
>>> from rich.console import Console
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), [0.01], params=dict(eta=0.2, tau=10, L=0.2,
...             zeta=0.43), check="drift_plateau", case="tau=10")
>>> r.effective_samples = 4000
>>> screen = Console(file=io.StringIO(), width=100, color_system=None)
>>> print_tables([r], screen)
>>> text = screen.file.getvalue()
>>> "drift_plateau · drift.plateau" in text and " 4000 " in text
True
"""

from __future__ import annotations

import math

from .tables import STYLE, _cut, _fmt, _tight, bound_checks, claims, informativeness

__all__ = ["print_tables", "WIDTH"]

#: the terminal width the tables fit in
WIDTH = 100
#: the bound checks' columns after the label: (name, width); ``n`` is sized to its numbers
_BOUND_COLUMNS = (("measured", 9), ("bound", 9), ("ratio", 9), ("n", None), ("PEP", 12),
                  ("verdict", 14))


def _table(columns, *, title=None, header=True):
    """A rich table whose cells wrap inside their columns (never cut); ``columns``: (name,
    width) pairs, a None width sized by rich (the first column then takes what is left)."""
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, title_justify="left",
              show_header=header, show_edge=False, padding=(0, 1, 0, 0))
    for col, width in columns:
        t.add_column(col, width=width, no_wrap=False, overflow="fold")
    return t


def _count(r) -> str:
    return str(r.effective_samples or r.n_seeds)


def _pep(r) -> str:
    """The PEP column: the bracket, or a word (the command is in the report)."""
    t = r.tightness or {}
    if not t or "ratio_hi" in t:
        return _tight(r)
    status = str(t.get("status", "—"))
    return "not cached" if status.startswith("not cached") else _cut(status.split(":")[0], 12)


def _bound_widths(rows) -> list:
    """(name, width) of every column, the label's taking what the others leave of WIDTH."""
    n = max([3] + [len(_count(r)) for r in rows])
    cols = [(name, n if width is None else width) for name, width in _BOUND_COLUMNS]
    # no edges; each column padded by one space on its right, then a divider (a space)
    label = WIDTH - sum(w for _, w in cols) - 2 * len(cols) - 1
    return [("case", label), *cols]


def print_bound_checks(results, console) -> None:
    """The bound checks: a heading per (check, bound), one row per case."""
    from rich.text import Text

    rows = bound_checks(results)
    widths = _bound_widths(rows)
    console.print(_table(widths, title="bound checks (ratio = measured / bound: <= 1 holds; "
                                       "reasons in report.md)"))
    groups: dict = {}
    for r in rows:
        groups.setdefault((r.check, r.bound_id or ""), []).append(r)
    for (check, bound_id), group in groups.items():
        head = f"{check} · {bound_id}" if bound_id else check
        console.print(Text(head, style="bold"), overflow="fold")
        t = _table(widths, header=False)
        for r in group:
            t.add_row(Text(r.case or "—"), _fmt(r.measured), _fmt(r.bound), _fmt(r.ratio),
                      _count(r), _pep(r), Text(r.verdict, style=STYLE.get(r.verdict, "")))
        console.print(t)


def print_claims(results, console) -> None:
    from rich.text import Text

    cl = claims(results)
    if not cl:
        return
    c = _table((("check · case", None), ("statistic", 10), ("interval", 18),
                ("threshold", 10), ("outcome", 12)), title="claims (statements in report.md)")
    for r in cl:
        iv = "—" if math.isnan(r.statistic_lo) else \
            f"[{_fmt(r.statistic_lo)}, {_fmt(r.statistic_hi)}]"
        c.add_row(Text(f"{r.check} {r.case}".strip()), _fmt(r.statistic), iv, _fmt(r.threshold),
                  Text(r.verdict, style=STYLE.get(r.verdict, "")))
    console.print(c)


def print_informativeness(results, console) -> None:
    from rich.text import Text

    info = informativeness(results)
    if not info:
        return
    t = _table((("bound", None), ("fixed toy", 9), ("worst found", 24),
                ("PEP [LB/B, UB/B]", 20)),
               title="how informative is each 'holds' (measured / bound: 1 = tight)")
    for d in info:
        pep = "—" if math.isnan(d["pep_hi"]) else f"[{_fmt(d['pep_lo'])}, {_fmt(d['pep_hi'])}]"
        worst = "—" if not d["worst_verdict"] else \
            f"{_fmt(d['worst'])} ({d['worst_evals']}, {d['worst_verdict']})"
        t.add_row(Text(d["bound"]), _fmt(d["fixed"]), worst, pep)
    console.print(t)


def print_tables(results, console) -> None:
    """The three tables on the terminal: bound checks, claims, how informative each "holds"
    is; every cell whole (wrapped in its column), at most :data:`WIDTH` columns."""
    print_bound_checks(results, console)
    print_claims(results, console)
    print_informativeness(results, console)
