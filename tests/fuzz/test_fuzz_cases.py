"""Hand-written hostile inputs, CLI and Python API: a clear boundlab error or a correct result.

Each case in ``_fuzz_cases`` says what must happen. A raw exception (numpy, json, gzip, OSError
...), a traceback at the CLI, an error that does not name the parameter, a silently accepted
invalid value or a wrong / non-finite result fails the case.
"""

import pytest
from _fuzz_cases import api_cases, cli_cases
from _fuzz_harness import GOOD, classify


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def _ids(cases):
    return [c.name for c in cases]


_CLI = cli_cases(__import__("tempfile").mkdtemp())
_API_NAMES = None


@pytest.mark.parametrize("case", _CLI, ids=_ids(_CLI))
def test_cli_case(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a case that wrongly writes to "." writes here
    outcome, detail = classify(case)
    assert outcome in GOOD, f"{case.name}: {outcome}: {detail}"


def test_api_cases(scratch):
    bad = []
    for case in api_cases(scratch):
        outcome, detail = classify(case)
        if outcome not in GOOD:
            bad.append(f"{case.name}: {outcome}: {detail}")
    assert not bad, "\n".join(bad)
