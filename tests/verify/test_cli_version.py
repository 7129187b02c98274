"""``boundlab --version``: one line with the versions a report needs."""

import importlib.metadata as md

import pytest

import boundlab
from verify.cli import main


def test_version_is_one_line_with_code_and_dependencies(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith(f"boundlab {boundlab.__version__} (code {boundlab.__version__}+")
    assert f"numpy {md.version('numpy')}" in out and f"sympy {md.version('sympy')}" in out
