"""Input is data, never code: code payloads through every parsing path.

Each payload, if it were evaluated by ``eval`` / ``sympify`` / ``parse_expr``, would create a
marker file. Every path must refuse it (a clear error) or treat it as inert data — the marker
never appears. Paths: ``bounds eval`` / ``tightness`` assignments and ``--vary``, ``run``
hyper-parameters (``lr`` schedules and the rest), ``--problem-opt``, ``--participation``,
``toys constants`` options, ``verify --only``, and the Python parsers
(:func:`boundlab.expr.parse`, ``parse_lr``, ``parse_assignments``, ``parse_options``).
"""

import pytest
from _fuzz_harness import run_cli

from boundlab.errors import BoundlabError


def _payloads(marker):
    m = repr(str(marker))
    return [
        f"__import__('pathlib').Path({m}).touch()",
        f"exec(\"open({m}, 'w')\")",
        f"eval(\"open({m}, 'w')\")",
        f"open({m}, 'w')",
        f"(lambda: open({m}, 'w'))()",
        "().__class__.__bases__[0].__subclasses__()",
        f"Symbol('x').__class__.__init__.__globals__['__builtins__']['open']({m}, 'w')",
        f"t*0 + __import__('pathlib').Path({m}).touch()",
    ]


def _paths(p):
    run = ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=2",
           "--problem-opt", "dim=2", "--rounds", "1"]
    return [
        ["bounds", "eval", "drift.plateau", f"eta={p}", "tau=1", "L=1", "zeta=1"],
        ["tightness", "drift.plateau", "eta=0.1", "tau=1", "L=1", "zeta=1", "--vary",
         f"eta={p}", "--cache-only"],
        run + [f"lr={p}"],
        # participation strings are parsed by the engine (clear errors there: see
        # test_fuzz_toys_run.py); here only "never executed" is required of them
        run + ["lr=0.1", f"local_steps={p}"],
        ["run", "fedavg", "--problem", "quadratic", "--problem-opt", f"dim={p}", "lr=0.1"],
        run + ["lr=0.1", "--participation", f"bernoulli:p={p}"],
        run + ["lr=0.1", "--participation", p],
        ["toys", "constants", "quadratic", f"L={p}"],
        ["verify", "--only", p, "--list"],
    ]


@pytest.mark.parametrize("k", range(8))
def test_cli_never_executes_text(tmp_path, monkeypatch, k):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "EXECUTED"
    p = _payloads(marker)[k]
    for argv in _paths(p):
        status, out, err, exc = run_cli(argv)
        assert not marker.exists(), f"executed: {argv}"
        if "--participation" in argv:
            continue
        assert exc is None or isinstance(exc, BoundlabError), f"{argv}: raw {exc!r}"
        assert status != 0 or "verify" in argv, f"accepted a payload: {argv}"


@pytest.mark.parametrize("k", range(8))
def test_python_parsers_never_execute_text(tmp_path, k):
    from boundlab.expr import parse
    from verify.cli.bounds_cmd import parse_assignments
    from verify.cli.run_cmd import parse_lr
    from verify.cli.toys_cmd import parse_options

    marker = tmp_path / "EXECUTED"
    p = _payloads(marker)[k]
    with pytest.raises(BoundlabError):
        parse(p, ("t",), name="lr")
    with pytest.raises(BoundlabError):
        parse_lr(p)
    with pytest.raises(BoundlabError):
        parse_assignments([f"eta={p}"])
    parse_options([f"name={p}"])  # option values are inert strings, checked by their user
    assert not marker.exists()
