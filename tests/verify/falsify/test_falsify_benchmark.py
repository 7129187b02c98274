"""``python -m benchmarks falsify --quick`` runs end to end and prints its medians."""

from benchmarks.falsify import main


def test_quick_benchmark_prints_before_after_and_speedup(capsys):
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "before" in out and "after" in out
    assert "medians: before" in out and "speed-up" in out


def test_bad_repeat_is_refused(capsys):
    assert main(["--repeat", "0"]) == 2
    assert "--repeat" in capsys.readouterr().out
