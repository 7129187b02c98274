"""The heterogeneity items (group ``alg``: verify/reproduce/hetero*.py) against references
computed here: the exact fixed points of FedAvg and FedNova on quadratics (closed form from the
iteration maps), SCAFFOLD's (x*), one round of FedMax(k) by hand, and the items' claims at a
small size."""

import numpy as np
import pytest

from verify.cli import main
from verify.reproduce import hetero_fednova as nova
from verify.reproduce import hetero_poc as poc
from verify.reproduce import hetero_scaffold as sc
from verify.reproduce.registry import PAPERS, Config, select

SMALL = Config(quick=True, seeds=5)


def _contraction(prob, lr, tau):
    """M_i = (I - lr A_i)^tau_i: client i's local GD map is x -> c_i + M_i (x - c_i)."""
    eye = np.eye(prob.dim)
    return np.stack([np.linalg.matrix_power(eye - lr * A, int(t)) for A, t in zip(prob.A, tau)])


def _fixed_point(prob, lr, tau, weights):
    """The x with sum_i weights_i (I - M_i)(x - c_i) = 0 (the server step's fixed point)."""
    B = np.einsum("i,ijk->ijk", weights, np.eye(prob.dim) - _contraction(prob, lr, tau))
    return np.linalg.solve(B.sum(0), np.einsum("ijk,ik->j", B, prob.c))


def test_the_items_are_registered_listed_and_selectable(capsys):
    assert "alg" in PAPERS
    assert sorted(e.id for e in select("alg")) == ["alg:fednova", "alg:poc", "alg:scaffold"]
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for i in ("alg:scaffold", "alg:fednova", "alg:poc"):
        assert i in out


def test_fednova_and_fedavg_end_at_their_closed_form_fixed_points():
    probs, tau, pops = nova.runs(SMALL, seeds=[0, 3])
    for (algo, lr), pop in pops.items():
        for b, prob in enumerate(probs):
            # FedAvg: x + sum p_i Delta_i; FedNova: x + tau_eff sum p_i Delta_i / tau_i
            w = prob.p if algo == "fedavg-hetero" else prob.p / tau
            x_fp = _fixed_point(prob, lr, tau, w)
            assert np.linalg.norm(pop.final_model[b] - x_fp) < 1e-8 * (1 + np.linalg.norm(x_fp))


def test_the_surrogate_optimum_zeroes_the_tau_weighted_gradient():
    probs, tau, _ = nova.runs(Config(tiny=True), seeds=[1])
    xs = nova.surrogate_optimum(probs[0], tau)
    g = probs[0].grads(np.broadcast_to(xs, (probs[0].n_clients, probs[0].dim)))
    assert np.linalg.norm((probs[0].p * tau) @ g) < 1e-10
    assert np.linalg.norm(xs - probs[0].x_star) > 1e-2  # heterogeneous work moves it


def test_fednova_claims_at_a_small_size_match_the_closed_form():
    res = nova.fednova(SMALL)
    assert [c.outcome for c in res.claims] == ["matches"] * 4
    import toys

    sz = nova.sizes(SMALL)
    tau = nova.taus(sz["n_clients"])
    probs = [toys.quadratic(n_clients=sz["n_clients"], dim=sz["dim"], L=10.0, mu=1.0,
                            heterogeneity=1.0, seed=s) for s in range(5)]
    for row in res.rows:  # the rows' distances are the fixed points' (to 1e-6 decade)
        prob = probs[row["seed"]]
        w = prob.p if row["algorithm"] == "fedavg-hetero" else prob.p / tau
        x_fp = _fixed_point(prob, row["lr"], tau, w)
        want = np.log10(np.linalg.norm(x_fp - prob.x_star))
        assert row["log10_dist_true_optimum"] == pytest.approx(want, abs=1e-6)
        want = np.log10(np.linalg.norm(x_fp - nova.surrogate_optimum(prob, tau)))
        assert row["log10_dist_surrogate_optimum"] == pytest.approx(want, abs=1e-6)


def test_scaffold_item_fedavg_floor_is_its_fixed_point_and_scaffold_reaches_x_star():
    import toys

    res = sc.scaffold(SMALL)
    assert [c.outcome for c in res.claims] == ["matches"] * 4, [c.how for c in res.claims]
    sz = sc.sizes(SMALL)
    for h in (sc.H_LO, sc.H_HI):
        rows = [r for r in res.rows if r["setting"] == f"quadratic h={h:g}"]
        for r in rows:
            prob = toys.quadratic(n_clients=sz["n_clients"], dim=sz["dim"], L=10.0, mu=1.0,
                                  heterogeneity=h, seed=r["seed"])
            if r["algorithm"] == "fedavg":  # FedAvg's drift floor: its map's fixed point
                x_fp = _fixed_point(prob, sc.LR, np.full(prob.n_clients, sc.K), prob.p)
                want = 2 * np.log10(np.linalg.norm(x_fp - prob.x_star))
                assert r["final_log10_dist2"] == pytest.approx(want, abs=1e-6)
            else:  # SCAFFOLD's fixed point is x*: 1e-10 of the start within the horizon
                assert r["final_log10_dist2"] < -12 and r["rounds_to_1e-10"] <= sz["rounds"]
    R = {h: np.array([r["rounds_to_1e-10"] for r in res.rows if r["algorithm"] == "scaffold"
                      and r["setting"] == f"quadratic h={h:g}"]) for h in (sc.H_LO, sc.H_HI)}
    assert np.max(np.abs(R[sc.H_HI] - R[sc.H_LO])) <= 2  # the rate does not see h


def _fedmax_round(prob, x0, lr, K, k):
    """One FedMax(k) round by hand: K GD steps on each of the k clients of largest F_i(x0),
    averaged with weights 1/k."""
    loss = np.array([0.5 * (x0 - c) @ A @ (x0 - c) for A, c in zip(prob.A, prob.c)])
    keep = np.argsort(-loss, kind="stable")[:k]
    ends = []
    for i in keep:  # the reference loops; the engine does not
        x = x0.copy()
        for _ in range(K):
            x = x - lr * prob.A[i] @ (x - prob.c[i])
        ends.append(x)
    return np.mean(ends, axis=0)


def test_poc_fedmax_arm_first_round_matches_a_hand_computed_round():
    import toys

    cfg = Config(tiny=True)
    sz = poc.sizes(cfg)
    prob = toys.quadratic(n_clients=sz["n_clients"], dim=sz["dim"], L=10.0, mu=1.0,
                          heterogeneity=1.0, seed=2)
    x0 = np.full(sz["dim"], poc.X0)
    tr = toys.run(prob, "fedmax-k", rounds=1, seed=2, lr=poc.LR0, local_steps=poc.K,
                  k=sz["m"], loss_offset="zero", x0=x0)
    x1 = _fedmax_round(prob, x0, poc.LR0, poc.K, sz["m"])
    assert np.allclose(tr.final_model, x1, rtol=0, atol=1e-12)
    rel, same = poc.runs(cfg, [2])
    F = lambda x: float(prob.p @ prob.losses(np.broadcast_to(x, (prob.n_clients, prob.dim))))
    want = (F(x1) - prob.F_star) / (F(x0) - prob.F_star)
    assert same and rel["FedMax(k) (d = N)"][0, 1] == pytest.approx(want, rel=1e-10)


def test_poc_claims_at_a_small_size():
    res = poc.poc(Config(quick=True, seeds=6))
    assert [c.outcome for c in res.claims] == ["matches"] * 4, [c.how for c in res.claims]
    assert any("equals pow-d at d = N bit for bit" in n for n in res.notes)
    early = {}
    for r in res.rows:
        early.setdefault(r["arm"], []).append(r["log10_rel_gap_round5"])
    med = [np.median(early[a]) for a in poc.arms(30, 3)]  # rand, 2m, 5m, N
    assert med[0] > med[1] and med[0] > med[3]  # the claim's direction, read off the rows
