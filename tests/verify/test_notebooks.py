"""Every notebook executes top to bottom at small size (BOUNDLAB_NB_SMALL=1)."""

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook_per_family():
    assert {p.stem for p in NOTEBOOKS} >= {"drift", "skew", "weight_error", "contraction"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch, tmp_path):
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        "notebooks are committed without outputs"
    monkeypatch.setenv("BOUNDLAB_NB_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
