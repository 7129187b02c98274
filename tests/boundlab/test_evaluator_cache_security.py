"""Issue 20 on the boundlab side: the evaluator cache only in a private directory, text from
it escaped, integer parameters exactly representable, no lambdify of foreign function names."""

import dataclasses
import json
import os
import warnings

import pytest
import sympy as sp

import boundlab
from boundlab import _cache, _cache_build, registry
from boundlab._exact import ExactEvaluator
from boundlab.core import KINDS
from boundlab.errors import BoundlabError, DomainError
from verify.cli import bounds_cmd, main

POINT = {"eta": 0.2, "tau": 10, "L": 0.19, "zeta": 0.407}


def test_cache_directory_is_created_private(tmp_path):
    d = tmp_path / "a" / "bounds"
    assert _cache_build.store_catalogue(str(d))
    assert os.stat(d).st_mode & 0o777 == 0o700
    assert _cache.load_bound("drift.plateau", str(d)) is not None


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o722])
def test_directory_others_can_write_is_never_read_nor_written(tmp_path, mode):
    d = tmp_path / "shared"
    assert _cache_build.store_catalogue(str(d))  # filled while private ...
    os.chmod(d, mode)  # ... then opened to others: a planted entry could be there
    with pytest.warns(RuntimeWarning, match="writable by others"):
        assert _cache.load_bound("drift.plateau", str(d)) is None
    with pytest.warns(RuntimeWarning, match="refused"):
        assert _cache.load_index(str(d)) is None
    before = sorted(os.listdir(d))
    with pytest.warns(RuntimeWarning):
        assert not _cache_build.store_catalogue(str(d))
    assert sorted(os.listdir(d)) == before


def test_directory_of_another_user_is_refused(tmp_path, monkeypatch):
    d = tmp_path / "theirs"
    assert _cache_build.store_catalogue(str(d))
    monkeypatch.setattr(os, "getuid", lambda: os.stat(d).st_uid + 1)
    with pytest.warns(RuntimeWarning, match="not by you"):
        assert _cache.load_bound("drift.plateau", str(d)) is None


def test_cli_output_is_the_same_from_a_refused_directory(tmp_path, monkeypatch, capsys):
    d = tmp_path / "c"
    assert _cache_build.store_catalogue(str(d))
    os.chmod(d, 0o777)
    argv = ["bounds", "eval", "drift.plateau", *[f"{k}={v}" for k, v in POINT.items()],
            "--json"]
    monkeypatch.setenv("BOUNDLAB_NO_CACHE", "1")
    assert main(argv) == 0
    slow = capsys.readouterr().out
    monkeypatch.setenv("BOUNDLAB_NO_CACHE", "")
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", str(d))
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(argv) == 0
    assert capsys.readouterr().out == slow
    assert any("writable by others" in str(w.message) for w in seen)


def test_forged_index_text_is_escaped_in_the_table(tmp_path, monkeypatch, capsys):
    d = str(tmp_path / "c")
    assert _cache_build.store_catalogue(d)
    path = _cache.index_path(d, _cache.fingerprint())
    doc = json.loads(open(path).read())
    doc["payload"][0]["source"] = "x\x1b[2J\x1b]0;owned\x07[bold]markup[/bold]"
    doc["checksum"] = _cache.checksum("index", doc["key"], doc["payload"])
    with open(path, "w") as fh:
        json.dump(doc, fh)
    monkeypatch.setenv("BOUNDLAB_CACHE_DIR", d)
    monkeypatch.setattr(bounds_cmd, "_use_cache", _cache.enabled)
    assert main(["bounds", "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out and "[bold]markup" in out  # shown, inert


def test_index_rows_must_look_like_catalogue_rows():
    row = {"id": "drift.plateau", "family": "drift", "kind": "upper", "source": "s",
           "lhs": "gap", "params": ["eta"], "printed": False, "entry": "a" * 64}
    assert _cache._valid_row(row)
    for field, bad in (("id", "os.system('x')"), ("family", "evil"), ("kind", "lower"),
                       ("params", ["open('f')"]), ("entry", "../../etc/passwd"),
                       ("id", "skew.plateau")):
        assert not _cache._valid_row({**row, field: bad}), field


def test_the_cache_knows_the_registry_families_and_kinds():
    assert _cache._FAMILIES == registry.FAMILIES and _cache._KINDS == KINDS


# ------------------------------------------------------------------------------ integers
@pytest.mark.parametrize("tau", [1e308, 2.0**53 + 2, 1e17])
def test_huge_integer_parameter_is_refused_on_both_paths(tmp_path, tau):
    assert _cache_build.store_catalogue(str(tmp_path))
    fast = _cache.load_bound("drift.plateau", str(tmp_path))
    for b in (boundlab.get("drift.plateau"), fast):
        with pytest.raises(DomainError, match=r"tau = .* integer >= 1 .*\|tau\| <= 2\*\*53"):
            b.evaluate(**{**POINT, "tau": tau})
    assert boundlab.get("drift.plateau").evaluate(**{**POINT, "tau": 2.0**53}) > 0


def test_cli_refuses_a_huge_integer(capsys):
    assert main(["bounds", "eval", "drift.plateau", "eta=0.1", "tau=1e308", "L=1",
                 "zeta=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: tau = 1e+308") and "2**53" in err


# ------------------------------------------------------------------------------ lambdify
@pytest.mark.parametrize("name", ["os.system", "__import__", "exec", "open('x','w').write"])
def test_undefined_function_is_refused_at_construction(name):
    b = boundlab.get("drift.plateau")
    eta = b.params["eta"].symbol
    bad = sp.Function(name)(eta)
    for kw in ({"expr": b.expr * bad, "terms": {}},
               {"terms": {"a": b.expr - bad, "b": bad}},
               {"stable": b.expr + sp.Min(0, bad)},
               {"preconditions": (boundlab.Precondition(eta, "<=", bad, "eta <= f"),)}):
        with pytest.raises(BoundlabError, match=r"mine\.x: .*function .* not one of sympy"):
            dataclasses.replace(b, id="mine.x", **kw)


def test_foreign_function_class_is_refused_by_the_evaluator():
    x = sp.Symbol("x", positive=True)
    evil = type("system", (sp.Function,), {"__module__": "os"})
    for expr in (sp.Function("os.system")(x), evil(x), sp.exp(sp.Function("f")(x))):
        with pytest.raises(BoundlabError, match="not one of sympy's own"):
            ExactEvaluator(expr, [x])
    assert ExactEvaluator(sp.sin(x) + sp.gamma(x), [x]).checked is False  # sympy's own: ok


def test_testing_module_refuses_foreign_functions_in_preconditions():
    from boundlab.core import Precondition
    from boundlab.testing import _difference

    eta = boundlab.sym("eta")
    pc = Precondition(eta, "<=", sp.Function("__import__")(eta), "eta <= f(eta)")
    with pytest.raises(BoundlabError, match="'__import__'"):
        _difference(pc)
