"""An inverted or inaccurate PEP bracket is never ``ok``: retried with tighter solver settings,
else reported ``inaccurate`` with its numbers."""

import pytest

from verify.tightness import brackets
from verify.tightness._solve import TIGHT, PEPRecord, solver_options

PARAMS = {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 0.5}


def _rec(ub, lb, ok=True, status="optimal"):
    return PEPRecord(method="fake", value=ub, lower=lb, ok=ok, status=status, solver="FAKE")


@pytest.fixture
def fake_model(monkeypatch):
    calls = []

    def install(first, second):
        def model(params, *, zeta_at, cache, solver):
            calls.append(TIGHT.get())
            return (second if TIGHT.get() else first), ["2 clients"], []

        monkeypatch.setitem(brackets.SUPPORTED, "drift.plateau", model)
        return calls

    return install


def test_inverted_bracket_is_inaccurate_not_ok(fake_model):
    # the README example's numbers: UB 0.0181663 < LB 0.0181983
    calls = fake_model(_rec(0.0181663, 0.0181983), _rec(0.0181663, 0.0181983))
    r = brackets.bracket("drift.plateau", PARAMS, cache=False)
    assert calls == [False, True]  # retried once with the tighter settings
    assert r["bracket"] == "inaccurate" and r["ok"] is False
    assert r["ordering"]["lb_le_ub"] is False
    assert r["verdict"].startswith("inaccurate")
    assert "0.0181983" in r["verdict"] and "0.0181663" in r["verdict"]
    assert r["worst_case_upper"] == 0.0181663 and r["worst_case_lower"] == 0.0181983
    assert r["first_attempt"]["bracket"] == "inaccurate" and "after a retry" in r["verdict"]


def test_retry_that_loses_its_upper_bound_is_still_inaccurate(fake_model):
    fake_model(_rec(0.0181663, 0.0181983),
               _rec(None, 0.0181983, ok=False, status="upper: optimal_inaccurate"))
    r = brackets.bracket("drift.plateau", PARAMS, cache=False)
    assert r["bracket"] == "inaccurate" and r["ok"] is False
    assert r["retry"]["worst_case_upper"] is None and "optimal_inaccurate" in r["verdict"]
    assert r["worst_case_upper"] == 0.0181663  # the first attempt's numbers are kept


def test_retry_with_tighter_settings_can_repair_it(fake_model):
    calls = fake_model(_rec(1.0, 1.001), _rec(1.0005, 1.0004))
    r = brackets.bracket("drift.plateau", PARAMS, cache=False)
    assert calls == [False, True] and r["bracket"] == "ok" and r["ok"]
    assert r["tight_retry"] and r["first_attempt"]["worst_case_lower"] == 1.001


def test_solver_tolerance_miss_is_inaccurate(fake_model):
    fake_model(_rec(1.0, 0.9, ok=False, status="optimal_inaccurate"),
               _rec(1.0, 0.9, ok=False, status="optimal_inaccurate"))
    r = brackets.bracket("drift.plateau", PARAMS, cache=False)
    assert r["bracket"] == "inaccurate" and not r["ok"] and "optimal_inaccurate" in r["verdict"]


def test_consistent_bracket_is_not_retried(fake_model):
    calls = fake_model(_rec(1.0, 0.99), _rec(0.0, 0.0))
    r = brackets.bracket("drift.plateau", PARAMS, cache=False)
    assert calls == [False] and r["bracket"] == "ok" and r["ok"]


def test_tight_settings_are_tighter():
    token = TIGHT.set(True)
    try:
        tight = solver_options("CLARABEL")
    finally:
        TIGHT.reset(token)
    assert tight["tol_gap_rel"] < 1e-8 and not solver_options("CLARABEL")


def _gd_build(pb):  # one gradient step on a smooth strongly convex function (a tiny PEP)
    from PEPit.functions import SmoothStronglyConvexFunction

    f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=0.1)
    xs, x0 = f.stationary_point(), pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    pb.set_performance_metric((x0 - 0.5 * f.gradient(x0) - xs) ** 2)


def test_shipped_cache_is_read_after_the_users(tmp_path, monkeypatch):
    # (before issue 20 this stored an uncertified {"value": 2.5}: a claim the loader could not
    # check, now refused; the shipped entry is a solve with its certificate)
    from verify.tightness import _common
    from verify.tightness.cache import PEPCache

    shipped = tmp_path / "shipped"
    first = _common.cached_solve("demo", "cls", {"a": 1.0}, _gd_build,
                                 cache=PEPCache(shipped), solver=None)
    assert not first["cached"] and round(first["value"], 6) == 0.9025
    monkeypatch.setattr(_common, "SHIPPED", shipped)
    token = _common.CACHE_ONLY.set(True)  # a miss would raise NotCached
    try:
        out = _common.cached_solve("demo", "cls", {"a": 1.0}, _gd_build,
                                   cache=PEPCache(tmp_path / "user"), solver=None)
    finally:
        _common.CACHE_ONLY.reset(token)
    assert out["value"] == first["value"] and out["cached"]


def test_a_solve_shows_progress_on_a_terminal(monkeypatch):
    import sys

    import rich.console

    from verify.tightness import _common

    shown = []
    orig = rich.console.Console.status

    def spy(self, msg, *a, **kw):
        shown.append(str(msg))
        return orig(self, msg, *a, **kw)

    monkeypatch.setattr(rich.console.Console, "status", spy)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with _common._progress("dkr_lyapunov", {"kind": "lyapunov", "tau": 10}):
        pass
    assert shown and "dkr_lyapunov" in shown[0] and "tau=10" in shown[0]
