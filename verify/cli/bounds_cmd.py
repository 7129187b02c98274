"""``boundlab bounds list | show | eval``: the catalogue from the command line.

``list`` and ``eval`` answer from the compiled-evaluator cache (:mod:`boundlab._cache`) when it
is warm, without importing sympy or building the catalogue; on a miss they take the sympy
path and fill the cache. Both paths print the same bytes: the cached bound runs the same
validation and the same program interpreter, and a value that needs the exact (sympy)
fallback is recomputed on the sympy path. ``BOUNDLAB_NO_CACHE=1`` forces the sympy path.

Example
-------
>>> from verify.cli import main
>>> main(["bounds", "list", "--json"])  # doctest: +ELLIPSIS
[...]
0
"""

from __future__ import annotations

from boundlab.io import dumps_strict

__all__ = ["register", "parse_assignments"]


def register(sub) -> None:
    """Add the ``bounds`` command group to the CLI's subparsers."""
    p = sub.add_parser("bounds", help="list, show and evaluate catalogue bounds")
    bsub = p.add_subparsers(dest="bounds_command", metavar="ACTION")
    bsub.required = True

    pl = bsub.add_parser("list", help="list every bound id")
    pl.add_argument("--family", help="only this family (drift, skew, weight_error, contraction)")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    pl.set_defaults(func=_list)

    ps = bsub.add_parser("show", help="statement, LaTeX, source, domains, preconditions, errata")
    ps.add_argument("id")
    ps.add_argument("--json", action="store_true")
    ps.set_defaults(func=_show)

    pe = bsub.add_parser("eval", help="evaluate a bound: boundlab bounds eval ID name=value ...")
    pe.add_argument("id")
    pe.add_argument("assignments", nargs="*", metavar="name=value")
    pe.add_argument("--json", action="store_true")
    pe.add_argument("--strict", action="store_true",
                    help="exit 2 when a precondition is violated")
    pe.set_defaults(func=_eval)


def parse_assignments(items, bound=None) -> dict[str, float]:
    """``name=value`` words as floats (:func:`verify.cli.assign.numbers`, the shared parser).

    >>> parse_assignments(["eta=0.2", "tau=10"])
    {'eta': 0.2, 'tau': 10.0}
    """
    from .assign import numbers

    return numbers(items, bound)


def _use_cache() -> bool:
    """The cache may answer: it is on, and this process has not loaded the registry (so no
    bound was registered or replaced in it, e.g. by a test calling ``main``)."""
    from boundlab import _cache

    return _cache.enabled() and _cache.pristine()


def _remember(bound_id: str | None = None) -> None:
    """Fill the cache after a miss (the index, or one bound's entry); never fails the command."""
    from boundlab import _cache, _cache_build
    from boundlab.errors import BoundlabError

    try:
        if bound_id is not None:
            _cache_build.store_bound(bound_id)
        elif _cache.load_index() is None:
            _cache_build.store_catalogue()
    except (OSError, BoundlabError):  # an unwritable cache: the answer stands
        pass


def list_rows(family=None, *, use_cache: bool = False) -> list[dict]:
    """The rows ``bounds list`` prints: id, kind, source, lhs, params, printed.

    >>> list_rows("drift")[0]["id"]
    'drift.fedavg_convex'
    """
    if use_cache:
        from boundlab import _cache

        rows = _cache.catalogue_rows(family)
        if rows is not None:
            return rows
    import boundlab

    rows = [{"id": b.id, "kind": b.kind, "source": b.source, "lhs": b.lhs,
             "params": list(b.params), "printed": b.printed}
            for b in boundlab.catalogue(family)]
    if use_cache:
        _remember()
    return rows


def _shown(text) -> str:
    """Text for the terminal: control characters escaped (text may come from a cache file)
    and rich markup taken literally."""
    from rich.markup import escape as no_markup

    from boundlab.integrity import escape

    return no_markup(escape(text))


def _list(args) -> int:
    rows = list_rows(args.family, use_cache=_use_cache())
    if args.json:
        print(dumps_strict(rows, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"boundlab catalogue ({len(rows)} bounds)")
    for col in ("id", "kind", "source", "parameters"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(*(_shown(t) for t in (r["id"], r["kind"], r["source"],
                                             ", ".join(r["params"]))))
    Console(width=160).print(table)
    return 0


def _show(args) -> int:
    import boundlab
    from boundlab import errata

    b = boundlab.get(args.id)
    d = b.to_dict()
    d["errata_details"] = [
        {"id": e.id, "verdict": e.verdict, "quote": e.quote, "corrected": e.corrected,
         "test": e.test} for e in errata.for_bound(b.id)]
    if args.json:
        print(dumps_strict(d, indent=1))
        return 0
    lines = [
        f"{b.id}  [{b.kind}]  bounds: {b.lhs}",
        f"source: {b.source}",
        "",
        b.description,
        "",
        f"expression: {d['expr']}",
        f"LaTeX:      {d['latex']}",
        "parameters:",
        *[f"  {n:10s} {v['domain']:28s} {v['doc']}" for n, v in d["params"].items()],
    ]
    if d["extra_params"]:
        lines.append("optional (preconditions only):")
        lines += [f"  {n:10s} {v['domain']:28s} {v['doc']}" for n, v in d["extra_params"].items()]
    lines.append("preconditions: " + ("; ".join(d["preconditions"]) or "none"))
    if d["terms"]:
        lines.append("terms:")
        lines += [f"  {k}: {v}" for k, v in d["terms"].items()]
    if d["errata_details"]:
        lines.append("errata:")
        lines += [f"  {e['id']} ({e['verdict']}): {e['corrected']}" for e in d["errata_details"]]
    print("\n".join(lines))
    return 0


def _eval(args) -> int:
    import boundlab  # the package only: sympy and the catalogue load on first use

    if not _use_cache():
        return eval_report(boundlab.get(args.id), args)
    from boundlab import _cache
    from boundlab._fastbound import NeedsExact

    fast = _cache.load_bound(args.id)
    if fast is None:  # a miss (or not a built-in bound): the sympy path, then fill the cache
        b = boundlab.get(args.id)
        _remember(b.id)
        return eval_report(b, args)
    try:
        return eval_report(fast, args)
    except NeedsExact:  # a value needs sympy's exact fallback: the sympy path redoes it all
        return eval_report(boundlab.get(args.id), args)


def eval_report(b, args) -> int:
    """Evaluate ``b`` (a ``Bound``, or the cache's ``FastBound``) for ``boundlab bounds eval``
    and print the result; computes everything before printing anything."""
    from boundlab.errors import PreconditionError

    values = parse_assignments(args.assignments, b)
    value = b.evaluate(**values)
    terms = b.evaluate_terms(**values) if b.terms else {}
    violated = b.violated_preconditions(**values)
    result = {
        "bound_id": b.id,
        "kind": b.kind,
        "bound_value": value,
        "terms": {k: float(v) for k, v in terms.items()},
        "preconditions_violated": violated,
        "preconditions_unchecked": b.unchecked_preconditions(**values),
    }
    if args.json:
        from verify.result_keys import EVAL_RENAMED, with_old_keys

        # JSON escapes control characters itself; the old keys id / value until the next release
        print(dumps_strict(with_old_keys(result, EVAL_RENAMED)))
    else:
        from boundlab.integrity import escape  # text may come from a cache file

        print(f"{escape(b.id)} [{escape(b.kind)}] = {value:.6g}")
        for k, v in result["terms"].items():
            print(f"  {escape(k):14s} {v:.6g}")
        for text in violated:
            print(f"  precondition violated: {escape(text)}")
        for text in result["preconditions_unchecked"]:
            print(f"  precondition not checked (parameter missing): {escape(text)}")
    if args.strict and violated:
        raise PreconditionError(b.id, violated)
    return 0
