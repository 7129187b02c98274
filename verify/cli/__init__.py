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

Output
------
``--json`` prints one strict JSON document on stdout (no NaN / Infinity: a non-finite number is
null with a sibling ``<key>_status``, :func:`boundlab.io.json_safe`); a result names its keys
as :mod:`verify.schema` (``bound_id``, ``bound_value``, ``measured``, ``ratio``, ``verdict``).
``--list`` and ``boundlab --version`` honour ``--json``. Progress goes to stderr only
(:mod:`verify.cli.progress`): a bar on a terminal, plain lines elsewhere (a CI log, a
notebook); ``--quiet``, accepted by every command (:func:`add_quiet`), silences it.

Example
-------
>>> from verify.cli import main
>>> main(["bounds", "eval", "drift.plateau", "eta=0.2", "tau=10", "L=0.19", "zeta=0.407",
...       "--json"])  # doctest: +ELLIPSIS
{"bound_id": "drift.plateau", ...}
0
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import sys

__all__ = ["main", "build_parser", "UsageError", "add_quiet", "versions", "version_line"]

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
        if "--json" in getattr(parser, "argv", ()):  # boundlab --version --json
            from boundlab.io import dumps_strict

            print(dumps_strict(versions()))
        else:
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
                        help="the versions of boundlab, its code and its main dependencies "
                             "(with --json: one JSON object)")
    parser.argv = () if argv is None else tuple(argv)
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
        add_quiet(sub.choices[name])
    return parser


def add_quiet(parser) -> None:
    """``--quiet`` on every command of ``parser`` (recursively) that lacks one: no progress
    on stderr (:mod:`verify.cli.progress`; a no-op where a command shows none)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            add_quiet(child)
    if subs or any("--quiet" in a.option_strings for a in parser._actions):
        return
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on stderr (default: a bar on a terminal, plain "
                             "lines elsewhere, e.g. in a CI log or a notebook)")


def versions() -> dict:
    """What ``boundlab --version --json`` prints: ``boundlab``, ``code``, ``python`` and each
    main dependency's version (None when it is missing), without importing the dependencies
    (their installed metadata).

    >>> sorted(versions())
    ['boundlab', 'code', 'cvxpy', 'numpy', 'pepit', 'python', 'sympy']
    """
    from importlib.metadata import PackageNotFoundError, version

    import boundlab
    from boundlab.integrity import code_version

    out = {"boundlab": boundlab.__version__, "code": code_version(),
           "python": ".".join(map(str, sys.version_info[:3]))}
    for dist in ("numpy", "sympy", "pepit", "cvxpy"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def version_line() -> str:
    """``boundlab X (code X+hash; python, numpy, sympy, pepit, cvxpy versions)``.

    >>> version_line().startswith("boundlab ")
    True
    """
    v = versions()
    deps = ", ".join(f"{d} {v[d] or 'missing'}" for d in ("numpy", "sympy", "pepit", "cvxpy"))
    return f"boundlab {v['boundlab']} (code {v['code']}; python {v['python']}, {deps})"


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it).

    >>> main(["bounds", "eval", "nope.nope"])
    2
    """
    from boundlab.errors import BoundlabError, WriteError

    argv = list(sys.argv[1:] if argv is None else argv)
    interrupted = []
    try:
        with _interrupts(interrupted):
            args = build_parser(argv).parse_args(argv)
            rc = int(_call(args) or 0)
    except (UsageError, BoundlabError) as exc:
        rc = _fail(_one_line(exc), 2)
    except WriteError as exc:  # an output could not be written: its file and option named
        rc = _fail(_one_line(exc), 2)
    except OSError as exc:  # a path the user gave cannot be read or written
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        rc = _fail(f"{exc.strerror or exc}{where}", 2)
    except KeyboardInterrupt:
        interrupted.append(True)
    if interrupted:  # also a Ctrl-C that some callback or finaliser swallowed
        return _fail("interrupted", 130)
    return rc


def _call(args):
    """Run the command; ``--force`` (dest ``force_overwrite``) lets its outputs replace files
    boundlab did not write (:func:`boundlab.io.force_overwrite`)."""
    if getattr(args, "force_overwrite", False):
        from boundlab.io import force_overwrite

        with force_overwrite():
            return args.func(args)
    return args.func(args)


def _fail(message: str, status: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return status


@contextlib.contextmanager
def _interrupts(seen: list):
    """Note every Ctrl-C in ``seen`` (then raise KeyboardInterrupt as usual), so one raised
    where Python can only print it (a weakref callback, a finaliser) still ends the run with
    exit status 130. Main thread only; a handler someone else installed is kept."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def handler(signum, frame):
        seen.append(signum)
        raise KeyboardInterrupt

    def unraisable(info, previous=sys.unraisablehook):
        if isinstance(info.exc_value, KeyboardInterrupt):
            seen.append(info.exc_value)  # noted, not printed: the run ends with 130
        else:
            previous(info)
    signal.signal(signal.SIGINT, handler)
    sys.unraisablehook, saved = unraisable, sys.unraisablehook
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = saved


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def console() -> None:  # pragma: no cover - entry point shim
    sys.exit(main())
