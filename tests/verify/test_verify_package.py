"""verify/__init__.py: ``verify.check`` and ``verify.sweep`` are both subpackages and the
functions users call, whatever is imported first; the top level of verify/ holds public
modules and subpackages only."""

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# each order runs in a fresh interpreter: the first import decides what the attribute holds
ORDERS = {
    "package first": "import verify; import verify.check; import verify.sweep",
    "subpackages first": "import verify.check; import verify.sweep; import verify",
    "names first": "from verify.check import check; from verify.sweep import sweep; import verify",
    "modules first": ("from verify.check.lhs import LHS; "
                      "from verify.sweep.store import SweepStore; "
                      "import verify.worst.file; import verify"),
}
PROBE = """
import sys, types
ok = []
for name in ("check", "check_log", "sweep"):
    f = getattr(verify, name)
    ok.append(isinstance(f, types.FunctionType) and f.__module__.startswith("verify."))
pkg = sys.modules["verify.check"]
ok.append(verify.check is pkg.check and verify.sweep is sys.modules["verify.sweep"].sweep)
ok.append(isinstance(pkg, types.ModuleType) and bool(pkg.__path__))
ok.append(verify.worst_instance is sys.modules["verify.worst"].worst_instance)
print(ok)
"""


@pytest.mark.parametrize("first", list(ORDERS))
def test_check_and_sweep_stay_the_functions_in_every_import_order(first):
    out = subprocess.run([sys.executable, "-c", ORDERS[first] + "\n" + PROBE], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str([True] * 6)


def test_the_top_level_holds_public_modules_and_subpackages_only():
    modules = {p.name for p in (ROOT / "verify").glob("*.py")}
    assert modules == {"__init__.py", "__main__.py", "compare.py", "schema.py",
                       "result_keys.py", "suite.py"}
    packages = {p.name for p in (ROOT / "verify").iterdir() if (p / "__init__.py").is_file()}
    assert {"check", "sweep", "worst", "report", "falsify", "tightness", "checks", "measures",
            "reproduce", "figures", "cli"} <= packages
