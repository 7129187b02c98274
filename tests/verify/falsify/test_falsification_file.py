"""Falsifications are files a colleague can use (issue 30, item 6): ``Falsification.load``
returns a saved one, sealed and validated; its instance replays from the file alone, in a new
process; every constant and setting is in the file; NaN is null."""

import json
import math
import subprocess
import sys

import pytest

import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import IntegrityError
from verify.falsify import Falsification

L, D, T = sym("L"), sym("D"), sym("T")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    wrong = Bound(id="mine.file_demo", source="my note", expr=L * D**2 / (8 * T),
                  params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
    res = verify.falsify(wrong, budget=60, eta=1.0, exact=False, algorithm="gd",
                         function_class="smooth-convex")
    path = tmp_path_factory.mktemp("f") / "falsification.json"
    res.save(path)
    return res, path


def test_load_gives_the_result_and_its_instance_replays(saved):
    res, path = saved
    back = Falsification.load(path)
    assert back.verdict == res.verdict == "VIOLATED" and back.certificate == "mpmath-50"
    assert back.instance.replay() == res.instance.replay() > 1


def test_the_file_holds_every_constant_and_setting_and_null_for_nan(saved):
    _, path = saved
    text = path.read_text()
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
    inst = doc["instance"]
    assert doc["setting"] == {"algorithm": "gd", "function_class": "smooth-convex",
                              "participation": None, "eta": 1.0}
    assert {"L", "mu", "D", "spec", "plan", "z"} <= set(inst["data"])
    assert doc["bound"]["expr"] == "D**2*L/(8*T)" and "seal" in doc
    assert doc["seed"] is None and doc["seed_status"] == "nan"  # NaN: null with its status
    assert "NaN" not in text


def test_an_edited_or_foreign_file_is_refused(saved, tmp_path):
    _, path = saved
    doc = json.loads(path.read_text())
    doc["instance"]["run"]["lr"] = 0.5
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(IntegrityError):
        Falsification.load(bad)
    doc = json.loads(path.read_text())
    doc["bound"]["expr"] = "__import__('os').system('true')"
    bad.write_text(json.dumps(doc))
    with pytest.raises(IntegrityError):
        Falsification.load(bad)
    (tmp_path / "foreign.json").write_text("[1, 2]")
    with pytest.raises(IntegrityError):
        Falsification.load(tmp_path / "foreign.json")


def test_a_saved_falsification_replays_in_a_new_process(saved):
    res, path = saved
    code = ("import sys\nfrom verify.falsify import Falsification\n"
            "f = Falsification.load(sys.argv[1])\nprint(repr(f.instance.replay()))\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, timeout=300, check=True)
    assert float(out.stdout.strip()) == res.instance.replay()
    assert math.isfinite(res.instance.replay())


def test_a_symbol_with_other_assumptions_reads_back(tmp_path):
    """The digest binds the expression's structure, not the assumptions the writing process
    attached to its symbols (a symbol E built positive but not integer read back as
    boundlab.sym("E") failed the digest before)."""
    import sympy as sp

    from verify.falsify._expr_text import parse
    from verify.falsify._file import _digests, expr_digest

    E, b = sp.Symbol("E", positive=True), sp.Symbol("beta", positive=True)
    expr = 1 - 1 / b + (1 - b) ** E / b
    back = parse(sp.sstr(expr), {"E", "beta"}, "x")
    assert expr_digest(back) == expr_digest(expr) and expr_digest(expr) in _digests(back)
    assert expr_digest(1 - 1 / b) != expr_digest(expr)  # the structure still counts
