"""Catalogue-wide checks: every bound is well formed, evaluates like its sympy expression,
validates its domains and splits into terms that add up to the expression."""

import json
import math

import numpy as np
import pytest
import sympy as sp

import boundlab
from boundlab.core import Bound, Precondition, make_params
from boundlab.errors import DomainError, MissingParameterError, PreconditionError, UnknownNameError
from boundlab.symbols import sym

REQUIRED = {
    "drift.fedavg_convex": {"D", "eta", "tau", "T", "sigma", "M", "L", "zeta"},
    "drift.client_drift": {"eta", "tau", "zeta", "sigma"},
    "drift.plateau": {"eta", "tau", "L", "zeta"},
    "drift.round_progress": None,
    "skew.recursion": {"Delta", "eta", "mu", "L", "E", "G", "sigma", "Gamma", "rho_bar",
                       "rho_tilde"},
    "skew.corollary": {"T", "L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde", "D0"},
    "skew.speed": None, "skew.error": None, "skew.vmin": None, "skew.error_free": None,
    "skew.pi_bound": None, "skew.fedavg_speed": None,
    "weight_error.interval_mean": {"p", "K"},
    "weight_error.interval_var": {"p", "K"},
    "weight_error.round": {"p", "K", "t"},
    "weight_error.average": {"p", "K", "T"},
    "weight_error.theorem2": None, "weight_error.corollary4": None,
    "contraction.fedavg_factor": {"mu", "L"},
    "contraction.fedprox_factor": {"mu", "L", "alpha"},
    "contraction.beta_factor": {"mu", "L", "beta"},
    "contraction.fedprox_sc": {"t", "L", "mu", "alpha", "Delta", "S", "sigma", "Gamma", "E", "G"},
    "contraction.beta_sc": {"t", "L", "mu", "beta", "Delta", "S", "sigma", "Gamma", "E", "G"},
    "contraction.fedprox_nc": None, "contraction.beta_nc": None,
    "contraction.complexity_fedprox": None, "contraction.complexity_beta": None,
}
ALL = boundlab.catalogue()


def test_required_ids_and_parameter_names_exist():
    ids = set(boundlab.ids())
    missing = sorted(set(REQUIRED) - ids)
    assert not missing, f"catalogue lacks {missing}"
    for bid, params in REQUIRED.items():
        if params is not None:
            assert set(boundlab.get(bid).params) == params, bid


def test_order_kind_for_order_statements():
    for bid in ("weight_error.theorem2", "weight_error.corollary4",
                "contraction.complexity_fedprox", "contraction.complexity_beta"):
        assert boundlab.get(bid).kind == "order", bid
    for bid in ("weight_error.interval_mean", "weight_error.interval_var"):
        assert boundlab.get(bid).kind == "identity", bid


def test_printed_variants_point_to_a_corrected_bound():
    ids = set(boundlab.ids())
    for b in ALL:
        if b.id.endswith(".printed"):
            assert b.printed and b.id.removesuffix(".printed") in ids
            assert b.errata, f"{b.id} names no erratum"
        else:
            assert not b.printed, b.id


def _draw(domain, rng, shape=()):
    lo = domain.lo if math.isfinite(domain.lo) else -5.0
    hi = domain.hi if math.isfinite(domain.hi) else lo + 5.0 if math.isfinite(domain.lo) else 5.0
    if domain.integer:
        return rng.integers(int(lo), int(lo) + 20, size=shape).astype(float)
    x = rng.uniform(lo, hi, size=shape)
    return np.clip(x, lo + 0.05 * (hi - lo) if domain.lo_open else lo,
                   hi - 0.05 * (hi - lo) if domain.hi_open else hi)


@pytest.mark.parametrize("bound", ALL, ids=[b.id for b in ALL])
def test_evaluate_matches_sympy_substitution(bound):
    """The lambdified, vectorized path equals exact sympy substitution point by point."""
    rng = np.random.default_rng(abs(hash(bound.id)) % 2**32)
    n = 5
    values = {name: _draw(p.domain, rng, (n,)) for name, p in bound.params.items()}
    got = bound.evaluate(**values)
    assert got.shape == (n,)
    for j in range(n):
        subs = {p.symbol: sp.Float(values[name][j], 30) for name, p in bound.params.items()}
        want = complex(bound.expr.xreplace(subs).evalf(30))
        if abs(want.imag) > 1e-12 * max(1.0, abs(want.real)):
            assert np.isnan(got[j]), (bound.id, values)
            continue
        assert got[j] == pytest.approx(want.real, rel=1e-9, abs=1e-12), (bound.id, j)


@pytest.mark.parametrize("bound", ALL, ids=[b.id for b in ALL])
def test_terms_add_up_to_the_expression(bound):
    if not bound.terms:
        return
    diff = sp.simplify(sum(bound.terms.values()) - bound.expr)
    assert diff == 0, f"{bound.id}: terms differ from expr by {diff}"


@pytest.mark.parametrize("bound", ALL, ids=[b.id for b in ALL])
def test_every_parameter_is_validated(bound):
    rng = np.random.default_rng(1)
    good = {name: float(_draw(p.domain, rng)) for name, p in bound.params.items()}
    for name, p in bound.params.items():
        bad = p.domain.lo - 1.0 if math.isfinite(p.domain.lo) else (
            p.domain.hi + 1.0 if math.isfinite(p.domain.hi) else float("nan"))
        with pytest.raises(DomainError) as exc:
            bound.evaluate(**{**good, name: bad})
        assert name in str(exc.value) and p.domain.describe() in str(exc.value)
    with pytest.raises(MissingParameterError):
        bound.evaluate(**{k: v for k, v in list(good.items())[1:]})
    with pytest.raises(UnknownNameError):
        bound.evaluate(**good, not_a_parameter=1.0)


@pytest.mark.parametrize("bound", ALL, ids=[b.id for b in ALL])
def test_description_latex_and_json(bound):
    assert bound.source.startswith("seed 00"), bound.source
    assert len(bound.description) > 20
    assert isinstance(bound.latex(), str) and bound.latex()
    json.dumps(bound.to_dict())


def test_broadcasting_and_scalar_output():
    b = boundlab.get("drift.fedavg_convex")
    kw = dict(D=2.0, eta=0.1, tau=10, T=50, sigma=0.0, M=20, L=0.19, zeta=0.4)
    assert isinstance(b.evaluate(**kw), float)
    grid = b.evaluate(**{**kw, "eta": np.array([[0.05], [0.1]]), "tau": np.array([1, 10, 100])})
    assert grid.shape == (2, 3)
    assert grid[1, 1] == pytest.approx(b.evaluate(**kw))
    # a parameter-free expression of one input still broadcasts to the input shape
    assert boundlab.get("drift.plateau").evaluate(
        eta=0.1, tau=np.array([1, 2]), L=1.0, zeta=0.0).shape == (2,)


def test_strict_evaluation_raises_on_violated_precondition():
    b = boundlab.get("drift.fedavg_convex")
    kw = dict(D=2.0, eta=0.3, tau=10, T=50, sigma=0.0, M=20, L=1.0, zeta=0.4)
    assert b.violated_preconditions(**kw) == ["eta <= 1/(4*L)"]
    with pytest.raises(PreconditionError, match="eta <= 1/\\(4\\*L\\)"):
        b.evaluate(strict=True, **kw)
    # eta = 1/(4L) computed in floating point is allowed
    assert b.violated_preconditions(**{**kw, "eta": 1 / (4 * 0.19), "L": 0.19}) == []


def test_unchecked_precondition_when_optional_param_absent():
    b = boundlab.get("drift.client_drift")
    kw = dict(eta=0.3, tau=2, zeta=1.0, sigma=0.1)
    assert b.unchecked_preconditions(**kw) == ["eta <= 1/(4*L)"]
    assert b.violated_preconditions(**kw) == []
    assert b.violated_preconditions(**kw, L=1.0) == ["eta <= 1/(4*L)"]


def test_bound_constructor_rejects_inconsistent_definitions():
    eta, L = sym("eta"), sym("L")
    with pytest.raises(ValueError, match="free symbols without a param"):
        Bound("x.a", "seed 004", eta * L, make_params("eta"), "upper", "x")
    with pytest.raises(ValueError, match="params not in the expression"):
        Bound("x.b", "seed 004", eta, make_params("eta", "L"), "upper", "x")
    with pytest.raises(ValueError, match="kind"):
        Bound("x.c", "seed 004", eta, make_params("eta"), "lower", "x")
    with pytest.raises(ValueError, match="uses"):
        Bound("x.d", "seed 004", eta, make_params("eta"), "upper", "x",
              preconditions=(Precondition(eta, "<=", L, "eta <= L"),))


def test_unknown_id_lists_valid_ids():
    with pytest.raises(UnknownNameError, match="drift.plateau"):
        boundlab.get("drift.nope")
    with pytest.raises(UnknownNameError):
        boundlab.catalogue("nofamily")


def test_symbol_named_pi_is_not_the_constant():
    """lambdify must not confuse the parameter 'pi' with 3.14159... (dummified arguments)."""
    b = boundlab.get("skew.Pi_upper")
    assert b.evaluate(pi=1.0, p_min=0.25, N=4) == pytest.approx((1 - 3 * 0.25) / 0.25)
