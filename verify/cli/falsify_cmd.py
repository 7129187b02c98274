"""``boundlab falsify``: try to break a bound; a VIOLATED verdict comes with a replayed instance.

Usage::

    boundlab falsify ID [name=value ...] [--budget N] [--seed S] [--families a,b]
                        [--no-exact] [--save PATH] [--json] [--device DEV]

``name=value`` sets constants and run settings (``L``, ``mu``, ``D``, ``T``, ``eta``,
``n_clients``, ``dim``, local steps) or values of the bound's other parameters; see
:func:`verify.falsify`. A user bound is available through ``boundlab.register`` in a plug-in
(entry-point group ``boundlab.bounds``). ``--device cpu|cuda|cuda:N`` runs the search's
populations with torch there (:func:`verify.falsify`'s ``device``).

Exit status: 0 the bound holds on every instance tried, or is not applicable; 1 VIOLATED (an
instance replayed on the engine measured a ratio above 1) or an error of the search; 2 bad
input (one ``error:`` line).

Example
-------
>>> from verify.cli import main
>>> main(["falsify", "contraction.lemma_a3", "--budget", "40", "--json"])  # doctest: +ELLIPSIS
{"bound_id": "contraction.lemma_a3", "verdict": "holds", ...}
0
"""

from __future__ import annotations

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``falsify`` command to the CLI's subparsers."""
    p = sub.add_parser(
        "falsify", help="try to break a bound: worst instance found, replayed on the engine",
        description="Search every family of the bound's function class (and its exact worst "
                    "case, where a PEP model exists) for the instance of largest measured / "
                    "bound. VIOLATED is reported only with an instance replayed on toys.run.")
    p.add_argument("id", help="bound id (catalogue or registered)")
    p.add_argument("assignments", nargs="*", metavar="name=value",
                   help="constants and run settings, e.g. L=1 D=1 eta=1 T=8")
    p.add_argument("--budget", type=int, default=None, help="instance evaluations (>= 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search (default 0)")
    p.add_argument("--families", default=None, metavar="a,b",
                   help="search only these families (default: all of the class)")
    p.add_argument("--no-exact", action="store_true", help="skip the exact worst case (PEP)")
    p.add_argument("--save", default=None, metavar="PATH", help="write the result as JSON")
    p.add_argument("--force", dest="force_overwrite", action="store_true",
                   help="let --save replace a file boundlab did not write (or one changed since)")
    p.add_argument("--json", action="store_true", help="machine-readable output (strict JSON)")
    p.add_argument("--participation", default=None, metavar="PATTERN",
                   help="a registered bound's participation: bernoulli, cyclic, markov, any, or "
                        "one pattern such as bernoulli:p=0.3 (default: every client, every "
                        "round)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="run the search groups here or as Dask tasks (same result)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="a running Dask scheduler, tcp://HOST:PORT (with --executor dask)")
    p.add_argument("--device", default=None, metavar="DEV",
                   help="run the search's populations with torch on DEV: cpu, cuda or cuda:N "
                        "(default: numpy; needs torch, and CUDA for cuda)")
    p.set_defaults(func=_run)
    from .run_cmd import _allow_intermixed

    _allow_intermixed(p)  # name=value words may come after options (as run and sweep)


def _run(args) -> int:
    import warnings

    import verify
    from verify.cli.assign import numbers
    from verify.falsify.api import DEFAULT_BUDGET

    setting = numbers(args.assignments, what="setting")
    if args.save is not None:  # a user's file: refused before the search
        from boundlab.io import check_replaceable

        check_replaceable(args.save, "--save", "a falsification result")
    fams = None if args.families is None else [f for f in args.families.split(",") if f]
    if fams == []:
        from boundlab.errors import DomainError

        raise DomainError("--families", args.families, "one or more search family names, "
                          "comma-separated (omit the option: every family of the class)")
    from boundlab.io import as_option

    with warnings.catch_warnings(), as_option("--save"):
        warnings.simplefilter("ignore")
        res = verify.falsify(args.id, budget=DEFAULT_BUDGET if args.budget is None
                             else args.budget, seed=args.seed, families=fams,
                             exact=not args.no_exact, save=args.save,
                             executor=args.executor, scheduler=args.scheduler,
                             device=args.device,
                             **({} if args.participation is None
                                else {"participation": args.participation}), **setting)
    if args.json:
        from boundlab.io import dumps_strict

        print(dumps_strict(res.to_dict()))
    else:
        print(_text(res))
    return 1 if res.verdict in ("VIOLATED", "error") else 0


def _text(res) -> str:
    lines = [f"{res.bound_id}: {res.verdict}" + (f" ({res.reason})" if res.reason else "")]
    if res.instance is not None:
        i = res.instance
        lines.append(f"  worst ratio {res.worst_ratio:.6g} ({res.orientation}), replayed on "
                     f"toys.run: family {i.family}, {i.run}")
    if res.exact is not None:
        e = res.exact
        up = "n/a" if e.get("upper") is None else f"{e['upper']:.6g}"
        lines.append(f"  exact worst case (PEP) / bound: lower {e['lower']:.6g}, upper {up} "
                     f"at T={e['T']}, eta={e['eta']:.6g}")
    elif res.exact_reason:
        lines.append(f"  exact: none ({res.exact_reason})")
    if res.per_family:
        lines.append("  per family: " + ", ".join(f"{k} {v:.4g}" for k, v in
                                                  res.per_family.items()))
    lines.append(f"  {res.evaluations} evaluations in {res.seconds:.2f} s")
    lines.extend(f"  note: {n}" for n in res.notes)
    return "\n".join(lines)
