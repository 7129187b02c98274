"""House rules that the code itself can check: import direction and a light ``import boundlab``."""

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORBIDDEN = {"boundlab": ("toys", "verify"), "toys": ("verify",)}


def _imports(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def test_imports_point_verify_toys_boundlab():
    bad = []
    for pkg, forbidden in FORBIDDEN.items():
        for path in (ROOT / pkg).rglob("*.py"):
            bad += [f"{path.relative_to(ROOT)} imports {m}" for m in _imports(path)
                    if m in forbidden]
    assert not bad, bad


def test_import_boundlab_is_light():
    """``import boundlab`` must not pull sympy, numpy-heavy modules or the catalogue."""
    code = "import sys, boundlab; print(sorted(m for m in ('sympy', 'toys', 'verify', 'torch') " \
           "if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
