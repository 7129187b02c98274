"""What a verify run found, in a few lines: the summary and the versions block at the top of
``report.md`` and of the terminal output.

The summary counts the verdicts, names the bounds **at risk** (largest ratio measured / bound
over their judged rows and searches >= :data:`AT_RISK`; identities, whose ratio is 1, are not
at risk), the bounds **vacuous** by more than
1e3 (largest ratio <= :data:`VACUOUS`) with the term responsible (the largest term of their
tightest row), and says what to run next (``boundlab falsify ID --budget N`` for an upper
bound at risk, or one no search has tried; more seeds for an inconclusive check).

Example
-------
>>> import boundlab
>>> from verify.compare import compare
>>> r = compare(boundlab.get("drift.plateau"), [0.001], params=dict(eta=0.2, tau=10, L=0.2,
...             zeta=0.43), terms={"drift": 2.6})
>>> s = summarize([r])
>>> s["counts"], [v["bound_id"] for v in s["vacuous"]], s["vacuous"][0]["term"]
({'holds': 1}, ['drift.plateau'], 'drift')
"""

from __future__ import annotations

import math
import pathlib
from collections import Counter

__all__ = ["summarize", "summary_lines", "versions", "versions_line", "references", "AT_RISK",
           "VACUOUS", "FALSIFY_BUDGET"]

#: a bound whose largest ratio (measured / bound) reaches this is at risk
AT_RISK = 0.1
#: a bound whose largest ratio stays at or below this is vacuous by more than 1e3
VACUOUS = 1e-3
#: the budget the next-step command suggests
FALSIFY_BUDGET = 2000
_JUDGED = ("holds", "VIOLATED", "inconclusive")


def _per_bound(results) -> dict:
    """bound id -> {ratio: largest, row: the result giving it, searched: bool, kind}."""
    out: dict = {}
    for r in results:
        if r.kind == "claim" or not r.bound_id or r.verdict not in _JUDGED:
            continue
        d = out.setdefault(r.bound_id, {"ratio": -math.inf, "row": None, "searched": False,
                                        "where": ""})
        searched = bool(r.worst) or r.case == "search"
        d["searched"] |= searched
        for v, where in ((r.ratio, "search" if searched else "fixed toy"),
                         (r.worst_ratio, "search")):
            if isinstance(v, float) and math.isfinite(v) and v > d["ratio"]:
                d.update(ratio=v, row=r, where=where)
    return {k: d for k, d in out.items() if d["row"] is not None}


def _kind(bound_id: str) -> str:
    try:
        import boundlab

        return boundlab.get(bound_id).kind
    except Exception:  # noqa: BLE001 - an id no longer registered
        return ""


def _searchable(bound_id: str) -> bool:
    """Whether ``boundlab falsify`` measures this bound's left-hand side (its own search or
    the quadratic worst-instance search): only then is it suggested as the next step."""
    try:
        import boundlab
        from verify.measures import names

        from ..worst.api import supported

        return boundlab.get(bound_id).lhs in set(names()) | set(supported())
    except Exception:  # noqa: BLE001 - an id no longer registered
        return False


def summarize(results) -> dict:
    """The summary as plain data: ``counts`` (verdict -> n), ``judged`` (bounds with a ratio),
    ``at_risk`` and ``vacuous`` (lists of {bound_id, ratio, where, term}), ``next`` (commands).
    """
    counts = dict(Counter(r.verdict for r in results))
    per = _per_bound(results)
    # an identity's ratio is 1 when it holds: it is checked, not at risk
    at_risk = [{"bound_id": k, "ratio": d["ratio"], "where": d["where"]}
               for k, d in sorted(per.items(), key=lambda kv: -kv[1]["ratio"])
               if d["ratio"] >= AT_RISK and _kind(k) != "identity"]
    vacuous = [{"bound_id": k, "ratio": d["ratio"], "where": d["where"],
                "term": d["row"].dominant_term}
               for k, d in sorted(per.items(), key=lambda kv: kv[1]["ratio"])
               if d["ratio"] <= VACUOUS]
    # a bound whose search row says falsify cannot search it is not sent to falsify
    unsearchable = {r.bound_id for r in results
                    if r.case == "search" and r.verdict == "not-applicable"}
    nxt = []
    for k, d in sorted(per.items(), key=lambda kv: -kv[1]["ratio"]):
        if _kind(k) != "upper" or k in unsearchable or not _searchable(k) \
                or (d["searched"] and d["ratio"] < AT_RISK):
            continue
        why = "at risk" if d["ratio"] >= AT_RISK else "never searched"
        nxt.append({"command": f"boundlab falsify {k} --budget {FALSIFY_BUDGET}", "why": why})
    for r in results:
        if r.verdict == "inconclusive" and r.check:
            nxt.append({"command": f"boundlab verify --only {r.check} --seeds 20",
                        "why": "inconclusive: more seeds decide it"})
    return {"counts": counts, "judged": len(per), "at_risk": at_risk, "vacuous": vacuous,
            "next": list({n["command"]: n for n in nxt}.values())}


def _term(name: str) -> str:
    """A term in words (its name where there are none)."""
    if not name:
        return "(no named terms)"
    try:
        from ..figures.style import term_words

        return term_words(name).removesuffix(" term") or name
    except Exception:  # noqa: BLE001 - the words are a nicety
        return name


def summary_lines(results, *, markdown: bool = False, limit: int | None = 5) -> list[str]:
    """The summary as lines of at most 100 characters (``limit`` items per list; ``None``:
    all of them, as in the report)."""
    s = summarize(results)
    b, code = ("**", "`") if markdown else ("", "")
    order = [v for v in ("VIOLATED", "error", "refuted", "inconclusive", "holds", "supported",
                         "not-applicable", "order-only", "diverged") if v in s["counts"]]
    order += [v for v in s["counts"] if v not in order]
    lines = [f"{len(results)} results: " + ", ".join(f"{s['counts'][v]} {b}{v}{b}"
                                                     for v in order) + ";",
             f"{s['judged']} bounds judged with a ratio (measured / bound, <= 1 holds)."]
    terms = Counter(v["term"] for v in s["vacuous"] if v["term"])
    top = f", mostly through the {_term(terms.most_common(1)[0][0])} term" if terms else ""
    for title, items, fmt, tail in (
            (f"At risk (ratio >= {AT_RISK:g})", s["at_risk"],
             lambda v: f"{code}{v['bound_id']}{code} {v['ratio']:.3g} ({v['where']})", ""),
            (f"Vacuous by more than 1e3 (ratio <= {VACUOUS:g})", s["vacuous"],
             lambda v: f"{code}{v['bound_id']}{code} {v['ratio']:.2g}, largest term: "
                       f"{_term(v['term'])}", top),
            ("Next", s["next"], lambda v: f"{code}{v['command']}{code} ({v['why']})", "")):
        lines += [""] if markdown else []
        lines.append(f"{title}: {len(items) if items else 'none'}{tail if items else ''}")
        shown = items if limit is None else items[:limit]
        lines += [f"{'- ' if markdown else '  '}{fmt(v)}" for v in shown]
        if len(shown) < len(items):
            lines.append(f"{'- ' if markdown else '  '}... {len(items) - len(shown)} more "
                         "in report.md")
    return lines


def versions() -> dict:
    """boundlab, its code version, python, numpy, sympy, pepit, cvxpy (installed metadata,
    nothing imported) and the git commit when the sources sit in a git work tree."""
    from ..cli import versions as installed  # the one record (boundlab --version --json)

    out = {k: "missing" if v is None else v for k, v in installed().items()}
    commit = _git_commit()
    if commit:
        out["git"] = commit
    return out


def _git_commit() -> str:
    """``git rev-parse HEAD`` of the sources' work tree ('' without a .git or a git)."""
    root = pathlib.Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return ""
    import subprocess

    try:
        got = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    head = got.stdout.strip()
    return head if got.returncode == 0 and all(c in "0123456789abcdef" for c in head) else ""


def versions_line() -> str:
    """The versions block as one line."""
    return "versions: " + ", ".join(f"{k} {v}" for k, v in versions().items())


#: where the derivations a result's ``paper`` calls "the spec" live
SPEC = {"000": "seeds-000-001-004.md", "001": "seeds-000-001-004.md",
        "004": "seeds-000-001-004.md", "002": "seeds-002-003.md", "003": "seeds-002-003.md"}


def references(results) -> list[str]:
    """Markdown lines explaining the references the results use: each ``seed NNN`` (the
    paper) and "the spec" (the project's derivation notes, by section number)."""
    import re

    from ..reproduce.registry import PAPERS

    text = " ".join(f"{r.paper} {r.note}" for r in results)
    tags = sorted(set(re.findall(r"seed (\d{3})", text)))
    if not tags:
        return []
    lines = ["## References", "",
             "`seed NNN` names the paper a statement comes from (`eq.`, `Theorem`, `Lemma` "
             "numbers are the paper's own):", ""]
    lines += [f"- seed {t}: {PAPERS.get(t, 'a paper outside the registry')}" for t in tags]
    if "spec" in text:
        notes = ", ".join(f"`spec/{f}` (seed {', '.join(k for k in SPEC if SPEC[k] == f)})"
                          for f in dict.fromkeys(SPEC[t] for t in tags if t in SPEC))
        lines += ["", "\"the spec\" (with a section `§`) is the project's derivation notes, one "
                  f"file per group of papers: {notes}. A statement \"derived in the spec\" is "
                  "not printed in the paper: it is derived there from the paper's statements, "
                  "and the catalogue's `boundlab.errata` says what was corrected."]
    return lines + [""]
