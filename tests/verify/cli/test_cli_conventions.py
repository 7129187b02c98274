"""CLI conventions: "did you mean" for unknown commands, choices and options; ``tightness
--vary`` progress with a count; the one exit-status table."""

import io
import json
import re

import pytest
from rich.console import Console

import verify.cli
from verify.cli import _GROUPS, build_parser, main


@pytest.mark.parametrize("argv, needle", [
    (["bound", "list"], "unknown command 'bound' (did you mean 'bounds'?)"),
    (["bounds", "lst"], "unknown command 'lst' (did you mean 'list'?)"),
    (["run", "fedavg", "--problem", "quadratic", "--backend", "nump"],
     "unknown value 'nump' (did you mean 'numpy'?)"),
    (["reproduce", "--size", "tin", "--list"], "unknown value 'tin' (did you mean 'tiny'?)"),
    (["bounds", "list", "--jsn"], "unrecognized arguments: --jsn (did you mean --json?)"),
    (["reproduce", "--lst"], "(did you mean --list?)"),
    (["tightness", "drift.plateau", "--solver", "clarable"],
     "unknown value 'CLARABLE' (did you mean 'CLARABEL'?)"),
])
def test_unknown_names_of_the_command_line_suggest(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_an_option_far_from_every_known_one_has_no_suggestion(capsys):
    assert main(["bounds", "list", "--xyzzy"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_tightness_vary_draws_a_counted_bar(monkeypatch):
    from verify.cli import tightness_cmd

    calls = []

    def fake_bracket(bound_id, params, **kw):
        calls.append((bound_id, params["tau"], kw["cache_only"]))
        return None
    monkeypatch.setattr("verify.tightness.bracket", fake_bracket)
    screen = Console(file=io.StringIO(), force_terminal=True, width=120)
    rows = tightness_cmd.vary("drift.plateau", {"eta": 0.1}, "tau", [1.0, 2.0, 4.0],
                              {"cache_only": True}, show=True, console=screen)
    assert rows == [None] * 3
    assert calls == [("drift.plateau", 1.0, True), ("drift.plateau", 2.0, True),
                     ("drift.plateau", 4.0, True)]
    drawn = screen.file.getvalue()
    assert "PEP brackets over tau" in drawn and "3/3" in drawn and "(done tau=4)" in drawn


@pytest.mark.parametrize("extra", [[], ["--json"], ["--json", "--quiet"]])
def test_tightness_vary_bar_on_a_terminal_off_with_quiet(extra, capsys, monkeypatch):
    """Issue 31: progress goes to stderr with or without --json (stdout stays one JSON
    document); --quiet silences it."""
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    argv = ["tightness", "drift.plateau", "eta=0.1", "L=1", "zeta=1", "--vary", "tau=1,2",
            "--cache-only", *extra]
    status = main(argv)
    std = capsys.readouterr()
    assert status == 0
    if "--json" in extra:
        assert len(json.loads(std.out)) == 2
    if "--quiet" in extra:
        assert std.err == ""
    else:
        assert "PEP brackets over tau" in std.err and "2/2" in std.err


def test_the_exit_status_table_has_every_command_and_help_points_to_it():
    doc = verify.cli.__doc__
    table = doc[doc.index("Exit status\n-----------"):]
    rows = re.findall(r"^([a-z]+)\s{2,}", table, flags=re.M)
    assert [r for r in rows if r in _GROUPS] == list(_GROUPS)
    assert "**2** bad input" in table and "**130** interrupted" in table
    epilog = build_parser().epilog
    assert "pydoc verify.cli" in epilog and "2 bad input" in epilog
