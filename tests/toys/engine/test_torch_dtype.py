"""float32 and float64 on the torch backend for every problem kind it runs (binary and
multinomial logistic, the seed-004 toy with offsets, quadratic, MLP, CNN):

* torch float64 equals numpy (full batch) to the backend's documented 1e-10 (rtol and atol);
* torch float32 is close to torch float64 within the stated float32 tolerance: final model
  and recorded losses to 1e-5 relative (of max(1, |value|)) after a few rounds of small steps —
  float32's unit round-off 6e-8 times the ~10^2 accumulated operations of these runs;
* minibatch runs draw the same rows in float32 and float64 (float64 keys), so they obey the same
  float32 tolerance.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import toys  # noqa: E402
from toys.problems.cnn import CNNProblem  # noqa: E402
from toys.problems.mlp import MLPProblem  # noqa: E402

AGREE = 1e-10  # torch float64 vs numpy (toys.engine.backends.torch's documented tolerance)
F32 = 1e-5  # torch float32 vs torch float64, relative to max(1, |value|)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _problems():
    rng = np.random.default_rng(0)
    Xs = [rng.normal(size=(n, 3)) + 0.3 * i for i, n in enumerate((9, 14, 6, 11))]
    mask = np.ones((3, 6), bool)
    mask[0, 4:] = False
    return {
        "binary": toys.logistic_synthetic(n_clients=4, dim=3, seed=0),
        "multinomial": toys.logistic(Xs, [rng.integers(0, 3, size=len(x)) for x in Xs],
                                     l2=0.05),
        "seed004": toys.seed004_toy(seed=0, n_clients=5),
        "quadratic": toys.quadratic(n_clients=4, dim=3, seed=0),
        "mlp": MLPProblem(rng.normal(size=(3, 6, 4)), rng.integers(0, 3, (3, 6)), mask,
                          classes=3, hidden=5, l2=1e-2),
        "cnn": CNNProblem(rng.normal(size=(3, 6, 8, 8)), rng.integers(0, 4, (3, 6)), mask,
                          classes=4, seed=0),
    }


PROBLEMS = _problems()
KW = {"rounds": 3, "seed": 1, "lr": 0.05, "local_steps": 2,
      "participation": "bernoulli:p=0.7"}


def _close(a, b, tol):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(b)))))


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_float32_close_to_float64_and_float64_equals_numpy(name):
    prob = PROBLEMS[name]
    record = "sync" if name in ("mlp", "cnn") else "round"
    kw = {**KW, "record": record}
    a = toys.run(prob, "fedau", **kw)
    b = toys.run(prob, "fedau", backend="torch", device="cpu", dtype="float64", **kw)
    c = toys.run(prob, "fedau", backend="torch", device="cpu", dtype="float32", **kw)
    assert (b.info["dtype"], c.info["dtype"]) == ("float64", "float32")
    for x, y in ((b, a), (c, b)):
        np.testing.assert_array_equal(x.participation, y.participation)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=AGREE, atol=AGREE)
    np.testing.assert_allclose(b.loss, a.loss, rtol=AGREE, atol=AGREE)
    np.testing.assert_allclose(b.alpha, a.alpha, rtol=AGREE, atol=AGREE)
    _close(c.final_model, b.final_model, F32)
    _close(c.loss, b.loss, F32)
    assert not np.array_equal(c.final_model, b.final_model)  # float32 really ran


@pytest.mark.parametrize("name", ["binary", "multinomial", "mlp", "cnn"])
def test_minibatch_float32_draws_the_rows_of_float64(name):
    prob = PROBLEMS[name]
    kw = {**KW, "batch_size": 2, "record": "none"}
    b = toys.run(prob, "fedavg", backend="torch", device="cpu", dtype="float64", **kw)
    c = toys.run(prob, "fedavg", backend="torch", device="cpu", dtype="float32", **kw)
    _close(c.final_model, b.final_model, F32)
