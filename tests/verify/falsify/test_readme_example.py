"""The README's falsify example runs as printed: a user's wrong bound caught and replayed."""

from __future__ import annotations

import contextlib
import io
import warnings

import boundlab

EXAMPLE = '''
import boundlab, verify
from boundlab import Bound, make_params, sym

L, D, T = sym("L"), sym("D"), sym("T")
mine = Bound(id="mine.gd_last_iterate", source="my note, Theorem 1",
             expr=L * D**2 / (8 * T),  # wrong: the exact worst case is L D^2 / (4T + 2)
             params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
boundlab.register(mine, algorithm="gd", function_class="smooth-convex")

res = verify.falsify("mine.gd_last_iterate", budget=300, eta=1.0)  # GD, step 1/L at L = 1
print(res.verdict, round(res.worst_ratio, 3))  # measured / bound on the worst instance
print(res.instance.family, res.instance.run["rounds"])  # the concrete problem and its run
print(round(res.instance.replay(), 3))  # toys.run on that instance again
print(round(res.exact["lower"], 3), round(res.exact["upper"], 3))  # PEP bracket / bound
'''


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
