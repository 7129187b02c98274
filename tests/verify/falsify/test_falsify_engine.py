"""The batched engine against the real engine: one toys.run per instance, same quantities."""

from __future__ import annotations

import numpy as np
import pytest

import toys
from verify.falsify.engine import measure, quantities_of_trace, run_batched
from verify.falsify.families import Spec, get_family


@pytest.mark.parametrize("name", ["quadratic", "huber", "softplus"])
@pytest.mark.parametrize("N,tau,mu", [(1, 1, 0.0), (3, 3, 0.3)])
def test_batched_matches_toys_run(name, N, tau, mu):
    spec = Spec(L=2.0, mu=mu, D=1.5, n_clients=N, dim=2)
    fam = get_family(name)
    Z = np.random.default_rng(7).uniform(-1, 1, (4, fam.n_vars(spec)))
    eta = np.array([0.1, 0.3, 0.5, 0.9])
    st = fam.stack(Z, spec)
    q = run_batched(st, st.x0, eta, rounds=5, tau=tau)
    for k in range(4):
        prob, x0 = fam.build(Z[k], spec)
        tr = toys.run(prob, "fedavg", rounds=5, seed=0, lr=float(eta[k]), local_steps=tau, x0=x0)
        ref = quantities_of_trace(tr)
        for key, v in ref.items():
            np.testing.assert_allclose(q[key][k], v[0], rtol=1e-12, atol=1e-14, err_msg=key)


def test_gd_on_huber_reaches_the_drori_teboulle_worst_case():
    """f = L huber_delta with delta = D/(2T+1), x0 = D, step 1/L: f(x_T) - f* = L D^2/(4T+2)
    (Drori and Teboulle 2014, the tight worst case of GD on smooth convex functions)."""
    L, D, T = 2.0, 1.5, 5
    arr = {"profile": "huber", "a": np.ones((1, 1, 1, 1)), "b": np.zeros((1, 1, 1)),
           "w": np.full((1, 1, 1), L), "delta": np.full((1, 1, 1), D / (2 * T + 1)),
           "c": np.zeros((1, 1, 1)), "mu": 0.0, "u": np.ones((1, 1)), "common": True, "D": D}
    from verify.falsify.families._ridge import StackedRidge

    st = StackedRidge(arr, np.ones(1))
    q = run_batched(st, st.x0, np.array([1 / L]), rounds=T, tau=1)
    assert q["gap"][0, -1] == pytest.approx(L * D**2 / (4 * T + 2), rel=1e-12)


def test_measure_shapes():
    q = {"gap": np.arange(6.0)[None], "dist2": np.arange(6.0)[None],
         "grad_norm2": np.ones((1, 6)), "shadow_gap": np.full((1, 5), 2.0),
         "g2_max": np.ones((1, 5))}
    assert measure("final_gap", q)[0].tolist() == [[5.0]]
    v, per = measure("dist_next", q)
    assert v.tolist() == [[1, 2, 3, 4, 5]] and per["dist_t"].tolist() == [[0, 1, 2, 3, 4]]
    assert measure("avg_shadow_gap", q)[0].tolist() == [[2.0]]
    assert measure("gap_t", q)[1]["t"].tolist() == [[0, 1, 2, 3, 4, 5]]


def test_measure_of_the_drift_and_gradient_sides():
    q = {"gap": np.array([[2.0, 1.0, 0.5]]), "loss": np.array([[5.0, 4.0, 3.5]]),
         "dist2": np.array([[4.0, 2.0, 1.0]]), "grad_norm2": np.array([[3.0, 2.0, 1.0]]),
         "drift_max": np.array([[0.1, 0.3]]), "drift_sum": np.array([[0.2, 0.4]]),
         "disc_max": np.array([[0.05, 0.07]]), "shadow_gap": np.array([[1.5, 0.7]])}
    v, per = measure("grad_norm_sq", q)
    assert v.tolist() == [[3.0, 2.0, 1.0]]
    assert (per["f_w"] - per["f_star"]).tolist() == q["gap"].tolist()
    assert measure("max_client_drift", q)[0].tolist() == [[0.3]]
    assert measure("client_discrepancy", q)[0].tolist() == [[0.05, 0.07]]
    v, per = measure("round_avg_gap", q)
    assert v.tolist() == [[1.5, 0.7]] and per["dist0"].tolist() == [[4.0, 2.0]]
    assert per["dist_tau"].tolist() == [[2.0, 1.0]] and per["drift_sum"].tolist() == [[0.2, 0.4]]


def test_lemma1_is_tight_on_quadratics_and_its_halved_typo_is_caught():
    import dataclasses
    import warnings

    import boundlab
    import verify

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = verify.falsify("skew.lemma1", budget=40, seed=0)
        # ||grad f||^2 = 2L (f - f*) exactly for f = L/2 ||x - x*||^2
        assert r.verdict == "holds" and r.worst_ratio == pytest.approx(1.0, rel=1e-9)
        b = boundlab.get("skew.lemma1")
        half = dataclasses.replace(b, id="mine.lemma1_half", expr=b.expr / 2, stable=None,
                                   terms={})
        w = verify.falsify(half, budget=40, seed=0, algorithm="fedavg",
                           function_class="smooth-nonconvex")
    assert w.verdict == "VIOLATED" and w.instance.replay() == pytest.approx(2.0, rel=1e-6)
