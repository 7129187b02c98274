"""``boundlab toys list | constants``: the problem registry and measured constants.

``boundlab toys constants NAME [--seed S] [--batch-size B] [--json] [key=value ...]`` builds
``toys.make(NAME, seed=S, key=value, ...)`` (values parsed by :mod:`verify.cli.assign`: int,
float, comma-separated tuples, true/false/none, else strings) and prints every constant with
how it was obtained; for problems that carry the paper's reported figures (the seed-004 toy)
it prints the comparison.

Example
-------
>>> from verify.cli import main
>>> main(["toys", "constants", "quadratic", "n_clients=3", "dim=2", "--json"])  # doctest: +ELLIPSIS
{"problem": "quadratic", ...}
0
"""

from __future__ import annotations

from boundlab.errors import DomainError
from boundlab.io import dumps_strict

__all__ = ["parse_options", "register"]


def register(sub) -> None:
    """Add the ``toys`` command group to the CLI's subparsers."""
    p = sub.add_parser("toys", help="list the toy problems and measure their constants")
    tsub = p.add_subparsers(dest="toys_command", metavar="ACTION")
    tsub.required = True

    pl = tsub.add_parser("list", help="registered problem names with a description")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    pl.set_defaults(func=_list)

    pc = tsub.add_parser("constants", help="L, mu, Gamma, zeta, sigma, G, D of a problem")
    pc.add_argument("name")
    pc.add_argument("options", nargs="*", metavar="key=value",
                    help="options passed to toys.make (e.g. n_clients=5 L=4.0)")
    pc.add_argument("--seed", type=int, default=None, help="seed passed to the problem")
    pc.add_argument("--batch-size", type=int, default=None,
                    help="minibatch size for sigma^2 (default: full batch, sigma = 0)")
    pc.add_argument("--json", action="store_true", help="machine-readable output")
    pc.set_defaults(func=_constants)


def parse_options(items) -> dict:
    """``key=value`` words, typed (:func:`verify.cli.assign.options`, the shared parser): int,
    then float, then comma tuple, true/false/none, else str.

    >>> parse_options(["n_clients=5", "L=4.0", "w_frozen=1,1", "spread=std_quarter", "iid=true"])
    {'n_clients': 5, 'L': 4.0, 'w_frozen': (1, 1), 'spread': 'std_quarter', 'iid': True}
    """
    from .assign import options

    return options(items)


def _list(args) -> int:
    import toys

    rows = toys.names()
    if args.json:
        print(dumps_strict(rows, indent=1))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"toys problems ({len(rows)})")
    table.add_column("name", no_wrap=True)
    table.add_column("description", overflow="fold")
    for name, desc in rows.items():
        table.add_row(name, desc)
    Console(width=140).print(table)
    return 0


def _constants(args) -> int:
    import toys

    opts = parse_options(args.options)
    if args.seed is not None:
        if "seed" in opts:
            raise DomainError("seed", opts["seed"], "given once (either --seed or seed=...)")
        opts["seed"] = args.seed
    prob = toys.make(args.name, **opts)
    consts = toys.constants(prob, batch_size=args.batch_size)
    paper = getattr(prob, "paper_constants", None) or {}
    if args.json:
        out = consts.to_dict()
        out["options"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in opts.items()}
        if paper:
            out["paper"] = {k: {"value": v, "note": note} for k, (v, note) in paper.items()}
        print(dumps_strict(out))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console(width=150)
    title = f"constants of {args.name} (N={prob.n_clients}, d={prob.dim})"
    table = Table(title=title)
    for col in ("constant", "value", "how", "note"):
        table.add_column(col, overflow="fold")
    for name, v in consts.values().items():
        table.add_row(name, f"{v.value:.6g}", v.how, v.note)
    console.print(table)
    params = ", ".join(f"{k}={v:.6g}" for k, v in consts.as_params().items())
    console.print(f"as_params: {params}", highlight=False)
    if paper:
        spec = (getattr(prob, "spec_reference", None) or {}).get("authors_data", {})
        cmp = Table(title="comparison with the paper's reported figures")
        cols = ("constant", "paper", "measured", "ratio", "spec (authors' data)", "paper's note")
        for col in cols:
            cmp.add_column(col, overflow="fold")
        for key, (value, note) in paper.items():
            mine = consts[key].value
            ref = f"{spec[key]:.4g}" if key in spec else "-"
            cmp.add_row(key, f"{value:.4g}", f"{mine:.4g}", f"{mine / value:.3f}", ref, note)
        console.print(cmp)
    return 0
