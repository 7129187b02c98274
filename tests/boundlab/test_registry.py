"""boundlab.register / unregister and plug-ins (entry-point group ``boundlab.bounds``)."""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import pytest
import sympy as sp

import boundlab
from boundlab import Bound, Precondition, make_params, sym
from boundlab import registry as reg
from boundlab.errors import UnknownNameError
from boundlab.registry import RegistrationError


def _demo(bid="mine.demo", **kw):
    eta, L = sym("eta"), sym("L")
    base = dict(id=bid, source="a note", expr=eta * L, params=make_params("eta", "L"),
                kind="upper", lhs="final_gap",
                preconditions=(Precondition(eta, "<=", 1 / L, "eta <= 1/L"),))
    base.update(kw)
    return Bound(**base)


@pytest.fixture
def clean():
    """Unregister whatever a test registered (the catalogue doctests count families)."""
    before = set(reg.registered_ids())
    yield
    for bid in set(reg.registered_ids()) - before:
        boundlab.unregister(bid)


def test_register_any_family_everywhere(clean):
    b = boundlab.register(_demo("newfam.one"))
    assert boundlab.get("newfam.one") is b
    assert "newfam.one" in boundlab.ids() and boundlab.ids("newfam") == ["newfam.one"]
    assert "newfam" in reg.families() and reg.is_registered("newfam.one")
    assert not reg.is_registered("drift.plateau")
    boundlab.unregister("newfam.one")
    with pytest.raises(UnknownNameError, match="newfam.one"):
        boundlab.get("newfam.one")
    with pytest.raises(UnknownNameError, match="bound family"):
        boundlab.catalogue("newfam")


def test_register_in_a_builtin_family_and_replace_of_catalogue_bound(clean):
    plateau = boundlab.get("drift.plateau")
    half = dataclasses.replace(plateau, id="drift.plateau_half", expr=plateau.expr / 2,
                               terms={})
    boundlab.register(half)
    assert boundlab.get("drift.plateau_half").evaluate(eta=0.1, tau=2, L=1, zeta=1) == \
        pytest.approx(plateau.evaluate(eta=0.1, tau=2, L=1, zeta=1) / 2, rel=1e-15)
    assert boundlab.ids("drift")[-1] == "drift.plateau_half"


def test_duplicates_are_refused(clean):
    boundlab.register(_demo())
    with pytest.raises(RegistrationError, match="mine.demo: duplicate bound id"):
        boundlab.register(_demo())
    with pytest.raises(RegistrationError, match="a catalogue bound"):
        boundlab.register(dataclasses.replace(boundlab.get("drift.plateau")))


@pytest.mark.parametrize("bad, match", [
    (lambda: "drift.plateau", "takes a boundlab.Bound; got str"),
    (lambda: _demo("nodot"), "must read family.name"),
    (lambda: _demo("a.b c"), "must read family.name"),
    (lambda: _demo(lhs="not an id"), "lhs must name a measured quantity"),
    (lambda: _demo(expr=sp.Symbol("eta") * sym("L")),
     "symbol 'eta' differs from the parameter's symbol"),
    (lambda: _demo(terms={"a": sym("eta")}), "terms do not add up to expr"),
    (lambda: _demo(preconditions=(Precondition(sp.Symbol("eta"), "<=", 1, "eta <= 1"),)),
     "precondition 'eta <= 1': symbol 'eta' differs"),
])
def test_malformed_bounds_get_a_clear_error(bad, match, clean):
    with pytest.raises(RegistrationError, match=match):
        boundlab.register(bad())
    assert "mine.demo" not in reg.registered_ids()


def test_registration_metadata_is_validated(clean):
    with pytest.raises(RegistrationError, match="function_class = 'convex' is not one of"):
        boundlab.register(_demo(), function_class="convex")
    with pytest.raises(UnknownNameError, match="key of the run of mine.demo 'lr'"):
        boundlab.register(_demo(), run={"lr": 0.1})
    boundlab.register(_demo(), algorithm="fedavg", function_class="smooth-convex",
                      run={"problem": "seed004-toy", "rounds": 3})
    meta = reg.registration("mine.demo")
    assert meta["algorithm"] == "fedavg" and meta["run"]["rounds"] == 3
    assert meta["plugin"] is None and reg.registration("drift.plateau") == {}


# ------------------------------------------------------------------------------ plug-ins
class _FakeEntryPoint:
    def __init__(self, name, obj):
        self.name, self.value, self._obj = name, f"fakeplug:{name}", obj

    def load(self):
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


@pytest.fixture
def plugins(monkeypatch, clean):
    """Install fake entry points of the group boundlab.bounds; the registry reloads them."""
    import importlib.metadata

    installed = []

    def fake(group=None, **kw):
        assert group == reg.ENTRY_POINT_GROUP
        return list(installed)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    monkeypatch.setitem(reg._PLUGINS, "state", "new")
    yield installed
    installed.clear()
    reg.load_plugins(force=True)  # unregisters the fake plug-ins' bounds
    reg._PLUGINS["state"] = "new"  # the next use reloads the real group


def _plug_bound():
    fc = boundlab.get("drift.plateau_finite")
    return dataclasses.replace(fc, id="plug.finite_half", expr=fc.expr / 2, terms={})


def test_entry_point_plugin_is_seen_by_cli_show_and_verify(plugins, tmp_path, capsys):
    from verify.cli import main

    run = {"problem": "seed004-toy", "algorithm": "fedavg", "rounds": 10,
           "hyper": {"lr": 0.2, "local_steps": 5}}
    plugins.append(_FakeEntryPoint("half", lambda: [(_plug_bound(), {"run": run})]))
    assert main(["bounds", "show", "plug.finite_half", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "plug.finite_half" and shown["lhs"] == "avg_shadow_gap"
    assert reg.registration("plug.finite_half")["plugin"] == "half"
    code = main(["verify", "--only", "plug.finite_half", "--quick", "--json", "--no-tightness",
                 "--out", str(tmp_path / "out")])
    rows = json.loads(capsys.readouterr().out)
    rows = rows["results"] if isinstance(rows, dict) else rows
    [row] = [r for r in rows if r.get("bound_id") == "plug.finite_half"]
    assert row["verdict"] == "holds" and code == 0


def test_broken_plugin_names_itself_and_registers_nothing(plugins):
    plugins.append(_FakeEntryPoint("bad", [_plug_bound(), _plug_bound()]))
    with pytest.raises(RegistrationError, match="plug-in 'bad' .* duplicate bound id"):
        boundlab.ids()
    plugins[:] = [_FakeEntryPoint("gone", ImportError("no module named fakeplug"))]
    with pytest.raises(RegistrationError, match="plug-in 'gone'.*no module named fakeplug"):
        boundlab.get("plug.finite_half")
    plugins.clear()
    assert "plug.finite_half" not in boundlab.ids()


def test_real_entry_point_from_an_installed_distribution(tmp_path):
    """A tiny distribution (dist-info with entry_points.txt) on sys.path, in a fresh process:
    the real importlib.metadata machinery finds it."""
    (tmp_path / "tinyplug.py").write_text(textwrap.dedent("""
        import dataclasses, boundlab
        def bounds():
            fc = boundlab.get("drift.plateau_finite")
            return [dataclasses.replace(fc, id="tiny.finite", terms={})]
    """))
    info = tmp_path / "tinyplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinyplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[boundlab.bounds]\ntiny = tinyplug:bounds\n")
    script = textwrap.dedent("""
        import sys
        from verify.cli import main
        code = main(["bounds", "show", "tiny.finite", "--json"])
        sys.exit(code or main(["verify", "--only", "tiny.finite", "--list"]))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    shown, listed = out.stdout.split("\n}\n")
    assert json.loads(shown + "}")["id"] == "tiny.finite"
    assert "user_tiny_finite" in listed and "tiny.finite" in listed
