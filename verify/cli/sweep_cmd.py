"""``boundlab sweep ALGO --problem NAME --grid name=v1,v2 [...] [name=value ...]``: a sweep of
:func:`verify.sweep` from the shell, with a progress bar.

``--grid name=v1,v2,...`` (repeatable; one word: ``--grid lr=0.1,0.2``) gives the values of one
grid name; ``name=value`` words are fixed settings (both read by :mod:`verify.cli.assign`).
Both are routed as in :mod:`verify.sweep`: options of the problem build it (``toys.make(NAME,
...)``), the rest go to ``toys.run``. ``--bound ID`` judges a bound on every
grid point over the seeds; ``--out DIR`` keeps every finished point (a re-run resumes);
``--table FILE`` (``.csv`` or ``.parquet``) writes the whole table atomically;
``--executor dask`` runs on a local Dask cluster (``--workers N``) or on ``--scheduler ADDR``
(``--connect-timeout SECONDS``, default 10: a scheduler that does not answer in time is refused).
A damaged, forged or foreign file in the ``--out`` folder is refused with one line naming it.
Prints one line per grid point (and its verdicts with a bound); ``--json`` prints strict JSON
instead; the progress bar shows on a terminal only. Exit status: 0 done, 1 a VIOLATED
verdict, 2 bad input (one line).

Example
-------
>>> from verify.cli import main
>>> main(["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1", "--seeds",
...       "2", "--rounds", "3", "n_clients=3", "dim=2", "--no-progress"])
... # doctest: +NORMALIZE_WHITESPACE
lr=0.05: 8 rows, final gap 2.94
lr=0.1: 8 rows, final gap 0.981
0
"""

from __future__ import annotations

import pathlib
import sys

from boundlab.errors import DomainError

__all__ = ["register", "parse_grid"]


def register(sub) -> None:
    """Add the ``sweep`` command to the CLI's subparsers."""
    p = sub.add_parser("sweep", help="run an algorithm over a grid of settings x seeds",
                       description="A sweep of verify.sweep: one row per grid point, seed and "
                                   "round; resumable with --out; Dask with --executor dask.")
    p.add_argument("algorithm", help="algorithm name (see toys.ALGORITHMS)")
    p.add_argument("fixed", nargs="*", metavar="name=value",
                   help="fixed settings (problem options or run hyper-parameters)")
    p.add_argument("--problem", required=True, help="problem name (boundlab toys list)")
    p.add_argument("--grid", action="append", default=[], metavar="name=v1,v2,...",
                   help="values of one grid name, one word (repeatable), e.g. --grid lr=0.05,0.1")
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per point (default 3)")
    p.add_argument("--rounds", type=int, default=50, help="rounds per run (default 50)")
    p.add_argument("--bound", default=None, help="bound id to judge on every point")
    p.add_argument("--out", default=None, help="directory of finished points (resumable)")
    p.add_argument("--table", default=None, help="write the table (.csv or .parquet)")
    p.add_argument("--executor", default="local", help="local (default) or dask")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT")
    p.add_argument("--connect-timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds the --scheduler has to connect and answer (default 10)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    p.add_argument("--json", action="store_true", help="print a strict JSON summary")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_sweep)
    from .run_cmd import _allow_intermixed

    _allow_intermixed(p)


def parse_grid(items) -> dict:
    """``name=v1,v2`` words -> {name: [v1, v2]} (:func:`verify.cli.assign.grid`, the shared
    parser; values typed as ``boundlab toys`` does).

    >>> parse_grid(["lr=0.05,0.1", "local_steps=5", "participation=full"])
    {'lr': [0.05, 0.1], 'local_steps': [5], 'participation': ['full']}
    """
    from .assign import grid

    return grid(items)


def _words(args) -> tuple[dict, dict]:
    """``(grid, fixed settings)``; ``--grid lr 0.1,0.2`` (the values as a separate word) is
    refused with the one word to write instead, ``--grid lr=0.1,0.2``."""
    from .assign import AssignmentError, options

    loose = [w for w in args.fixed if "=" not in w]
    for word in args.grid:
        name = word.strip()
        if "=" not in word and name.isidentifier() and loose:
            raise AssignmentError("--grid", word, "name=v1,v2,...",
                                  f"--grid {name}={loose[0].strip()}",
                                  f"the values {loose[0]!r} came as a separate word")
    return parse_grid(args.grid), options(args.fixed, what="setting")


def _sweep(args) -> int:
    import verify

    grid, fixed = _words(args)
    if args.table is not None and pathlib.Path(args.table).suffix not in (".csv", ".parquet"):
        raise DomainError("--table", args.table, "a path ending in .csv or .parquet")
    kw = dict(grid=grid, seeds=args.seeds, rounds=args.rounds, bound=args.bound, out=args.out,
              executor=args.executor, scheduler=args.scheduler, n_workers=args.workers,
              connect_timeout=args.connect_timeout, **fixed)
    if args.no_progress or args.json or not sys.stderr.isatty():
        df = verify.sweep(args.problem, args.algorithm, **kw)
    else:
        df = _with_bar(lambda progress: verify.sweep(args.problem, args.algorithm,
                                                     progress=progress, **kw))
    if args.table is not None:
        _write_table(df, pathlib.Path(args.table))
    rows = _summary(df, list(grid), args.bound is not None)
    if args.json:
        from boundlab.io import dumps_strict

        print(dumps_strict({"rows": len(df), "points": rows}))
    else:
        for r in rows:
            point = ", ".join(f"{k}={r[k]}" for k in grid)
            tail = (f"verdicts {r['verdicts']}" if "verdicts" in r
                    else f"final gap {r['final_gap']:.3g}")
            print(f"{point}: {r['rows']} rows, {tail}")
    return int(any("VIOLATED" in r.get("verdicts", {}) for r in rows))


def _with_bar(run):
    """``run(progress)`` with a rich progress bar on stderr, started at the first report (after
    the sweep's input was validated, so an error stays one line)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress("[progress.description]{task.description}", BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(file=sys.stderr), transient=True)
    task = []

    def progress(done, total):
        if not task:
            bar.start()
            task.append(bar.add_task("grid points", total=total))
        bar.update(task[0], completed=done, total=total)

    try:
        return run(progress)
    finally:
        if task:
            bar.stop()


def _summary(df, names, judged) -> list[dict]:
    out = []
    for key, g in df.groupby(names, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(names, key)}
        row["rows"] = len(g)
        last = g[g["round"] == g["round"].max()]
        row["final_gap"] = float(last["gap"].mean())
        if judged:
            counts = g["verdict"].dropna().value_counts()
            row["verdicts"] = {str(k): int(v) for k, v in counts.items()}
        out.append(row)
    return out


def _write_table(df, path: pathlib.Path) -> None:
    from boundlab.io import atomic_path

    with atomic_path(path) as tmp:
        if path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
