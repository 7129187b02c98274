"""``toys.make`` / ``toys.names`` and ``boundlab toys list | constants``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, UnknownNameError
from verify.cli import main

REQUIRED = {"quadratic", "seed004-toy", "leaf-synthetic", "breast-cancer", "digits",
            "logistic-synthetic"}


def test_registry_names_and_make():
    names = toys.names()
    assert REQUIRED <= set(names)
    assert all(isinstance(v, str) and v and "\n" not in v for v in names.values())
    prob = toys.make("logistic-synthetic", n_clients=4, seed=3)
    assert prob.n_clients == 4 and prob.registry_name == "logistic-synthetic"
    assert prob.l2 > 0 and prob.Gamma > 0
    a, b = toys.make("quadratic", seed=7), toys.make("quadratic", seed=7)
    assert np.array_equal(a.A, b.A)


def test_registry_errors():
    with pytest.raises(UnknownNameError, match="valid: quadratic"):
        toys.make("nope")
    with pytest.raises(UnknownNameError, match="heterogeneity"):
        toys.make("quadratic", hetero=1.0)
    with pytest.raises(DomainError, match="dim"):
        toys.make("quadratic", dim=0)
    with pytest.raises(DomainError, match="L"):
        toys.make("quadratic", L="big")


def test_import_toys_is_light_and_constants_is_callable():
    import subprocess
    import sys

    code = ("import sys, toys; heavy = [m for m in ('scipy', 'sklearn', 'cvxpy', 'sympy', "
            "'torch') if m in sys.modules]; import toys.constants; "
            "print(heavy, callable(toys.constants))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[] True"


def test_cli_list(capsys):
    assert main(["toys", "list"]) == 0
    out = capsys.readouterr().out
    for name in REQUIRED:
        assert name in out
    assert main(["toys", "list", "--json"]) == 0
    assert REQUIRED <= set(json.loads(capsys.readouterr().out))


def test_cli_constants_seed004_compares_with_paper(capsys):
    assert main(["toys", "constants", "seed004-toy", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "paper" in out and "0.19" in out and "0.407" in out and "exact" in out
    assert main(["toys", "constants", "seed004-toy", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["paper"]["L_F"]["value"] == 0.190
    assert doc["constants"]["L_F"]["how"] == "exact"
    assert doc["params"]["L"] == pytest.approx(0.201, abs=0.006)
    assert doc["params"]["D"] == pytest.approx(3.04, abs=0.06)


def test_cli_constants_options_and_json(capsys):
    args = ["toys", "constants", "quadratic", "n_clients=3", "dim=2", "L=4", "mu=0.5",
            "noise_std=0.1", "--batch-size", "2", "--json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["L"] == pytest.approx(4.0, rel=1e-10)
    assert doc["params"]["mu"] == pytest.approx(0.5, rel=1e-10)
    assert doc["params"]["sigma"] == pytest.approx(np.sqrt(2 * 0.01 / 2), rel=1e-12)
    assert doc["options"] == {"n_clients": 3, "dim": 2, "L": 4, "mu": 0.5, "noise_std": 0.1}


@pytest.mark.parametrize("argv,word", [
    (["toys", "constants", "nope"], "unknown problem"),
    (["toys", "constants", "quadratic", "L=-1"], "L = -1"),
    (["toys", "constants", "quadratic", "hetero=1"], "unknown option"),
    (["toys", "constants", "quadratic", "oops"], "is not name=value"),
    (["toys", "constants", "quadratic", "seed=1", "--seed", "2"], "seed"),
    (["toys", "constants"], "error"),
    (["toys"], "error"),
])
def test_cli_bad_input_one_line_exit_2(capsys, argv, word):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:") and word in err
