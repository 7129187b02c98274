"""toys.run_many: every instance of a population equals its own toys.run, bit for bit.

The reference is toys.run itself (record="round", the same state metrics), one instance at a
time: nothing here is computed by the population code and then compared with itself.
"""

from __future__ import annotations

import numpy as np
import pytest

import toys
from boundlab.errors import DomainError, UnknownNameError
from toys.engine.population import run_many

B, N, D, R = 4, 5, 3, 6
STATE = ("loss", "gap", "dist2", "grad_norm2", "grad_dissim")
ROUND = ("shadow_gap", "drift_max", "drift_mean", "drift_sum", "disc_max", "g2_max")

# every algorithm whose pieces are batched, with the hyper-parameters it needs
BATCHED = {
    "fedavg": {}, "fedprox": {"prox": 0.3}, "fedprox-bc": {"prox": 0.3},
    "fedmax": {}, "fedmax-k": {"k": 2}, "fedsoftmax": {"temperature": 0.7},
    "fedbetter": {}, "fedbetter-k": {"k": 2}, "fedsoftbetter": {"temperature": 0.7},
    "hybrid": {"switch_round": 2}, "anneal": {}, "average-participating": {},
    "mifa": {}, "fedvarp": {},
}
# every other built-in algorithm: test_population_pieces.py


class _UserRule:
    """A user's weight rule without ``batched``: uniform over the participants."""

    needs_losses = False

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        w = np.where(mask, 1.0, 0.0)
        return w / w.sum(), state


class _UserServer:
    """A user's server step without ``batched``: x + sum_n weights_n Delta_n."""

    def init(self, x, n_clients):
        return ()

    def update(self, state, *, x, deltas, weights, mask, p, round):
        return x + weights @ deltas, state


class _UserClient:
    """A user's client update without ``batched``: one gradient step of 0.1."""

    def init(self, x, n_clients):
        return ()

    def update(self, state, *, x, oracle, round, rng, mask, **_):
        return x - 0.1 * oracle.grads(x), state


NOT_BATCHED = {"client": _UserClient(), "weights": _UserRule(), "server": _UserServer()}


def _problems(seed0=0, **kw):
    return [toys.quadratic(n_clients=N, dim=D, L=4.0, mu=0.5, seed=seed0 + s, **kw)
            for s in range(B)]


def _same(tr, ref, record="state"):
    """Every array run_many records equals toys.run's, bit for bit (NaN where NaN)."""
    for k in STATE:
        np.testing.assert_array_equal(tr.state[k], ref.state[k], err_msg=k)
    np.testing.assert_array_equal(tr.alpha, ref.alpha, err_msg="alpha")
    np.testing.assert_array_equal(tr.participation, ref.participation)
    np.testing.assert_array_equal(tr.final_model, ref.final_model, err_msg="final model")
    for k in ("lr", "n_participants") + (ROUND if record == "round" else ()):
        np.testing.assert_array_equal(tr.per_round[k], ref.per_round[k], err_msg=k)
    assert tr.diverged_at == ref.diverged_at


@pytest.mark.parametrize("name", sorted(BATCHED))
@pytest.mark.parametrize("participation", ["full", "uniform:m=2"])
def test_each_instance_is_its_own_run(name, participation):
    probs, seeds = _problems(), [3, 0, 7, 1]
    hyper = {"lr": 0.05, "local_steps": 3, **BATCHED[name]}
    pop = run_many(probs, name, rounds=R, seeds=seeds, participation=participation, **hyper)
    for b in range(B):
        ref = toys.run(probs[b], name, rounds=R, seed=seeds[b], participation=participation,
                       **hyper)
        _same(pop[b], ref, record="round")
        assert np.isfinite(pop[b].shadow_gap).any()
        assert pop[b].info["population"] == {"instance": b, "size": B}


def test_vary_lr_and_x0_per_instance():
    probs = _problems(seed0=10)
    lrs = [0.01, 0.05, np.linspace(0.1, 0.02, R), 0.2]
    x0 = np.arange(B * D, dtype=float).reshape(B, D) / 7.0
    pop = run_many(probs, "fedavg", rounds=R, seeds=5, x0=x0, vary={"lr": lrs}, local_steps=2,
                   record="state")
    for b in range(B):
        ref = toys.run(probs[b], "fedavg", rounds=R, seed=5, x0=x0[b], lr=lrs[b], local_steps=2)
        _same(pop[b], ref)
        assert np.isnan(pop[b].shadow_gap).all()  # record="state": no per-step rows
    assert pop[1].per_round["lr"][0] == 0.05


def test_per_instance_participation_and_diverged_instances():
    probs = _problems(seed0=20)
    parts = ["full", "uniform:m=1", "bernoulli:p=0.5", "full"]
    lrs = [0.05, 0.05, 0.05, 5.0]  # instance 3: lr = 5 > 2/L, it diverges
    pop = run_many(probs, "fedavg", rounds=40, seeds=[1, 2, 3, 4], participation=parts,
                   vary={"lr": lrs})
    for b in range(B):
        ref = toys.run(probs[b], "fedavg", rounds=40, seed=b + 1, participation=parts[b],
                       lr=lrs[b])
        _same(pop[b], ref, record="round")
    assert pop[3].diverged_at is not None and pop[0].diverged_at is None


def test_record_none_keeps_the_final_models():
    probs = _problems(seed0=30)
    pop = run_many(probs, "fedsoftmax", rounds=R, seeds=0, record="none", lr=0.1,
                   temperature=1.0)
    for b in range(B):
        ref = toys.run(probs[b], "fedsoftmax", rounds=R, seed=0, record="none", lr=0.1,
                       temperature=1.0)
        np.testing.assert_array_equal(pop[b].final_model, ref.final_model)
        np.testing.assert_array_equal(pop[b].alpha, ref.alpha)


@pytest.mark.parametrize("role", sorted(NOT_BATCHED))
def test_pieces_without_a_population_axis_are_refused_by_name(role):
    import dataclasses

    piece = NOT_BATCHED[role]
    algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="mine", **{role: piece})
    hyper = {} if role == "client" else {"lr": 0.1}  # the user's client takes no lr
    assert toys.run(_problems()[0], algo, rounds=2, seed=0, **hyper).rounds == 2
    with pytest.raises(DomainError, match=rf"algorithm\.{role}.*{type(piece).__name__}.*"
                                          r"'mine' runs with toys\.run"):
        run_many(_problems(), algo, rounds=2, seeds=0, **hyper)


@pytest.mark.parametrize("kw, match", [
    ({"seeds": [0, 1]}, "seeds"), ({"seeds": -1}, "seeds"), ({"rounds": 0}, "rounds"),
    ({"vary": {"prox": [1, 2, 3, 4]}}, "vary"), ({"vary": {"lr": [0.1]}}, "vary"),
    ({"vary": {"lr": [0.1, 0.1, -1.0, 0.1]}}, "lr"), ({"x0": np.zeros(7)}, "x0"),
    ({"record": "sync"}, "record"), ({"record": "steps"}, "record"),
])
def test_bad_input_names_the_parameter(kw, match):
    args = {"rounds": 2, "seeds": 0, "lr": 0.1, **kw}
    with pytest.raises((DomainError, UnknownNameError), match=match):
        run_many(_problems(), "fedavg", **args)


def test_problems_of_another_family_or_shape_are_refused():
    with pytest.raises(DomainError, match="problems"):
        run_many([toys.quadratic(3, 2, seed=0), toys.quadratic(4, 2, seed=0)], "fedavg",
                 rounds=1, seeds=0, lr=0.1)
    rng = np.random.default_rng(0)  # a family without a population form (logistic has one)
    n = [20, 3, 2]
    bucketed = toys.logistic([rng.normal(size=(k, 2)) for k in n],
                             [(rng.random(k) < 0.5).astype(float) for k in n], l2=0.1,
                             max_padding=2.0)
    assert type(bucketed).__name__ == "Bucketed"
    with pytest.raises(DomainError, match="problems"):
        run_many([bucketed], "fedavg", rounds=1, seeds=0, lr=0.1)


def test_torch_cpu_instances_equal_their_own_torch_runs():
    pytest.importorskip("torch")
    probs = _problems(seed0=40)
    hyper = {"lr": 0.05, "local_steps": 2, "temperature": 0.5}
    pop = run_many(probs, "fedsoftmax", rounds=R, seeds=[0, 1, 2, 3], backend="torch",
                   device="cpu", participation="uniform:m=3", **hyper)
    for b in range(B):
        ref = toys.run(probs[b], "fedsoftmax", rounds=R, seed=b, backend="torch",
                       device="cpu", participation="uniform:m=3", **hyper)
        _same(pop[b], ref, record="round")


@pytest.mark.gpu
def test_cuda_instances_agree_with_their_own_cuda_runs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available on this machine")
    probs = _problems(seed0=50)
    pop = run_many(probs, "fedavg", rounds=R, seeds=0, backend="torch", device="cuda",
                   lr=0.05, local_steps=2)
    for b in range(B):
        ref = toys.run(probs[b], "fedavg", rounds=R, seed=0, backend="torch", device="cuda",
                       lr=0.05, local_steps=2)
        np.testing.assert_allclose(pop[b].gap, ref.gap, rtol=1e-12, atol=1e-14)


def test_population_arrays_and_the_benchmark_at_tiny_size(capsys):
    probs = _problems(seed0=60)
    pop = run_many(probs, "fedavg", rounds=3, seeds=0, lr=0.1)
    assert len(pop) == B and pop.gap.shape == (B, 4) and pop.alpha.shape == (B, 3, N)
    np.testing.assert_array_equal(pop.gap[2], pop[2].gap)
    assert pop.diverged_at.tolist() == [-1] * B
    from benchmarks import population as bench

    assert bench.main(["--instances", "12", "--repeats", "1", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "run_many:" in out and "final models equal to plain numpy's: True" in out
    assert "run_many loss:" in out and "losses within 1e-12: True" in out


@pytest.mark.parametrize("participation", ["full", "uniform:m=3"])
def test_instances_that_diverge_at_different_rounds_end_as_their_own_runs(participation):
    probs = _problems(seed0=70)
    lrs = [0.52, 0.7, 1.5, 30.0]  # 2/L = 0.5: each diverges, by the gap or the norm rule
    pop = run_many(probs, "fedavg", rounds=60, seeds=[0, 1, 2, 3], vary={"lr": lrs},
                   participation=participation, local_steps=2)
    ends = []
    for b in range(B):
        ref = toys.run(probs[b], "fedavg", rounds=60, seed=b, lr=lrs[b], local_steps=2,
                       participation=participation)
        _same(pop[b], ref, record="round")
        ends.append(ref.diverged_at)
    assert pop.diverged_at.tolist() == [-1 if e is None else e for e in ends]
    assert len({e for e in ends if e is not None}) >= 2  # the rules end them at other rounds


def test_fixed_patterns_as_one_array_equal_per_instance_matrices():
    probs = _problems(seed0=80)
    masks = np.random.default_rng(0).random((B, R, N)) < 0.6
    pop = run_many(probs, "fedsoftmax", rounds=R, seeds=0, participation=masks, lr=0.1,
                   temperature=1.0, local_steps=2)
    for b in range(B):
        ref = toys.run(probs[b], "fedsoftmax", rounds=R, seed=0, participation=masks[b],
                       lr=0.1, temperature=1.0, local_steps=2)
        _same(pop[b], ref, record="round")
    with pytest.raises(DomainError, match="participation"):
        run_many(probs, "fedavg", rounds=R, seeds=0, participation=masks[:, :2], lr=0.1)


@pytest.mark.parametrize("name", ["fedprox", "beta", "fedavg"])
def test_record_step_gives_the_per_step_arrays_of_each_run(name):
    probs = _problems(seed0=90)
    hyper = {"lr": 0.05, "local_steps": 3, **BATCHED.get(name, {"beta": 0.5})}
    pop = run_many(probs, name, rounds=R, seeds=[0, 1, 2, 3], participation="uniform:m=3",
                   record="step", **hyper)
    for b in range(B):
        ref = toys.run(probs[b], name, rounds=R, seed=b, participation="uniform:m=3",
                       record="step", **hyper)
        _same(pop[b], ref, record="round")
        for k in ("shadow_gap", "dist2", "drift_max", "disc", "g2_max", "lr", "grad_norm2"):
            np.testing.assert_array_equal(pop[b].steps[k], ref.steps[k], err_msg=k)
        np.testing.assert_array_equal(pop.grad_norm2_virtual[b], ref.grad_norm2_virtual)
