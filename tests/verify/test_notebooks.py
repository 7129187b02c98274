"""Every notebook executes top to bottom at small size (BOUNDLAB_NB_SMALL=1), with an inline
matplotlib backend, and shows at least one figure; each figure passes the figure lint
(verify.figures.lint, through the BOUNDLAB_FIGURE_LINT hook of verify.figures.show); titles render
as one heading; the Verdict states the finding in words, without internal names; and the stored
outputs are current (issue 31; that issue's other checks: tests/verify/test_notebook_outputs_31.py).
All of it is checked on one execution (``_notebook_outputs.executed``) in one test per notebook,
so each notebook runs once per session, whichever pytest-xdist worker the test lands on."""

import json
import re

import nbformat
import pytest
from _notebook_outputs import NOTEBOOKS, differences, executed

#: one notebook per bound family and one per workflow (README: your own bound / run, sweeps)
REQUIRED = {"drift", "skew", "weight_error", "contraction", "own_bound", "own_run", "dask_sweep"}


def test_there_is_a_notebook_per_family():
    assert {p.stem for p in NOTEBOOKS} >= REQUIRED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    # issue 31: committed executed top to bottom (the outputs: test_notebook_outputs_31.py)
    assert [c.get("execution_count") for c in code] == list(range(1, len(code) + 1)), \
        "notebooks are committed executed in order (python tests/verify/_notebook_outputs.py)"
    assert not any("matplotlib.use(" in c.source or "%matplotlib" in c.source for c in code), \
        "the backend is the runner's choice, not the notebook's"
    assert nb.cells[0].source.startswith("# ") and not nb.cells[0].source.startswith("# #"), \
        "the title is one level-1 heading"
    assert not any("def show(" in c.source for c in code), "verify.figures.show is shared"


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.outputs)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_draws_and_its_stored_outputs_are_current(path):
    if path.stem == "dask_sweep":
        pytest.importorskip("dask.distributed", reason="the [dask] extra is not installed")
    nb, lint_lines = executed(path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors, [f"{o.ename}: {o.evalue}" for o in errors]
    assert _images(nb) >= 1, f"{path.name} produced no figure (no image/png output)"
    assert _verdict_is_computed(nb), f"{path.name}: the cell after '## Verdict' shows no " \
        "computed text (a text/markdown output)"
    figures = [json.loads(line) for line in lint_lines]
    assert len(figures) == _images(nb)
    assert not [f for f in figures if f["problems"]], figures
    finding = _verdict_text(nb)
    assert "holds" in finding or "VIOLATED" in finding or "does not hold" in finding, finding
    assert "times the measured value" in finding, finding  # how loose
    assert not INTERNAL.search(finding), INTERNAL.search(finding)
    # issue 31: a fresh execution shows what the notebook ships with
    diff = differences(nbformat.read(path, as_version=4), nb)
    assert not diff, f"{path.name}: stored outputs are stale (refresh: python " \
        f"tests/verify/_notebook_outputs.py {path.stem})\n" + "\n".join(diff)


#: internal names a reader should not meet: catalogue ids, term_* columns, snake_case, reprs
INTERNAL = re.compile(r"\b[a-z]+\.[a-z_]+_[a-z_]+\b|\bterm_|\b[a-z]+_[a-z]+\b|Value\(")


def _verdict_text(nb) -> str:
    """The Markdown the Verdict cell displayed."""
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown" and c.source.lstrip().startswith("## Verdict"):
            after = next(d for d in nb.cells[i + 1:] if d.cell_type == "code")
            return "".join(o["data"]["text/markdown"] for o in after.outputs
                           if "text/markdown" in o.get("data", {}))
    return ""


def _verdict_is_computed(nb) -> bool:
    """The code cell after the '## Verdict' heading displays Markdown built from the results."""
    cells = nb.cells
    for i, c in enumerate(cells):
        if c.cell_type == "markdown" and c.source.lstrip().startswith("## Verdict"):
            after = next((d for d in cells[i + 1:] if d.cell_type == "code"), None)
            return after is not None and any("text/markdown" in o.get("data", {})
                                             for o in after.outputs)
    return False
