"""The vectorized admissibility mask of the search equals ``violated_preconditions`` row by row
(domains, exact integers, missing parameters and every precondition)."""

import warnings

import numpy as np
import pytest

import boundlab
from verify.falsify.judge import _admissible


@pytest.mark.parametrize("bound_id", ["drift.fedavg_convex", "drift.plateau", "skew.corollary",
                                      "contraction.fedprox_sc", "weight_error.theorem2"])
def test_vectorized_mask_equals_the_row_by_row_answer(bound_id):
    b = boundlab.get(bound_id)
    rng = np.random.default_rng(1)
    n, use = 300, {}
    for k, p in {**b.params, **b.extra_params}.items():
        if p.domain.hi < np.inf:
            v = rng.uniform(-0.2, 1.2, n)
        else:
            v = np.exp(rng.uniform(-4, 3, n))
        if p.domain.integer:
            v = np.floor(v) + rng.integers(-1, 2, n)
        use[k] = v.astype(float)
    ref = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(n):
            try:
                ref.append(not b.violated_preconditions(**{k: v[i] for k, v in use.items()}))
            except boundlab.errors.BoundlabError:  # a value outside its domain
                ref.append(False)
        got = _admissible(b, use, n)
    assert got.tolist() == ref
