"""The tables of the verify report: bound checks, claims, informativeness (on the terminal:
:mod:`verify.report.terminal`).

Bound checks (measured, bound, ratio, verdict) and claims (statement, statistic, threshold,
outcome) are separate tables; the third table puts, per upper bound, the fixed-instance LHS/RHS,
the worst-instance LHS/RHS the search found and the PEP bracket [LB/B, UB/B] side by side, so a
reader sees how informative each "holds" is. Every ratio is measured / bound (the one
orientation of :mod:`verify.schema`: 1 = tight, > 1 = violated).

Example
-------
>>> import boundlab
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), [0.01], params=dict(eta=0.2, tau=10, L=0.2,
...             zeta=0.43), check="c", case="tau=10")
>>> informativeness([r])[0]["fixed"] < 0.01
True
"""

from __future__ import annotations

import math

__all__ = ["bound_checks", "claims", "informativeness", "markdown_tables", "setting_text",
           "STYLE", "FAILING"]

STYLE = {"holds": "green", "VIOLATED": "bold red", "not-applicable": "dim",
         "order-only": "blue", "diverged": "yellow", "error": "bold magenta",
         "supported": "green", "refuted": "bold red", "inconclusive": "yellow"}
#: verdicts that make ``boundlab verify`` exit with status 1
FAILING = ("VIOLATED", "error", "refuted")


def _fmt(x, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float):
        if x == 0:
            return "0"
        if math.isinf(x):
            return "inf"
        if x.is_integer() and abs(x) < 10 ** digits:
            return str(int(x))  # integers as integers
        return f"{x:.{digits}g}"
    return str(x)


def bound_checks(results):
    return [r for r in results if r.kind != "claim"]


def claims(results):
    return [r for r in results if r.kind == "claim"]


def _tight(r) -> str:
    t = r.tightness or {}
    if not t:
        return "—"
    if "ratio_hi" in t:  # the record holds LB/B, UB/B (verify.schema's orientation)
        flag = "inaccurate " if t.get("bracket") == "inaccurate" else ""
        return f"{flag}[{_fmt(_num(t.get('ratio_lo')))}, {_fmt(_num(t.get('ratio_hi')))}]"
    return str(t.get("status", "—"))


def _num(x):
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return float("nan")
    return float(x)


def informativeness(results) -> list[dict]:
    """Per upper bound: fixed-instance LHS/RHS (the largest over the fixed toys' rows that were
    judged), worst-instance LHS/RHS (the largest over its search rows) and the PEP bracket
    [LB/B, UB/B] (the widest-known of its rows, fixed or search)."""
    rows: dict[str, dict] = {}
    for r in bound_checks(results):
        if not r.bound_id:
            continue
        d = rows.setdefault(r.bound_id, {"bound": r.bound_id, "fixed": float("nan"),
                                         "fixed_case": "", "worst": float("nan"),
                                         "worst_evals": 0, "worst_verdict": "",
                                         "pep_lo": float("nan"), "pep_hi": float("nan")})
        if r.worst:
            w = r.worst_ratio
            if not d["worst_verdict"] or (math.isfinite(w) and not (w <= d["worst"])):
                d["worst"], d["worst_evals"] = w, r.worst.get("evaluations", 0)
                d["worst_verdict"] = r.verdict
        elif r.verdict in ("holds", "VIOLATED"):
            f = r.ratio
            if math.isfinite(f) and not (f <= d["fixed"]):
                d["fixed"], d["fixed_case"] = f, f"{r.check} {r.case}".strip()
        t = r.tightness or {}
        if t.get("bracket") == "inaccurate":
            continue
        lo, hi = _num(t.get("ratio_lo")), _num(t.get("ratio_hi"))
        if math.isfinite(hi) and not (hi <= d["pep_hi"]):
            d["pep_lo"], d["pep_hi"] = lo, hi
    return [d for d in rows.values() if d["worst_verdict"] or math.isfinite(d["fixed"])]


def _reason(r) -> str:
    return r.reason or ""


def markdown_tables(results) -> list[str]:
    """The three tables as Markdown lines."""
    md = ["## Bound checks", "",
          "Measured left-hand side vs the bound's value. Ratio = measured / bound (> 1: "
          "violated; below 1e-3: the bound is vacuous by more than 1e3). A bound stated in "
          "expectation is judged on the upper 95 % confidence limit "
          "of the mean; `samples` counts effective samples (identical runs count once). "
          "`not-applicable` / `diverged` / `error`: see the reason.", "",
          "| check | case | bound | paper | problem | measured | bound value | ratio | samples "
          "| PEP [LB/B, UB/B] | verdict | reason |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in bound_checks(results):
        md.append(f"| {r.check} | {r.case} | `{r.bound_id}` | {r.paper.split(',')[0]} | "
                  f"{r.problem} | {_fmt(r.measured)} | {_fmt(r.bound)} | {_fmt(r.ratio)} | "
                  f"{r.effective_samples or r.n_seeds} | {_tight(r)} | **{r.verdict}** | "
                  f"{_reason(r)} |")
    md += ["", "## Claims", "",
           "A paper's qualitative statement tested on measured runs: the statistic (with its "
           "95 % interval where it has one) against the threshold.", "",
           "| check | case | paper | statement | statistic | interval | threshold | outcome |",
           "|---|---|---|---|---|---|---|---|"]
    for r in claims(results):
        iv = "—" if math.isnan(r.statistic_lo) else f"[{_fmt(r.statistic_lo)}, " \
                                                     f"{_fmt(r.statistic_hi)}]"
        md.append(f"| {r.check} | {r.case} | {r.paper} | {r.statement} | {_fmt(r.statistic)} | "
                  f"{iv} | {_fmt(r.threshold)} | **{r.verdict}** |")
    md += ["", "## How informative is each \"holds\"", "",
           "Per upper bound, as fractions of the bound (orientation: measured LHS / bound RHS; "
           "1 = tight, > 1 = violated): the largest over the fixed toys (and which row), the "
           "worst ratio the search found (`verify.falsify`, or `verify.worst_instance` for the "
           "hand-written searches: for a catalogue bound, quadratic problems with the paper's "
           "L, mu, Gamma or zeta and D held fixed, G and Delta measured per instance; the "
           "largest over the searches of the bound), and the PEP bracket [LB/B, UB/B] of the "
           "exact worst case at the fixed toy's parameter point (where a model exists; `—`: "
           "none, or not cached, see the bound checks' tightness column). The three answer "
           "different questions; a search ratio above the PEP's UB/B is possible because the "
           "PEP fixes G and Delta, the search does not.", "",
           "| bound | fixed instance | fixed row | worst ratio found (measured / bound) "
           "| PEP [LB/B, UB/B] "
           "| search verdict |",
           "|---|---|---|---|---|---|"]
    for d in informativeness(results):
        pep = "—" if math.isnan(d["pep_hi"]) else f"[{_fmt(d['pep_lo'])}, {_fmt(d['pep_hi'])}]"
        worst = "—" if not d["worst_verdict"] else \
            f"{_fmt(d['worst'])} ({d['worst_evals']} instances)"
        md.append(f"| `{d['bound']}` | {_fmt(d['fixed'])} | {d['fixed_case'] or '—'} | {worst} "
                  f"| {pep} | {d['worst_verdict'] or '—'} |")
    return md + [""]


def _cut(text, n: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[:n - 1] + "\u2026"


def setting_text(setting: dict) -> str:
    """``name=value, ...`` with integral numbers as integers and floats to 6 digits.

    >>> setting_text({"E": 2.0, "eta": 0.0625, "G": 5.961243388868524, "rule": "fedavg"})
    'E=2, eta=0.0625, G=5.96124, rule=fedavg'
    """
    return ", ".join(f"{k}={_number(v)}" for k, v in (setting or {}).items())


def _number(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}" if isinstance(v, float) else str(v)
