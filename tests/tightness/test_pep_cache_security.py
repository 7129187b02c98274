"""Issue 20 on the PEP cache: a private directory, sealed entries bound to the PEP's data, and a
bracket recomputed from the solver's certificate on load (a forged bracket is refused)."""

import json
import os
import pathlib

import pytest

from boundlab.integrity import seal
from verify.tightness import PEPCache, _common, wc_fedavg_round
from verify.tightness.cache import _payload
from verify.tightness.certificate import problem_rows, rows_digest, verify_result

ARGS = (1.0, 0.1, 0.1, 2, 0.5)  # L, mu, eta, tau, zeta: a Gram size of 9


@pytest.fixture
def solved(tmp_path):
    """(cache dir, entry path, record of the fresh solve)."""
    d = tmp_path / "pep"
    rec = wc_fedavg_round(*ARGS, cache=PEPCache(d))
    [path] = list(d.rglob("*.json"))
    return d, path, rec


def _forge(path, **result):
    """Edit the entry's result and recompute its seal, as anyone who can write it can."""
    doc = json.loads(path.read_text())
    doc["result"].update(result)
    doc["seal"] = seal({"key": doc["key"], "problem": doc["problem"]}, _payload(doc["result"]))
    path.write_text(json.dumps(doc))


def test_entry_is_private_sealed_and_certified(solved):
    d, path, rec = solved
    assert os.stat(d).st_mode & 0o777 == 0o700
    doc = json.loads(path.read_text())
    assert set(doc) == {"key", "problem", "result", "seal"}
    assert set(doc["result"]["certificate"]) == {"G", "F", "lam", "R"}
    again = wc_fedavg_round(*ARGS, cache=PEPCache(d))
    assert again.cached and again.value == rec.value and again.lower == rec.lower


@pytest.mark.parametrize("edit", [{"value": "x1e-6"}, {"lower": "x1e6"},
                                  {"value": "x1e-6", "lower": "x1e-6"}])
def test_forged_bracket_with_a_recomputed_seal_is_refused(solved, edit):
    d, path, rec = solved
    stored = json.loads(path.read_text())["result"]
    _forge(path, **{k: stored[k] * float(v[1:]) for k, v in edit.items()})
    with pytest.warns(RuntimeWarning, match=r"refused: .*(value|lower) is not valid"):
        again = wc_fedavg_round(*ARGS, cache=PEPCache(d))
    assert not again.cached and again.value == pytest.approx(rec.value, rel=1e-9)
    assert again.lower == pytest.approx(rec.lower, rel=1e-9)


def test_claims_without_certificate_are_solved_again(solved):
    d, path, rec = solved
    doc = json.loads(path.read_text())
    doc["result"].pop("certificate")
    path.write_text(json.dumps(doc))
    _forge(path, value=None, lower=None, gap=None, status="infeasible", ok=True)
    with pytest.warns(RuntimeWarning, match="certificate"):
        again = wc_fedavg_round(*ARGS, cache=PEPCache(d))
    assert again.value == pytest.approx(rec.value, rel=1e-9)


def test_entry_of_another_pep_is_refused_naming_the_problem(solved):
    d, path, rec = solved
    doc = json.loads(path.read_text())
    doc["problem"] = "0" * 64
    doc["seal"] = seal({"key": doc["key"], "problem": doc["problem"]}, _payload(doc["result"]))
    path.write_text(json.dumps(doc))
    with pytest.warns(RuntimeWarning, match="does not belong here: problem"):
        assert not wc_fedavg_round(*ARGS, cache=PEPCache(d)).cached


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757])
def test_directory_others_can_write_is_refused(solved, mode):
    d, path, rec = solved
    _forge(path, value=json.loads(path.read_text())["result"]["value"] * 1e-6)
    os.chmod(d, mode)
    with pytest.warns(RuntimeWarning, match="writable by others"):
        again = wc_fedavg_round(*ARGS, cache=PEPCache(d))
    assert not again.cached and again.value == pytest.approx(rec.value, rel=1e-9)
    os.chmod(d, 0o700)
    assert json.loads(path.read_text())["result"]["value"] < rec.value  # never rewritten


def test_certificate_is_recomputed_with_the_callers_tolerance(solved):
    from verify.tightness.pep_models import _build_rounds

    d, path, rec = solved
    doc = json.loads(path.read_text())
    build = _build_rounds(doc["key"]["params"])
    problem = problem_rows(build)
    assert rows_digest(problem) == doc["problem"]
    ok = verify_result(doc["result"], build, path, {"tol": 1e-6}, problem)
    assert ok["ok"] and ok["value"] == doc["result"]["value"]
    strict = verify_result({**doc["result"], "ok": False}, build, path, {"tol": 1e-30}, problem)
    assert not strict["ok"]


def test_shipped_entries_are_sealed_and_certified():
    files = sorted(pathlib.Path(_common.SHIPPED).rglob("*.json"))
    assert len(files) == 4
    for path in files:
        doc = json.loads(path.read_text())
        assert {"seal", "problem"} <= set(doc) and "certificate" in doc["result"], path


def test_shipped_cache_is_never_written(tmp_path):
    c = PEPCache(tmp_path, read_only=True)
    key = c.key("demo", "cls", {"a": 1.0})
    assert c.put(key, {"value": 1.0}) is False and not list(tmp_path.rglob("*.json"))


def test_readme_example_ignores_a_forged_user_cache(tmp_path, monkeypatch, capsys):
    """The issue's attack: a user cache whose entries claim a bracket 1e6 times too small,
    with recomputed seals. The entries are refused; the shipped ones answer, as without them."""
    import shutil

    from verify.cli import main

    argv = ["tightness", "drift.plateau", "eta=0.1", "tau=10", "L=1", "zeta=0.5", "--json",
            "--cache-only"]
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path / "empty"))
    main(argv)
    honest = json.loads(capsys.readouterr().out)
    user = tmp_path / "forged" / "pep"
    shutil.copytree(_common.SHIPPED, user)
    os.chmod(user, 0o700)
    for path in user.rglob("*.json"):
        stored = json.loads(path.read_text())["result"]
        _forge(path, value=stored["value"] * 1e-6, lower=stored["lower"] * 1e-6)
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path / "forged"))
    with pytest.warns(RuntimeWarning, match="PEP cache entry refused"):
        main(argv)
    got = json.loads(capsys.readouterr().out)
    assert got["worst_case_upper"] == honest["worst_case_upper"] > 1e-3
    assert got["worst_case_lower"] == honest["worst_case_lower"]
