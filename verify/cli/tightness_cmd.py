"""``boundlab tightness``: a bound against the exact worst case (PEP), as a tightness bracket.

Usage::

    boundlab tightness ID [name=value ...] [--rounds R] [--json] [--zeta-at visited|x*]
                          [--cache-only] [--no-cache] [--solver NAME]
                          [--vary name=v1,v2,... --plot PATH]
    boundlab tightness list

The bracket is given relative to the bound, in the orientation of every ratio of
:mod:`verify.schema` (measured / bound): ``ratio_lo`` = LB/B and ``ratio_hi`` = UB/B, with
UB/B <= 1 when the bound holds on the PEP's class. ``--json`` names the keys as the schema
(``bound_id``, ``bound_value``, ``worst_case_lower``, ``worst_case_upper``, ``ratio_lo``,
``ratio_hi``); until the next release it also carries the old keys (``id``, ``bound``,
``ratio_low`` = B/UB, ``ratio_high`` = B/LB), listed under ``deprecated``.

Exit status: 0 bracket computed; 1 the bound is VIOLATED by a worst-case instance, or the
solver failed / the bracket is inaccurate (LB > UB even after a retry with tighter solver
settings); 2 bad input (unknown id or name, value outside its domain).

Example
-------
>>> from verify.cli import main
>>> main(["tightness", "drift.plateau", "eta=0.1", "tau=1", "L=1", "zeta=1", "--json",
...       "--no-cache"])  # doctest: +ELLIPSIS
{"bound_id": "drift.plateau", ...}
0
"""

from __future__ import annotations

import contextlib
import json
import math

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``tightness`` command to the CLI's subparsers."""
    p = sub.add_parser(
        "tightness", help="bound vs exact worst case (PEP): the bracket [LB/B, UB/B]",
        description="Compare a catalogue upper bound B with the worst case of the method over "
                    "the bound's function class, computed by performance estimation (PEPit). "
                    "'boundlab tightness list' lists the bounds with a PEP model.")
    p.add_argument("id", help="bound id (or 'list')")
    p.add_argument("assignments", nargs="*", metavar="name=value",
                   help="every parameter of the bound, e.g. eta=0.1 tau=10 L=1 zeta=1")
    p.add_argument("--rounds", type=int, default=None,
                   help="override the bound's round count (T or t)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--zeta-at", choices=("visited", "x*"), default="visited",
                   help="where DKR's dissimilarity zeta is imposed (default visited)")
    p.add_argument("--cache-only", action="store_true",
                   help="do not solve: report only cached results (exit 0, null when absent)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--solver", default=None, type=str.upper, choices=("CLARABEL", "SCS", "MOSEK"),
                   help="CLARABEL, SCS or MOSEK (default: the chain Clarabel, MOSEK if "
                        "installed, SCS)")
    p.add_argument("--vary", default=None, metavar="name=v1,v2,...",
                   help="compute the bracket over these values of one parameter")
    p.add_argument("--plot", default=None, metavar="PATH",
                   help="with --vary: write the bracket plot here, as 300 dpi PNG and SVG "
                        "(x.png or x.svg writes both)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    import boundlab
    from verify.cli import UsageError
    from verify.cli.assign import number_list, numbers
    from verify.tightness import NOT_MATCHED, bracket
    from verify.tightness.brackets import supported_ids

    if args.id == "list":  # catalogue ids and registered bounds with a PEP model
        return _list(args.json, supported_ids(), NOT_MATCHED)
    b = boundlab.get(args.id)
    params = numbers(args.assignments, b)
    if args.rounds is not None and args.rounds < 1:
        from boundlab.errors import DomainError
        raise DomainError("rounds", args.rounds, "integer >= 1")
    kw = {"zeta_at": args.zeta_at, "cache": not args.no_cache, "solver": args.solver,
          "rounds": args.rounds, "cache_only": args.cache_only}
    if args.plot and not args.vary:
        raise UsageError("boundlab tightness: --plot needs --vary name=v1,v2,...")
    if args.vary:
        name, values = number_list(args.vary, b.params, b.id)
        from .progress import mode

        rows = vary(args.id, params, name, values, kw, show=mode(args.quiet))
        if args.plot and any(r is not None for r in rows):
            from verify.tightness.plots import plot_brackets

            plot_brackets(rows, name, args.plot, requested=values, option="--plot")
        if args.json:
            print(json.dumps([_json(r) for r in rows]))
        else:
            for r in rows:
                _print(r)
        return max((_status(r) for r in rows), default=0)
    missing = [n for n in b.params if n not in params
               and not (args.rounds is not None and n in ("T", "t"))]
    if missing:
        from boundlab.errors import MissingParameterError
        raise MissingParameterError(args.id, missing,
                                    {n: b.params[n].domain.describe() for n in missing})
    from .progress import pep_spinner

    with pep_spinner(not args.quiet):  # the per-solve spinner (on a terminal only)
        r = bracket(args.id, params, **kw)
    if args.json:
        print(json.dumps(_json(r)))
    else:
        _print(r)
    return _status(r)


def vary(bound_id, params, name, values, kw, *, show=False, console=None) -> list:
    """The bracket at ``params`` with ``name`` set to each of ``values`` (None where
    ``cache_only`` found nothing), with progress (a count, the elapsed time and an ETA) on
    stderr in ``show``'s mode (:mod:`verify.cli.progress`: "bar", "lines" or "off"; True: the
    bar; ``console``: where the bar draws instead, e.g. in a test)."""
    from verify.tightness import bracket

    rows = []
    with _counter(len(values), f"PEP brackets over {name}", show, console) as step:
        for v in values:
            rows.append(bracket(bound_id, {**params, name: v}, **kw))
            step(f"{name}={v:g}")
    return rows


@contextlib.contextmanager
def _counter(total: int, what: str, show: bool, console=None):
    """The shared progress bar (:func:`verify.cli.progress.counter`), with the per-solve PEP
    spinner off meanwhile (it would fight the bar for the line)."""
    from verify.cli.progress import counter, pep_spinner

    with pep_spinner(False), counter(total, what, show, console=console) as step:
        yield step


def _status(r) -> int:
    if r is None:
        return 0
    if r["verdict"].startswith(("VIOLATED", "solver inconsistency", "inaccurate")):
        return 1
    return 0 if r["worst_case_upper"] is not None or r["ok"] else 1


def _json(r):
    """A bracket for ``--json``: JSON-safe, with the old keys until the next release."""
    from verify.result_keys import with_old_keys

    return None if r is None else _clean(with_old_keys(r))


def _clean(obj):
    """JSON-safe: non-finite floats become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _fmt(v):
    return "-" if v is None else f"{v:.6g}"


def _print(r) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if r is None:
        console.print("not in the cache (--cache-only)")
        return
    t = Table(title=f"{r['bound_id']}  " + " ".join(f"{k}={v:g}"
                                                    for k, v in r["params"].items()))
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for label, key in (("bound B", "bound_value"), ("PEP upper UB", "worst_case_upper"),
                       ("PEP lower LB", "worst_case_lower"), ("LB/B (ratio_lo)", "ratio_lo"),
                       ("UB/B (ratio_hi; <= 1 holds)", "ratio_hi"), ("duality gap", "gap"),
                       ("seconds", "seconds")):
        t.add_row(label, _fmt(r[key]))
    console.print(t)
    console.print(f"verdict: {r['verdict']}")
    console.print("class: " + ("exact" if r["exact"] else "relaxed: " + "; ".join(r["relaxed"])))
    if r["scope"]:
        console.print("scope: " + "; ".join(r["scope"]))
    for n in r["notes"]:
        console.print(f"note: {n}")
    console.print(f"solver: {r['solver']} ({r['status']}), cached: {r['cached']}")


def _list(as_json, supported, not_matched) -> int:
    rows = [{"id": i, "model": True} for i in sorted(supported)] + \
        [{"id": i, "model": False, "why": w} for i, w in sorted(not_matched.items())]
    if as_json:
        print(json.dumps(rows))
    else:
        for r in rows:
            print(r["id"] + ("" if r["model"] else f"  (no model: {r['why']})"))
    return 0
