"""``boundlab reproduce [PAPER[:ITEM]] [--quick] [--out DIR] [--backend ...] [--executor
local|dask] [--list] [--data DIR]``: run the papers' experiments (:mod:`verify.reproduce`) and
write one report.

Each item writes ``DIR/<paper>-<item>/`` (results.csv, figure.png, section.md) and the run
writes ``DIR/report.md`` with the paper's numbers beside ours, the comparison rule and the
outcome. Finished items are skipped on a re-run (resumable); ``--force`` reruns them. Exit
status 0 when every selected item ran (whatever its outcome: a difference from a paper is a
finding), 2 for bad input.

Example
-------
>>> from verify.cli import main
>>> main(["reproduce", "--list", "004"])  # doctest: +ELLIPSIS
004:fig2     DKR Fig. 2:...
0
"""

from __future__ import annotations

import os
import sys

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``reproduce`` command to the CLI's subparsers."""
    p = sub.add_parser("reproduce", help="reproduce the papers' experiments beside their numbers",
                       description="Run the registered experiments of the five papers (spec §6) "
                                   "on offline stand-in data and compare with the papers.")
    p.add_argument("selection", nargs="?", default=None, metavar="PAPER[:ITEM]",
                   help="a paper (000..004) or one item (e.g. 000:table3); default all")
    p.add_argument("--quick", action="store_true", help="small sizes (all items in minutes)")
    p.add_argument("--out", default="reproduce-out", help="output directory (default "
                                                          "reproduce-out)")
    p.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto",
                   help="backend of the MLP / CNN runs (auto: torch on CUDA, else numpy)")
    p.add_argument("--device", default=None, help="torch device (default cuda if available)")
    p.add_argument("--data", default=None, metavar="DIR",
                   help="the user's MNIST IDX / LEAF JSON / CIFAR-10 .bin files replacing the "
                        "bundled stand-ins")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="how the seed / grid loops run (verify.sweep): local, or Dask "
                        "distributed (pip install boundlab[dask])")
    p.add_argument("--list", action="store_true", help="list the registered items and exit")
    p.add_argument("--force", action="store_true", help="rerun items already finished in --out")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from boundlab.errors import DomainError
    from verify.reproduce import reproduce_all
    from verify.reproduce.registry import Config, select

    exps = select(args.selection)
    if args.list:
        for e in exps:
            print(f"{e.id:<12} {e.ref}: {e.title}")
        return 0
    if args.data is not None and not os.path.isdir(args.data):
        raise DomainError("--data", args.data, "an existing directory")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise DomainError("--out", args.out, "a directory (new or holding earlier results)",
                          "a file is there")
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as exc:
        raise DomainError("--out", args.out, "a directory that can be created",
                          exc.strerror or str(exc)) from None
    cfg = Config(quick=args.quick, backend=args.backend, device=args.device, data=args.data,
                 executor=args.executor)
    if args.force:
        import shutil

        from verify.reproduce.output import slug

        for e in exps:
            shutil.rmtree(os.path.join(args.out, slug(e.id)), ignore_errors=True)

    def progress(e, status, seconds):
        print(f"{e.id:<12} {status:<8} {seconds:6.1f} s  {e.ref}", file=sys.stdout, flush=True)

    status = reproduce_all(args.selection, out=args.out, config=cfg, progress=progress)
    n = {s: sum(1 for _, x in status if x == s)
         for s in ("matches", "differs", "tie", "not exercised", "skipped")}
    print(f"{len(status)} items: {n['matches']} match, {n['differs']} differ, {n['tie']} tie, "
          f"{n['not exercised']} not exercised, {n['skipped']} skipped (already done); report: "
          f"{os.path.join(args.out, 'report.md')}")
    return 0
