"""The notebooks ship executed at their small size (``BOUNDLAB_NB_SMALL=1``) with their outputs
stored; this module executes them (once per test session) and tells whether the stored outputs
are current.

What is compared, per code cell: the text a reader sees (stdout, ``text/plain`` and
``text/markdown`` results, errors by name) and the number of figures (``image/png``). Text is
compared with its whitespace collapsed and its numbers within a relative 1e-3 (absolute 1e-9:
values at round-off level differ between machines); timings, addresses (``0x...``) and Dask
scheduler addresses are left out. stderr (warnings, Dask's logs) is neither stored nor compared.

Refresh the stored outputs after a change that moves them (2-4 minutes)::

    python tests/verify/_notebook_outputs.py            # execute and store every notebook
    python tests/verify/_notebook_outputs.py --check    # compare only; exit 1 when stale
    python tests/verify/_notebook_outputs.py drift      # only notebooks/drift.ipynb
"""

from __future__ import annotations

import functools
import math
import pathlib
import re
import sys
import tempfile

import pytest

NOTEBOOK_DIR = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
#: what ipykernel itself selects in Jupyter when MPLBACKEND is unset
INLINE = "module://matplotlib_inline.backend_inline"
#: relative and absolute tolerance of a number in a stored output
RTOL, ATOL = 1e-3, 1e-9

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_VOLATILE = [(re.compile(r"tcp://[\w.\-]+:\d+"), "tcp://HOST:PORT"),
             (re.compile(r"0x[0-9a-fA-F]+"), "0xADDR"),
             (re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|seconds|min)\b"), "TIME")]
_TEXT = ("text/plain", "text/markdown")


def execute(path, workdir, lint=None):
    """``path`` executed at small size in ``workdir`` (the inline backend, the figure lint's
    records to ``lint`` when given); stderr outputs dropped. Returns the notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    env = {"BOUNDLAB_NB_SMALL": "1", "MPLBACKEND": INLINE}
    if lint is not None:
        env["BOUNDLAB_FIGURE_LINT"] = str(lint)
    with pytest.MonkeyPatch.context() as mp:  # the environment restored afterwards
        for name, value in env.items():
            mp.setenv(name, value)
        NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                       resources={"metadata": {"path": str(workdir)}}).execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs
                            if not (o.output_type == "stream" and o.name == "stderr")]
    return nb


@functools.lru_cache(maxsize=None)
def executed(path) -> tuple:
    """``(notebook, figure-lint lines)`` of ``path`` executed once per process (the tests of
    the notebooks share it)."""
    with tempfile.TemporaryDirectory(prefix=f"nb-{pathlib.Path(path).stem}-") as work:
        lint = pathlib.Path(work) / "figure-lint.jsonl"
        nb = execute(path, work, lint)
        lines = lint.read_text().splitlines() if lint.exists() else []
    return nb, tuple(lines)


def cell_outputs(nb) -> list:
    """Per code cell: ``(texts, figures)``, the texts a reader sees and the image count."""
    out = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        texts, figures = [], 0
        for o in cell.get("outputs", []):
            if o.output_type == "stream" and o.name == "stdout":
                texts.append(o.text)
            elif o.output_type == "error":
                texts.append(f"error {o.ename}")
            elif o.output_type in ("execute_result", "display_data"):
                figures += "image/png" in o.data
                texts += [o.data[k] for k in _TEXT if k in o.data]
        out.append(("\n".join(texts), figures))
    return out


def _tokens(text: str) -> tuple[str, list[float]]:
    """(the text with each number as '#', the numbers), volatile parts replaced."""
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    text = " ".join(text.split())
    return _NUMBER.sub("#", text), [float(x) for x in _NUMBER.findall(text)]


def same_text(a: str, b: str) -> bool:
    """Equal but for whitespace, volatile parts and float noise.

    >>> same_text("ratio 0.0414730  (1.2 s)", "ratio  0.041473 (3.4 s)")
    True
    >>> same_text("ratio 0.0414", "ratio 0.0420"), same_text("holds", "VIOLATED")
    (False, False)
    """
    (sa, na), (sb, nb) = _tokens(a), _tokens(b)
    return sa == sb and len(na) == len(nb) and all(
        math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL) for x, y in zip(na, nb))


def differences(stored, fresh) -> list[str]:
    """Where the stored notebook's outputs differ from a fresh execution's (empty: current)."""
    old, new = cell_outputs(stored), cell_outputs(fresh)
    if len(old) != len(new):
        return [f"{len(old)} code cells stored, {len(new)} executed"]
    out = []
    for i, ((ta, fa), (tb, fb)) in enumerate(zip(old, new)):
        if fa != fb:
            out.append(f"code cell {i}: {fa} figure(s) stored, {fb} now")
        if not same_text(ta, tb):
            out.append(f"code cell {i}: stored text differs:\n--- stored\n{ta[:600]}\n"
                       f"--- now\n{tb[:600]}")
    return out


def main(argv=None) -> int:
    import nbformat

    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    names = [a for a in args if a != "--check"]
    paths = [p for p in NOTEBOOKS if not names or p.stem in names]
    stale = 0
    for path in paths:
        with tempfile.TemporaryDirectory() as work:
            fresh = execute(path, work)
        diff = differences(nbformat.read(path, as_version=4), fresh)
        stale += bool(diff)
        print(f"{path.name}: {'current' if not diff else 'stale'}", *diff[:3], sep="\n  ")
        if not check:  # a refresh stores this execution (its figures too)
            nbformat.write(fresh, str(path))
            print(f"  stored the outputs of {path.name}")
    return int(check and stale > 0)


if __name__ == "__main__":
    sys.exit(main())
