"""Atomic outputs: an interrupted write leaves no file and no temporary behind."""

import pytest

from boundlab.io import atomic_path, atomic_write_text


def test_interrupted_write_leaves_nothing(tmp_path):
    target = tmp_path / "report.md"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_interrupted_rewrite_keeps_old_content(tmp_path):
    target = atomic_write_text(tmp_path / "a.csv", "old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("new, half written")
            raise RuntimeError
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]
