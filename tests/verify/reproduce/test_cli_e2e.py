"""``boundlab reproduce`` end to end: --list, one quick item's outputs, resuming, bad input."""

import csv
import json
import os

import pytest

from verify.cli import main
from verify.reproduce.registry import OUTCOMES, experiments, get


def test_list_names_every_item_with_the_papers_reference(capsys):
    assert main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.split("\n\n")[0].splitlines()  # then the unregistered
    exps = experiments()
    assert len(lines) == len(exps)
    for line, e in zip(lines, exps):
        assert line.split()[0] == e.id and f"{e.ref}:" in line
        assert any(w in e.ref for w in ("Table", "Fig", "§"))  # figure / table / section


def test_quick_item_writes_csv_figure_and_section_then_resumes(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "004:fig5", "--quick", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    d = out / "004-fig5"
    rows = list(csv.DictReader((d / "results.csv").open()))
    assert [int(r["tau"]) for r in rows] == [10, 50, 300, 1000]
    # the paper's plateau values (spec §6.3) are in the table beside ours
    assert [float(r["paper_plateau_spec"]) for r in rows] == [2.266, 56.65, 2039.0, 22661.0]
    assert (d / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sec = (d / "section.md").read_text()
    meta = json.loads((d / "done.json").read_text())
    assert meta["outcome"] in OUTCOMES and meta["size"] == "quick"
    assert get("004:fig5").reported in sec  # the paper's numbers
    assert f"**Outcome: {meta['outcome'].upper()}**" in sec and "*Outcome rule:*" in sec
    for c in meta["claims"]:  # every claim: paper, ours, rule, outcome in one table row
        assert c["rule"] in sec and c["ours"] in sec and c["outcome"] in OUTCOMES
    assert "004:fig5" in (out / "report.md").read_text() and meta["outcome"] in printed
    before = (d / "done.json").stat().st_mtime_ns
    assert main(["reproduce", "004:fig5", "--quick", "--out", str(out)]) == 0
    assert "skipped" in capsys.readouterr().out
    assert (d / "done.json").stat().st_mtime_ns == before  # not rewritten
    assert main(["reproduce", "004:fig5", "--quick", "--out", str(out), "--force"]) == 0
    assert "skipped" not in capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("argv, word", [
    (["reproduce", "004:nope"], "004:nope"),
    (["reproduce", "9"], "paper"),
    (["reproduce", "004:fig5", "--executor", "ray"], "executor"),
])
def test_bad_input_exits_2_with_one_line(argv, word, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word in err and "Traceback" not in err


def test_bad_out_exits_2_with_one_line(tmp_path, capsys):
    f = tmp_path / "a-file"
    f.write_text("x")
    assert main(["reproduce", "004:fig5", "--quick", "--out", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "a file is there" in err
    assert not (tmp_path / "004-fig5").exists()


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("BOUNDLAB_SLOW_TESTS") != "1",
                    reason="the quick set takes about 4.5 min of CPU; set BOUNDLAB_SLOW_TESTS=1")
def test_every_quick_item_runs_end_to_end(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    for e in experiments():
        meta = json.loads((tmp_path / e.id.replace(":", "-") / "done.json").read_text())
        assert meta["outcome"] in OUTCOMES and meta["claims"]
