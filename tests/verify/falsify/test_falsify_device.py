"""verify.falsify(device=...): the search's populations on torch (CPU here; CUDA tests are
marked ``gpu`` and skip cleanly without CUDA), and the quantities falsify's population run
measures (only those the judge reads).

Tolerances. The torch oracle (verify/falsify/_population_torch.py) computes the families'
losses and gradients with torch's einsum and elementwise sums, and the engine's weighted sums
on torch are elementwise products summed (toys._array.wsum), where numpy uses matmul / its
einsum: each operation rounds in another order, so the bits differ from numpy's by a few ulps
per operation. The oracle is compared with the numpy families at 1e-13 (one evaluation); a
whole run at 1e-10 relative to max(1, |value|) (T tau = 12 steps of steps below 2 / L: the
per-step differences do not grow; the figure toys' torch backend documents for float64 runs).
The verdict, the worst instance and its replayed ratio (toys.run, numpy, the same instance)
are compared exactly; the search's per-family ratios at 1e-10.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import boundlab
import toys
import verify
from boundlab import Bound, make_params, sym
from boundlab.errors import DomainError
from verify.falsify.families import Spec, get_family
from verify.falsify.judge import judge
from verify.falsify.plan import make_plan
from verify.falsify.population import FamilyPopulation, needed, quantities, run

torch = pytest.importorskip("torch")
from toys.engine.backends.torch import TorchOps  # noqa: E402

RUN, ORACLE = 1e-10, 1e-13
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available here")
FAMILIES = [("quadratic", None), ("huber", None), ("softplus", None), ("quadratic", 0.4),
            ("huber", 0.4)]


def _stack(name, zeta, P=5, N=4, mu=0.2, dim=5):
    """A population large enough (N = 4, d = 5) that torch's sums round otherwise than
    numpy's (at N = 3, d = 2 they often coincide bit for bit)."""
    spec = Spec(L=2.0, mu=0.0 if zeta is not None else mu, D=1.0, n_clients=N, dim=dim,
                zeta=zeta)
    fam = get_family(name)
    Z = np.random.default_rng(3).uniform(-1, 1, (P, fam.n_vars(spec)))
    return fam.stack(Z, spec)


def _close(a, b, tol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(a)
    assert np.all(np.abs(a[ok] - b[ok]) <= tol * np.maximum(1.0, np.abs(b[ok])))


@pytest.mark.parametrize("name, zeta", FAMILIES)
def test_torch_oracle_equals_the_family(name, zeta):
    st = _stack(name, zeta)
    orc = FamilyPopulation(st).torch_oracle(TorchOps("cpu"))
    W = np.random.default_rng(1).normal(size=(5, 4, 5))
    x = W[:, 0]
    for fn in ("losses", "grads"):
        got = getattr(orc, fn)(torch.as_tensor(W)).numpy()
        _close(got, getattr(st, fn)(W), ORACLE)
        got_x = getattr(orc, fn)(torch.as_tensor(x)).numpy()  # server points: every client
        _close(got_x, getattr(st, fn)(np.repeat(x[:, None], 4, axis=1)), ORACLE)


class _OtherStack:
    """A user's stacked population without a torch form (1/2 ||x - c_i||^2)."""

    def __init__(self, c):
        self.c, self.p = c, np.full(c.shape[1], 1.0 / c.shape[1])
        self.x_star = c.mean(axis=1)
        self.F_star = self.losses(self.x_star[:, None, :]) @ self.p
        self.x0 = self.x_star + 1.0

    def losses(self, W):
        return 0.5 * np.sum((W - self.c) ** 2, axis=-1)

    def grads(self, W):
        return W - self.c


def test_a_users_population_runs_through_the_host():
    st = _OtherStack(np.random.default_rng(0).normal(size=(4, 3, 2)))
    pop = FamilyPopulation(st)
    kw = dict(rounds=3, seeds=0, local_steps=2, vary={"lr": [0.1, 0.2, 0.3, 0.4]})
    a = quantities(toys.run_many(pop, "fedavg", **kw), pop.p)
    b = quantities(toys.run_many(pop, "fedavg", backend="torch", device="cpu", **kw), pop.p)
    for k in a:
        _close(b[k], a[k], RUN)


@pytest.mark.parametrize("name, zeta", FAMILIES)
def test_torch_population_run_is_close_to_numpys(name, zeta):
    st = _stack(name, zeta)
    pop = FamilyPopulation(st)
    masks = np.random.default_rng(2).random((5, 4, 4)) < 0.7
    kw = dict(rounds=4, seeds=0, local_steps=3, vary={"lr": [0.1, 0.3, 0.5, 0.7, 0.95]},
              participation=masks, record="step")
    a = quantities(toys.run_many(pop, "fedavg", **kw), pop.p)
    b = quantities(toys.run_many(pop, "fedavg", backend="torch", device="cpu", **kw), pop.p)
    assert all(v.dtype == np.float64 for v in b.values())
    assert any(not np.array_equal(a[k], b[k], equal_nan=True) for k in a)  # not the same bits
    for k in a:
        _close(b[k], a[k], RUN)


def _bound(bid, expr, lhs, names=("L", "D", "T")):
    return Bound(id=bid, source="test", expr=expr, params=make_params(*names), kind="upper",
                 lhs=lhs)


def test_falsify_on_torch_cpu_gives_numpys_verdict():
    L, D, T = sym("L"), sym("D"), sym("T")
    b = _bound("dev.gd_last", L * D**2 / (8 * T), "final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = dict(budget=60, eta=1.0, exact=False, families=["quadratic", "huber"])
            ref = verify.falsify(b.id, **kw)
            got = verify.falsify(b.id, device="cpu", **kw)
    finally:
        boundlab.unregister(b.id)
    assert ref.verdict == got.verdict == "VIOLATED"
    assert got.instance.data["z"] == ref.instance.data["z"]
    assert got.worst_ratio == ref.worst_ratio  # the same instance replayed on toys.run
    for f, v in ref.per_family.items():
        _close(got.per_family[f], v, RUN)


def test_dask_tasks_carry_the_device(monkeypatch):
    """The device travels inside each (pickled) task of the Dask executor: a stand-in for
    the cluster (tests/verify/falsify/test_falsify_executor.py runs a real one) pickles every
    task as Dask does (cloudpickle) and runs it; the result is the local one bit for bit."""
    from verify.sweep import executor as ex

    pickle = pytest.importorskip("cloudpickle")  # what Dask ships tasks with

    seen = []

    def fake_dask(tasks, finished, *, run, scheduler=None):
        for t in tasks:
            t = pickle.loads(pickle.dumps(t))
            seen.append(t[0][-1])
            finished(t[1], run(t))

    monkeypatch.setattr(ex, "run_dask", fake_dask)
    L, D, T = sym("L"), sym("D"), sym("T")
    b = _bound("dev.gd_dask", L * D**2 / (8 * T), "final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = dict(budget=40, eta=1.0, exact=False, families=["huber"], device="cpu")
            local = verify.falsify(b.id, **kw)
            dask = verify.falsify(b.id, executor="dask", **kw)
    finally:
        boundlab.unregister(b.id)
    assert seen and set(seen) == {"cpu"}
    assert (dask.verdict, dask.worst_ratio, dask.per_family) == (
        local.verdict, local.worst_ratio, local.per_family)
    assert dask.instance.to_dict() == local.instance.to_dict()


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "", 0, "cpu:0"])
def test_a_bad_device_is_refused_by_name(device):
    with pytest.raises(DomainError, match="device"):
        verify.falsify("contraction.lemma_a3", budget=10, device=device)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_cuda_is_refused_by_name():
    with pytest.raises(DomainError, match="device.*CUDA"):
        verify.falsify("contraction.lemma_a3", budget=10, device="cuda")


def test_without_torch_the_device_is_refused_by_name():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import verify\n"
            "from boundlab.errors import DomainError\n"
            "try:\n    verify.falsify('contraction.lemma_a3', budget=10, device='cpu')\n"
            "except DomainError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "device" in out.stdout and "torch is not installed" in out.stdout, out.stderr


def test_cli_device(capsys):
    from verify.cli import main

    assert main(["falsify", "contraction.lemma_a3", "--budget", "20", "--json",
                 "--device", "cpu"]) == 0
    assert '"verdict": "holds"' in capsys.readouterr().out
    assert main(["falsify", "contraction.lemma_a3", "--budget", "20", "--device", "tpu"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "device" in err


# --------------------------------------------------------------------- what the search measures
def _plan(bid, expr, lhs, names, **setting):
    return make_plan(_bound(bid, expr, lhs, names), setting, algorithm="fedavg",
                     function_class="smooth-convex")


def test_needed_is_what_the_left_hand_side_and_the_judge_read():
    L, D, T, G = sym("L"), sym("D"), sym("T"), sym("G")
    p = _plan("n.a", L * D**2 / T, "final_gap", ("L", "D", "T"), L=1.0, D=1.0, T=4)
    assert needed(p) == ("loss", "gap", "dist2")
    p = _plan("n.b", G * D / T, "avg_shadow_gap", ("G", "D", "T"), L=1.0, D=1.0, T=4)
    assert needed(p) == ("loss", "gap", "dist2", "shadow_gap", "g2_max")
    p = _plan("n.c", L * D**2 / T, "round_avg_gap", ("L", "D", "T"), L=1.0, D=1.0, T=4)
    assert needed(p) == ("loss", "gap", "dist2", "shadow_gap", "drift_sum")


@pytest.mark.parametrize("lhs, names", [("avg_shadow_gap", ("G", "D", "T")),
                                        ("max_client_drift", ("L", "D", "T")),
                                        ("grad_norm_sq", ("L", "D", "T"))])
def test_the_restricted_run_judges_as_the_full_run(lhs, names):
    """The search measures less; every ratio it judges is the same, bit for bit."""
    a, b, c = (sym(n) for n in names)
    plan = _plan(f"r.{lhs}", a * b**2 / c, lhs, names, L=2.0, D=1.0, T=4, tau=3)
    st = _stack("huber", None)
    eta = np.array([0.1, 0.3, 0.5, 0.7, 0.95])
    q = run(plan, st, eta, 4, 3)
    pop = FamilyPopulation(st)
    name, hyper = plan.toys_call()
    full = quantities(toys.run_many(pop, name, rounds=4, seeds=0, local_steps=3,
                                    vary={"lr": plan.steps(eta, 4, 3)}, **hyper), pop.p)
    from verify.falsify.search import _per_instance

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = judge(plan.bound, q, plan.scalars(4, 3), _per_instance(plan, q, eta))
        ref = judge(plan.bound, full, plan.scalars(4, 3), _per_instance(plan, full, eta))
    for x, y in zip(got, ref):
        assert np.array_equal(x, y, equal_nan=True)
    assert np.isfinite(ref[0]).all()  # the case judges something


# --------------------------------------------------------------------- CUDA (marked, skipped)
@pytest.mark.gpu
@CUDA
@pytest.mark.parametrize("name, zeta", FAMILIES)
def test_cuda_population_run_is_close_to_numpys(name, zeta):
    st = _stack(name, zeta)
    pop = FamilyPopulation(st)
    kw = dict(rounds=4, seeds=0, local_steps=3, vary={"lr": [0.1, 0.3, 0.5, 0.7, 0.95]})
    a = quantities(toys.run_many(pop, "fedavg", **kw), pop.p)
    b = quantities(toys.run_many(pop, "fedavg", backend="torch", device="cuda", **kw), pop.p)
    for k in a:
        _close(b[k], a[k], RUN)


@pytest.mark.gpu
@CUDA
def test_falsify_on_cuda_gives_numpys_verdict():
    L, D, T = sym("L"), sym("D"), sym("T")
    b = _bound("dev.gd_cuda", L * D**2 / (8 * T), "final_gap")
    boundlab.register(b, algorithm="gd", function_class="smooth-convex")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kw = dict(budget=60, eta=1.0, exact=False, families=["quadratic", "huber"])
            ref = verify.falsify(b.id, **kw)
            got = verify.falsify(b.id, device="cuda", **kw)
    finally:
        boundlab.unregister(b.id)
    assert ref.verdict == got.verdict and got.instance.data["z"] == ref.instance.data["z"]
    assert got.worst_ratio == ref.worst_ratio
