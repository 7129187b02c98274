"""Brackets of the catalogue bounds: measured <= LB <= UB <= B is checked, not assumed.

A failure of ``UB <= B`` here would be a finding (a bound below the worst case of a class
that its proof covers), to be reported, not tuned away.
"""

import warnings

import pytest

from boundlab.errors import DomainError, UnknownNameError
from verify.tightness import bracket, plot_brackets
from verify.tightness.plots import bracket_grid

KEYS = {"bound_id", "bound_value", "worst_case_upper", "worst_case_lower", "ratio_lo",
        "ratio_hi", "exact", "relaxed", "solver", "gap", "seconds"}

CASES = [
    ("drift.plateau", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0}, {}),
    ("drift.plateau", {"eta": 0.2, "tau": 3, "L": 1.0, "zeta": 0.5}, {"zeta_at": "x*"}),
    ("drift.fedavg_convex", {"D": 1.0, "eta": 0.2, "tau": 2, "T": 2, "sigma": 0.0, "M": 2,
                             "L": 1.0, "zeta": 0.5}, {}),
    ("drift.fedavg_convex", {"D": 1.0, "eta": 0.2, "tau": 2, "T": 40, "sigma": 0.0, "M": 20,
                             "L": 1.0, "zeta": 0.5}, {}),
    ("skew.recursion", {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "E": 2, "G": 1.0,
                        "sigma": 0.0, "Gamma": 0.1, "rho_bar": 1.0, "rho_tilde": 1.0}, {}),
    ("contraction.fedprox_sc", {"t": 2, "L": 1.0, "mu": 0.1, "alpha": 0.5, "Delta": 1.0,
                                "S": 0.5, "sigma": 0.0, "Gamma": 0.1, "E": 2, "G": 1.0}, {}),
    ("contraction.beta_sc", {"t": 1, "L": 1.0, "mu": 0.1, "beta": 0.5, "Delta": 1.0,
                             "S": 0.5, "sigma": 0.0, "Gamma": 0.1, "E": 2, "G": 1.0}, {}),
    ("contraction.lemma_a3", {"alpha": 0.5, "mu": 0.1, "gamma": 1 / 6, "E": 2, "dist_t": 1.0,
                              "sigma": 0.0, "S": 0.5, "L": 1.0, "Gamma": 0.1, "G": 1.0}, {}),
]


@pytest.mark.parametrize("bound_id,params,kw", CASES, ids=[c[0] for c in CASES])
def test_bracket_ordering(bound_id, params, kw):
    r = bracket(bound_id, params, **kw)
    assert KEYS <= set(r)
    assert r["ok"], r["status"]
    lb, ub, b = r["worst_case_lower"], r["worst_case_upper"], r["bound_value"]
    assert r["ordering"]["lb_le_ub"] and lb <= ub * (1 + 1e-3) + 1e-9
    assert r["ordering"]["ub_le_b"], f"FINDING: {bound_id} below its worst case: {r['verdict']}"
    assert ub <= b
    # the bracket relative to the bound (measured / bound, as every ratio): LB/B <= UB/B <= 1
    assert r["ratio_lo"] == pytest.approx(lb / b) and r["ratio_hi"] == pytest.approx(ub / b)
    assert r["ratio_lo"] <= r["ratio_hi"] * (1 + 1e-3) + 1e-9 and r["ratio_hi"] <= 1.0
    assert r["exact"] == (not r["relaxed"])


def test_old_keys_read_in_their_old_orientation_with_a_deprecation_warning():
    r = bracket("drift.plateau", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0})
    b, ub, lb = r["bound_value"], r["worst_case_upper"], r["worst_case_lower"]
    assert not {"id", "bound", "ratio_low", "ratio_high"} & set(r)  # only the new are stored
    with pytest.warns(DeprecationWarning, match="'ratio_low'.*'ratio_hi'"):
        assert r["ratio_low"] == pytest.approx(b / ub)  # the old B/UB
    with pytest.warns(DeprecationWarning, match="'ratio_high'"):
        assert r.get("ratio_high") == pytest.approx(b / lb)  # the old B/LB
    with pytest.warns(DeprecationWarning, match="'bound_value'"):
        assert r["bound"] == b
    with pytest.warns(DeprecationWarning, match="'bound_id'"):
        assert r["id"] == "drift.plateau"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert r.get("nope", 7) == 7 and r["ratio_hi"] == pytest.approx(ub / b)
    with pytest.raises(KeyError):
        r["nope"]


def test_dkr_relaxation_is_labelled():
    r = bracket("drift.plateau", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0})
    assert not r["exact"] and "zeta imposed at" in r["relaxed"][0]
    assert "2 clients" in r["scope"]


def test_fedavg_convex_lower_bound_from_an_instance_in_the_bound_class():
    r = bracket("drift.fedavg_convex", {"D": 1.0, "eta": 0.2, "tau": 2, "T": 40, "sigma": 0.0,
                                        "M": 2, "L": 1.0, "zeta": 0.5})
    q = r["lower_in_bound_class"]
    assert q is not None and 0 < q <= r["worst_case_lower"] + 1e-12 <= r["worst_case_upper"]


def test_rounds_override_and_chained_lower_bound():
    base = {"t": 1, "L": 1.0, "mu": 0.1, "alpha": 0.5, "Delta": 1.0, "S": 0.5, "sigma": 0.0,
            "Gamma": 0.1, "E": 2, "G": 1.0}
    r = bracket("contraction.fedprox_sc", base, rounds=8)
    assert r["params"]["t"] == 8 and r["pep"]["status"].startswith("chained")
    assert r["worst_case_lower"] <= r["worst_case_upper"] <= r["bound_value"]
    with pytest.raises(DomainError):
        bracket("drift.plateau", {"eta": 0.1, "tau": 2, "L": 1.0, "zeta": 1.0}, rounds=3)


def test_cache_only_returns_none_then_the_cached_bracket():
    """On a bound whose PEP solves in about a second (drift.plateau's take 30 s; the cache is
    the same for every bound), at values no other test of the session solves."""
    p = {"t": 2, "L": 1.0, "mu": 0.15, "alpha": 0.5, "Delta": 1.0, "S": 0.5, "sigma": 0.0,
         "Gamma": 0.1, "E": 2, "G": 1.0}
    assert bracket("contraction.fedprox_sc", p, cache_only=True) is None
    solved = bracket("contraction.fedprox_sc", p)
    assert not solved.get("cached")
    again = bracket("contraction.fedprox_sc", p, cache_only=True)
    assert again is not None and again["cached"]
    assert again["worst_case_upper"] == solved["worst_case_upper"]


@pytest.mark.parametrize("bound_id,params,name", [
    ("drift.fedavg_convex", {"D": 1.0, "eta": 0.2, "tau": 2, "T": 2, "sigma": 0.1, "M": 2,
                             "L": 1.0, "zeta": 0.5}, "sigma"),
    ("skew.recursion", {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "E": 2, "G": 1.0,
                        "sigma": 0.0, "Gamma": 0.1, "rho_bar": 1.5, "rho_tilde": 1.0},
     "rho_bar"),
    ("drift.plateau", {"eta": -0.1, "tau": 2, "L": 1.0, "zeta": 1.0}, "eta"),
])
def test_unmatched_assumptions_raise(bound_id, params, name):
    with pytest.raises(DomainError) as exc:
        bracket(bound_id, params)
    assert name in str(exc.value)


def test_unknown_or_unmodelled_id():
    with pytest.raises(UnknownNameError):
        bracket("drift.nope", {})
    with pytest.raises(UnknownNameError):
        bracket("contraction.fedavg_factor", {"mu": 0.1, "L": 1.0})


def test_plot_is_written_atomically(tmp_path):
    rows = bracket_grid("drift.plateau", {"eta": 0.1, "L": 1.0, "zeta": 1.0}, "tau", [1, 2, 3])
    assert rows[0]["worst_case_upper"] < 1e-6  # tau = 1 is GD on F: no plateau
    out = plot_brackets(rows, "tau", tmp_path / "sub" / "plateau.png")
    assert out.exists() and out.stat().st_size > 1000
    # 300 dpi PNG + SVG, each written atomically (no temporary file left)
    assert sorted(p.name for p in out.parent.iterdir()) == ["plateau.png", "plateau.svg"]
