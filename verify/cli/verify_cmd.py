"""``boundlab verify``: the main job — every check, a table, a report, figures.

Exit status: 0 when every bound check holds (or is not-applicable / order-only / diverged) and
no claim is refuted; 1 when a bound check is VIOLATED (on a toy or on a worst instance found),
a claim is refuted or a check errored; 2 for bad input.
"""

from __future__ import annotations

import contextlib

from .progress import counter, mode, pep_spinner

__all__ = ["register"]

_HELP = """Run the checks (theory vs measured) and the worst-instance searches, print the
tables (bound checks, claims, how informative each "holds" is) and write DIR/report.md,
DIR/results.csv, DIR/figures/ (and DIR/worst/ID.json for a bound a searched instance violates).
Progress goes to stderr: a bar on a terminal, one line per check elsewhere (a CI log, a
notebook; at most one every 2 s), nothing with --quiet. Exit status: 0 every bound check holds
(or is not-applicable, order-only, diverged) and no claim is refuted; 1 a bound check is
VIOLATED, a claim refuted or a check errored; 2 bad input."""


def register(sub) -> None:
    p = sub.add_parser("verify", help="run every check: theory vs measured (the main job)",
                       description=_HELP)
    p.add_argument("--only", metavar="FAMILY|ID", help="a family, a bound id or a check name")
    p.add_argument("--quick", action="store_true",
                   help="small runs (fewer seeds and rounds); PEP solves only if cached")
    p.add_argument("--out", default="boundlab-out", metavar="DIR",
                   help="output directory (default: boundlab-out)")
    p.add_argument("--force", dest="force_overwrite", action="store_true",
                   help="let --out replace a folder holding files boundlab did not write")
    p.add_argument("--backend", default="numpy", choices=("numpy", "torch"))
    p.add_argument("--device", default=None, help="torch device, e.g. cuda or cpu")
    p.add_argument("--seeds", type=int, default=None, help="override the number of seeds")
    p.add_argument("--no-tightness", action="store_true", help="skip the PEP tightness column")
    p.add_argument("--json", action="store_true",
                   help="print the results as one strict JSON document (verify.schema's names)")
    p.add_argument("--list", action="store_true",
                   help="list the checks and exit (with --json: as a JSON list)")
    p.add_argument("--worst-budget", type=int, default=None, metavar="N",
                   help="instances evaluated by each worst-instance search (default: per check, "
                        "about 100-160; --quick: 12-20)")
    p.add_argument("--budget", type=int, default=None, metavar="N",
                   help="instances evaluated by each generated verify.falsify search of a "
                        "catalogue bound (default 200, 40 for the quadratic fallback; "
                        "--quick: 40 / 12; 0: no search)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="checks, then figures, run side by side in N worker processes "
                        "(default: the usable cores, at most 8; 1 with --backend torch or "
                        "--executor dask); the results are the same for any N")
    p.add_argument("--executor", default="local", choices=("local", "dask"),
                   help="where the checks' seeds and settings run: local (default) or dask "
                        "(the [dask] extra; identical results)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="with --executor dask: a running scheduler tcp://HOST:PORT (default: "
                        "one local cluster for the whole suite)")
    p.add_argument("--connect-timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds the --scheduler has to connect and answer (default 10)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    import matplotlib

    matplotlib.use("Agg")  # figures go to files; never open a window
    from boundlab.errors import DomainError
    from verify import report
    from verify.suite import Context, run_suite, select

    if args.seeds is not None and args.seeds < 1:
        raise DomainError("--seeds", args.seeds, "integer >= 1")
    if args.worst_budget is not None and args.worst_budget < 10:
        raise DomainError("--worst-budget", args.worst_budget, "integer >= 10")
    if args.budget is not None and (args.budget < 0 or 0 < args.budget < 10):
        raise DomainError("--budget", args.budget, "0 (no search) or an integer >= 10")
    if args.jobs is not None and args.jobs < 1:
        raise DomainError("--jobs", args.jobs, "integer >= 1")
    if args.list:
        return _list(select(args.only), args.json)
    # refuse what would only fail after all the work: the output path, the device, --only
    report.check_output_path(args.out, "--out")
    check_device(args.backend, args.device)
    select(args.only)
    if args.scheduler is not None and args.executor != "dask":
        raise DomainError("--scheduler", args.scheduler, "given only with --executor dask")
    how = mode(args.quiet)
    with _scheduler(args) as scheduler, pep_spinner(False), \
            counter(len(select(args.only)), "checks", how) as step:
        ctx = Context(quick=args.quick, backend=args.backend, device=args.device,
                      seeds=args.seeds, tightness=not args.no_tightness,
                      worst_budget=args.worst_budget, falsify_budget=args.budget,
                      executor=args.executor,
                      scheduler=scheduler)
        results = run_suite(args.only, ctx, progress=step, jobs=args.jobs or default_jobs())
    settings = {"only": args.only, "quick": args.quick, "backend": args.backend,
                "device": args.device, "seeds": args.seeds, "budget": ctx.search_budget()}
    out = report.write_report(results, args.out, settings=settings,  # one atomic output set
                              name="--out", jobs=_usable(args.jobs or default_jobs(), ctx))
    if args.json:
        print(report.to_json(results))
    else:
        report.print_table(results)
        print(f"report: {out / 'report.md'}")
    return report.exit_status(results)


def _usable(jobs: int, ctx) -> int:
    """The processes drawing the figures: ``jobs``, or 1 where the checks ran in one process
    (torch: its thread pools do not survive a fork; dask: its threads)."""
    return jobs if ctx.backend == "numpy" and ctx.executor == "local" else 1


def default_jobs() -> int:
    """The worker processes ``boundlab verify`` uses without ``--jobs``: the cores this process
    may use, at most 8."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, 8))


def _list(checks, as_json: bool) -> int:
    """``--list``: one line a check (family, name, bound ids), or with ``--json`` one JSON
    list of ``{"family", "check", "bound_ids"}``."""
    if as_json:
        from boundlab.io import dumps_strict

        print(dumps_strict([{"family": c.family, "check": c.name, "bound_ids": list(c.bound_ids)}
                            for c in checks], indent=1))
        return 0
    for c in checks:
        print(f"{c.family:13s} {c.name:36s} {', '.join(c.bound_ids)}")
    return 0


@contextlib.contextmanager
def _scheduler(args):
    """The Dask scheduler address for the suite: the one given, or one local cluster started
    for the whole run (closed at the end); None for the local executor."""
    if args.executor != "dask" or args.scheduler is not None:
        if args.scheduler is not None:  # a scheduler that hangs or is not one: refused now
            from verify.sweep.executor import probe_scheduler

            probe_scheduler(args.scheduler, args.connect_timeout)
        yield args.scheduler
        return
    try:
        from distributed import LocalCluster
    except ImportError:
        from boundlab.errors import DomainError

        raise DomainError("--executor", "dask", "local, or dask with the [dask] extra "
                          "installed (pip install 'boundlab[dask]')") from None
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def check_device(backend: str, device) -> None:
    """Refuse a device the backend cannot use, before any work (exit 2 at the CLI).

    >>> check_device("numpy", None); check_device("numpy", "cpu")
    >>> check_device("numpy", "cuda")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: --device = 'cuda' is outside its domain: cpu or omitted with \
--backend numpy
    """
    from boundlab.errors import DomainError

    if backend == "numpy":
        if device not in (None, "cpu"):
            raise DomainError("--device", device, "cpu or omitted with --backend numpy")
        return
    if device is None:
        return
    try:
        import torch
    except ImportError:
        raise DomainError("--backend", backend, "numpy (torch is not installed)") from None
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise DomainError("--device", device, "a torch device such as cpu, cuda or cuda:0"
                          ) from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DomainError("--device", device, "cpu (CUDA is not available here)")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise DomainError("--device", device,
                              f"cuda:0..cuda:{torch.cuda.device_count() - 1}")
    elif dev.type not in ("cpu", "mps"):
        raise DomainError("--device", device, "cpu or cuda")
