"""FedAdagrad / FedAdam / FedYogi (toys.algorithms.adaptive, Reddi et al. 2021 Alg. 2): against
a per-client reference loop (incl. rounds without participants), hand-derived single steps,
torch and the errors."""

import numpy as np
import pytest
from comparison_reference import PAIRS, reference

import toys
from boundlab.errors import DomainError, UnknownNameError
from toys.algorithms.adaptive import AdaptiveStep

TOL = {"rtol": 1e-12, "atol": 1e-12}
NAMES = ("fedadagrad", "fedadam", "fedyogi")


def _masks(rounds=8, N=5, seed=0):
    masks = np.random.default_rng(seed).random((rounds, N)) < 0.6
    masks[2] = False  # a round without participants: x and the moments stay
    masks[0] = True
    return masks


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("pname", sorted(PAIRS))
def test_adaptive_matches_reference(pname, name):
    prob, cl = PAIRS[pname]()
    masks = _masks()
    h = {"lr": 0.1, "local_steps": 3, "server_lr": 0.05, "beta1": 0.8, "eps": 1e-2}
    if name != "fedadagrad":
        h["beta2"] = 0.95
    tr = toys.run(prob, name, rounds=8, seed=0, participation=masks, **h)
    x, alpha = reference(cl, name, 8, 0, masks, **h)
    np.testing.assert_allclose(tr.alpha, alpha, **TOL)
    np.testing.assert_allclose(tr.final_model, x, **TOL)


@pytest.mark.parametrize("name", NAMES)
def test_defaults_match_reference(name):
    prob, cl = PAIRS["logistic"]()
    tr = toys.run(prob, name, rounds=5, seed=0, lr=0.2, local_steps=2)
    x, _ = reference(cl, name, 5, 0, np.ones((5, 5), bool), lr=0.2, local_steps=2)
    np.testing.assert_allclose(tr.final_model, x, **TOL)


def test_first_step_by_hand():
    """One round from m = 0, v = eps^2 with pseudo-gradient D = (3, -4) (deltas (3, -4)):
    m = (1 - b1) D; Adam v = b2 eps^2 + (1 - b2) D^2; Yogi v = eps^2 + (1 - b2) D^2 (since
    eps^2 < D^2); Adagrad v = eps^2 + D^2."""
    b1, b2, eps, lr = 0.5, 0.75, 0.1, 2.0
    D = np.array([3.0, -4.0])
    expect = {
        "adam": b2 * eps ** 2 + (1 - b2) * D ** 2,
        "yogi": eps ** 2 + (1 - b2) * D ** 2,
        "adagrad": eps ** 2 + D ** 2,
    }
    for kind, v in expect.items():
        s = AdaptiveStep(kind, server_lr=lr, beta1=b1, beta2=b2, eps=eps)
        x, st = s.update(s.init(np.zeros(2), 1), x=np.zeros(2), deltas=D[None, :],
                         weights=np.ones(1), mask=np.ones(1, bool), p=None, round=0)
        np.testing.assert_allclose(st.v, v, rtol=1e-15)
        np.testing.assert_allclose(x, lr * (1 - b1) * D / (np.sqrt(v) + eps), rtol=1e-15)


def test_yogi_second_moment_moves_additively():
    """Yogi's v changes by at most (1 - b2) D^2 in either direction (Adam's can drop by a
    factor b2)."""
    s = AdaptiveStep("yogi", beta1=0.0, beta2=0.9, eps=1e-3)
    st = s.init(np.zeros(1), 1)._replace(v=np.array([100.0]))
    _, st = s.update(st, x=np.zeros(1), deltas=np.array([[1.0]]), weights=np.ones(1),
                     mask=np.ones(1, bool), p=None, round=0)
    assert st.v.tolist() == [100.0 - 0.1 * 1.0]


@pytest.mark.parametrize("name", NAMES)
def test_torch_agrees_with_numpy(name, one_torch_thread):
    pytest.importorskip("torch")
    prob, _ = PAIRS["logistic"]()
    kw = dict(rounds=5, seed=1, lr=0.2, local_steps=2, participation="bernoulli:p=0.6",
              server_lr=0.1)
    a = toys.run(prob, name, **kw)
    b = toys.run(prob, name, backend="torch", device="cpu", **kw)
    np.testing.assert_allclose(b.final_model, a.final_model, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("hyper, exc, word", [
    ({"beta1": 1.0}, DomainError, r"beta1 = 1.0 is outside its domain: real in \[0, 1\)"),
    ({"beta2": -0.1}, DomainError, r"beta2 = -0.1 is outside its domain: real in \[0, 1\)"),
    ({"eps": 0.0}, DomainError, r"eps = 0.0 is outside its domain: positive real"),
    ({"server_lr": -1}, DomainError, "server_lr = -1"),
    ({"tau": 1e-3}, UnknownNameError,
     r"paper symbol 'tau' is local_steps \(FedAdam/FedYogi's tau: eps\)"),
    ({"epsilon": 1e-3}, UnknownNameError, "paper symbol 'epsilon' is eps"),
])
def test_bad_settings_are_refused(hyper, exc, word):
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(exc, match=word):
        toys.run(prob, "fedadam", rounds=1, seed=0, lr=0.1, **hyper)


def test_adagrad_has_no_beta2_and_kind_is_checked():
    prob, _ = PAIRS["quadratic"]()
    with pytest.raises(UnknownNameError, match="'beta2'"):
        toys.run(prob, "fedadagrad", rounds=1, seed=0, lr=0.1, beta2=0.9)
    with pytest.raises(UnknownNameError, match="adaptive server optimiser"):
        AdaptiveStep("rmsprop")
