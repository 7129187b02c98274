"""A report row's PEP tightness record (verify.checks._common.attach_tightness): the bracket
relative to the bound, LB/B and UB/B, in the orientation of every ratio (verify.schema), with
the old keys (B/UB, B/LB) still readable for one release; the tables show it as [LB/B, UB/B]."""

from types import SimpleNamespace

import pytest

import boundlab
from verify.checks._common import attach_tightness
from verify.compare import compare
from verify.report.tables import _tight, informativeness

SKEW = {"Delta": 1.0, "eta": 0.1, "mu": 0.1, "L": 1.0, "E": 1, "G": 1.0, "sigma": 0.0,
        "Gamma": 0.0, "rho_bar": 1.0, "rho_tilde": 1.0}


@pytest.fixture(autouse=True)
def _pep_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BOUNDLAB_CACHE", str(tmp_path / "cache"))


def test_the_record_holds_lb_over_b_and_ub_over_b():
    bound = boundlab.get("skew.recursion")
    r = compare(bound, [0.5], params=SKEW, check="c", case="one step", deterministic=True)
    attach_tightness(r, SimpleNamespace(tightness=True, quick=False), dict(SKEW))
    t = r.tightness
    b = float(bound.evaluate(**SKEW))
    ub, lb = t["worst_case_upper"], t["worst_case_lower"]
    assert t["ratio_hi"] == pytest.approx(ub / b) and t["ratio_lo"] == pytest.approx(lb / b)
    assert 0 < t["ratio_lo"] <= t["ratio_hi"] * (1 + 1e-6) <= 1 + 1e-9  # holds on the class
    assert "ratio_low" not in t  # stored in the schema's names only ...
    with pytest.warns(DeprecationWarning, match="'ratio_low'"):
        assert t["ratio_low"] == pytest.approx(b / ub)  # ... the old B/UB still reads
    shown = _tight(r)
    assert shown.startswith("[") and shown.endswith("]")
    lo, hi = (float(x) for x in shown.strip("[]").split(","))
    assert lo == pytest.approx(lb / b, rel=1e-2) and hi == pytest.approx(ub / b, rel=1e-2)
    d = informativeness([r])[0]
    assert d["pep_lo"] == pytest.approx(lb / b) and d["pep_hi"] == pytest.approx(ub / b)
