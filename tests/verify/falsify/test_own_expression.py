"""A Bound object is judged by its own expression (issue 30, item 5); one that carries the id of
a catalogue or registered bound but states another expression is refused by name."""

import dataclasses

import pytest

import boundlab
import verify
from boundlab.registry import RegistrationError, resolve


@pytest.fixture(scope="module")
def gamma():
    return boundlab.get("skew.corollary_gamma")


def test_a_copy_with_its_own_id_is_judged_by_its_own_expression(gamma):
    # before: a copy divided by 100 got the original's ratio (the replay re-read the id)
    a = verify.falsify(gamma, budget=60, exact=False)
    copy = dataclasses.replace(gamma, id="mine.corollary_gamma", expr=gamma.expr / 100)
    how = {k: boundlab.registry.meta(gamma.id)[k] for k in ("algorithm", "function_class",
                                                            "symbols")}
    b = verify.falsify(copy, budget=60, exact=False, **how)  # judged as the original is
    assert a.worst_ratio > 0 and b.worst_ratio == pytest.approx(100 * a.worst_ratio, rel=1e-9)
    assert b.instance.judged_bound() is copy and b.to_row()["bound_value"] == b.instance.rhs


@pytest.mark.parametrize("where", ["falsify", "check", "testing", "worst", "resolve"])
def test_a_copy_under_the_catalogue_id_is_refused_by_name(gamma, where):
    clash = dataclasses.replace(gamma, expr=gamma.expr / 100)
    calls = {"falsify": lambda: verify.falsify(clash, budget=20),
             "check": lambda: verify.check(clash, "seed004-toy", "fedavg", rounds=2),
             "testing": lambda: boundlab.testing.params(clash),
             "worst": lambda: verify.worst_instance(clash, budget=10),
             "resolve": lambda: resolve(clash)}
    with pytest.raises(RegistrationError, match=r"^skew\.corollary_gamma: .*another expr"):
        calls[where]()


def test_a_registered_id_with_another_expression_is_refused():
    from boundlab import Bound, make_params, sym

    L, D, T = sym("L"), sym("D"), sym("T")
    b = Bound(id="mine.own_demo", source="n", expr=L * D**2 / T,
              params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        assert resolve(b) is b and resolve(dataclasses.replace(b, source="x")) is not None
        with pytest.raises(RegistrationError, match="registered bound mine.own_demo"):
            verify.falsify(dataclasses.replace(b, expr=2 * L * D**2 / T), budget=20)
    finally:
        boundlab.unregister("mine.own_demo")
