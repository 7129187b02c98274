"""toys.run: validation before any work, divergence, reproducibility, record modes, Trace I/O,
closed forms."""

import math
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import toys
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError
from toys.participation import make as make_process


class _NoWork(toys.Quadratic):
    """A problem whose oracles fail once armed: proves validation happens before any work."""

    armed = False

    def _fail(self, *args, **kwargs):
        raise AssertionError("work started before validation")

    def losses(self, W):
        return self._fail() if self.armed else super().losses(W)

    def grads(self, W):
        return self._fail() if self.armed else super().grads(W)

    def minibatch_grads(self, W, rng, batch_size):
        return self._fail()

    def arrays(self):
        return self._fail()


@pytest.fixture(scope="module")
def nowork():
    q = toys.quadratic(n_clients=4, dim=2, seed=0)
    prob = _NoWork(q.A, q.c)
    prob.armed = True
    return prob


@pytest.fixture(scope="module")
def quad():
    return toys.quadratic(n_clients=4, dim=3, L=4.0, mu=1.0, seed=0)


BAD = [
    ("fedavg", {"lr": 0.0}, DomainError, "lr"),
    ("fedavg", {"lr": -0.1}, DomainError, "lr"),
    ("fedavg", {"lr": 0.1, "local_steps": 0}, DomainError, "local_steps"),
    ("fedavg", {"lr": 0.1, "local_steps": 2.5}, DomainError, "local_steps"),
    ("fedavg", {"lr": 0.1, "batch_size": 0}, DomainError, "batch_size"),
    ("fedavg", {"lr": 0.1, "server_lr": 0}, DomainError, "server_lr"),
    ("fedavg", {"lr": 0.1, "prox": -1}, DomainError, "prox"),
    ("fedprox", {"lr": 0.1}, MissingParameterError, "prox"),
    ("fedavg", {}, MissingParameterError, "lr"),
    ("beta", {"lr": 0.1, "beta": 0.0}, DomainError, "beta"),
    ("beta", {"lr": 0.1, "beta": 1.5}, DomainError, "beta"),
    ("beta", {"lr": 0.1}, MissingParameterError, "beta"),
    ("beta", {"lr": 0.1, "beta": 0.5, "messages": np.zeros((4, 2))}, DomainError, "messages"),
    ("fedau", {"lr": 0.1, "K": 0}, DomainError, "K"),
    ("fedau", {"lr": 0.1, "K": 2.5}, DomainError, "K"),
    ("fedsoftmax", {"lr": 0.1, "temperature": 0.0}, DomainError, "temperature"),
    ("fedsoftmax", {"lr": 0.1, "inv_temperature": -1.0}, DomainError, "inv_temperature"),
    ("fedsoftmax", {"lr": 0.1, "temperature": 1.0, "inv_temperature": 1.0}, DomainError,
     "temperature"),
    ("fedmax-k", {"lr": 0.1, "k": 5}, DomainError, "k"),
    ("fedmax-k", {"lr": 0.1, "k": 0}, DomainError, "k"),
    ("fedmax-k", {"lr": 0.1, "k": 1.5}, DomainError, "k"),
    ("fedbetter-k", {"lr": 0.1}, MissingParameterError, "k"),
    ("hybrid", {"lr": 0.1, "switch_round": (3, 2), "rules": ("fedavg", "fedmax", "fedavg")},
     DomainError, "switch_round"),
    ("hybrid", {"lr": 0.1, "rules": ("fedavg", "nope")}, UnknownNameError, "nope"),
    ("anneal", {"lr": 0.1, "rule": "fedmax"}, DomainError, "rule"),
    ("anneal", {"lr": 0.1, "decay": 1.5}, DomainError, "decay"),
    ("fedmax", {"lr": 0.1, "loss_offset": "bogus"}, UnknownNameError, "loss_offset"),
    ("fedavg", {"lr": 0.1, "K": 3}, UnknownNameError, "K"),
    ("fedavg", {"lr": 0.1, "tau": 3}, UnknownNameError, "local_steps"),
    ("fedau", {"lr": 0.1, "eta": 3}, UnknownNameError, "server_lr"),
]


@pytest.mark.parametrize("algo,hyper,exc,word", BAD)
def test_bad_hyper_parameters_rejected_before_work(nowork, algo, hyper, exc, word):
    with pytest.raises(exc, match=word):
        toys.run(nowork, algo, rounds=3, seed=0, **hyper)


@pytest.mark.parametrize("kw,exc,word", [
    ({"rounds": 0}, DomainError, "rounds"),
    ({"seed": -1}, DomainError, "seed"),
    ({"record": "all"}, UnknownNameError, "record"),
    ({"backend": "jax"}, UnknownNameError, "backend"),
    ({"x0": np.zeros(5)}, DomainError, "x0"),
    ({"x0": [np.nan, 0.0]}, DomainError, "x0"),
    ({"participation": np.ones((2, 4), bool)}, DomainError, "participation"),
    ({"participation": "nope"}, UnknownNameError, "nope"),
    ({"participation": "uniform:m=9"}, DomainError, "m"),
    ({"dtype": "float32"}, DomainError, "dtype"),
])
def test_bad_run_arguments_rejected_before_work(nowork, kw, exc, word):
    args = {"rounds": 3, "seed": 0, **kw}
    with pytest.raises(exc, match=word):
        toys.run(nowork, "fedavg", lr=0.1, **args)


def test_unknown_algorithm_lists_valid_names(quad):
    with pytest.raises(UnknownNameError) as err:
        toys.run(quad, "fedsgd", rounds=1, seed=0, lr=0.1)
    for name in toys.ALGORITHMS:
        assert name in str(err.value)


def test_algorithm_table_is_complete():
    expected = {"fedavg", "fedprox", "fedmax", "fedmax-k", "fedsoftmax", "fedbetter",
                "fedbetter-k", "fedsoftbetter", "hybrid", "anneal", "fedau", "fedau-known",
                "average-participating", "average-all", "fedvarp", "mifa", "beta", "fedprox-bc",
                # the comparison algorithms (issue 23; tests in tests/toys/algorithms)
                "poc", "fedavg-hetero", "scaffold", "fednova", "fedadagrad", "fedadam",
                "fedyogi"}
    assert set(toys.ALGORITHMS) == expected
    assert all(isinstance(v, str) and v for v in toys.ALGORITHMS.values())


def test_divergence_is_recorded_and_stops(quad):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings leak out
        tr = toys.run(quad, "fedavg", rounds=400, seed=0, lr=2.0, local_steps=5)
    r = tr.diverged_at
    assert r is not None and 0 < r < 400
    assert np.all(np.isfinite(tr.final_model))
    assert np.all(np.isnan(tr.gap[r + 1:])) and np.isfinite(tr.gap[0])
    assert np.all(np.isnan(tr.shadow_gap[r + 1:]))
    assert not tr.participation[r + 1:].any()
    assert "DIVERGED" in tr.summary()
    # the last finite model is the one at the start of the diverging round
    short = toys.run(quad, "fedavg", rounds=r, seed=0, lr=2.0, local_steps=5)
    np.testing.assert_array_equal(short.final_model, tr.final_model)


def test_same_seed_same_bits_other_seed_differs():
    prob = toys.logistic_synthetic(n_clients=6, dim=3, seed=0)
    proc = make_process("bernoulli", 6, p=0.5)
    kw = {"rounds": 8, "participation": proc, "lr": 0.3, "local_steps": 3, "batch_size": 5,
          "record": "step"}
    a = toys.run(prob, "fedsoftmax", seed=4, **kw)
    b = toys.run(prob, "fedsoftmax", seed=4, **kw)
    c = toys.run(prob, "fedsoftmax", seed=5, **kw)
    np.testing.assert_array_equal(a.final_model, b.final_model)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert not np.array_equal(a.final_model, c.final_model)
    assert not np.array_equal(a.participation, c.participation)


def test_record_modes_do_not_change_the_trajectory():
    prob = toys.logistic_synthetic(n_clients=5, dim=3, seed=2)
    runs = {rec: toys.run(prob, "fedmax", rounds=6, seed=1, lr=0.3, local_steps=4, record=rec)
            for rec in ("none", "sync", "round", "step")}
    for tr in runs.values():
        np.testing.assert_array_equal(tr.final_model, runs["step"].final_model)
    assert np.all(np.isnan(runs["none"].gap)) and runs["none"].steps is None
    assert np.all(np.isfinite(runs["sync"].gap)) and np.all(np.isnan(runs["sync"].shadow_gap))
    assert np.all(np.isfinite(runs["sync"].drift_max))
    assert np.all(np.isfinite(runs["round"].shadow_gap)) and runs["round"].steps is None
    np.testing.assert_array_equal(runs["round"].rho_min, runs["step"].rho_min)
    assert runs["step"].steps["lr"].shape == (6, 4)


def test_closed_form_single_client_gd():
    """N = 1 quadratic: x_R = c + (I - lr A)^(tau R) (x0 - c) exactly (up to rounding)."""
    A = np.array([[[2.0, 0.5], [0.5, 1.0]]])
    c = np.array([[1.0, -2.0]])
    prob = toys.Quadratic(A, c)
    x0 = np.array([3.0, 4.0])
    tr = toys.run(prob, "fedavg", rounds=7, seed=0, lr=0.1, local_steps=3, x0=x0,
                  record="step")
    M = np.linalg.matrix_power(np.eye(2) - 0.1 * A[0], 21)
    np.testing.assert_allclose(tr.final_model, c[0] + M @ (x0 - c[0]), rtol=1e-13)
    # one client: no drift, the shadow sequence is the iterate
    assert np.nanmax(tr.drift_max) == 0.0
    xk = [c[0] + np.linalg.matrix_power(np.eye(2) - 0.1 * A[0], k) @ (x0 - c[0])
          for k in range(1, 4)]
    gaps = [0.5 * (x - c[0]) @ A[0] @ (x - c[0]) for x in xk]
    np.testing.assert_allclose(tr.steps["shadow_gap"][0], gaps, rtol=1e-12)


def test_fedavg_has_unit_skew_and_fedau_full_is_fedavg(quad):
    tr = toys.run(quad, "fedavg", rounds=5, seed=0, lr=0.1, local_steps=3)
    np.testing.assert_allclose(tr.rho_sync, 1.0, rtol=1e-10)
    np.testing.assert_allclose(tr.rho_min, 1.0, rtol=1e-10)
    au = toys.run(quad, "fedau", rounds=5, seed=0, lr=0.1, local_steps=3)
    np.testing.assert_allclose(au.final_model, tr.final_model, rtol=1e-14)
    assert np.all(au.omega == 1.0)


def test_participation_forms_agree(quad):
    proc = make_process("bernoulli", 4, p=0.5)
    a = toys.run(quad, "fedavg", rounds=5, seed=2, participation=proc, lr=0.1)
    b = toys.run(quad, "fedavg", rounds=5, seed=2, participation="bernoulli:p=0.5", lr=0.1)
    c = toys.run(quad, "fedavg", rounds=5, seed=2, participation=("bernoulli", {"p": 0.5}),
                 lr=0.1)
    d = toys.run(quad, "fedavg", rounds=5, seed=0, participation=a.participation, lr=0.1)
    for t in (b, c, d):
        np.testing.assert_array_equal(t.participation, a.participation)
        np.testing.assert_array_equal(t.final_model, a.final_model)


def test_default_x0_is_the_problems(quad):
    toy = toys.seed004_toy(seed=0)
    tr = toys.run(toy, "fedavg", rounds=1, seed=0, lr=0.2, record="sync")
    assert tr.dist2[0] == pytest.approx((2.0 - toy.x_star[0]) ** 2)


def test_trace_tables_and_atomic_save(tmp_path, quad):
    tr = toys.run(quad, "fedau", rounds=4, seed=0, lr=0.1, local_steps=2, record="step",
                  participation="bernoulli:p=0.5")
    f = tr.to_frame()
    assert len(f) == 5 and f["round"].tolist() == [0, 1, 2, 3, 4]
    assert np.isnan(f["shadow_gap"].iloc[-1]) and np.isfinite(f["gap"].iloc[-1])
    cf = tr.clients_frame()
    assert len(cf) == 16 and {"omega", "alpha", "participated"} <= set(cf.columns)
    sf = tr.steps_frame()
    assert len(sf) == 8 and sf["t"].tolist() == list(range(8))
    path = tr.save(tmp_path / "trace.csv")
    back = pd.read_csv(path)
    np.testing.assert_allclose(back["gap"].to_numpy(), f["gap"].to_numpy(), rtol=1e-15)
    tr.save(tmp_path / "steps.csv", what="steps")
    names = sorted(os.listdir(tmp_path))  # no temp files left; each file's ownership record
    assert [n for n in names if not n.endswith(".boundlab.json")] == ["steps.csv", "trace.csv"]
    assert {".steps.csv.boundlab.json", ".trace.csv.boundlab.json"} <= set(names)
    with pytest.raises(UnknownNameError):
        tr.save(tmp_path / "x.csv", what="nope")
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        with pytest.raises(DomainError, match="pyarrow"):
            tr.save(tmp_path / "trace.parquet")
    else:
        tr.save(tmp_path / "trace.parquet")
        assert len(pd.read_parquet(tmp_path / "trace.parquet")) == 5
    with pytest.raises(DomainError, match="record"):
        toys.run(quad, "fedavg", rounds=1, seed=0, lr=0.1).steps_frame()


def test_bm_virtual_sequence_iterations(quad):
    """rho is recorded at every iteration; the all-t minimum can be below the sync minimum
    (erratum BM-13)."""
    tr = toys.run(quad, "fedsoftmax", rounds=20, seed=0, lr=0.05, local_steps=5,
                  temperature=1.0, record="step")
    assert tr.iterations == 100
    all_t = np.minimum(tr.rho_sync, np.nanmin(tr.steps["rho"][:, :-1], axis=1))
    np.testing.assert_allclose(tr.rho_min, all_t, rtol=1e-15)
    assert tr.rho_bar <= np.nanmin(tr.rho_sync)
    assert math.isfinite(tr.rho_tilde)
