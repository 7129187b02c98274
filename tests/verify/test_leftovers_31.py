"""Issue 31, items 3 and 4 on the verify side: run sizes refused before allocation by sweep and
falsify (toys.engine.limits), and the falsify / tightness command-line leftovers (exit 2 with one
``error:`` line naming the parameter, or a correct result)."""

from __future__ import annotations

import json

import pytest

import boundlab
import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError
from toys.engine import limits
from verify.cli import main


def _one_error_line(capsys, *names):
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    for name in names:
        assert name in err[0], err
    return err[0]


@pytest.mark.parametrize("words, name", [
    (["n_clients=1e9"], "n_clients = 1000000000"),   # was: 113 s, 7.9 GB, a numpy traceback
    (["dim=10000000"], "dim = 10000000"),             # was: a numpy memory traceback
    (["eta=1", "T=100000000"], "T = 100000000"),      # was: a numpy memory traceback
])
def test_falsify_refuses_sizes_beyond_the_machine(words, name, capsys):
    assert main(["falsify", "drift.fedavg_convex", *words]) == 2
    _one_error_line(capsys, name, "fits in memory", "available")


def test_falsify_api_refuses_before_any_instance(monkeypatch):
    monkeypatch.setattr(limits, "available_memory", lambda: 10**6)
    with pytest.raises(DomainError, match=r"^budget = 100000 .*falsify search fits in memory"):
        verify.falsify("drift.fedavg_convex", budget=10**5, eta=0.1, T=4, tau=2)


def test_sweep_refuses_sizes_beyond_the_machine(capsys):
    with pytest.raises(DomainError, match=r"^rounds = 10000000 .*the sweep fits in memory"):
        verify.sweep("quadratic", "fedavg", grid={"lr": [0.1]}, seeds=100, rounds=10**7)
    with pytest.raises(DomainError, match=r"^n_clients = 100000000 "):
        verify.sweep("quadratic", "fedavg", grid={"n_clients": [3, 10**8]}, seeds=2,
                     rounds=1000, lr=0.1)
    assert main(["sweep", "fedavg", "--problem", "quadratic", "--rounds", "10000000",
                 "--seeds", "100", "--grid", "lr=0.1"]) == 2
    _one_error_line(capsys, "rounds = 10000000")


def test_falsify_eta_outside_its_domain_exits_2(capsys):
    # was: exit 1 with an "error" verdict (no instance gave a finite ratio)
    assert main(["falsify", "drift.fedavg_convex", "eta=-1"]) == 2
    _one_error_line(capsys, "eta = -1.0", "positive real (0, inf)")
    with pytest.raises(DomainError, match=r"^L = 0.0 .*positive"):
        verify.falsify("drift.fedavg_convex", budget=20, L=0.0)


def test_falsify_empty_families_exits_2(capsys):
    assert main(["falsify", "contraction.lemma_a3", "--families", ""]) == 2  # was: exit 0
    _one_error_line(capsys, "--families")
    with pytest.raises(DomainError, match=r"^families = '\[\]' "):
        verify.falsify("contraction.lemma_a3", budget=20, families=[])


def test_falsify_bad_scheduler_exits_2_as_sweep_and_verify(capsys):
    # was: exit 1, an "error" verdict after the search started
    assert main(["falsify", "contraction.lemma_a3", "--budget", "20", "--executor", "dask",
                 "--scheduler", "tcp://127.0.0.1:1"]) == 2
    _one_error_line(capsys, "scheduler = 'tcp://127.0.0.1:1'", "cannot connect")


@pytest.fixture
def gd_bound():
    L, D, T = sym("L"), sym("D"), sym("T")
    boundlab.register(Bound(id="cli31.right", source="test", expr=L * D**2 / (4 * T + 2),
                            params=make_params("L", "D", "T"), kind="upper", lhs="final_gap"),
                      algorithm="gd", function_class="smooth-convex")
    yield "cli31.right"
    boundlab.unregister("cli31.right")


def test_falsify_settings_after_options(gd_bound, capsys):
    # was: "unrecognized arguments: eta=1 T=4"
    assert main(["falsify", gd_bound, "--budget", "20", "eta=1", "--no-exact", "T=4",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "holds" and out["instance"]["run"]["rounds"] == 4


def test_tightness_huge_step_exits_2(capsys):
    # was: an OverflowError / ZeroDivisionError traceback
    assert main(["tightness", "drift.plateau", "eta=1e308", "tau=2", "L=1", "zeta=1",
                 "--no-cache"]) == 2
    _one_error_line(capsys, "eta = 1e+308", "PEP scales")
    assert main(["tightness", "drift.plateau", "eta=0.1", "tau=2", "L=1", "zeta=1e200",
                 "--no-cache"]) == 2
    _one_error_line(capsys, "zeta = 1e+200")
