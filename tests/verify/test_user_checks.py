"""Registered bounds in ``boundlab verify`` (verify.checks.user) and ``boundlab tightness``."""

import dataclasses
import json

import pytest

import boundlab
from boundlab.errors import UnknownNameError
from verify.cli import main
from verify.suite import Context, checks, select

RUN = {"problem": "seed004-toy", "algorithm": "fedavg", "rounds": 10,
       "hyper": {"lr": 0.2, "local_steps": 5}}


@pytest.fixture
def registered():
    ids = []

    def add(bound, **kw):
        boundlab.register(bound, **kw)
        ids.append(bound.id)
        return bound

    yield add
    for bid in ids:
        boundlab.unregister(bid)


def _copy(base_id, new_id, scale=1):
    b = boundlab.get(base_id)
    return dataclasses.replace(b, id=new_id, expr=scale * b.expr, terms={})


def test_verify_only_judges_a_registered_bound(registered, tmp_path, capsys):
    registered(_copy("drift.plateau_finite", "mine.tight", scale=1e-4), run=RUN)
    [spec] = select("mine.tight")
    assert spec.family == "mine" and spec.name in {c.name for c in checks()}
    code = main(["verify", "--only", "mine.tight", "--quick", "--json", "--no-tightness",
                 "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    rows = out["results"] if isinstance(out, dict) else out
    assert [r["verdict"] for r in rows if r["bound_id"] == "mine.tight"] == ["VIOLATED"]
    assert code == 1  # a VIOLATED bound fails the job


def test_per_round_registered_bound_reports_the_worst_round(registered):
    # a user bound in a built-in family uses that family's symbol conventions (Delta = gap_0)
    registered(_copy("contraction.fedprox_sc", "contraction.mine_sc"),
               run={"problem": {"name": "quadratic", "n_clients": 3, "dim": 2, "seed": 0},
                    "algorithm": "fedprox", "rounds": 5,
                    "hyper": {"lr": 0.05, "prox": 0.1, "local_steps": 2}})
    [r] = select("contraction.mine_sc")[0].fn(Context(quick=True))
    assert r.bound_id == "contraction.mine_sc" and "worst of 6 rounds" in r.note
    # lr = 0.05 is not the theorem's gamma = 1/(2E(L + alpha)): not applicable, named
    assert r.verdict == "not-applicable" and "gamma" in (r.reason or r.note + str(
        r.preconditions_violated))


def test_registered_bound_without_a_run_is_not_applicable(registered):
    registered(_copy("drift.plateau_finite", "mine.norun"))
    [r] = select("mine.norun")[0].fn(Context(quick=True))
    assert r.verdict == "not-applicable" and "no run registered" in r.note


def test_tightness_bracket_for_a_registered_bound_matching_a_pep_model(registered, capsys):
    registered(_copy("drift.plateau", "mine.plateau_x2", scale=2), algorithm="fedavg",
               function_class="smooth-convex")
    registered(_copy("drift.plateau", "mine.plateau_nomodel", scale=2))
    args = ["eta=0.1", "tau=2", "L=1", "zeta=1", "--json", "--no-cache"]
    assert main(["tightness", "mine.plateau_x2", *args]) == 0
    mine = json.loads(capsys.readouterr().out)
    assert main(["tightness", "drift.plateau", *args]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert mine["bound"] == pytest.approx(2 * ref["bound"], rel=1e-15)
    assert mine["worst_case_upper"] == pytest.approx(ref["worst_case_upper"], rel=1e-9)
    assert main(["tightness", "list", "--json"]) == 0
    listed = {r["id"] for r in json.loads(capsys.readouterr().out) if r["model"]}
    assert "mine.plateau_x2" in listed and "mine.plateau_nomodel" not in listed
    from verify.tightness import bracket

    with pytest.raises(UnknownNameError, match="bound id with a PEP model"):
        bracket("mine.plateau_nomodel", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0})
