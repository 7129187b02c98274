"""Issue 31, progress: plain lines on stderr when stderr is not a terminal (a CI log, a
notebook), a bar on a terminal, nothing with ``--quiet`` (every command accepts it)."""

import argparse
import io
import re

import pytest

import boundlab
from verify import suite
from verify.cli import build_parser, main
from verify.cli.progress import Ticker, counter, mode
from verify.compare import compare

LINE = re.compile(r"^(?P<what>.+): (?P<done>\d+)/(?P<total>\d+|\?), \d+:\d\d:\d\d elapsed, "
                  r"(\d+:\d\d:\d\d|-:--:--) left( \(done .+\))?$")


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_the_mode_follows_the_stream_and_quiet():
    assert mode(False, _Tty()) == "bar" and mode(False, io.StringIO()) == "lines"
    assert mode(True, _Tty()) == "off" and mode(True, io.StringIO()) == "off"


def test_lines_count_the_items_with_the_time_left():
    log = io.StringIO()
    with counter(3, "reproduce", "lines", stream=log) as step:
        for item in ("004:fig3", "004:fig4", "004:fig5"):
            step(item)
    lines = log.getvalue().splitlines()
    assert all(LINE.match(ln) for ln in lines), lines
    assert lines[0].startswith("reproduce: 1/3, ") and lines[0].endswith("(done 004:fig3)")
    assert lines[-1].startswith("reproduce: 3/3, ") and "0:00:00 left" in lines[-1]


def test_lines_are_throttled_but_the_first_and_last_always_show():
    log = io.StringIO()
    ticker = Ticker(100, "grid points", "lines", stream=log, every=3600)
    for done in range(1, 101):
        ticker.update(done)
    ticker.stop()
    lines = log.getvalue().splitlines()
    assert [ln.split(",")[0] for ln in lines] == ["grid points: 1/100", "grid points: 100/100"]


def test_off_and_a_count_that_does_not_move_write_nothing():
    log = io.StringIO()
    with counter(2, "x", "off", stream=log) as step:
        step("a")
    ticker = Ticker(None, "grid points", "lines", stream=log)
    ticker.update(0, total=4)  # a sweep's first report, before any point finished
    assert log.getvalue() == ""


SWEEP = ["sweep", "fedavg", "--problem", "quadratic", "--grid", "lr=0.05,0.1", "--seeds", "1",
         "--rounds", "2", "n_clients=2", "dim=2"]


@pytest.mark.parametrize("extra, shown", [([], True), (["--json"], True), (["--quiet"], False),
                                          (["--no-progress"], False)])
def test_sweep_writes_progress_lines_when_stderr_is_not_a_terminal(extra, shown, capsys):
    assert main([*SWEEP, *extra]) == 0
    err = capsys.readouterr().err.splitlines()
    if shown:
        assert err and all(LINE.match(ln) for ln in err), err
        assert err[-1].startswith("grid points: 2/2, ")
    else:
        assert err == []


@pytest.fixture
def two_checks():
    suite._load()
    saved = dict(suite._REGISTRY)
    suite._REGISTRY.clear()

    for name in ("first_check", "second_check"):
        suite.register("drift", "drift.plateau")(_named(name))
    yield "drift"
    suite._REGISTRY.clear()
    suite._REGISTRY.update(saved)


def _named(name):
    def check(ctx):
        return [compare(boundlab.get("drift.plateau"), [0.01], check=name, case="tau=10",
                        params=dict(eta=0.2, tau=10, L=0.2, zeta=0.43))]
    check.__name__ = check.__qualname__ = name
    return check


@pytest.mark.parametrize("quiet", [False, True])
def test_the_main_job_reports_each_check_in_a_log(two_checks, quiet, tmp_path, capsys):
    argv = ["verify", "--only", two_checks, "--out", str(tmp_path / "o"), "--no-tightness",
            "--budget", "0", "--json"] + (["--quiet"] if quiet else [])
    assert main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    if quiet:
        assert err == []
    else:
        assert [ln.split(",")[0] for ln in err] == ["checks: 1/2", "checks: 2/2"]
        # the checks run side by side (--jobs defaults to the cores): lines in finishing order
        assert sorted(ln.rsplit("(done ", 1)[1] for ln in err) == [
            "drift: first_check)", "drift: second_check)"]


def _leaves(parser):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield parser
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            yield from _leaves(child)


def test_every_command_accepts_quiet():
    parser = build_parser()
    leaves = list(_leaves(parser))
    assert {leaf.prog for leaf in leaves} >= {
        f"boundlab {c}" for c in ("bounds list", "bounds show", "bounds eval", "toys list",
                                  "toys constants", "run", "sweep", "tightness", "falsify",
                                  "verify", "reproduce")}
    for leaf in leaves:
        assert any("--quiet" in a.option_strings for a in leaf._actions), leaf.prog


def test_reproduce_says_which_long_item_is_still_running(tmp_path, monkeypatch, capsys):
    """Off a terminal a long item once printed nothing until it ended (002:cnn at full size):
    a heartbeat line names the item still running, then the usual line when it ends."""
    import time

    from verify.cli import progress
    from verify.reproduce import registry
    from verify.reproduce.registry import Claim, Result

    registry.experiments()
    reg = dict(registry._REGISTRY)

    def slow(cfg):
        time.sleep(0.6)
        return Result([{"v": 1}], [Claim("v", "1", "1", "equal", ok=True)])

    reg["004:fig3"] = __import__("dataclasses").replace(reg["004:fig3"], fn=slow)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.1)
    assert main(["reproduce", "004:fig3", "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err.splitlines()
    beats = [ln for ln in err if "still on 004:fig3" in ln]
    assert beats and beats[0].startswith("reproduce: 0/1, "), err
    assert LINE.match(err[-1]) and err[-1].endswith("(done 004:fig3)")
