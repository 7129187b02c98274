"""Generated bad and extreme inputs for the public entry points (hypothesis).

The property everywhere: a clear boundlab error (``BoundlabError`` in Python; exit 2 and one
``error:`` line at the CLI) or a correct, finite (or truly overflowing) result. Never a raw
exception from numpy / json / gzip, never nan for a valid input, never a silent accept.
"""

import gzip
import json
import math

import numpy as np
import pytest
from _fuzz_harness import fuzz_settings, run_cli, strict_json
from hypothesis import given
from hypothesis import strategies as st

import boundlab
from boundlab.errors import BoundlabError

IDS = boundlab.ids()

hostile_scalar = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.booleans(), st.complex_numbers(allow_nan=True), st.text(max_size=8), st.none(),
    st.floats(1e-320, 1e308), st.just(np.float32(0.5)), st.just(np.int64(3)),
)
hostile_value = st.one_of(
    hostile_scalar,
    st.lists(st.floats(0.01, 10.0), min_size=0, max_size=4),
    st.lists(st.lists(st.floats(0.01, 10.0), max_size=3), max_size=3),
    st.builds(lambda n: np.full(n, 0.5), st.integers(0, 4)),
    st.builds(lambda n: np.ones((n, 1)), st.integers(1, 3)),
)


@fuzz_settings(max_examples=150)
@given(st.sampled_from(IDS), st.data())
def test_evaluate_hostile_values(bound_id, data):
    b = boundlab.get(bound_id)
    values = {}
    for name, prm in b.params.items():
        if data.draw(st.integers(0, 3)) == 0:
            values[name] = data.draw(hostile_value)
        else:  # a valid value, so the hostile ones are reached in every position
            values[name] = 1 if prm.domain.integer else (0.5 if prm.domain.hi <= 1 else 1.5)
    if data.draw(st.integers(0, 9)) == 0:
        values[data.draw(st.text(max_size=5))] = 1.0
    try:
        out = b.evaluate(**values)
    except BoundlabError:
        return
    arr = np.asarray(out, dtype=float)
    assert not np.isnan(arr).any(), f"nan from {bound_id} at {values}"
    for v in values.values():  # what was accepted was a real number / array of them
        a = np.asarray(v)
        assert a.dtype.kind in "iuf", f"{bound_id} accepted {v!r}"


_words = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzLKT_=0123456789.e+-()*/ ", max_size=12),
    st.builds(lambda n, v: f"{n}={v}", st.sampled_from(["eta", "tau", "L", "zeta", "p", "K",
                                                         "T", "", "eta "]),
              st.one_of(st.floats(allow_nan=True).map(repr), st.integers().map(str),
                        st.text(max_size=6), st.just("1e999"), st.just("0x1p3"))),
)


@fuzz_settings(max_examples=60)
@given(st.sampled_from(["drift.plateau", "weight_error.interval_var", "skew.corollary",
                        "contraction.beta_kappa"]), st.lists(_words, max_size=6),
       st.booleans())
def test_cli_bounds_eval(bound_id, words, as_json):
    argv = ["bounds", "eval", bound_id, *words] + (["--json"] if as_json else [])
    status, out, err, exc = run_cli(argv)
    assert exc is None, f"{argv}: raw {type(exc).__name__}: {exc}"
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), err
    else:
        assert status == 0, (argv, status, err)
        if as_json:
            doc = strict_json(out)
            assert doc["value"] is not None or doc.get("value_status") in ("inf", "-inf")


_expr_text = st.text(alphabet="tr0123456789.+-*/()e sqrtexplog_,[]'\"abc:=", max_size=30)


@fuzz_settings(max_examples=200)
@given(_expr_text)
def test_expression_parser(text):
    from boundlab.errors import DomainError
    from boundlab.expr import parse

    try:
        e = parse(text, ("t", "r"), name="lr")
    except DomainError:
        return
    v = e(t=np.arange(3.0), r=np.zeros(3))
    assert np.asarray(v).dtype == float


@fuzz_settings(max_examples=80)
@given(st.binary(max_size=64), st.booleans())
def test_load_idx_bytes(tmp_path_factory, data, compress):
    import toys
    from boundlab.errors import DomainError

    p = tmp_path_factory.mktemp("idx") / "f.idx"
    p.write_bytes(gzip.compress(data) if compress else data)
    try:
        arr = toys.load_idx(p)
    except DomainError as e:
        assert "f.idx" in str(e)
        return
    assert isinstance(arr, np.ndarray)


_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                               st.floats(allow_nan=False), st.text(max_size=3)),
                     lambda kids: st.lists(kids, max_size=3) | st.dictionaries(
                         st.sampled_from(["users", "num_samples", "user_data", "x", "y", "a"]),
                         kids, max_size=4), max_leaves=12)


@fuzz_settings(max_examples=80)
@given(st.one_of(_json, st.fixed_dictionaries(
    {"users": st.just(["a"]), "num_samples": _json,
     "user_data": st.fixed_dictionaries({"a": st.fixed_dictionaries({"x": _json, "y": _json})})})))
def test_load_leaf_documents(tmp_path_factory, doc):
    import toys
    from boundlab.errors import DomainError

    p = tmp_path_factory.mktemp("leaf") / "train.json"
    p.write_text(json.dumps(doc))
    try:
        users, Xs, ys = toys.load_leaf(p)
    except DomainError as e:
        assert "train.json" in str(e)
        return
    for x, y in zip(Xs, ys):
        assert x.shape[0] == len(y) and np.all(np.isfinite(x))


@fuzz_settings(max_examples=60)
@given(st.one_of(st.text(max_size=50), _json.map(json.dumps)))
def test_pep_cache_reads_any_file(tmp_path_factory, text):
    from verify.tightness.cache import PEPCache, valid_result

    c = PEPCache(tmp_path_factory.mktemp("cache"))
    key = c.key("m", "c", {"x": 1.0})
    c.put(key, {"value": 1.0})
    next(c.directory.rglob("*.json")).write_text(text)
    got = c.get(key)
    assert got is None or valid_result(got)


@fuzz_settings(max_examples=40)
@given(st.one_of(st.floats(allow_nan=True), st.complex_numbers(), st.booleans(), st.text(),
                 st.lists(st.floats(allow_nan=True), max_size=4)))
def test_logistic_weights(w):
    import toys

    X = [np.ones((2, 1))] * 3
    y = [np.array([0, 1])] * 3
    try:
        prob = toys.logistic(X, y, weights=w)
    except BoundlabError:
        return
    assert np.all(np.isfinite(prob.p)) and math.isclose(prob.p.sum(), 1.0) and np.all(prob.p > 0)


@pytest.mark.parametrize("argv", [
    ["bounds", "list", "--json"], ["bounds", "show", "drift.plateau", "--json"],
    ["bounds", "eval", "drift.plateau", "eta=1e200", "tau=1", "L=1", "zeta=1", "--json"],
    ["bounds", "eval", "weight_error.interval_mean", "p=1e-17", "K=50", "--json"],
    ["toys", "list", "--json"], ["toys", "constants", "quadratic", "n_clients=2", "dim=2",
                                 "L=1e15", "mu=1", "--json"],
    ["tightness", "list", "--json"],
])
def test_every_json_output_is_strict(argv):
    status, out, err, exc = run_cli(argv)
    assert exc is None and status == 0, (status, err, exc)
    strict_json(out)
