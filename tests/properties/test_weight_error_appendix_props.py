"""Property tests of ``weight_error.lemma_b31`` and ``weight_error.corollary4_equiprobable``
(FedAU, seed 002): the pointwise statement of Lemma B.3.1 on hypothesis-drawn gradients and
simplex weights, and Appendix A.3's bound against Corollary 4 explicit at Q = N/S, W = 0."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import boundlab

SET = settings(max_examples=100, deadline=None)
B31 = boundlab.get("weight_error.lemma_b31")
A3 = boundlab.get("weight_error.corollary4_equiprobable")
C4E = boundlab.get("weight_error.corollary4_explicit")


def fl(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


@st.composite
def grads_and_phi(draw):
    n, d = draw(st.integers(2, 7)), draw(st.integers(1, 4))
    g = np.array(draw(st.lists(st.lists(fl(-10, 10), min_size=d, max_size=d), min_size=n,
                               max_size=n)))
    w = np.array(draw(st.lists(fl(0.0, 1.0), min_size=n, max_size=n)))
    vertex = draw(st.integers(0, n - 1))
    phi = w / w.sum() if w.sum() > 0 else np.eye(n)[vertex]
    return g, phi


@SET
@given(grads_and_phi())
def test_pointwise_divergence_from_any_reweighting(gp):
    """At one x: max_n ||g_n - sum phi g||^2 <= 4 max_n ||g_n - mean g||^2."""
    g, phi = gp
    delta = float(np.sqrt(np.max(np.sum((g - g.mean(axis=0)) ** 2, axis=1))))
    lhs = float(np.max(np.sum((g - phi @ g) ** 2, axis=1)))
    rhs = float(B31.evaluate(delta=delta))
    assert lhs <= rhs * (1 + 1e-12) + 1e-12


@st.composite
def a3_point(draw):
    N = draw(st.integers(1, 50))
    return dict(L=draw(fl(0.1, 10)), F=draw(fl(0.0, 10)), I=draw(st.integers(1, 20)),
                delta=draw(fl(0.0, 5)), sigma=draw(fl(0.0, 5)), T=draw(st.integers(1, 10**5)),
                S_sampled=draw(st.integers(1, N)), N=N)


@SET
@given(a3_point())
def test_a3_equals_corollary4_explicit_at_q_n_over_s(v):
    a3 = float(A3.evaluate(**{k: x for k, x in v.items() if k != "N"}))
    c4 = float(C4E.evaluate(**{k: x for k, x in v.items() if k != "S_sampled"},
                            Q=v["N"] / v["S_sampled"], W=0.0, PsiG=0.0))
    assert np.isclose(a3, c4, rtol=1e-12, atol=1e-300)


@SET
@given(a3_point(), st.integers(1, 5))
def test_a3_decreases_with_clients_per_round_and_rounds(v, k):
    base = {k_: x for k_, x in v.items() if k_ != "N"}
    b0 = float(A3.evaluate(**base))
    assert float(A3.evaluate(**{**base, "S_sampled": base["S_sampled"] + k})) <= b0 * (1 + 1e-12)
    assert float(A3.evaluate(**{**base, "T": base["T"] + k})) <= b0 * (1 + 1e-12)
