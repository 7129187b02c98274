"""Corollary 1 of seed 003 (E pinned to the real E_opt) judged at a run's integer E with raised
constants G' / sigma' (verify.falsify._plan_pins): the hand-derived values, >= Theorem 4, the
original holds, false forms are VIOLATED with a replayable, saved instance."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab
import verify
from boundlab import Bound, Precondition, make_params, sym
from verify.falsify import Falsification
from verify.falsify._plan_pins import unpin
from verify.falsify.plan import NotApplicable, make_plan

COR = "contraction.corollary1"
HOW = {"algorithm": "beta", "function_class": "smooth-nonconvex"}


def _a_beta(b):
    return 4 + (1 - b) ** 2 + 8 * (1 - 1 / b) ** 2


def _hand(L, Delta, S, sigma, G, beta, T, E):
    """Theorem 4 at E with the constant raised so that E_opt = E: 1.5 A/sqrt(T E) when G is
    raised (E_opt(G) >= E), 3 B E/T when sigma is (spec §3, Corollary 1 algebra)."""
    A = 4 * L * Delta + S * sigma**2 / 2
    B = G**2 * _a_beta(beta)
    e_opt = (A / (2 * B)) ** (2 / 3) * T ** (1 / 3)
    return (1.5 * A / math.sqrt(T * E)) if e_opt >= E else 3 * B * E / T


@settings(max_examples=60, deadline=None)
@given(st.floats(0.1, 5), st.floats(0.01, 3), st.floats(0.05, 1), st.floats(0.0, 1),
       st.floats(0.01, 3), st.floats(0.1, 1.0), st.integers(1, 10 ** 4), st.integers(1, 20))
def test_the_unpinned_corollary_is_theorem_4_at_raised_constants(L, Delta, S, sigma, G, beta,
                                                                  T, E):
    b = unpin(boundlab.get(COR))
    v = dict(L=L, Delta=Delta, S=S, sigma=sigma, G=G, beta=beta, T=T, E=E)
    got = float(b.evaluate(**v))
    assert got == pytest.approx(_hand(**v), rel=1e-9)
    thm4 = float(boundlab.get("contraction.beta_nc").evaluate(**v))
    assert got >= thm4 * (1 - 1e-12)  # the corollary at integer E holds wherever Theorem 4 does
    gamma = 1 / (2 * L * math.sqrt(T * E))
    assert b.violated_preconditions(**v, gamma=gamma) == []  # the pin met exactly
    assert b.violated_preconditions(**v, gamma=2 * gamma) != []  # the step recipe stays


def test_the_corollary_holds_on_runs_and_a_false_one_is_violated(tmp_path):
    res = verify.falsify(COR, budget=60, seed=0)
    assert res.verdict == "holds" and 0 < res.worst_ratio < 1
    b = boundlab.get(COR)
    false = dataclasses.replace(b, id="census.cor1_small", expr=b.expr / 100)
    bad = verify.falsify(false, budget=60, seed=0, save=tmp_path / "c.json", **HOW)
    assert bad.verdict == "VIOLATED", bad.reason
    assert bad.instance.replay() > 1
    run = bad.instance.run
    L = bad.instance.plan.spec.L
    assert run["lr"] == pytest.approx(1 / (2 * L * math.sqrt(run["rounds"] * run["local_steps"])),
                                      rel=1e-9)
    back = Falsification.load(tmp_path / "c.json")
    assert back.verdict == "VIOLATED"
    assert back.instance.replay() == pytest.approx(bad.worst_ratio, rel=1e-12)


def test_a_pin_no_constant_can_meet_stays_not_applicable():
    L, T, E = sym("L"), sym("T"), sym("E")
    b = Bound(id="mine.pinned", source="note", expr=L / T, params=make_params("L", "T"),
              extra_params=make_params("E"), kind="upper", lhs="final_gap",
              preconditions=(Precondition(E, "<=", T ** 2 * L, "E <= T^2 L"),
                             Precondition(E, ">=", T ** 2 * L, "E >= T^2 L")))
    assert unpin(b) is b
    with pytest.raises(NotApplicable, match="pin E"):
        make_plan(b, {}, algorithm="fedavg", function_class="smooth-convex")
