"""The ``boundlab`` command line.

Each command group lives in its own module exposing ``register(subparsers)``; this module only
assembles them and turns every user error into one line on stderr with exit status 2.

Exit status: 0 success; 1 a check found a VIOLATED bound or errored (``boundlab verify``);
2 bad input (unknown id or name, bad value, value outside its domain, a path that cannot be
read or written), always as one ``error:`` line on stderr.

Example
-------
>>> from verify.cli import main
>>> main(["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407",
...       "--json"])  # doctest: +ELLIPSIS
{"id": "drift.plateau", ...}
0
"""

from __future__ import annotations

import argparse
import importlib
import sys

__all__ = ["main", "build_parser", "UsageError"]

# command groups, in --help order: (module, name)
_GROUPS = ("bounds", "toys", "run", "sweep", "tightness", "verify", "reproduce")


class UsageError(Exception):
    """Bad command-line usage; reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump, exit 2
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (every installed command group).

    >>> p = build_parser()
    >>> p.prog
    'boundlab'
    """
    parser = _Parser(
        prog="boundlab",
        description="Check federated-learning convergence bounds against measured runs.",
        epilog="Exit status: 0 ok; 1 a VIOLATED or errored check (verify); 2 bad input.",
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True
    for name in _GROUPS:
        try:
            mod = importlib.import_module(f"verify.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"verify.cli.{name}_cmd":
                continue  # group not built yet
            raise
        mod.register(sub)
    return parser


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it).

    >>> main(["bounds", "eval", "nope.nope"])
    2
    """
    from boundlab.errors import BoundlabError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except (UsageError, BoundlabError) as exc:
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user gave cannot be read or written
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def console() -> None:  # pragma: no cover - entry point shim
    sys.exit(main())
