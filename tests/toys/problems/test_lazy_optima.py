"""Problems without every optimum: running needs none; constants say what is unavailable."""

import numpy as np
import pytest

import toys
from toys.problems.base import OptimumUnavailable


@pytest.fixture(scope="module")
def separable_one():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(40, 3)) for _ in range(5)]
    ys = [((x[:, 0] + rng.normal(size=40)) > 0).astype(float) for x in Xs]
    Xs.append(rng.normal(size=(10, 3)))
    ys.append((Xs[-1][:, 0] > 0).astype(float))  # client 5: separable by its first feature
    return toys.logistic(Xs, ys, l2=0.0)


def test_run_without_client_optima(separable_one):
    tr = toys.run(separable_one, "fedavg", rounds=5, seed=0, lr=0.5, local_steps=2)
    assert tr.diverged_at is None and np.all(np.isfinite(tr.gap))  # the global optimum exists
    assert np.all(np.isnan(tr.rho_sync))  # rho needs F_i*: not measured
    with pytest.raises(OptimumUnavailable, match=r"client data \[5\] are \(quasi-\)separable"):
        _ = separable_one.F_star_i
    np.testing.assert_allclose(separable_one.grad_F(separable_one.x_star), 0.0, atol=1e-9)


def test_constants_report_unavailable_gamma(separable_one):
    c = toys.constants(separable_one)
    assert c.Gamma.how == "unavailable" and "separable" in c.Gamma.note
    assert np.isnan(c.Gamma.value) and "Gamma" not in c.as_params()
    assert c.D.how == "exact" and np.isfinite(c.zeta.value)


def test_loss_weighted_rule_falls_back_to_zero_offset(separable_one):
    tr = toys.run(separable_one, "fedsoftmax", rounds=2, seed=0, lr=0.1)
    assert tr.info["loss_offset"] == "zero"


def test_client_optima_have_the_same_bits_on_any_number_of_threads(monkeypatch):
    import numpy as np

    from toys.problems import _logistic_optima as lo
    from toys.problems.logistic import Logistic

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 12, 3))
    y = (rng.random((40, 12)) < 0.5).astype(float)
    monkeypatch.setattr(lo, "_HESSIAN_CHUNK", 45)  # blocks of 5 clients: 8 blocks
    out = {}
    for threads in (1, 3):
        monkeypatch.setattr(lo, "OPTIMA_THREADS", threads)
        prob = Logistic(X, y, np.ones((40, 12), bool), l2=0.1)
        out[threads] = (prob.x_star_i, prob.F_star_i)
    np.testing.assert_array_equal(out[1][0], out[3][0])
    np.testing.assert_array_equal(out[1][1], out[3][1])
    assert np.max(np.abs(Logistic(X, y, np.ones((40, 12), bool), l2=0.1).grads(out[3][0]))) < 1e-10
