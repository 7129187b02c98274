"""``verify.reproduce.registry.register`` refuses, at import, a function that cannot be the
experiment it is registered as (the ``001:fig2`` bug: a helper slipped between the decorator and
``def fig2`` was registered and then called with the configuration)."""

import pytest

from boundlab.errors import DomainError
from verify.reproduce import registry
from verify.reproduce.registry import Config, RegistrationError, Result, experiments, get, register


@pytest.fixture
def scratch(monkeypatch):
    """A copy of the registry that the test may add to (restored afterwards)."""
    experiments()  # every module imported first
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry._REGISTRY


def test_the_001_fig2_pattern_is_refused_at_definition(scratch):
    with pytest.raises(RegistrationError) as err:
        @register("004:fig9", "ref", "title", "stand-in", "reported")
        def _extreme_tied(R, names, best) -> bool:  # the helper of seed001, placed as there
            return False
    msg = str(err.value)
    assert "004:fig9" in msg and "_extreme_tied" in msg and "(cfg)" in msg
    assert "-> Result" in msg and "does not start with the item 'fig9'" in msg
    assert "004:fig9" not in scratch


def _two(cfg, extra) -> Result: ...
def _kw(*, cfg) -> Result: ...
def _renamed(config) -> Result: ...
def _default(cfg=None) -> Result: ...
def _bare(cfg): ...
def _dict(cfg) -> dict: ...
def table9(cfg) -> Result: ...


_BAD = [(_two, "fig9", ["(cfg)"]), (_kw, "fig9", ["(cfg)"]), (_renamed, "fig9", ["(cfg)"]),
        (_default, "fig9", ["(cfg)"]), (_bare, "fig9", ["-> Result"]),
        (_dict, "fig9", ["-> Result"]), (table9, "fig9", ["'table9'", "'fig9'"])]


@pytest.mark.parametrize("fn, item, words", _BAD, ids=[f.__name__ for f, _, _ in _BAD])
def test_each_invariant_is_checked(scratch, fn, item, words):
    if fn.__name__.startswith("_"):  # the name check passes; the other check is what fails
        fn.__name__ = item
    with pytest.raises(RegistrationError) as err:
        register(f"004:{item}", "r", "t", "s", "p")(fn)
    for w in words:
        assert w in str(err.value)
    assert f"004:{item}" not in scratch


@pytest.mark.parametrize("bad_id", ["009:fig1", "004", "004:", "004:a b", "004:../x"])
def test_bad_ids_are_refused(scratch, bad_id):
    def fig1(cfg) -> Result:
        return Result([], [])
    with pytest.raises(RegistrationError, match="PAPER:ITEM"):
        register(bad_id, "r", "t", "s", "p")(fig1)


def test_an_id_cannot_be_taken_by_another_function(scratch):
    def fig2(cfg) -> Result:
        return Result([], [])
    with pytest.raises(RegistrationError, match="already registered to verify.reproduce.seed004"):
        register("004:fig2", "r", "t", "s", "p")(fig2)
    assert get("004:fig2").fn.__module__ == "verify.reproduce.seed004"


def test_a_right_function_registers_and_names_may_extend_the_item(scratch):
    def table_d9_runs(cfg) -> Result:
        return Result([{"n": cfg.size}], [])
    assert register("004:tableD9", "r", "t", "s", "p")(table_d9_runs) is table_d9_runs
    assert scratch["004:tableD9"].fn(Config.sized("tiny")).rows == [{"n": "tiny"}]


def test_001_fig2_is_the_experiment_and_every_item_takes_cfg():
    import inspect

    assert get("001:fig2").fn.__name__ == "fig2"
    for e in experiments():
        assert list(inspect.signature(e.fn).parameters) == ["cfg"], e.id


def test_sizes():
    assert [Config.sized(s).size for s in registry.SIZES] == ["full", "quick", "tiny"]
    assert Config.sized("quick", backend="numpy") == Config(quick=True, backend="numpy")
    with pytest.raises(DomainError, match="size"):
        Config.sized("huge")
