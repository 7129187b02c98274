"""The reproduce output folder: an item that fails is reported and the others run; re-running
items keeps the other sections; temp folders of killed runs are removed; nothing boundlab did not
write is ever deleted or overwritten (every ``--out`` / ``out=``)."""

import dataclasses
import os
import subprocess
import sys

import pytest

import verify
from boundlab.errors import DomainError
from boundlab.io import MANIFEST, TMP_MARK, read_manifest
from verify.cli import main
from verify.reproduce import registry, reproduce_all
from verify.reproduce.registry import Claim, Config, Result, experiments, get
from verify.reproduce.store import KIND, done, open_out, read_item

TINY = Config.sized("tiny", backend="numpy")
CALLS = []


def _ok(value):
    def fn(cfg):
        CALLS.append(value)
        return Result([{"value": value}], [Claim("v", "1", str(value), "equal", value == 1)])
    return fn


def _boom(cfg):
    raise ValueError("bad \x1b[2J value | with a pipe\nand a newline")


@pytest.fixture
def fake004(monkeypatch):
    """Paper 004's four items made instant: fig2 raises, the others return ``value`` 1..3."""
    experiments()
    reg = dict(registry._REGISTRY)
    fns = {"004:fig2": _boom, "004:fig3": _ok(1), "004:fig4": _ok(2), "004:fig5": _ok(3)}
    for i, fn in fns.items():
        reg[i] = dataclasses.replace(reg[i], fn=fn)
    monkeypatch.setattr(registry, "_REGISTRY", reg)
    CALLS.clear()
    return reg


def _cli(out, *extra):  # --quiet: stderr holds the error lines only (no progress lines)
    return main(["reproduce", *extra, "--size", "tiny", "--backend", "numpy", "--out", str(out),
                 "--quiet"])


def test_a_failing_item_is_reported_and_the_others_run(tmp_path, fake004, capsys):
    assert _cli(tmp_path, "004") == 1
    std = capsys.readouterr()
    assert "1 error(s)" in std.out and CALLS == [1, 2, 3]
    err = [ln for ln in std.err.splitlines() if ln]
    assert err == ["error: 004:fig2: ValueError: bad \\x1b[2J value | with a pipe\\nand a newline"]
    report = (tmp_path / "report.md").read_text()
    assert "\x1b" not in report and "| 004:fig2 | DKR Fig. 2 |" in report
    assert "**Outcome: ERROR** — `ValueError: bad \\x1b[2J value | with a pipe\\nand a newline`" \
        in report
    for i in ("004:fig3", "004:fig4", "004:fig5"):
        assert f"## {i} — {get(i).ref}" in report
    assert not done(tmp_path, "004:fig2", TINY.key())  # an error is not finished: runs again
    assert _cli(tmp_path, "004") == 1 and CALLS == [1, 2, 3]  # the others skipped
    assert "3 skipped" in capsys.readouterr().out


def test_rerunning_one_item_keeps_the_other_sections(tmp_path, fake004, capsys):
    assert _cli(tmp_path, "004") == 1
    fake004["004:fig2"] = dataclasses.replace(fake004["004:fig2"], fn=_ok(4))
    assert _cli(tmp_path, "004:fig2") == 0
    report = (tmp_path / "report.md").read_text()
    assert report.count("\n## ") == 4 and "ERROR" not in report
    assert "| 004:fig2 | DKR Fig. 2 | " in report and "| not run |" not in report.split("004:")[1]
    assert _cli(tmp_path, "004:fig3", "--force") == 0 and CALLS[-1] == 1
    assert (tmp_path / "report.md").read_text().count("\n## ") == 4
    assert read_manifest(tmp_path, KIND) is not None and open_out(tmp_path) == tmp_path


def test_a_real_item_then_another_keeps_both(tmp_path, capsys):
    assert _cli(tmp_path, "004:fig3") == 0
    assert _cli(tmp_path, "000:fig7") == 0
    report = (tmp_path / "report.md").read_text()
    assert "## 004:fig3 — " in report and "## 000:fig7 — " in report


def _dead_pid() -> int:
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True, check=True)
    return int(p.stdout)


def test_temp_folders_of_a_killed_run_are_removed_and_never_read(tmp_path, fake004):
    assert _cli(tmp_path, "004:fig3") == 0
    code = ("import os, signal, sys; from verify.reproduce import store; "
            "t = store.stage_item(sys.argv[1], '004:fig4'); "
            "(t / 'done.json').write_text('{}'); os.kill(os.getpid(), signal.SIGKILL)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    left = [p.name for p in tmp_path.iterdir() if TMP_MARK in p.name]
    assert left and left[0].startswith(".004-fig4" + TMP_MARK)  # what a SIGKILL leaves
    stale = tmp_path / f".004-fig5{TMP_MARK}{_dead_pid()}-old"
    stale.mkdir()
    (stale / "section.md").write_text("## forged")
    # issue 31: a folder merely *named* like a dead run's is not provably boundlab's: the
    # output folder is refused, naming it, and nothing is deleted (the killed run's own
    # temporary folder, which its lock proves, neither: never in a folder that is refused)
    assert _cli(tmp_path, "004:fig3") == 2
    assert (stale / "section.md").read_text() == "## forged"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".004-fig4")] == left
    import shutil

    shutil.rmtree(stale)  # the user's decision
    assert _cli(tmp_path, "004:fig3") == 0
    assert not [p for p in tmp_path.iterdir() if TMP_MARK in p.name]
    assert "forged" not in (tmp_path / "report.md").read_text()
    assert not (tmp_path / "004-fig4").exists()


def test_an_item_folder_renamed_in_just_before_a_kill_is_adopted(tmp_path, fake004):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _cli(a, "004:fig3") == 0 and _cli(b, "004:fig4") == 0
    os.rename(a / "004-fig3", b / "004-fig3")  # in place, but b's manifest does not list it
    assert open_out(b) == b and done(b, "004:fig3", TINY.key())
    os.rename(b / "004-fig3", a / "004-fig3")
    (a / "004-fig3" / "notes.txt").write_text("mine")
    os.rename(a / "004-fig3", b / "004-fig3")
    with pytest.raises(DomainError, match="004-fig3/notes.txt"):
        open_out(b)


def _snapshot(root):
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def _users(root):
    (root / "thesis.tex").write_text("\\documentclass{article}")
    (root / "data").mkdir()
    (root / "data" / "raw.csv").write_text("a,b\n1,2\n")


def _boundlab_folder_then_user(root):
    assert _cli(root, "004:fig3") == 0
    (root / "thesis.tex").write_text("mine")


def _user_in_item_folder(root):
    assert _cli(root, "004:fig3") == 0
    (root / "004-fig3" / "notes.txt").write_text("mine")


def _user_edits_report(root):
    assert _cli(root, "004:fig3") == 0
    (root / "report.md").write_text("my edits")


def _user_folder_named_like_an_item(root):
    (root / "004-fig3").mkdir()
    (root / "004-fig3" / "done.json").write_text("{}")


SETUPS = [_users, _boundlab_folder_then_user, _user_in_item_folder, _user_edits_report,
          _user_folder_named_like_an_item]
NAMED = {_users: "thesis.tex", _boundlab_folder_then_user: "thesis.tex",
         _user_in_item_folder: "004-fig3/notes.txt", _user_edits_report: "report.md",
         _user_folder_named_like_an_item: "004-fig3/done.json"}
ENTRIES = {
    "cli": lambda out: _cli(out, "004:fig3"),
    "cli-force": lambda out: _cli(out, "004", "--force"),
    "reproduce": lambda out: verify.reproduce("004:fig3", out=out, config=TINY),
    "reproduce_all": lambda out: reproduce_all("004", out=out, config=TINY, force=True),
}


@pytest.mark.parametrize("setup", SETUPS, ids=[s.__name__ for s in SETUPS])
@pytest.mark.parametrize("entry", list(ENTRIES))
def test_no_out_ever_deletes_or_overwrites_a_file_it_did_not_write(tmp_path, fake004, capsys,
                                                                   setup, entry):
    out = tmp_path / "out"
    out.mkdir()
    setup(out)
    before = _snapshot(out)
    capsys.readouterr()
    CALLS.clear()
    if entry.startswith("cli"):
        assert ENTRIES[entry](out) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: --out") and NAMED[setup] in err
    else:
        with pytest.raises(DomainError, match=NAMED[setup]):
            ENTRIES[entry](out)
    assert _snapshot(out) == before  # nothing deleted, overwritten or added
    assert not CALLS  # refused before any work


def test_size_options(tmp_path, capsys):
    assert main(["reproduce", "004:fig3", "--quick", "--size", "tiny", "--out",
                 str(tmp_path)]) == 2
    assert "--size" in capsys.readouterr().err
    assert main(["reproduce", "004:fig3", "--size", "huge", "--list"]) == 2
    with pytest.raises(DomainError, match="size"):
        reproduce_all("004:fig3", out=tmp_path, quick=True, size="tiny")
    assert not any(tmp_path.iterdir())


def test_a_fresh_folder_is_marked_as_boundlab_s_at_once(tmp_path, fake004):
    out = tmp_path / "new"
    reproduce_all("004:fig3", out=out, config=TINY)
    listed = read_manifest(out, KIND)
    assert set(listed) == {"report.md", "004-fig3/done.json", "004-fig3/results.csv",
                           "004-fig3/section.md"}
    assert (out / MANIFEST).exists() and read_item(out, "004:fig3", TINY.key()).outcome == \
        "matches"
