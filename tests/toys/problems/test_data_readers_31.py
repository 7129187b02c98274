"""Issue 31 leftovers in toys' data readers: toys.logistic with string labels or features, LEAF
data with no users, empty users, mixed label kinds or mixed widths: each a DomainError naming
the argument or the file (string labels of LEAF, e.g. Shakespeare's characters, stay valid)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError

X = [np.ones((3, 2)), np.zeros((3, 2))]


@pytest.mark.parametrize("Xs, ys, name", [
    (X, [np.array(["a", "b", "a"]), np.array(["b", "a", "b"])], r"ys\[0\]"),
    (X, [[0, 1, 0], ["a", 1, None]], r"ys\[1\]"),
    ([np.array([["a", "b"], ["c", "d"]])], [np.array([0, 1])], r"Xs\[0\]"),
    ([[["1", "2"], ["3", "4"]]], [[0, 1]], r"Xs\[0\]"),  # was: silently read as numbers
    ([[[1.0, 2.0], [3.0]]], [[0, 1]], r"Xs\[0\]"),       # ragged
])
def test_logistic_refuses_non_numeric_data(Xs, ys, name):
    # was: a raw ValueError "could not convert string to float"
    with pytest.raises(DomainError, match=rf"^{name} = .*rectangular array of numbers"):
        toys.logistic(Xs, ys)


def test_logistic_numbers_still_accepted():
    prob = toys.logistic([[[0.0, 1.0], [1.0, 0.0]]], [[0, 1]], l2=0.1)
    assert prob.n_clients == 1 and prob.dim == 2


def _leaf(tmp_path, doc, name="train.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def _user(x, y):
    return {"x": x, "y": y}


@pytest.mark.parametrize("doc, why", [
    ({"users": [], "num_samples": [], "user_data": {}}, "no users"),
    ({"users": ["a"], "num_samples": [0], "user_data": {"a": _user([], [])}},
     "user 'a' has none"),
    ({"users": ["a", "b"], "num_samples": [0, 2],
      "user_data": {"a": _user([], []), "b": _user([[0, 1], [1, 0]], [0, 1])}},
     "user 'a' has none"),
    ({"users": ["a"], "num_samples": [2], "user_data": {"a": _user([[], []], [0, 1])}},
     "at least one feature"),
    ({"users": ["a", "b"], "num_samples": [2, 2],
      "user_data": {"a": _user([[0, 1], [1, 0]], [0, 1]),
                    "b": _user([[0, 1, 2], [1, 0, 2]], [0, 1])}},
     "user 'b' has 3, user 'a' 2"),
    ({"users": ["a"], "num_samples": [2], "user_data": {"a": _user([[0, 1], [1, 0]], [0, "v"])}},
     "mix strings and numbers"),
    ({"users": ["a", "b"], "num_samples": [2, 2],
      "user_data": {"a": _user([[0, 1], [1, 0]], [0, 1]),
                    "b": _user([[0, 1], [1, 0]], ["0", "1"])}},
     "user 'b' has strings, user 'a' numbers"),
])
def test_leaf_refuses_unusable_documents(tmp_path, doc, why):
    p = _leaf(tmp_path, doc)
    with pytest.raises(DomainError, match=r"^path = .*train.json") as info:
        toys.load_leaf(p)
    assert why in str(info.value)
    with pytest.raises(DomainError, match=r"^path = .*train.json"):  # was: raw ValueErrors
        toys.from_dataset("leaf", path=p)


def test_leaf_string_labels_are_classes(tmp_path):
    p = _leaf(tmp_path, {"users": ["a", "b"], "num_samples": [2, 2],
                         "user_data": {"a": _user([[0, 1], [1, 0]], ["u", "v"]),
                                       "b": _user([[1, 1], [0, 0]], ["v", "w"])}})
    prob = toys.from_dataset("leaf", path=p)
    assert prob.label_values.tolist() == ["u", "v", "w"] and prob.n_clients == 2
    assert prob.kind == "multinomial"
