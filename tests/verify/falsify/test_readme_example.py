"""The README's falsify example (read from README.md) runs as printed: a wrong bound caught."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import warnings

import boundlab

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"
EXAMPLE = next(b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
               if "mine.gd_last_iterate" in b)


def test_readme_example_runs_as_printed():
    out = io.StringIO()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(out):
            warnings.simplefilter("ignore")
            exec(compile(EXAMPLE, "README.md", "exec"), {})
    finally:
        if boundlab.registry.is_registered("mine.gd_last_iterate"):
            boundlab.unregister("mine.gd_last_iterate")
    # 8T / (4T + 2) at T = 16, the largest horizon of the default grid (Drori-Teboulle)
    ratio = round(8 * 16 / (4 * 16 + 2), 3)
    assert out.getvalue().splitlines() == [f"VIOLATED {ratio}", "pep-interpolation 16",
                                           f"{ratio}", f"{ratio} {ratio}"]
