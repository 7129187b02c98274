"""Shared machinery of the fuzz suite: run a case, classify what happened.

A case is a callable (Python API) or an argv list (CLI) plus what must happen: ``"error"`` (a
clear boundlab error naming ``mention``) or ``"ok"`` (a result that ``check`` accepts: it
returns ``None`` when the result is right, else a sentence saying what is wrong).

Outcomes: ``clear`` (boundlab error / exit 2 with one ``error:`` line, naming what it should),
``unclear`` (a clear error that does not name the parameter), ``raw`` (any other exception, or
a traceback at the CLI), ``silent`` (an invalid input accepted, or a wrong / non-finite result),
``ok`` (a correct result).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import settings

from boundlab.errors import BoundlabError

GOOD = ("clear", "ok")


@dataclass
class Case:
    name: str
    run: Any                       # callable () -> result, or a list of CLI words
    expect: str = "error"          # "error" or "ok"
    mention: str | None = None     # text the error message must contain
    check: Callable | None = None  # result -> None (right) or a complaint
    tags: tuple = field(default_factory=tuple)

    @property
    def kind(self) -> str:
        return "cli" if isinstance(self.run, (list, tuple)) else "api"


def strict_json(text: str):
    """``json.loads`` that refuses NaN / Infinity literals (what strict parsers do)."""
    def bad(tok):
        raise ValueError(f"non-standard JSON literal {tok}")
    return json.loads(text, parse_constant=bad)


def run_cli(argv):
    """(status, stdout, stderr, exception) of ``boundlab ARGV`` run in-process."""
    from verify.cli import main

    out, err = io.StringIO(), io.StringIO()
    exc = None
    status = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as e:  # argparse --help etc.
            status = e.code
        except BaseException as e:  # noqa: BLE001 - classified below
            exc = e
    return status, out.getvalue(), err.getvalue(), exc


def classify(case: Case) -> tuple[str, str]:
    """(outcome, detail) of one case."""
    if case.kind == "cli":
        status, out, err, exc = run_cli(case.run)
        if exc is not None:
            return "raw", f"{type(exc).__name__}: {exc}"[:300]
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        if status == 2:
            if len(lines) != 1 or not lines[0].startswith("error:") or "Traceback" in err:
                return "raw", f"exit 2 but stderr is not one error line: {err[:300]!r}"
            if case.expect == "ok":
                return "raw", f"refused a valid input: {lines[0]}"
            if case.mention and case.mention.lower() not in lines[0].lower():
                return "unclear", f"does not name {case.mention!r}: {lines[0]}"
            return "clear", lines[0]
        if case.expect == "error":
            return "silent", f"accepted (exit {status}): {out[:200]!r}"
        if status != 0:
            return "raw", f"exit {status}: {err[:300]!r}"
        problem = case.check(out) if case.check else None
        return ("silent", problem) if problem else ("ok", "")
    try:
        result = case.run()
    except BoundlabError as e:
        msg = " ".join(str(e).split())
        if case.expect == "ok":
            return "raw", f"refused a valid input: {msg}"
        if case.mention and case.mention.lower() not in msg.lower():
            return "unclear", f"does not name {case.mention!r}: {msg}"
        return "clear", msg
    except Exception as e:  # noqa: BLE001 - classified
        return "raw", f"{type(e).__name__}: {e}"[:300]
    if case.expect == "error":
        return "silent", f"accepted, returned {result!r}"[:300]
    problem = case.check(result) if case.check else None
    return ("silent", problem) if problem else ("ok", "")


def finite_number(x) -> str | None:
    try:
        v = float(x)
    except Exception:  # noqa: BLE001
        return f"not a number: {x!r}"
    return None if math.isfinite(v) else f"non-finite result {v}"


def close_to(ref: float, rel: float = 1e-10):
    def check(x):
        v = float(x)
        if not math.isfinite(v) or abs(v - ref) > rel * abs(ref):
            return f"got {v!r}, true value {ref!r}"
        return None
    return check


def json_value(key: str, ref: float | None = None, rel: float = 1e-10):
    """Check CLI stdout: strict JSON whose ``key`` is ``ref`` (or finite / null + status)."""
    def check(out):
        try:
            doc = strict_json(out)
        except ValueError as e:
            return f"not strict JSON: {e}"
        if ref is None:
            return None
        v = doc.get(key)
        if v is None or abs(float(v) - ref) > rel * abs(ref):
            return f"{key} = {v!r}, true value {ref!r}"
        return None
    return check


def strict_json_ok(out):
    try:
        strict_json(out)
    except ValueError as e:
        return f"not strict JSON: {e}"
    return None


def counts(cases) -> dict:
    tally = {"tried": 0, "clear": 0, "ok": 0, "unclear": 0, "raw": 0, "silent": 0}
    for c in cases:
        outcome, _ = classify(c)
        tally["tried"] += 1
        tally[outcome] += 1
    return tally


def fuzz_settings(**overrides):
    """Settings of a fuzz property: the ``deep`` profile when it is active
    (``--hypothesis-profile=deep``), else ``fuzz-ci`` (profiles registered in tests/conftest.py)."""
    deep = settings.get_current_profile_name() == "deep"
    base = settings.get_profile("deep" if deep else "fuzz-ci")
    if deep:
        overrides.pop("max_examples", None)
    return settings(base, **overrides)
