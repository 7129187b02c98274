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
    ``r`` (= t // local_steps), parsed with sympy (no eval).

    >>> parse_lr("0.5"), float(parse_lr("1/(t+4)")(0)), float(parse_lr("0.5**r", 2)(3))
    (0.5, 0.25, 0.5)
    """
    if not isinstance(text, str):
        return text
    try:
        return float(text)
    except ValueError:
        pass
    import numpy as np
    import sympy as sp
    from sympy.parsing.sympy_parser import parse_expr

    t, r = sp.Symbol("t"), sp.Symbol("r")
    try:
        expr = parse_expr(text, local_dict={"t": t, "r": r, "exp": sp.exp, "sqrt": sp.sqrt,
                                            "log": sp.log}, evaluate=True)
    except Exception:  # noqa: BLE001 - any parse failure is bad user input
        raise DomainError("lr", text, "a number or an expression in t (iteration) and r "
                                      "(round), e.g. 1/(t+40)") from None
    extra = expr.free_symbols - {t, r}
    if extra:
        raise DomainError("lr", text, "an expression in t and r only",
                          f"unknown symbols {sorted(map(str, extra))}")
    fn = sp.lambdify((t, r), expr, modules="numpy")
    return lambda it: np.asarray(fn(np.asarray(it, dtype=float),
                                    np.asarray(it) // local_steps), dtype=float)


def _run(args) -> int:
    import numpy as np

    import toys
    from verify.cli.toys_cmd import parse_options

    hyper = parse_options(args.hyper)
    popts = parse_options(args.problem_opt)
    if "lr" in hyper:
        hyper["lr"] = parse_lr(hyper["lr"] if not isinstance(hyper["lr"], tuple)
                               else ",".join(map(str, hyper["lr"])),
                               int(hyper.get("local_steps", 1)))
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
