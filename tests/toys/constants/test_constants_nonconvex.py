"""toys.constants on a problem without optima or Hessian-vector products (the MLP): the
optima-based constants are 'unavailable' with the reason, L comes from finite-difference
Hessian-vector products, which agree with exact ones where those exist."""

from __future__ import annotations

import numpy as np

import toys
from toys.constants._impl import _hvps_of
from toys.problems.mlp import MLPProblem


def test_mlp_constants_are_estimates_and_unavailable_where_no_optimum():
    rng = np.random.default_rng(0)
    prob = MLPProblem(rng.normal(size=(3, 6, 4)), rng.integers(0, 3, (3, 6)),
                      np.ones((3, 6), bool), classes=3, hidden=5)
    c = toys.constants(prob)
    assert c.D.how == c.Gamma.how == c.F_star.how == "unavailable"
    assert "non-convex" in c.D.note
    assert c.L.how.startswith("estimate") and np.isfinite(c.L.value) and c.L.value > 0


def test_finite_difference_hvps_match_exact_ones():
    prob = toys.make("logistic-synthetic")
    rng = np.random.default_rng(1)
    W = rng.normal(size=(prob.n_clients, prob.dim))
    V = rng.normal(size=W.shape)
    exact = prob.hvps(W, V)

    class NoHvp:  # the same problem without hvps
        n_clients, dim, p = prob.n_clients, prob.dim, prob.p

        def grads(self, W):
            return prob.grads(W)

        def hvps(self, W, V):
            from boundlab.errors import DomainError

            raise DomainError("method", "hvps", "not provided")

    fd = _hvps_of(NoHvp())(W, V)
    np.testing.assert_allclose(fd, exact, rtol=1e-5, atol=1e-8)
