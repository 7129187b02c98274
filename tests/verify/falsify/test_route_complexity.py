"""The route of iteration complexities (lhs rounds_to_eps, verify.falsify.complexity_route):
eps_min against hand-derived inverses and against the stated T_eps itself, the originals hold,
hand-made false forms are VIOLATED with a replayable instance, saved results replay."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab
import verify
from boundlab.errors import DomainError
from boundlab.symbols import sym
from verify.falsify import Falsification
from verify.falsify.complexity_route import FAMILY, derived_bound, eps_min, measure_instance
from verify.falsify.plan import NotApplicable
from verify.falsify.routes import route_for

BETA, FEDPROX = "contraction.t_eps_beta", "contraction.t_eps_fedprox"
HOW = {"beta": {"algorithm": "beta", "function_class": "smooth-nonconvex"},
       "fedprox": {"algorithm": "fedprox", "function_class": "smooth-nonconvex"}}


def _a_beta(b):
    """A(beta) = 4 + (1 - beta)^2 + 8 (1 - 1/beta)^2 (spec §1.2)."""
    return 4 + (1 - b) ** 2 + 8 * (1 - 1 / b) ** 2


def test_eps_min_of_theorem_4s_complexity_is_its_hand_inverse():
    # T >= max(4 a^2/eps^2, 2 b/eps)  <=>  eps >= max(2 a/sqrt(T), 2 b/T)
    d = derived_bound(boundlab.get(BETA), "beta")
    v = dict(L=1.5, Delta=0.7, S=0.3, sigma=0.2, G=0.9, beta=0.4, E=3, T=50)
    a = (4 * v["L"] * v["Delta"] + v["S"] * v["sigma"] ** 2 / 2) / math.sqrt(v["E"])
    b = v["E"] * v["G"] ** 2 * _a_beta(v["beta"])
    want = max(2 * a / math.sqrt(v["T"]), 2 * b / v["T"])
    assert float(d.evaluate(**{k: v[k] for k in d.params})) == pytest.approx(want, rel=1e-13)
    assert d.lhs == "avg_grad_norm2" and route_for(boundlab.get(BETA)).FAMILY == FAMILY
    pcs = {pc.text for pc in d.preconditions}
    assert pcs == {"gamma <= 1/(2*L*sqrt(T*E))", "gamma >= 1/(2*L*sqrt(T*E))"}


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([BETA, FEDPROX]), st.floats(0.1, 5), st.floats(0.01, 3),
       st.floats(0.05, 1), st.floats(0.01, 3), st.floats(0.1, 0.95), st.integers(1, 8),
       st.integers(1, 10 ** 4))
def test_eps_min_is_the_smallest_eps_whose_t_eps_fits(bid, L, Delta, S, G, h, E, T):
    # judged with the stated T_eps itself (boundlab's evaluate), not with the inversion
    bound = boundlab.get(bid)
    algo = "beta" if bid == BETA else "fedprox"
    v = dict(L=L, Delta=Delta, S=S, sigma=0.0, G=G, E=E, T=T,
             **({"beta": h} if algo == "beta" else {"alpha": 10 * h}))
    d = derived_bound(bound, algo)
    e = float(d.evaluate(**{k: v[k] for k in d.params}))
    t_eps = lambda eps: float(bound.evaluate(**{k: (eps if k == "eps" else v[k])  # noqa: E731
                                                for k in bound.params}))
    assert t_eps(e * (1 + 1e-9)) <= T * (1 + 1e-9)   # covered by the claim at this T
    assert t_eps(e * (1 - 1e-6)) > T                 # and no smaller eps is


def test_pieces_that_grow_with_eps_or_ignore_it_become_preconditions():
    e, T, a, b, c = sym("eps"), sym("T"), sym("a"), sym("b"), sym("c")
    low, pcs = eps_min(sp.Max(a / e**2, b, c * e), e, T)
    assert low == sp.sqrt(a / T)
    assert [(pc.op, str(pc.rhs)) for pc in pcs] == [(">=", "b"), ("<=", "T")]
    assert sp.simplify(pcs[1].lhs - c * sp.sqrt(a / T)) == 0
    low, pcs = eps_min(2 * sp.Max(b, c * e**2), e, T)  # no lower piece: every eps > 0 fits
    assert low == 0 and len(pcs) == 2
    with pytest.raises(NotApplicable, match="neither a power of eps nor increasing"):
        eps_min(sp.Max(a / (e + e**2 * b) - c * e), e, T)


@pytest.mark.parametrize("bid,algo", [(BETA, "beta"), (FEDPROX, "fedprox")])
def test_the_originals_hold_and_their_instance_replays(bid, algo):
    res = verify.falsify(bid, budget=60, seed=0)
    assert res.verdict == "holds", res.reason
    assert 0 < res.worst_ratio < 1 and res.instance.family == FAMILY
    assert res.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)
    assert res.instance.run["algorithm"] == algo


def test_a_false_complexity_is_violated_and_its_saved_result_replays(tmp_path):
    b = boundlab.get(BETA)
    false = dataclasses.replace(b, id="census.t_eps_small", expr=b.expr / 10 ** 4)
    res = verify.falsify(false, budget=60, seed=0, save=tmp_path / "r.json", **HOW["beta"])
    assert res.verdict == "VIOLATED", res.reason
    inst = res.instance
    assert inst.replay() > 1 and inst.lhs > inst.rhs
    back = Falsification.load(tmp_path / "r.json")
    assert back.verdict == "VIOLATED" and back.instance.family == FAMILY
    assert back.instance.replay() == pytest.approx(res.worst_ratio, rel=1e-12)
    # the run is the claim's own: T rounds at the recipe's step 1/(2 L sqrt(T E))
    r = inst.run
    L = inst.data["spec"]["L"]
    assert r["lr"] == pytest.approx(1 / (2 * L * math.sqrt(r["rounds"] * r["local_steps"])),
                                    rel=1e-9)


def test_a_false_fedprox_complexity_is_violated():
    b = boundlab.get(FEDPROX)
    false = dataclasses.replace(b, id="census.t_eps_fp", expr=b.expr / 10 ** 4)
    res = verify.falsify(false, budget=40, seed=1, **HOW["fedprox"])
    assert res.verdict == "VIOLATED" and res.instance.replay() > 1


def test_a_bound_above_the_original_is_never_violated():
    b = boundlab.get(BETA)
    safe = dataclasses.replace(b, id="census.t_eps_big", expr=b.expr * 2)
    res = verify.falsify(safe, budget=40, seed=0, **HOW["beta"])
    assert res.verdict == "holds"


def test_without_an_algorithm_it_is_not_applicable_and_bad_data_is_refused():
    b = boundlab.get(BETA)
    anon = dataclasses.replace(b, id="census.anon")
    res = verify.falsify(anon, budget=20)
    assert res.verdict == "not-applicable" and "algorithm" in res.reason
    good = verify.falsify(BETA, budget=20).instance.data
    for key, bad in (("rounds", 0), ("z", ["x"]), ("lr", -1.0), ("search_family", "nope"),
                     ("setting", {"L": "1"}), ("spec", {"n_clients": 10 ** 6, "dim": 2})):
        with pytest.raises(DomainError):
            measure_instance(b, {**good, key: bad})
    assert np.isfinite(measure_instance(b, good)[0])
