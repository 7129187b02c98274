"""``boundlab verify``: the main job — every check, a table, a report, figures.

Exit status: 0 when every check holds (or is not-applicable / order-only / diverged);
1 when any check is VIOLATED or errored; 2 for bad input.
"""

from __future__ import annotations

import sys

__all__ = ["register"]

_HELP = """Run the checks (theory vs measured), print a table and write DIR/report.md,
DIR/results.csv and DIR/figures/. Exit status: 0 all checks hold (or are not-applicable,
order-only, diverged); 1 a check is VIOLATED or errored; 2 bad input."""


def register(sub) -> None:
    p = sub.add_parser("verify", help="run every check: theory vs measured (the main job)",
                       description=_HELP)
    p.add_argument("--only", metavar="FAMILY|ID", help="a family, a bound id or a check name")
    p.add_argument("--quick", action="store_true",
                   help="small runs (fewer seeds and rounds); PEP solves only if cached")
    p.add_argument("--out", default="boundlab-out", metavar="DIR",
                   help="output directory (default: boundlab-out)")
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch"))
    p.add_argument("--device", default=None, help="torch device, e.g. cuda or cpu")
    p.add_argument("--seeds", type=int, default=None, help="override the number of seeds")
    p.add_argument("--no-tightness", action="store_true", help="skip the PEP tightness column")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--list", action="store_true", help="list the checks and exit")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from boundlab.errors import DomainError
    from verify import report
    from verify.suite import Context, run_suite, select

    if args.seeds is not None and args.seeds < 1:
        raise DomainError("--seeds", args.seeds, "integer >= 1")
    if args.list:
        for c in select(args.only):
            print(f"{c.family:13s} {c.name:36s} {', '.join(c.bound_ids)}")
        return 0
    ctx = Context(quick=args.quick, backend=args.backend, device=args.device, seeds=args.seeds,
                  tightness=not args.no_tightness)
    results = run_suite(args.only, ctx, progress=not args.json and sys.stderr.isatty())
    settings = {"only": args.only, "quick": args.quick, "backend": args.backend,
                "device": args.device, "seeds": args.seeds}
    out = report.write_report(results, args.out, settings=settings)
    if args.json:
        print(report.to_json(results))
    else:
        report.print_table(results)
        print(f"report: {out / 'report.md'}")
    return report.exit_status(results)
