"""boundlab._atomic / _manifest / _lock (issue 31): a file is replaced only when its recorded
hash says boundlab wrote it unchanged; temporary files go only when a dead writer's lock proves
them its own; a failed write names its file and is remembered."""

import errno
import json
import os
import subprocess
import sys

import pytest

import boundlab._atomic as atomic
from boundlab.errors import DomainError, OverwriteError, WriteError
from boundlab.io import (
    LOCK,
    atomic_write_text,
    check_replaceable,
    clean_temps,
    failed_writes,
    force_overwrite,
    hold_lock,
    process_mark,
    record_path,
    release_lock,
)


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)


def test_an_owned_write_records_its_hash_and_replaces_only_that(tmp_path):
    f = tmp_path / "out.json"
    atomic_write_text(f, "{}", name="--save", owned=True)
    atomic_write_text(f, "[]", name="--save", owned=True)  # unchanged since: replaced
    assert json.loads(record_path(f).read_text())["file"] == "out.json"
    f.write_text("[1]")
    with pytest.raises(OverwriteError, match=r"--save = .*out.json.*changed since"):
        atomic_write_text(f, "{}", name="--save", owned=True)
    assert f.read_text() == "[1]"
    with force_overwrite():
        atomic_write_text(f, "{}", name="--save", owned=True)
    assert f.read_text() == "{}"


def test_a_users_file_in_the_records_place_is_refused_and_kept(tmp_path):
    f = tmp_path / "a.csv"
    record_path(f).write_text("my hidden notes")
    with pytest.raises(OverwriteError, match=r"\.a\.csv\.boundlab\.json"):
        check_replaceable(f, "--out")
    assert record_path(f).read_text() == "my hidden notes"


def test_a_failed_write_names_its_file_and_option_and_is_remembered(tmp_path, monkeypatch):
    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(atomic.os, "replace", full)
    f = tmp_path / "sub" / "r.md"
    with pytest.raises(WriteError, match=r"cannot write .*r\.md \(--out\): No space left"):
        atomic_write_text(f, "x", name="--out")
    assert os.listdir(f.parent) == []  # its temporary file is gone too
    assert [p for p, _ in failed_writes(tmp_path)] == [str(f)]


def test_a_lock_proves_a_dead_writers_temporary_files_only(tmp_path):
    code = ("import os, sys, pathlib; from boundlab.io import LOCK, hold_lock, process_mark; "
            "d = pathlib.Path(sys.argv[1]); hold_lock(d / LOCK); "
            "(d / f'.x.csv{process_mark()}1.csv').write_text('half'); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    other = tmp_path / f".y.csv.boundlab-tmp-{_dead_pid()}-0123456789abcdef-2.csv"
    other.write_text("not proved: another token")
    assert len(clean_temps(tmp_path)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name]


def test_a_live_writers_lock_refuses_a_second_writer(tmp_path):
    lock = tmp_path / LOCK
    parent = os.getppid()  # alive
    lock.write_text(json.dumps({"format": "boundlab-lock/1", "pid": parent,
                                "mark": f".boundlab-tmp-{parent}-0123456789abcdef-"}))
    with pytest.raises(DomainError, match=f"process {parent} holds its lock"):
        hold_lock(lock)
    assert clean_temps(tmp_path) == [] and lock.exists()


def test_a_users_file_named_like_the_lock_is_refused_not_deleted(tmp_path):
    lock = tmp_path / LOCK
    lock.write_text("mine")
    (tmp_path / f".a{process_mark()}x").write_text("this process's: in use")
    with pytest.raises(OverwriteError, match=r"\.boundlab-lock"):
        hold_lock(lock)
    assert clean_temps(tmp_path) == [] and lock.read_text() == "mine"
    release_lock(lock)
    assert lock.read_text() == "mine"


def test_a_dead_writers_whole_lock_temp_is_removed_a_partial_one_stays(tmp_path):
    """A writer killed between writing its lock's temporary copy and renaming it leaves
    ``.<lock><mark>...``: the next writer removes it when it is a whole lock of a dead writer
    whose mark is in its name; an empty one (killed before writing) is not provably boundlab's."""
    import json
    import os

    from boundlab._atomic import TMP_MARK
    from boundlab._lock import LOCK, hold_lock, release_lock

    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)  # a pid that is certainly gone
    mark = f"{TMP_MARK}{pid}-0123456789abcdef-"
    whole = tmp_path / f".{LOCK}{mark}x1y2.tmp"
    whole.write_text(json.dumps({"format": "boundlab-lock/1", "pid": pid, "mark": mark}))
    empty = tmp_path / f".{LOCK}{mark}z3w4.tmp"
    empty.write_text("")
    lie = tmp_path / f".{LOCK}{TMP_MARK}{pid}-ffffffffffffffff-q.tmp"  # another mark inside
    lie.write_text(json.dumps({"format": "boundlab-lock/1", "pid": pid, "mark": mark}))
    lock = hold_lock(tmp_path / LOCK)
    try:
        assert not whole.exists() and empty.exists() and lie.exists()
    finally:
        release_lock(lock)
