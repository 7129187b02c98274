"""The errata register is complete and consistent with the catalogue and the test suite.

* seeds 000/001/004: exactly the ids BM-1..27 and DKR-1..17 of spec §4 (plus FINDING ids);
* every ``Erratum.test`` of **every** erratum (all seeds) names an existing test function;
* every ``errata=`` id on a catalogue bound exists in the register, every bound an erratum names
  exists, and both directions agree (a ``.printed`` bound counts through its base id).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

import boundlab
from boundlab import errata
from boundlab._errata_000_001_004 import ERRATA as OURS

ROOT = Path(__file__).resolve().parents[2]
SPEC_IDS = [f"BM-{i}" for i in range(1, 28)] + [f"DKR-{i}" for i in range(1, 18)]


def _base(bound_id: str) -> str:
    return bound_id.removesuffix(".printed")


@cache
def _test_names(path: str) -> frozenset:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith(
            "test"
        ):
            names.add(node.name)
    return frozenset(names)


def test_register_has_exactly_the_spec_ids():
    ids = [e.id for e in OURS]
    assert len(ids) == len(set(ids))
    spec_part = [i for i in ids if not re.fullmatch(r"(BM|DKR)-P\d+", i)]
    assert spec_part == SPEC_IDS
    for e in OURS:
        if re.fullmatch(r"(BM|DKR)-P\d+", e.id):
            assert e.verdict == "FINDING", e.id
        else:
            assert e.verdict in ("CONFIRMED", "CONFIRMED-minor", "GAP", "REFUTED"), e.id


def test_register_fields():
    for e in OURS:
        fam = "BM" if e.id.startswith("BM") else "DKR"
        prefixes = ("seed 000", "seed 001") if fam == "BM" else ("seed 004",)
        assert e.source.startswith(prefixes), e.id
        assert e.quote.strip() and e.corrected.strip(), e.id
        assert all(b.startswith("skew." if fam == "BM" else "drift.") for b in e.bounds), e.id
        assert e.test.startswith("tests/") and "::test_" in e.test, e.id
    # the doctest contract of boundlab.errata
    assert errata.get("DKR-1").bounds == ("drift.plateau_finite",)
    assert [e.id for e in errata.for_bound("drift.round_progress")] == ["DKR-5"]


@pytest.mark.parametrize("e", errata.ERRATA, ids=lambda e: e.id)
def test_every_erratum_test_reference_exists(e):
    path, _, name = e.test.partition("::")
    assert (ROOT / path).is_file(), f"{e.id}: no file {path}"
    assert name in _test_names(path), f"{e.id}: no test {name} in {path}"


def test_bound_errata_ids_exist_in_register():
    known = {e.id for e in errata.ERRATA}
    for b in boundlab.catalogue():
        for eid in b.errata:
            assert eid in known, f"{b.id} cites unknown erratum {eid}"


def test_erratum_bounds_exist_and_cite_back():
    ids = set(boundlab.ids())
    for e in errata.ERRATA:
        for bid in e.bounds:
            assert bid in ids, f"{e.id} names unknown bound {bid}"
            assert e.id in boundlab.get(bid).errata, f"{e.id} names {bid}, which does not cite it"


def test_bound_errata_are_listed_back():
    """A bound citing an erratum is named by it (through its base id for .printed twins)."""
    missing = []
    for b in boundlab.catalogue():
        for eid in b.errata:
            if _base(b.id) not in errata.get(eid).bounds:
                missing.append((b.id, eid))
    assert missing == []
