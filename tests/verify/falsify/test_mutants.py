"""Typo-mutants (verify.falsify.mutants): each operator makes what it claims, on hand-made
bounds whose mutants are written out by hand here."""

import pytest
import sympy as sp

import boundlab
from boundlab import Bound, Precondition, make_params, sym
from boundlab.errors import UnknownNameError
from verify.falsify.mutants import ALL_OPERATORS, mutants, operator_of, parse_id

L, D, T, eta, mu = sym("L"), sym("D"), sym("T"), sym("eta"), sym("mu")


def _gd():
    return Bound(id="mine.gd", source="note", expr=L * D**2 / (4 * T + 2),
                 params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")


def _two_terms():
    return Bound(id="mine.two", source="note", expr=D**2 / (2 * eta * T) + 3 * L * eta,
                 params=make_params("D", "eta", "T", "L"), kind="upper", lhs="final_gap",
                 terms={"init": D**2 / (2 * eta * T), "noise": 3 * L * eta},
                 preconditions=(Precondition(eta, "<=", 1 / L, "eta <= 1/L"),))


def _by_id(ms):
    return {parse_id(m.id)[1]: m for m in ms}


def test_constant_typos_scale_the_coefficient():
    ms = _by_id(mutants(_gd(), ["const"]))
    assert sp.simplify(ms["term[expr]*2"].expr - 2 * L * D**2 / (4 * T + 2)) == 0
    assert sp.simplify(ms["term[expr]/10"].expr - L * D**2 / (40 * T + 20)) == 0
    # the constant 4 inside the denominator (4*T + 2): 4 -> 8 and 4 -> 2/5
    assert any(sp.simplify(m.expr - L * D**2 / (8 * T + 2)) == 0 for m in ms.values())
    assert any(sp.simplify(m.expr - L * D**2 / (sp.Rational(2, 5) * T + 2)) == 0
               for m in ms.values())
    assert all(operator_of(m.id) == "const" for m in ms.values())


def test_exponent_typos_and_params_follow_the_expression():
    ms = _by_id(mutants(_gd(), ["exponent"]))
    assert ms["exp[D**2]+1"].expr == L * D**3 / (4 * T + 2)
    assert ms["exp[L]+1"].expr == L**2 * D**2 / (4 * T + 2)
    dropped = ms["exp[L]-1"]  # L**0: L leaves the expression and its params
    assert dropped.expr == D**2 / (4 * T + 2) and "L" not in dropped.params
    assert "exp[D]+1" not in ms  # the base of D**2 is not mutated on its own


def test_dropped_term_keeps_terms_consistent_and_moves_a_precondition_symbol():
    ms = _by_id(mutants(_two_terms(), ["drop"]))
    assert set(ms) == {"drop[init]", "drop[noise]"}
    m = ms["drop[noise]"]
    assert m.expr == D**2 / (2 * eta * T) and set(m.terms) == {"init"}
    assert "L" in m.extra_params and "L" not in m.params  # eta <= 1/L still judged
    assert m.violated_preconditions(D=1.0, eta=2.0, T=3, L=1.0) == ["eta <= 1/L"]


def test_every_mutant_is_a_valid_bound_whose_terms_add_up():
    for m in mutants(_two_terms(), ALL_OPERATORS):
        assert m.stable is None
        if m.terms:
            assert sp.simplify(sp.Add(*m.terms.values()) - m.expr) == 0
        assert {s.name for s in m.expr.free_symbols} == set(m.params)
        boundlab.register(m.__class__(**{**m.__dict__, "id": "mine.check_mutant"}))
        boundlab.unregister("mine.check_mutant")  # the registry's own validation passes


def test_swap_exchanges_two_parameters_of_one_domain():
    b = Bound(id="mine.sw", source="note", expr=mu / L + 2 * T, params=make_params("mu", "L", "T"),
              kind="upper", lhs="final_gap")
    ms = _by_id(mutants(b, ["swap"]))
    assert set(ms) == {"swap[mu,L]"}  # T is an integer: not swapped with a real
    assert ms["swap[mu,L]"].expr == L / mu + 2 * T


def test_dedup_drops_mutants_equal_to_the_original_or_to_each_other():
    b = Bound(id="mine.dd", source="note", expr=2 * L, params=make_params("L"), kind="upper",
              lhs="final_gap")
    ms = mutants(b, ["const"])
    exprs = [m.expr for m in ms]
    # const[2]*2 and term[expr]*2 are both 4*L: one is kept; no mutant equals 2*L
    assert exprs.count(4 * L) == 1 and 2 * L not in exprs
    assert sorted(map(str, exprs)) == sorted(["4*L", "L", "20*L", "L/5"])
    sw = Bound(id="mine.sym", source="note", expr=L * mu, params=make_params("L", "mu"),
               kind="upper", lhs="final_gap")
    assert mutants(sw, ["swap"]) == []  # L*mu swapped is L*mu


def test_sign_only_on_demand_and_unknown_operator_refused():
    assert not any(operator_of(m.id) == "sign" for m in mutants(_two_terms()))
    assert any(operator_of(m.id) == "sign" for m in mutants(_two_terms(), ALL_OPERATORS))
    with pytest.raises(UnknownNameError):
        mutants(_gd(), ["typo"])


def test_catalogue_bound_mutants_have_prefixed_unique_ids():
    ms = mutants("drift.fedavg_convex")
    ids = [m.id for m in ms]
    assert len(ids) == len(set(ids)) and all(i.startswith("drift.fedavg_convex~") for i in ids)
    assert {operator_of(i) for i in ids} == {"const", "exponent", "drop", "swap"}


def test_equal_mutants_are_one_without_symbolic_simplification():
    """2*Max(0, 8L(D - 1)) and Max(0, 16L(D - 1)) are one function (a positive factor enters a
    max with 0): the numeric fingerprint keeps one of them, though the trees differ."""
    b = Bound(id="mine.mx", source="note", expr=sp.Max(0, 8 * L * (D - 1)),
              params=make_params("L", "D"), kind="upper", lhs="final_gap")
    ms = _by_id(mutants(b, ["const"]))
    assert ("const[8]*2" in ms) != ("term[expr]*2" in ms)
    kept = ms.get("const[8]*2") or ms["term[expr]*2"]
    at = {"L": 1.5, "D": 3.0}  # 16 * 1.5 * 2 = 48, by hand
    assert float(kept.evaluate(**at)) == pytest.approx(48.0)


def test_generation_of_the_largest_catalogue_expressions_is_deterministic():
    """The ids whose dedupe by sympy.simplify ran for over 10 minutes (Max of three branches,
    a cube root of a sum): the same list, mutant by mutant, twice."""
    for bid in ("skew.pi_bound_pmin", "contraction.t_eps_fedprox"):
        first = [(m.id, sp.srepr(m.expr)) for m in mutants(bid)]
        again = [(m.id, sp.srepr(m.expr)) for m in mutants(bid)]
        assert first == again and len(first) > 50
        assert len({i for i, _ in first}) == len(first)


def test_probe_agrees_with_lambdify_on_piecewise_floor_and_max():
    """The memoised node-by-node evaluation against sympy's own lambdify, on the original and
    every mutant of bounds with Piecewise, floor / ceiling and Max."""
    import numpy as np

    from verify.falsify._probe import Probe, domain_points, evaluate_expr

    for bid in ("weight_error.round_envelope", "weight_error.lemma_b71_ceil",
                "skew.pi_bound_pmin"):
        b = boundlab.get(bid)
        pts = domain_points(b, 32, seed=5)
        probe = Probe(b, pts)
        for e in [b.expr] + [m.expr for m in mutants(b)]:
            got, ref = probe(e), evaluate_expr(e, b, pts)
            assert np.array_equal(np.isnan(got), np.isnan(ref))
            ok = np.isfinite(ref)
            assert np.allclose(got[ok], ref[ok], rtol=1e-9, atol=0)


def test_every_judged_id_generates():
    """Generation over every judged id finishes (about 2 s for ~4500 mutants), with unique
    prefixed ids (determinism: the test above on the largest expressions; the benchmark times
    every id: ``python -m benchmarks power --generation``)."""
    from verify.falsify.power import judged_ids

    for bid in judged_ids():
        ids = [m.id for m in mutants(bid)]
        assert ids and len(set(ids)) == len(ids), bid
        assert all(i.startswith(bid + "~") for i in ids)
