"""Every registered experiment runs end to end at ``--size tiny`` (in CI: the whole set takes
45-51 s on 2 cores, measured), writing its folder and its section; then the report holds them all.

One test per item, so a failure names the item. They share one output folder (module scope):
the last test runs the whole set into it, which skips the items already finished.
"""

import csv
import json

import pytest

from verify.cli import main
from verify.reproduce import reproduce_all
from verify.reproduce.data import item_config
from verify.reproduce.registry import OUTCOMES, Config, experiments, get
from verify.reproduce.store import read_item, slug

TINY = Config.sized("tiny", backend="numpy")
IDS = [e.id for e in experiments()]


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("reproduce-tiny")


@pytest.mark.parametrize("item", IDS)
def test_item_runs_end_to_end_at_tiny_size(out, item):
    (status,) = reproduce_all(item, out=out, config=TINY, force=True)
    assert status[1] in OUTCOMES, f"{item}: {status[1]}: " + \
        (out / slug(item) / "section.md").read_text()[:2000]
    rec = read_item(out, item, item_config(get(item), TINY).key())  # MNIST-5k where installed
    assert rec.outcome == status[1] and rec.error is None
    d = out / slug(item)
    meta = json.loads((d / "done.json").read_text())
    assert meta["size"] == "tiny" and meta["claims"], item
    assert list(csv.DictReader((d / "results.csv").open())), item  # at least one row
    if (d / "figure.png").exists():
        assert (d / "figure.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"## {item} " in rec.section and "| claim | paper | ours | rule | outcome |" in \
        rec.section
    # its power (seeds and resolution, or why no interval) and the rule naming 'inconclusive'
    assert "- Power: " in rec.section and "*inconclusive*" in rec.section, item
    # the data and model the run used, and its departures from the paper, each named
    for label in ("*Data:* ", "*Model:* ", "*Stand-in and departures from the paper:* "):
        assert label in rec.section, (item, label)
    for c in meta["claims"]:
        assert c["outcome"] != "inconclusive" or c["how"], (item, c)  # says what would decide


def test_the_whole_set_at_tiny_size_via_the_cli(out, capsys):
    assert main(["reproduce", "--size", "tiny", "--backend", "numpy", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "0 error(s)" in printed
    report = (out / "report.md").read_text()
    for e in experiments():
        assert f"## {e.id} — {e.ref}" in report, e.id
        assert f"| {e.id} | {e.ref} |" in report and "| not run |" not in report
