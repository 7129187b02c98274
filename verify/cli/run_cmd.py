"""``boundlab run ALGO --problem NAME [...] [hyper=value ...]``: one simulation from the shell.

Builds ``toys.make(NAME, seed=S, **problem options)`` and runs ``toys.run`` with the
hyper-parameters given as ``name=value`` words (numbers, ``inf``, comma lists such as
``rules=fedsoftbetter,fedavg``, strings). ``lr`` is a number or an expression in the global
iteration index ``t`` (and the round ``r = t // local_steps``), e.g. ``lr="1/(t+40)"`` or
``lr="0.1*0.99**r"``. Prints a short summary; ``--out trace.csv`` (or ``.parquet``) saves the
per-round table atomically. Exit status: 0 when the run completed, 1 when it diverged (a
non-finite model or one past ``toys.engine.DIVERGENCE``: the summary says in which round), 2 for
bad input.

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

__all__ = ["parse_lr", "register"]


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


def _no_duplicates(items, what: str) -> None:
    seen = set()
    for item in items:
        key = item.partition("=")[0].strip()
        if key in seen:
            raise DomainError(key, item, f"given once ({what})", "duplicate parameter")
        seen.add(key)


def _run(args) -> int:
    import numpy as np

    import toys
    from verify.cli.toys_cmd import parse_options

    _no_duplicates(args.hyper, "hyper-parameters")
    _no_duplicates(args.problem_opt, "--problem-opt")
    _check_out(args.out)
    if args.backend == "numpy" and args.device not in (None, "cpu"):
        raise DomainError("--device", args.device, "cpu (or omitted) with --backend numpy")
    raw_lr = {k: v for k, _, v in (h.partition("=") for h in args.hyper)}.get("lr")
    hyper = parse_options([h for h in args.hyper if h.partition("=")[0].strip() != "lr"])
    popts = parse_options(args.problem_opt)
    if raw_lr is not None:
        steps = hyper.get("local_steps", 1)
        steps = steps if isinstance(steps, int) and not isinstance(steps, bool) else 1
        hyper["lr"] = parse_lr(raw_lr.strip(), steps)
        if callable(hyper["lr"]) and args.rounds >= 1:
            _check_schedule(hyper["lr"], raw_lr, args.rounds * max(steps, 1))
    if "K" in hyper and isinstance(hyper["K"], str) and hyper["K"].lower() == "inf":
        hyper["K"] = float("inf")
    for key in ("rules",):
        if key in hyper and isinstance(hyper[key], str):
            hyper[key] = (hyper[key],)
    from toys.problems.registry import options_of

    if "seed" in options_of(args.problem) and "seed" not in popts:
        popts["seed"] = args.seed
    problem = toys.make(args.problem, **popts)
    t0 = time.perf_counter()
    trace = toys.run(problem, args.algorithm, rounds=args.rounds, seed=args.seed,
                     participation=args.participation, backend=args.backend,
                     device=args.device, dtype=args.dtype, record=args.record, **hyper)
    elapsed = time.perf_counter() - t0
    print(trace.summary())
    part = trace.participation.sum(axis=1)
    print(f"participants per round: mean {np.mean(part):.3g}, min {int(part.min())}; "
          f"backend {args.backend} ({trace.info['device']}, {trace.info['dtype']}); "
          f"{elapsed:.3g} s")
    if args.out:
        path = trace.save(args.out)
        print(f"wrote {path}")
    return 1 if trace.diverged_at is not None else 0
