"""``boundlab run ALGO --problem NAME [...] [hyper=value ...]``: one simulation from the shell.

Builds ``toys.make(NAME, seed=S, **problem options)`` and runs ``toys.run`` with the
hyper-parameters given as ``name=value`` words (numbers, ``inf``, comma lists such as
``rules=fedsoftbetter,fedavg``, strings). ``lr`` is a number or an expression in the global
iteration index ``t`` (and the round ``r = t // local_steps``), e.g. ``lr="1/(t+40)"`` or
``lr="0.1*0.99**r"``. The words are read by the shared parser :mod:`verify.cli.assign`. Prints a
short summary (``--json``: one strict JSON document, :func:`summary`); ``--out trace.csv`` (or
``.parquet``) saves the per-round table atomically. Exit status: 0 when the run completed, 1
when it diverged (a non-finite model or one past ``toys.engine.DIVERGENCE``: the summary says in
which round), 2 for bad input.

Example
-------
>>> from verify.cli import main
>>> main(["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=3",
...       "--rounds", "3", "lr=0.05", "local_steps=2"])  # doctest: +ELLIPSIS
fedavg on 'quadratic': 3 rounds x 2 local steps, N = 3, record = round
...
0
"""

from __future__ import annotations

import time

from boundlab.errors import DomainError

__all__ = ["parse_lr", "register", "summary"]


def register(sub) -> None:
    """Add the ``run`` command to the CLI's subparsers."""
    import toys.algorithms as algs

    p = sub.add_parser("run", help="simulate one algorithm on one toy problem",
                       description="Algorithms: " + ", ".join(sorted(algs.ALGORITHMS)))
    p.add_argument("algorithm", help="algorithm name (see toys.ALGORITHMS)")
    p.add_argument("hyper", nargs="*", metavar="name=value",
                   help="hyper-parameters, e.g. lr=0.1 local_steps=5 batch_size=16")
    p.add_argument("--problem", required=True, help="problem name (boundlab toys list)")
    p.add_argument("--problem-opt", action="append", default=[], metavar="key=value",
                   help="option passed to toys.make (repeatable), e.g. n_clients=20")
    p.add_argument("--rounds", type=int, default=50, help="communication rounds (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run and of the problem")
    p.add_argument("--participation", default="full",
                   help="full (default) or NAME:key=value,... e.g. bernoulli:p=0.3, uniform:m=5")
    p.add_argument("--backend", choices=("numpy", "torch"), default="numpy")
    p.add_argument("--device", default=None, help="torch device (default cuda if available)")
    p.add_argument("--dtype", choices=("float64", "float32"), default=None,
                   help="torch dtype (default float64)")
    p.add_argument("--record", choices=("none", "sync", "round", "step"), default="round")
    p.add_argument("--out", default=None, help="write the per-round table (.csv or .parquet)")
    p.add_argument("--force", dest="force_overwrite", action="store_true",
                   help="let --out replace a file boundlab did not write (or one changed since)")
    p.add_argument("--json", action="store_true",
                   help="print a strict JSON summary of the run instead of the text")
    p.set_defaults(func=_run)
    _allow_intermixed(p)


def _allow_intermixed(parser) -> None:
    """Let ``name=value`` words come after options (argparse's intermixed parsing)."""

    class _Intermixed(type(parser)):
        _busy = False

        def parse_known_args(self, args=None, namespace=None):
            if self._busy:
                return super().parse_known_args(args, namespace)
            self._busy = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._busy = False

    parser.__class__ = _Intermixed


def parse_lr(text, local_steps: int = 1):
    """A number, or a callable of the global iteration index t from an expression in ``t`` and
    ``r`` (= t // local_steps), parsed by the whitelist grammar of :mod:`boundlab.expr` (never
    eval / sympify: the text is data).

    >>> parse_lr("0.5"), float(parse_lr("1/(t+4)")(0)), float(parse_lr("0.5**r", 2)(3))
    (0.5, 0.25, 0.5)
    """
    if not isinstance(text, str):
        return text
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not (value > 0 and value < float("inf")):
            raise DomainError("lr", text, "a positive finite number or an expression in t and r")
        return value
    import numpy as np

    from boundlab.expr import parse

    expr = parse(text, ("t", "r"), name="lr")
    steps = max(int(local_steps), 1)

    def schedule(it):
        it = np.asarray(it)
        return expr(t=it, r=it // steps)
    schedule.text = text
    return schedule


def _check_schedule(fn, text, n_iter: int) -> None:
    """Refuse a schedule that is not finite and positive over the iterations the run uses."""
    import numpy as np

    from boundlab.expr import is_finite_positive

    n = min(int(n_iter), 10_000_000)
    t = np.arange(n)
    vals = np.broadcast_to(fn(t), t.shape)
    if not is_finite_positive(vals):
        bad = int(np.flatnonzero(~(np.isfinite(vals) & (vals > 0)))[0])
        raise DomainError("lr", text, "a schedule that is finite and > 0 at every iteration",
                          f"lr(t={bad}) = {float(vals[bad])!r}")


def _check_out(path) -> None:
    """``--out``: a .csv or .parquet file path in an existing directory."""
    import pathlib

    if path is None:
        return
    dom = "a .csv or .parquet file path in an existing directory"
    if not str(path).strip():
        raise DomainError("--out", path, dom, "empty path")
    p = pathlib.Path(path)
    if p.suffix.lower() not in (".csv", ".parquet"):
        raise DomainError("--out", path, dom, "unknown suffix")
    if p.is_dir():
        raise DomainError("--out", path, dom, "is a directory")
    parent = p.parent if str(p.parent) else pathlib.Path(".")
    if not parent.is_dir():
        raise DomainError("--out", path, dom, f"directory {str(parent)!r} does not exist")
    from boundlab.io import check_replaceable

    check_replaceable(p, "--out", "a trace table")  # a user's file: refused before the run


def _settings(args) -> tuple[dict, dict]:
    """``(hyper-parameters, problem options)`` of the command's ``name=value`` words (the
    shared parser, :mod:`verify.cli.assign`); ``lr`` as :func:`parse_lr` reads it."""
    from .assign import options, split, typed

    raw = split(args.hyper, what="hyper-parameter", hint="0.1")
    popts = options(args.problem_opt, what="--problem-opt")
    _check_out(args.out)
    if args.backend == "numpy" and args.device not in (None, "cpu"):
        raise DomainError("--device", args.device, "cpu (or omitted) with --backend numpy")
    raw_lr = raw.pop("lr", None)
    hyper = {k: typed(v) for k, v in raw.items()}
    if raw_lr is not None:
        steps = hyper.get("local_steps", 1)
        steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else 1
        hyper["lr"] = parse_lr(raw_lr, steps)
        if callable(hyper["lr"]) and args.rounds >= 1:
            _check_schedule(hyper["lr"], raw_lr, args.rounds * max(steps, 1))
    if "K" in hyper and isinstance(hyper["K"], str) and hyper["K"].lower() == "inf":
        hyper["K"] = float("inf")
    if isinstance(hyper.get("rules"), str):
        hyper["rules"] = (hyper["rules"],)
    return hyper, popts


def _run(args) -> int:
    import toys
    from toys.problems.registry import options_of

    hyper, popts = _settings(args)
    if "seed" in options_of(args.problem) and "seed" not in popts:
        popts["seed"] = args.seed
    problem = toys.make(args.problem, **popts)
    t0 = time.perf_counter()
    trace = toys.run(problem, args.algorithm, rounds=args.rounds, seed=args.seed,
                     participation=args.participation, backend=args.backend,
                     device=args.device, dtype=args.dtype, record=args.record, **hyper)
    elapsed = time.perf_counter() - t0
    from boundlab.io import as_option

    with as_option("--out"):
        path = trace.save(args.out) if args.out else None
    if args.json:
        from boundlab.io import dumps_strict

        print(dumps_strict(summary(trace, args, hyper, popts, elapsed, path)))
    else:
        _print(trace, args, elapsed, path)
    return 1 if trace.diverged_at is not None else 0


def _print(trace, args, elapsed: float, path) -> None:
    import numpy as np

    print(trace.summary())
    part = trace.participation.sum(axis=1)
    print(f"participants per round: mean {np.mean(part):.3g}, min {int(part.min())}; "
          f"backend {args.backend} ({trace.info['device']}, {trace.info['dtype']}); "
          f"{elapsed:.3g} s")
    if path:
        print(f"wrote {path}")


def summary(trace, args, hyper: dict, popts: dict, seconds: float, path=None) -> dict:
    """The run as plain data (what ``--json`` prints): the setting, the first and last value of
    each state quantity, the DKR / BM summaries, participation, divergence, time and file."""
    import numpy as np

    part = trace.participation.sum(axis=1)

    def first_last(name):
        v = trace.state[name]
        return {"first": float(v[0]), "last": float(v[-1])}

    return {
        "algorithm": trace.algorithm, "problem": args.problem, "problem_options": popts,
        "rounds": trace.rounds, "local_steps": trace.local_steps, "n_clients": trace.n_clients,
        "seed": args.seed, "record": trace.record, "participation": args.participation,
        "backend": args.backend, "device": trace.info.get("device"),
        "dtype": trace.info.get("dtype"),
        "hyper": {k: getattr(v, "text", v) if callable(v) else v for k, v in hyper.items()},
        "diverged_at": trace.diverged_at,
        **{name: first_last(name) for name in ("loss", "gap", "dist2")},
        "avg_shadow_gap": float(trace.avg_shadow_gap), "rho_bar": float(trace.rho_bar),
        "rho_tilde": float(trace.rho_tilde),
        "participants": {"mean": float(np.mean(part)) if part.size else None,
                         "min": int(part.min()) if part.size else None},
        "seconds": seconds, "out": path,
    }
