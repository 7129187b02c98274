"""Plug-ins cannot fake success: one that raises, exits or hangs at import is named, and the
command fails with exit 2 and one ``error:`` line (issue 20)."""

import importlib.metadata
import time

import pytest

import boundlab
from boundlab import registry as reg
from boundlab.registry import RegistrationError


class _Dist:
    name, version = "fakeplug", "0.3"


class _EntryPoint:
    """An entry point of the group boundlab.bounds whose ``load`` runs ``action``."""

    def __init__(self, name, action):
        self.name, self.value, self._action = name, f"fakeplug:{name}", action
        self.dist = _Dist()

    def load(self):
        return self._action()


@pytest.fixture
def plugins(monkeypatch):
    installed = []

    def fake(group=None, **kw):
        assert group == reg.ENTRY_POINT_GROUP
        return list(installed)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    monkeypatch.setitem(reg._PLUGINS, "state", "new")
    yield installed
    installed.clear()
    reg.load_plugins(force=True)
    reg._PLUGINS["state"] = "new"


def _exit():
    raise SystemExit(0)


def _hang():
    time.sleep(3)
    return []


def _boom():
    raise RuntimeError("broken at import \x1b[2J")


@pytest.mark.parametrize("action, why", [
    (_exit, r"it called sys.exit\(0\) while loading"),
    (_boom, r"RuntimeError: broken at import \\x1b\[2J"),
])
def test_a_failing_plugin_is_named_with_its_distribution(plugins, action, why):
    plugins.append(_EntryPoint("evil", action))
    with pytest.raises(RegistrationError, match=r"plug-in 'evil' \(fakeplug:evil\) .*"
                       r"distribution fakeplug 0.3: " + why):
        boundlab.ids()


def test_a_hanging_plugin_is_reported_after_the_timeout(plugins, monkeypatch):
    monkeypatch.setenv("BOUNDLAB_PLUGIN_TIMEOUT", "0.3")
    plugins.append(_EntryPoint("slow", _hang))
    t0 = time.perf_counter()
    with pytest.raises(RegistrationError, match=r"plug-in 'slow'.*within 0.3 s"):
        boundlab.ids()
    assert time.perf_counter() - t0 < 2.5


def test_timeout_setting_falls_back_on_nonsense(monkeypatch):
    for raw in ("abc", "-1", "nan", "inf"):
        monkeypatch.setenv("BOUNDLAB_PLUGIN_TIMEOUT", raw)
        assert reg.plugin_timeout() == reg.PLUGIN_TIMEOUT
    monkeypatch.setenv("BOUNDLAB_PLUGIN_TIMEOUT", "2.5")
    assert reg.plugin_timeout() == 2.5


@pytest.mark.parametrize("action", [_exit, _boom])
def test_cli_list_never_exits_0_with_nothing_printed(plugins, action, capsys):
    from verify.cli import main

    plugins.append(_EntryPoint("evil", action))
    code = main(["bounds", "list", "--json"])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith("error: plug-in 'evil'")
    assert "\x1b" not in err


def test_a_good_plugin_after_a_failure_still_loads(plugins):
    plugins.append(_EntryPoint("evil", _exit))
    with pytest.raises(RegistrationError):
        boundlab.ids()
    plugins.clear()
    assert "drift.plateau" in boundlab.ids()  # the registry is usable again
