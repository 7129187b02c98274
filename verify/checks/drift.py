"""Checks of seed 004 (Dhasade, Kremer, Renard): the zeta drift bound of FedAvg.

Theorem 2.1 (``drift.fedavg_convex``), Lemma 2.2 (``drift.round_progress``), Lemma 2.3
(``drift.client_drift``) and the plateau 18 tau^2 eta^2 L zeta^2 (``drift.plateau``) on the
seed-004 toy (spec §6.3: M = 20, eta = 0.2, b0 = 2, T = 50, tau in {10, 50, 300, 1000}) under
both protocols: the **theory protocol** (all M clients, weights 1/M: the theorem's setting) and
the **paper protocol** (one regular client + the outlier per round, weights 1/2: outside the
theorem, DKR-15, so its comparison is ``not-applicable``). Also a minibatch (sigma > 0) logistic
toy over seeds, and the paper's qualitative claims (plateau grows with tau; FedProx beats FedAvg
at tau = 3000).

Constants: L = max_i sup L_i (every client, DKR-16), zeta = max_i sup_x |F_i' - F'| (exact on the
one-parameter toy), D = |b0 - b*| (3.03, not the paper's 2: DKR-13).

The runs over tau and over seeds are sweeps (:func:`verify.sweep`, read back run by run with
:mod:`verify.checks._runs`), so they can run on Dask like any sweep.

Example
-------
>>> from verify.suite import Context
>>> rs = drift_client_drift(Context(quick=True))
>>> rs[0].bound_id, rs[0].case, rs[0].verdict
('drift.client_drift', 'tau=10', 'holds')
"""

from __future__ import annotations

import functools

import numpy as np

import boundlab
import toys

from ._common import (
    attach_tightness,
    claim,
    constants_record,
    judge,
    server_models,
    simulate,
    worst_rows,
)
from ._registry import Context, register
from ._runs import DIVERGED, final_model, runs, sweep_runs, trace_values

ETA = 0.2
TAUS_FULL, TAUS_QUICK = (10, 50, 300, 1000), (10, 50)
PAPER_VIOLATION = ("full participation with weights 1/M (assumption 4): the paper protocol "
                   "samples 1 regular client + the outlier, weights 1/2 (DKR-15)")


@functools.lru_cache(maxsize=None)
def _toy():
    prob = toys.make("seed004-toy")
    return prob, toys.constants(prob)


def _params(consts, tau, rounds, M):
    c = consts.as_params()
    return dict(D=c["D"], eta=ETA, tau=tau, T=rounds, sigma=0.0, M=M, L=c["L"], zeta=c["zeta"])


def _paper_participation(M: int, rounds: int, seed: int) -> np.ndarray:
    """DKR's protocol: one of the M - 1 regular clients uniformly, plus the outlier M - 1."""
    proc = toys.participation.Anchored(M, fixed=(M - 1,), m=1)
    return toys.participation.sample(proc, rounds, np.random.default_rng(seed))


@functools.lru_cache(maxsize=None)
def _theory_runs(taus: tuple, rounds: int, backend: str = "numpy", device=None) -> dict:
    """tau -> the theory-protocol run (all M clients, weights 1/M, seed 0): a sweep over tau."""
    prob, _ = _toy()
    df = sweep_runs(Context(backend=backend, device=device), prob, "fedavg",
                    grid={"local_steps": list(taus)}, seeds=[0], rounds=rounds, lr=ETA,
                    measures={**DIVERGED, **trace_values("avg_shadow_gap")})
    return {r.point["local_steps"]: r for r in runs(df)}


def _theory_run(tau: int, rounds: int, backend: str = "numpy", device=None):
    """The theory-protocol run for one tau (its rows of the sweep table, read like a trace)."""
    return _theory_runs((tau,), rounds, backend, device)[tau]


def _paper_runs(ctx, taus, rounds: int) -> dict:
    """tau -> the paper-protocol run (1 regular client + the outlier, weights 1/2, seed 1)."""
    prob, _ = _toy()
    df = sweep_runs(ctx, prob, "fedavg", grid={"local_steps": list(taus)}, seeds=[1],
                    rounds=rounds, lr=ETA, record="sync", measures=DIVERGED,
                    participation=_paper_participation(prob.n_clients, rounds, seed=1))
    return {r.point["local_steps"]: r for r in runs(df)}


def _rounds(ctx):
    return ctx.pick(50, 20)


def _taus(ctx):
    return ctx.pick(TAUS_FULL, TAUS_QUICK)


@register("drift", "drift.fedavg_convex")
def drift_theorem_seed004(ctx):
    """Theorem 2.1 on the seed-004 toy, theory protocol, per tau: time-averaged shadow gap."""
    prob, consts = _toy()
    bound = boundlab.get("drift.fedavg_convex")
    T = _rounds(ctx)
    out = []
    theory = _theory_runs(_taus(ctx), T, ctx.backend, ctx.device)
    for tau in _taus(ctx):
        tr = theory[tau]
        params = _params(consts, tau, T, prob.n_clients)
        running = np.cumsum(tr.shadow_gap) / np.arange(1, T + 1)
        t_axis = np.arange(1, T + 1)
        terms = bound.evaluate_terms(**{**params, "T": t_axis})
        series = {"kind": "curve", "x": t_axis, "measured": running,
                  "bound": bound.evaluate(**{**params, "T": t_axis}), "terms": terms,
                  "ylabel": "avg shadow gap over rounds <= T", "xlabel": "rounds T",
                  "title": f"DKR Thm 2.1, seed-004 toy, theory protocol, tau = {tau}"}
        r = judge(bound, [tr.avg_shadow_gap], params, check="drift_theorem_seed004",
                  case=f"tau={tau}", problem="seed004-toy (theory protocol)", seeds=[0],
                  deterministic=True, diverged=tr.diverged, series=series,
                  constants=constants_record(consts, ("L", "L_F", "zeta", "D")))
        attach_tightness(r, ctx, params)
        out.append(r)
    return out


@register("drift", "drift.client_drift")
def drift_client_drift(ctx):
    """Lemma 2.3 on the seed-004 toy: max over rounds, clients and k of ||x_i - xbar||^2."""
    prob, consts = _toy()
    bound = boundlab.get("drift.client_drift")
    T = _rounds(ctx)
    out = []
    theory = _theory_runs(_taus(ctx), T, ctx.backend, ctx.device)
    for tau in _taus(ctx):
        tr = theory[tau]
        params = _params(consts, tau, T, prob.n_clients)
        out.append(judge(bound, [float(np.nanmax(tr.drift_max))], params,
                         check="drift_client_drift", case=f"tau={tau}",
                         problem="seed004-toy (theory protocol)", seeds=[0], deterministic=True,
                         diverged=tr.diverged,
                         constants=constants_record(consts, ("L", "zeta"))))
    return out


@register("drift", "drift.round_progress")
def drift_round_progress(ctx):
    """Lemma 2.2 (corrected, with L) every round of the theory-protocol run; worst round kept."""
    prob, consts = _toy()
    bound = boundlab.get("drift.round_progress")
    T = _rounds(ctx)
    out = []
    theory = _theory_runs(_taus(ctx), T, ctx.backend, ctx.device)
    for tau in _taus(ctx)[:2]:
        tr = theory[tau]
        c = consts.as_params()
        params = dict(dist0=tr.dist2[:-1], dist_tau=tr.dist2[1:], eta=ETA, tau=tau, sigma=0.0,
                      M=prob.n_clients, L=c["L"], drift_sum=tr.drift_sum)
        rhs = bound.evaluate(**params)
        slack = rhs - tr.shadow_gap
        worst = int(np.argmin(slack))
        scalar = {k: (v[worst] if np.ndim(v) else v) for k, v in params.items()}
        r = judge(bound, [tr.shadow_gap[worst]], scalar, check="drift_round_progress",
                  case=f"tau={tau}", problem="seed004-toy (theory protocol)", seeds=[0],
                  deterministic=True, diverged=tr.diverged,
                  note=f"checked at each of {T} rounds; worst round {worst} shown; "
                       f"rounds violated: {int(np.sum(slack < -1e-12 * np.abs(rhs)))}",
                  constants=constants_record(consts, ("L",)))
        out.append(r)
    return out


@register("drift", "drift.plateau")
def drift_plateau(ctx):
    """Plateau 18 tau^2 eta^2 L zeta^2 vs the final shadow gap, both protocols, per tau."""
    prob, consts = _toy()
    bound = boundlab.get("drift.plateau")
    T, M = _rounds(ctx), prob.n_clients
    out, paper_final = [], []
    theory = _theory_runs(_taus(ctx), T, ctx.backend, ctx.device)
    paper = _paper_runs(ctx, _taus(ctx), T)
    for tau in _taus(ctx):
        params = _params(consts, tau, T, M)
        tr = theory[tau]
        r = judge(bound, [tr.shadow_gap[-1]], params, check="drift_plateau",
                  case=f"theory protocol, tau={tau}", problem="seed004-toy (theory protocol)",
                  seeds=[0], deterministic=True, diverged=tr.diverged,
                  note="measured: shadow gap averaged over the last round's local steps",
                  constants=constants_record(consts, ("L", "zeta")))
        attach_tightness(r, ctx, params)
        out.append(r)
        pp = paper[tau]
        paper_final.append(pp.gap[-1])
        out.append(judge(bound, [pp.gap[-1]], params, check="drift_plateau",
                         case=f"paper protocol, tau={tau}",
                         problem="seed004-toy (paper protocol)", seeds=[1],
                         diverged=pp.diverged,
                         extra_violations=[PAPER_VIOLATION],
                         note="measured: training gap F(b_T) - F* of the final model",
                         constants=constants_record(consts, ("L", "zeta"))))
    taus = list(_taus(ctx))
    steps = np.diff(paper_final)
    out.append(claim("drift_plateau", "seed 004, Sec. 3 (Fig. 2)", "seed004-toy (paper protocol)",
                     case="plateau grows with tau", bound_id="drift.plateau",
                     statement="the loss plateau is higher for larger tau (final training gap "
                               "increases with tau, paper protocol)",
                     statistic=float(np.min(steps)), threshold=0.0,
                     outcome=bool(np.all(steps > 0)), seeds=[1],
                     setting={"tau": taus, "final_gaps": [float(g) for g in paper_final]},
                     note="statistic: smallest increase of the final gap between consecutive "
                          "tau (> 0: increasing); one participation path (seed 1); final gaps "
                          + ", ".join(f"tau={t}: {g:.4g}" for t, g in zip(taus, paper_final))))
    return out


@register("drift", "drift.plateau")
def drift_fedprox_vs_fedavg(ctx):
    """DKR Exp. 2: FedProx (prox 0.1) vs FedAvg at tau = 3000, paper protocol (8 rounds)."""
    prob, _ = _toy()
    tau, T = ctx.pick(3000, 500), ctx.pick(8, 4)
    part = _paper_participation(prob.n_clients, T, seed=1)
    gaps = {}
    for name, hyper in (("fedavg", {}), ("fedprox", {"prox": 0.1})):
        tr = simulate(ctx, prob, name, rounds=T, seed=1, lr=ETA, local_steps=tau,
                      participation=part,
                      record="sync", **hyper)
        gaps[name] = tr.gap
    ok = bool(gaps["fedprox"][-1] < gaps["fedavg"][-1])
    series = {"kind": "contraction", "rounds": np.arange(T + 1),
              "curves": {k: np.maximum(v, 1e-300) for k, v in gaps.items()},
              "title": f"DKR Exp. 2: FedProx vs FedAvg, tau = {tau}, paper protocol"}
    return [claim("drift_fedprox_vs_fedavg", "seed 004, Exp. 2", "seed004-toy (paper protocol)",
                  bound_id="drift.plateau", case=f"tau={tau}",
                  statement="FedProx (prox 0.1) reaches a lower final loss than FedAvg at large "
                            "tau (paper protocol)",
                  statistic=float(gaps["fedprox"][-1] - gaps["fedavg"][-1]), threshold=0.0,
                  outcome=ok, setting={"tau": tau, "rounds": T, "prox": 0.1}, series=series,
                  seeds=[1],
                  note="statistic: final gap FedProx - FedAvg (< 0: FedProx lower); FedProx "
                       f"{gaps['fedprox'][-1]:.4g}, FedAvg {gaps['fedavg'][-1]:.4g}; one "
                       "participation path (seed 1), shared by both methods")]


@register("drift", "drift.fedavg_convex", "drift.client_drift")
def drift_theorem_minibatch(ctx):
    """Theorem 2.1 and Lemma 2.3 with gradient noise (sigma > 0), over seeds: a logistic toy with
    minibatches and a quadratic toy with additive Gaussian gradient noise (uniform weights 1/M,
    as the theorem assumes)."""
    cases = (("logistic-synthetic", toys.make("logistic-synthetic", size_sigma=0.0), 4),
             ("quadratic (noisy)", toys.quadratic(n_clients=10, dim=3, L=2.0, mu=0.5,
                                                  heterogeneity=1.0, seed=4, noise_std=0.3), 1))
    tau, T = 5, ctx.pick(40, 15)
    seeds = list(range(ctx.n_seeds(12, 4)))
    out = []
    for label, prob, b in cases:
        eta = 0.5 / (4 * toys.constants(prob).L.value)
        measures = {**DIVERGED, **trace_values("avg_shadow_gap"), **final_model(prob.dim)}
        trs = runs(sweep_runs(ctx, prob, "fedavg", seeds=seeds, rounds=T, lr=eta,
                              local_steps=tau, batch_size=b, measures=measures))
        # sigma^2, G^2 (and zeta on quadratics) at the server models of the full-batch run and
        # at every run's final model: an a-posteriori estimate along the trajectory
        traj = server_models(prob, T, trs, lr=eta, local_steps=tau)
        consts = toys.constants(prob, trajectory=traj, batch_size=b)
        c = consts.as_params()
        params = {"D": c["D"], "eta": eta, "tau": tau, "T": T, "sigma": c["sigma"],
                  "M": prob.n_clients, "L": c["L"], "zeta": c["zeta"]}
        diverged = "; ".join(filter(None, (tr.diverged for tr in trs)))
        common = {"problem": label, "seeds": seeds, "setting": {"batch_size": b},
                  "note": f"stochastic: {len(seeds)} seeds, judged on the 95 % upper "
                          "confidence limit of the mean",
                  "diverged": diverged,
                  "constants": constants_record(consts, ("L", "zeta", "sigma2", "D"))}
        out.append(judge(boundlab.get("drift.fedavg_convex"), [tr.avg_shadow_gap for tr in trs],
                         params, check="drift_theorem_minibatch", case=f"Thm 2.1, {label}",
                         **common))
        out.append(judge(boundlab.get("drift.client_drift"),
                         [float(np.nanmax(tr.drift_max)) for tr in trs], params,
                         check="drift_theorem_minibatch", case=f"Lemma 2.3, {label}", **common))
    return out


@register("drift", "drift.fedavg_convex", "drift.client_drift", "drift.plateau")
def drift_worst_instance(ctx):
    """Worst-instance search for Theorem 2.1, Lemma 2.3 and the plateau with the seed-004 toy's
    L, zeta and D held fixed (quadratic clients with identical Hessians: zeta bounded for all
    x), tau = 10, the step size searched within eta <= 1/(4L)."""
    _, consts = _toy()
    c = consts.as_params()
    fixed = {"L": c["L"], "zeta": c["zeta"], "D": c["D"], "tau": 10}
    return worst_rows(ctx, "drift_worst_instance", [
        ("drift.fedavg_convex", {**fixed, "rounds": ctx.pick(20, 5)}, 160, 20),
        ("drift.client_drift", {**fixed, "rounds": 3}, 160, 20),
        ("drift.plateau", {**fixed, "rounds": ctx.pick(20, 5)}, 60, 12)])
