"""The ``boundlab`` command line.

Each command group lives in its own module exposing ``register(subparsers)``; this module only
assembles them and turns every user error into one line on stderr with exit status 2.

A run imports only the group it runs (``boundlab bounds eval ...`` never imports toys, numpy's
heavy users or pandas); the other groups appear in ``boundlab --help`` through their one-line
help kept in :data:`_HELP` (a test checks each equals the group's own).

Exit status
-----------
The one table of every command's exit status (``boundlab --help`` points here; each command's
module docstring repeats its own row). 1 is always a *finding* or a failed item, never bad
input; 2 is always bad input, reported as one ``error:`` line on stderr with no traceback.

=============  ==================================  =========================================
command        0                                   1
=============  ==================================  =========================================
bounds         printed (``eval --strict``: and     (never)
               no precondition violated)
toys           printed                             (never)
run            the run completed                   the run diverged (the summary says where)
sweep          done                                a ``--bound`` verdict is VIOLATED
tightness      bracket computed (or, with          a worst-case instance VIOLATES the bound,
               ``--cache-only``, not cached)       or the solver failed / the bracket is
                                                   inaccurate
falsify        holds on every instance tried, or   VIOLATED (replayed on the engine), or
               not applicable                      the search errored
verify         every bound check holds (or is      a bound check VIOLATED, a claim refuted,
               not-applicable, order-only,         or a check errored
               diverged), no claim refuted
reproduce      every selected item ran (whatever   an item raised an error (the others still
               its outcome) or was already done    ran; one ``error:`` line per item)
=============  ==================================  =========================================

Every command: **2** bad input (an unknown command, option, id or name (with "did you mean"),
a malformed ``name=value`` word (:mod:`verify.cli.assign`), a value outside its domain, a
violated precondition under ``--strict``, a damaged or foreign file, a path that cannot be read
or written); **130** interrupted (Ctrl-C); ``--help`` and ``--version`` exit 0. An unexpected
internal error prints a Python traceback (exit 1): please report it.

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
import importlib.util
import sys

__all__ = ["main", "build_parser", "UsageError"]

# command groups, in --help order: verify.cli.<name>_cmd
_GROUPS = ("bounds", "toys", "run", "sweep", "tightness", "falsify", "verify", "reproduce")
# their one-line help, shown by `boundlab --help` without importing the group
_HELP = {
    "bounds": "list, show and evaluate catalogue bounds",
    "toys": "list the toy problems and measure their constants",
    "run": "simulate one algorithm on one toy problem",
    "sweep": "run an algorithm over a grid of settings x seeds",
    "tightness": "bound vs exact worst case (PEP): the bracket [LB/B, UB/B]",
    "falsify": "try to break a bound: worst instance found, replayed on the engine",
    "verify": "run every check: theory vs measured (the main job)",
    "reproduce": "reproduce the papers' experiments beside their numbers",
}


class UsageError(Exception):
    """Bad command-line usage; reported in one line with exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump, exit 2
        if message.startswith("unrecognized arguments: "):
            message += _option_hint(self, message.split(": ", 1)[1].split())
        raise UsageError(f"{self.prog}: {message}")

    def _check_value(self, action, value):  # an unknown choice: "did you mean", as every name
        if action.choices is not None and value not in action.choices:
            from boundlab.errors import UnknownNameError

            what = "command" if isinstance(action, argparse._SubParsersAction) else "value"
            raise argparse.ArgumentError(action, str(UnknownNameError(what, value,
                                                                      list(action.choices))))
        super()._check_value(action, value)


def _option_hint(parser, words) -> str:
    """`` (did you mean --json?)`` for the first unknown ``--option`` close to a known one."""
    import difflib

    known = []
    todo = [parser]
    while todo:  # the parser and its (built) subcommands
        p = todo.pop()
        for action in p._actions:
            known += action.option_strings
            if isinstance(action, argparse._SubParsersAction):
                todo += list(action.choices.values())
    for word in words:
        close = difflib.get_close_matches(word.partition("=")[0], known, n=1, cutoff=0.75)
        if word.startswith("--") and close:
            return f" (did you mean {close[0]}?)"
    return ""


class _Version(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(version_line())  # one line, unwrapped (argparse's version action wraps it)
        parser.exit(0)


def build_parser(argv=None) -> argparse.ArgumentParser:
    """The argument parser: every installed command group, or, given the ``argv`` of a run,
    only the group it names (the others as stubs with their help line, so ``--help`` and an
    unknown command still list every group).

    >>> p = build_parser()
    >>> p.prog
    'boundlab'
    >>> build_parser(["bounds", "list"]).parse_args(["bounds", "list"]).bounds_command
    'list'
    """
    parser = _Parser(
        prog="boundlab",
        description="Check federated-learning convergence bounds against measured runs.",
        epilog="Exit status: 0 ok; 1 a finding (a VIOLATED bound, a diverged run, a failed "
               "item; per command: pydoc verify.cli); 2 bad input (one 'error:' line); "
               "130 interrupted.",
    )
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="the versions of boundlab, its code and its main dependencies")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.required = True
    wanted = None if argv is None else (list(argv)[:1] or [None])[0]
    for name in _GROUPS:
        if argv is not None and name != wanted:
            if importlib.util.find_spec(f"verify.cli.{name}_cmd") is not None:
                sub.add_parser(name, help=_HELP[name])  # a stub: this run does not use it
            continue
        try:
            mod = importlib.import_module(f"verify.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name == f"verify.cli.{name}_cmd":
                continue  # group not built yet
            raise
        mod.register(sub)
    return parser


def version_line() -> str:
    """``boundlab X (code X+hash; python, numpy, sympy, pepit, cvxpy versions)`` without
    importing the dependencies (their installed metadata).

    >>> version_line().startswith("boundlab ")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    import boundlab
    from boundlab.integrity import code_version

    deps = []
    for dist in ("numpy", "sympy", "pepit", "cvxpy"):
        try:
            deps.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            deps.append(f"{dist} missing")
    py = ".".join(map(str, sys.version_info[:3]))
    return (f"boundlab {boundlab.__version__} (code {code_version()}; python {py}, "
            f"{', '.join(deps)})")


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it).

    >>> main(["bounds", "eval", "nope.nope"])
    2
    """
    from boundlab.errors import BoundlabError

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser(argv).parse_args(argv)
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
