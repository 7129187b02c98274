"""``--json`` of ``run`` and ``reproduce`` (several items): one strict JSON document on stdout."""

import dataclasses
import json
import math

import pytest

from verify.cli import main
from verify.reproduce import registry
from verify.reproduce.registry import Claim, Result, experiments


def _strict(text):
    """Parse as strict JSON (NaN / Infinity refused), exactly one document."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


RUN = ["run", "fedavg", "--problem", "quadratic", "--problem-opt", "n_clients=3",
       "--problem-opt", "dim=2", "--rounds", "3", "local_steps=2", "--json"]


def test_run_json_is_one_strict_document(capsys):
    assert main(RUN + ["lr=0.05"]) == 0
    d = _strict(capsys.readouterr().out)
    assert (d["algorithm"], d["problem"], d["rounds"], d["local_steps"]) == ("fedavg",
                                                                              "quadratic", 3, 2)
    assert d["n_clients"] == 3 and d["hyper"] == {"local_steps": 2, "lr": 0.05}
    assert d["diverged_at"] is None and d["out"] is None
    assert d["gap"]["last"] < d["gap"]["first"]  # lr 0.05 on a quadratic with L <= 4: descends
    assert d["participants"] == {"mean": 3.0, "min": 3}


def test_run_json_schedule_and_saved_table(tmp_path, capsys):
    out = tmp_path / "t.csv"
    assert main(RUN + ["lr=1/(t+40)", "--out", str(out)]) == 0
    d = _strict(capsys.readouterr().out)
    assert d["hyper"]["lr"] == "1/(t+40)" and d["out"] == str(out) and out.exists()


def test_run_json_diverged_exit_1_with_status_fields(capsys):
    assert main(RUN + ["lr=50"]) == 1
    d = _strict(capsys.readouterr().out)
    assert isinstance(d["diverged_at"], int) and d["gap"]["last"] is None
    assert d["gap"]["last_status"] in ("nan", "inf")


@pytest.fixture
def fake004(monkeypatch):
    """Paper 004's items made instant: fig2 raises, the others return a result."""
    experiments()
    reg = dict(registry._REGISTRY)

    def ok(cfg):
        return Result([{"value": 1}], [Claim("v", "1", "1", "equal", True)])

    def boom(cfg):
        raise ValueError("boom")
    for i in ("004:fig3", "004:fig4", "004:fig5"):
        reg[i] = dataclasses.replace(reg[i], fn=ok)
    reg["004:fig2"] = dataclasses.replace(reg["004:fig2"], fn=boom)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    return reg


def _reproduce(out, *words):
    return main(["reproduce", *words, "--size", "tiny", "--backend", "numpy", "--out", str(out)])


def test_reproduce_several_items_words_and_comma_lists(tmp_path, fake004, capsys):
    assert _reproduce(tmp_path, "004:fig5", "004:fig3,004:fig5") == 0
    out = capsys.readouterr().out
    lines = [ln.split()[0] for ln in out.splitlines()[:-1]]
    assert lines == ["004:fig5", "004:fig3"]  # in the order given, each once
    assert out.splitlines()[-1].startswith("2 items: 2 match")


def test_reproduce_json_one_document_with_every_outcome(tmp_path, fake004, capsys):
    assert _reproduce(tmp_path, "004:fig3", "004:fig2", "--json", "--quiet") == 1
    std = capsys.readouterr()
    d = _strict(std.out)
    assert [(i["id"], i["status"]) for i in d["items"]] == [("004:fig3", "matches"),
                                                           ("004:fig2", "error")]
    assert d["items"][1]["error"] == "ValueError: boom" and d["items"][0]["error"] is None
    assert all(isinstance(i["seconds"], float) and math.isfinite(i["seconds"])
               for i in d["items"])
    assert d["counts"]["error"] == 1 and d["counts"]["matches"] == 1
    assert d["exit_status"] == 1 and d["size"] == "tiny"
    assert d["report"] == str(tmp_path / "report.md")
    assert std.err == "error: 004:fig2: ValueError: boom\n"  # --quiet: only the error line
    # a re-run skips the finished item and reruns the failed one
    assert _reproduce(tmp_path, "004:fig3", "004:fig2", "--json") == 1
    d = _strict(capsys.readouterr().out)
    assert [i["status"] for i in d["items"]] == ["skipped", "error"]


def test_reproduce_counts_every_outcome(tmp_path, monkeypatch, capsys):
    """Each item's outcome is counted once: the counts add up to the items (an inconclusive
    item was once left out of both the summary line and the JSON counts)."""
    registry.experiments()  # loaded (the test alone: nothing has loaded the items yet)
    reg = dict(registry._REGISTRY)
    kinds = {"004:fig2": dict(ok=False), "004:fig3": dict(ok=True),
             "004:fig4": dict(ok=False, status="inconclusive"), "004:fig5": dict(ok=False,
                                                                                 status="tie")}
    for i, kw in kinds.items():
        claim = Claim("v", "1", "1", "equal", **kw)
        reg[i] = dataclasses.replace(reg[i], fn=lambda cfg, c=claim: Result([{"v": 1}], [c]))
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    assert _reproduce(tmp_path, "004", "--json") == 0
    counts = _strict(capsys.readouterr().out)["counts"]
    assert {k: v for k, v in counts.items() if v} == {"differs": 1, "matches": 1,
                                                     "inconclusive": 1, "tie": 1}
    assert _reproduce(tmp_path, "004", "--force") == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        "4 items: 1 match, 1 differ, 0 differ in size, 1 tie, 1 inconclusive, "
        "0 not exercised, 0 skipped")


def test_reproduce_unknown_item_among_several_is_exit_2(tmp_path, capsys):
    assert _reproduce(tmp_path, "004:fig3", "004:fig33") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean '004:fig3'" in err
    assert not (tmp_path / "report.md").exists()


def test_progress_bar_counts_with_time_left():
    import io

    from rich.console import Console

    from verify.cli.progress import counter

    screen = Console(file=io.StringIO(), force_terminal=True, width=120)
    with counter(3, "reproduce", True, console=screen) as step:
        for item in ("004:fig3", "004:fig4", "004:fig5"):
            step(item)
    drawn = screen.file.getvalue()
    assert "reproduce" in drawn and "3/3" in drawn and "left" in drawn
    assert "(done 004:fig5)" in drawn
    quiet = Console(file=io.StringIO(), force_terminal=True, width=120)
    with counter(3, "x", False, console=quiet) as step:  # off: nothing drawn
        step("a")
    assert quiet.file.getvalue() == ""


def test_time_left_is_the_mean_pace():
    from verify.cli.progress import eta_seconds

    assert eta_seconds(10.0, 1, 4) == 30.0 and eta_seconds(9.0, 3, 3) == 0.0
    assert eta_seconds(0.0, 0, 4) is None
