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
Prints one line per grid point (and its verdicts with a bound); ``--json`` prints one strict
JSON document instead (``rows``, ``algorithm``, ``bound_id`` and per point its grid values,
``rows``, ``final_gap`` and, with a bound, ``bound_value``, ``measured``, ``ratio`` and ``round``
of its largest ratio, its worst ``verdict`` and ``verdicts``, the count of each). Progress goes
to stderr: a bar on a terminal, plain lines elsewhere, nothing with ``--quiet`` (alias
``--no-progress``). Exit status: 0 done, 1 a VIOLATED verdict, 2 bad input (one line).

Example
-------
>>> from verify.cli import main
>>> main(["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1", "--seeds",
...       "2", "--rounds", "3", "n_clients=3", "dim=2", "--quiet"])
... # doctest: +NORMALIZE_WHITESPACE
lr=0.05: 8 rows, final gap 2.94
lr=0.1: 8 rows, final gap 0.981
0
"""

from __future__ import annotations

import pathlib

from boundlab.errors import DomainError

from .progress import mode

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
    p.add_argument("--force", dest="force_overwrite", action="store_true",
                   help="let --out write into a folder holding files boundlab did not write")
    p.add_argument("--table", default=None, help="write the table (.csv or .parquet)")
    p.add_argument("--executor", default="local", help="local (default) or dask")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address tcp://HOST:PORT")
    p.add_argument("--connect-timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds the --scheduler has to connect and answer (default 10)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    p.add_argument("--json", action="store_true", help="print a strict JSON summary")
    p.add_argument("--quiet", "--no-progress", dest="quiet", action="store_true",
                   help="no progress on stderr (default: a bar on a terminal, plain lines "
                        "elsewhere)")
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
    if args.table is not None:  # a user's file: refused before the sweep
        from boundlab.io import check_replaceable

        check_replaceable(args.table, "--table", "a sweep table")
    kw = dict(grid=grid, seeds=args.seeds, rounds=args.rounds, bound=args.bound, out=args.out,
              executor=args.executor, scheduler=args.scheduler, n_workers=args.workers,
              connect_timeout=args.connect_timeout, **fixed)
    from boundlab.io import as_option

    with as_option("--out"):
        df = _with_progress(mode(args.quiet), lambda progress: verify.sweep(
            args.problem, args.algorithm, progress=progress, **kw))
    if args.table is not None:
        _write_table(df, pathlib.Path(args.table))
    rows = _summary(df, list(grid), args.bound is not None)
    if args.json:
        from boundlab.io import dumps_strict

        print(dumps_strict({"rows": len(df), "algorithm": _algorithm(df, args.algorithm),
                            "bound_id": args.bound, "points": rows}))
    else:
        for r in rows:
            point = ", ".join(f"{k}={r[k]}" for k in grid) or "every run (no --grid)"
            tail = (f"verdicts {r['verdicts']}" if "verdicts" in r
                    else f"final gap {r['final_gap']:.3g}")
            print(f"{point}: {r['rows']} rows, {tail}")
    return int(any("VIOLATED" in r.get("verdicts", {}) for r in rows))


def _with_progress(how: str, run):
    """``run(progress)`` with the grid points counted on stderr in the mode ``how``
    (:mod:`verify.cli.progress`), started at the first report (after the sweep's input was
    validated, so an error stays one line)."""
    from .progress import Ticker

    ticker = Ticker(None, "grid points", how)

    def progress(done, total):
        ticker.update(done, total=total)

    try:
        return run(None if how == "off" else progress)
    finally:
        ticker.stop()


def _summary(df, names, judged) -> list[dict]:
    """One dict per grid point: its grid values, ``rows``, ``final_gap``; with a bound, the
    schema's ``bound_value``, ``measured``, ``ratio`` and ``round`` of its largest ratio, its
    worst ``verdict`` and the count of each (``verdicts``)."""
    out = []
    for key, g in df.groupby(names, sort=False, dropna=False) if names else [((), df)]:
        key = key if isinstance(key, tuple) else (key,)
        row = {k: (v.item() if hasattr(v, "item") else v) for k, v in zip(names, key)}
        row["rows"] = len(g)
        last = g[g["round"] == g["round"].max()]
        row["final_gap"] = float(last["gap"].mean())
        if judged:
            row.update(_judged(g))
        out.append(row)
    return out


#: the verdict a grid point reports: the first of these any of its rows has
_WORST_FIRST = ("VIOLATED", "error", "diverged", "holds", "order-only", "not-applicable")


def _judged(g) -> dict:
    """The bound's columns of one grid point: its row of largest ratio and its worst verdict."""
    rows = g[g["verdict"].notna()]
    counts = rows["verdict"].value_counts()
    seen = [str(v) for v in counts.index]
    worst = next((v for v in _WORST_FIRST if v in seen), seen[0] if seen else None)
    out = {"bound_value": None, "measured": None, "ratio": None, "round": None,
           "verdict": worst, "verdicts": {str(k): int(v) for k, v in counts.items()}}
    if len(rows):
        ratios = rows["ratio"].astype(float)
        top = rows.loc[ratios.idxmax()] if ratios.notna().any() else rows.iloc[0]
        for k in ("bound_value", "measured", "ratio", "round"):
            v = top[k]
            out[k] = v.item() if hasattr(v, "item") else v
    return out


def _algorithm(df, name) -> str:
    """The algorithm's name as the table's ``algorithm`` column says (else the argument)."""
    if "algorithm" in df.columns and len(df):
        return str(df["algorithm"].iloc[0])
    return str(name)


def _write_table(df, path: pathlib.Path) -> None:
    from boundlab.io import atomic_path

    with atomic_path(path, name="--table", owned=True) as tmp:  # never a user's file
        if path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
