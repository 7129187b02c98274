"""The vectorized admissibility mask and right-hand side of the search equal the bound's own
row-by-row answers (``violated_preconditions``, ``evaluate``), domains included."""

import warnings

import numpy as np
import pytest

import boundlab
from verify.falsify.judge import _admissible, _evaluate


def _population(b, n, seed=1):
    rng = np.random.default_rng(seed)
    use = {}
    for k, p in {**b.params, **b.extra_params}.items():
        if p.domain.hi < np.inf:
            v = rng.uniform(-0.2, 1.2, n)
        else:
            v = np.exp(rng.uniform(-4, 3, n))
        if p.domain.integer:
            v = np.floor(v) + rng.integers(-1, 2, n)
        use[k] = v.astype(float)
    return use


@pytest.mark.parametrize("bound_id", ["drift.fedavg_convex", "skew.corollary",
                                      "weight_error.theorem2"])
def test_vectorized_rhs_equals_the_row_by_row_values(bound_id):
    b = boundlab.get(bound_id)
    n = 300
    use = _population(b, n, seed=3)
    ref = np.full(n, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(n):
            try:
                ref[i] = float(b.evaluate(**{k: v[i] for k, v in use.items()}))
            except boundlab.errors.BoundlabError:  # a value outside its domain
                pass
        got = _evaluate(b, use, n)
    assert np.isfinite(ref).any() and np.array_equal(got, ref, equal_nan=True)


@pytest.mark.parametrize("bound_id", ["drift.fedavg_convex", "drift.plateau", "skew.corollary",
                                      "contraction.fedprox_sc", "weight_error.theorem2"])
def test_vectorized_mask_equals_the_row_by_row_answer(bound_id):
    b = boundlab.get(bound_id)
    n = 300
    use = _population(b, n)
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


def test_a_measurement_at_the_rounding_floor_is_zero_not_a_violation():
    from verify.falsify.judge import ratios

    # F(x) - F* stalled at ~300 ulps while the bound, a difference of measured distances,
    # rounded to 7e-19 (drift.round_progress on a converged softplus instance)
    assert ratios(6.66e-14, 6.89e-19, 2.2).tolist() == 0.0
    assert ratios(1e-3, 1e-4, 2.2).tolist() == pytest.approx(10.0)
    assert ratios(1e-3, -1.0, 2.2).tolist() == float("inf")  # bound <= 0: VIOLATED


def test_a_signed_descent_is_judged_against_a_negative_bound():
    """Lemma B.5.1's one_round_descent may be negative and so may its bound: a descent of -0.5
    against a promised -1 violates it (ratio 1 + 0.5/1); -2 against -1 holds; within the
    rounding floor of the bound it is tight (1), never a violation. An unsigned quantity at or
    below 0 always holds."""
    from verify.falsify.judge import judge, ratios
    from verify.measures import get

    assert get("one_round_descent").signed and not get("final_gap").signed
    b = boundlab.Bound(id="mine.descent", source="t", expr=-boundlab.sym("grad_norm2"),
                       params=boundlab.make_params("grad_norm2"), kind="upper",
                       lhs="one_round_descent")
    z = np.zeros((3, 1))
    q = {"descent_t": np.array([[-0.5], [-2.0], [-1.0 + 1e-15]]),
         "descent_grad_norm2": np.ones((3, 1)), "descent_q_t": z, "descent_werr_t": z,
         "gap": np.ones((3, 2)), "dist2": np.ones((3, 2))}
    r, lhs, rhs, _ = judge(b, q, {}, {})
    assert r.tolist() == [1.5, 0.0, 1.0] and rhs.tolist() == [-1.0, -1.0, -1.0]
    assert ratios(-0.5, -1.0).tolist() == 0.0  # unsigned
