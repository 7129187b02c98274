"""``avg_grad_norm2`` of BC's non-convex theorems (seed 003) is measured over the virtual
averages wbar_{t,k}, k = 0..E-1 (``avg_grad_norm2_virtual``, from a record="step" run), and
FedAU's over the server models: expected values from a per-client loop written here from the
problem's raw arrays, and from the server models of a plain run."""

import numpy as np
import pytest

import boundlab
import toys
from boundlab.errors import DomainError, UnknownNameError
from verify.check import check, check_log

PRM = {"sigma": 0.0}


def _problem():
    return toys.quadratic(n_clients=3, dim=2, L=2.0, mu=0.5, heterogeneity=1.0, seed=2,
                          weights=[0.2, 0.3, 0.5])


def _virtual_reference(prob, rounds, tau, lr, prox):
    """(1/(T E)) sum_t sum_{k<E} ||grad F(wbar_{t,k})||^2 of FedProx, full participation,
    one client and one step at a time (grad F_i(x) = A_i (x - c_i))."""
    a = prob.arrays()
    A, c, p = a["A"], a["c"], np.asarray(prob.p, dtype=float)
    N = len(p)

    def sq_grad_F(w):
        g = sum(p[i] * A[i] @ (w - c[i]) for i in range(N))
        return float(g @ g)

    x = np.zeros(prob.dim) if getattr(prob, "x0", None) is None else np.array(prob.x0, float)
    total = 0.0
    for _ in range(rounds):
        W = [x.copy() for _ in range(N)]
        total += sq_grad_F(x)  # k = 0: wbar_{t,0} = x_t
        for k in range(1, tau + 1):
            W = [W[i] - lr * (A[i] @ (W[i] - c[i]) + prox * (W[i] - x)) for i in range(N)]
            wbar = sum(p[i] * W[i] for i in range(N))
            if k < tau:
                total += sq_grad_F(wbar)
        x = wbar
    return total / (rounds * tau)


@pytest.mark.parametrize("bid", ["contraction.fedprox_nc", "contraction.fedprox_nc.printed"])
def test_bc_measures_the_virtual_averages(bid):
    prob, kw = _problem(), dict(lr=0.02, local_steps=4, prox=0.5)
    df = check(bid, prob, "fedprox", rounds=12, seeds=1, params=PRM, **kw)
    ref = _virtual_reference(prob, 12, 4, 0.02, 0.5)
    assert df["measured"].iloc[0] == pytest.approx(ref, rel=1e-12, abs=0)
    server = toys.run(prob, "fedprox", rounds=12, seed=0, **kw).grad_norm2[:-1].mean()
    assert abs(ref - server) > 1e-6 * ref  # a different number than the server models'


def test_one_local_step_gives_the_server_models_value_exactly():
    prob, kw = _problem(), dict(lr=0.05, local_steps=1, beta=0.5)
    df = check("contraction.beta_nc", prob, "beta", rounds=10, seeds=[0, 1], params=PRM, **kw)
    for s in (0, 1):
        tr = toys.run(prob, "beta", rounds=10, seed=s, record="round", **kw)
        assert df.loc[df["seed"] == s, "measured"].iloc[0] == float(np.mean(tr.grad_norm2[:-1]))


def test_fedau_still_measures_the_server_models():
    run = boundlab.registry.meta("weight_error.theorem2_explicit")["run"]
    spec = dict(run["problem"])
    prob = toys.make(spec.pop("name"), **spec)
    df = check("weight_error.theorem2_explicit", prob, run["algorithm"], rounds=8, seeds=1,
               params=run["params"], **run["hyper"])
    tr = toys.run(prob, run["algorithm"], rounds=8, seed=0, **run["hyper"])
    assert run["hyper"]["local_steps"] > 1
    assert df["measured"].iloc[0] == float(np.mean(tr.grad_norm2[:-1]))


def test_a_coarser_record_is_refused():
    with pytest.raises(DomainError, match="record"):
        check("contraction.beta_nc", _problem(), "beta", rounds=3, params=PRM, lr=0.05,
              local_steps=2, beta=0.5, record="round")


def test_check_log_reads_the_step_log_and_names_the_missing_column(tmp_path):
    prob, kw = _problem(), dict(rounds=6, seed=0, lr=0.02, local_steps=3, prox=0.5)
    tr = toys.run(prob, "fedprox", record="step", **kw)
    prm = {**PRM, "L": 2.0, "alpha": 0.5, "gamma": 0.02, "E": 3, "Delta": float(tr.gap[0]),
           "S": float(np.sum(prob.p ** 2)), "G": 10.0}
    df = check_log("contraction.fedprox_nc", tr.write_log(tmp_path / "s.csv", p=prob.p), prm)
    assert df["measured"].iloc[0] == pytest.approx(_virtual_reference(prob, 6, 3, 0.02, 0.5),
                                                   rel=1e-12, abs=0)
    plain = toys.run(prob, "fedprox", record="round", **kw)
    with pytest.raises(UnknownNameError, match="grad_norm2_virtual"):
        check_log("contraction.fedprox_nc", plain.write_log(tmp_path / "r.csv", p=prob.p), prm)
