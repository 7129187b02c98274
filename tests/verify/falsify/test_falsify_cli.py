"""``boundlab falsify``: exit 1 on VIOLATED with strict JSON, 0 when it holds, 2 on bad input."""

from __future__ import annotations

import json

import pytest

import boundlab
from boundlab import Bound, make_params, sym
from verify.cli import main

L, D, T = sym("L"), sym("D"), sym("T")


@pytest.fixture
def bounds():
    made = {"cli.wrong": L * D**2 / (8 * T), "cli.right": L * D**2 / (4 * T + 2)}
    for bid, expr in made.items():
        boundlab.register(Bound(id=bid, source="test", expr=expr, params=make_params("L", "D", "T"),
                                kind="upper", lhs="final_gap"),
                          algorithm="gd", function_class="smooth-convex")
    yield made
    for bid in made:
        boundlab.unregister(bid)


def _strict(text):
    def bad(c):
        raise ValueError(f"non-standard JSON constant {c}")
    return json.loads(text, parse_constant=bad)


def test_violated_exits_1_with_strict_json(bounds, capsys):
    rc = main(["falsify", "cli.wrong", "eta=1", "T=4", "--budget", "60", "--json"])
    data = _strict(capsys.readouterr().out)
    assert rc == 1 and data["verdict"] == "VIOLATED" and data["worst_ratio"] > 1
    assert data["instance"]["run"]["rounds"] == 4


def test_holds_exits_0_and_prints_text(bounds, capsys):
    rc = main(["falsify", "cli.right", "eta=1", "T=4", "--budget", "60", "--no-exact"])
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("cli.right: holds") and "replayed on toys.run" in out


@pytest.mark.parametrize("argv", [
    ["falsify", "cli.right", "T=abc"],
    ["falsify", "cli.right", "--budget", "3"],
    ["falsify", "cli.right", "T=0"],
    ["falsify", "cli.right", "colour=1"],
    ["falsify", "cli.right", "--families", "cubic"],
    ["falsify", "nope.nope"],
])
def test_bad_input_exits_2_with_one_line(bounds, capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
