"""Seed 003's non-convex theorems on a one-hidden-layer MLP (the paper's model family).

``contraction.fedprox_nc`` (Theorem 2, FedProx / FedAvg at alpha = 0; also as printed,
``contraction.fedprox_nc.printed``, on the same runs) and ``contraction.beta_nc`` (Theorem 4,
the beta algorithm; also Corollary 1, ``contraction.corollary1``, Theorem 4 at E = E_opt: see
:func:`_judge_corollary1`) bound E||grad f(w_hat_T)||^2, w_hat_T drawn uniformly from the
virtual averages wbar_{t,k} = sum_i p_i w^i_{t,k} after k = 0..E-1 local steps of the rounds t
< T (wbar_{t,0} = the server model), of a run with the theorems' step sizes gamma = 1/(2(L +
alpha) sqrt(T E)) and 1/(2 L sqrt(T E)). What is measured is that average, (1/(T E)) sum_{t<T}
sum_{k<E} ||grad f(wbar_{t,k})||^2, from a record="step" run
(:attr:`toys.Trace.grad_norm2_virtual`; the server models alone would be k = 0 only). Here they
are judged on a ReLU MLP (hidden width :data:`HIDDEN`, softmax cross-entropy + l2, as seed 003)
on scikit-learn's digits split over 8 clients, through ``toys.run`` with the context's backend:
``boundlab verify --backend torch --device cuda`` runs them on the GPU.

An MLP has no known smoothness constant or optimum, so the constants are stated estimates:

* L: twice the largest power-iteration estimate of max_i L_i (finite-difference Hessian-vector
  products, :func:`toys.constants`) at x0 and along a pilot run; after the run the estimate is
  repeated along its server models, and a run whose trajectory estimate exceeds the L used is
  reported not-applicable (the step would exceed the theorem's). A ReLU network is not
  L-smooth across its kinks: L here is the local curvature the run meets, so a verdict is
  about the theorem's arithmetic on this run, not a proof that its assumption holds;
* Delta = f(wbar_0) - f_inf <= f(wbar_0), since the loss is non-negative: the bound is evaluated
  at this upper estimate, which only loosens it;
* G^2 = the largest ||g_i||^2 over the gradients the run took (a posteriori, as in
  :mod:`verify.checks.contraction`); sigma = 0 (full batch); S = sum_i p_i^2.

Example
-------
>>> from verify.suite import Context
>>> rs = contraction_nonconvex_mlp(Context(quick=True))
>>> [b.split(".", 1)[1] for b in sorted({r.bound_id for r in rs})]
['beta_nc', 'corollary1', 'fedprox_nc', 'fedprox_nc.printed']
>>> {r.verdict for r in rs} <= {"holds", "not-applicable"}
True
"""

from __future__ import annotations

import functools
import math

import numpy as np

import boundlab
import toys

from ._common import constants_record, judge, trace_diverged
from ._registry import register

HIDDEN, E, SAFETY = 16, 5, 2.0
POINTS, POINTS_QUICK = 6, 2  # trajectory points of each L estimate (a power iteration each)
METHODS = (("fedavg", "fedavg", {}, "contraction.fedprox_nc"),
           ("fedprox_a0.5", "fedprox", {"prox": 0.5}, "contraction.fedprox_nc"),
           ("beta_0.5", "beta", {"beta": 0.5}, "contraction.beta_nc"))


@functools.lru_cache(maxsize=None)
def mlp_problem(weights: tuple | None = None):
    """The MLP on 320 digits over 8 clients (40 each); ``weights``: the client weights."""
    from sklearn.datasets import load_digits

    from toys.problems.mlp import MLPProblem

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(len(y))[:320]
    return MLPProblem((X[idx] / 16.0).reshape(8, 40, 64), y[idx].reshape(8, 40),
                      np.ones((8, 40), bool), classes=10, hidden=HIDDEN, l2=1e-4, seed=0,
                      weights=None if weights is None else np.asarray(weights),
                      name=f"MLP (hidden {HIDDEN}) on 320 digits, 8 clients")


def _problem_for(algo):
    if algo != "beta":
        return mlp_problem()
    p = toys.run(mlp_problem(), "beta", rounds=1, seed=0, lr=1e-3, local_steps=1, beta=0.5,
                 record="none").info["graph"]["p"]
    return mlp_problem(tuple(float(v) for v in p))


def _L_estimate(prob, trajectory, points: int = POINTS) -> float:
    return float(toys.constants(prob, trajectory=trajectory, max_points=points).L.value)


def _run(prob, algo, **kw):
    """``toys.run`` keeping the server models x_0..x_T (a callback reads each round's); the
    judged run passes ``record="step"`` (the gradients at the virtual averages)."""
    models = [np.asarray(prob.x0, dtype=float)]
    tr = toys.run(prob, algo, seed=0, local_steps=E, **kw,
                  callbacks=[lambda info: models.append(np.array(info.model, dtype=float))])
    return tr, np.stack(models)


def _gamma(algo, hyper, L, T):
    a = 0.0 if algo == "beta" else hyper.get("prox", 0.0)
    return 1.0 / (2.0 * (L + a) * math.sqrt(T * E))


@register("contraction", "contraction.fedprox_nc", "contraction.fedprox_nc.printed",
          "contraction.beta_nc", "contraction.corollary1")
def contraction_nonconvex_mlp(ctx):
    """Theorems 2 and 4 on a ReLU MLP: average squared gradient norm vs the bound."""
    T = ctx.pick(100, 30)
    extra = {} if ctx.backend == "numpy" else {"backend": ctx.backend, "device": ctx.device}
    out = []
    for label, algo, hyper, bid in METHODS:
        prob = _problem_for(algo)
        _, pilot = _run(prob, algo, rounds=5, lr=0.05, **hyper)
        pts = ctx.pick(POINTS, POINTS_QUICK)
        L = SAFETY * _L_estimate(prob, pilot, pts)
        gamma = _gamma(algo, hyper, L, T)
        tr, models = _run(prob, algo, rounds=T, lr=gamma, record="step", **hyper, **extra)
        L_traj = _L_estimate(prob, models, pts)
        ids = (bid, bid + ".printed") if bid == "contraction.fedprox_nc" else (bid,)
        out += [_judge_run(b, label, algo, hyper, prob, tr, (L, L_traj), gamma, T) for b in ids]
        if algo == "beta":
            out.append(_judge_corollary1(out[-1], tr))
    return out


def _judge_corollary1(theorem4, tr):
    """Corollary 1 (Theorem 4 at E = E_opt) on the beta run. Its precondition pins E = E_opt,
    and E_opt falls as G grows (E_opt ~ G^(-4/3)); any G' >= the run's G is a valid second-
    moment bound, so when E_opt(G) >= E the corollary is judged with G' = G (E_opt(G)/E)^(3/4),
    at which E_opt(G') = E; else no valid G makes the run's E optimal (not-applicable)."""
    prm = {k: theorem4.setting[k] for k in ("T", "E", "L", "Delta", "S", "sigma", "G", "beta")}
    e_opt = float(boundlab.get("contraction.corollary1_e_opt").evaluate(
        **{k: v for k, v in prm.items() if k != "E"}))
    G = prm["G"]
    raised = {**prm, "G": G * (e_opt / prm["E"]) ** 0.75} if e_opt >= prm["E"] else prm
    raised = {**raised, "gamma": theorem4.setting["gamma"]}  # the step recipe (a precondition)
    note = (f"G raised from the run's {G:.4g} to {raised['G']:.4g} (a valid, larger bound), at "
            f"which E_opt = E = {prm['E']:g}; E_opt at the run's G is {e_opt:.4g}; the rest as "
            "contraction.beta_nc's row")
    return judge(boundlab.get("contraction.corollary1"), [theorem4.measured], raised,
                 check="contraction_nonconvex_mlp", case=theorem4.case, problem=theorem4.problem,
                 seeds=[0], deterministic=True, setting=dict(theorem4.setting), note=note,
                 extra_violations=list(theorem4.preconditions_violated))


def _judge_run(bid, label, algo, hyper, prob, tr, Ls, gamma, T):
    L, L_traj = Ls
    prm = dict(T=T, E=E, L=L, alpha=hyper.get("prox", 0.0), beta=hyper.get("beta", 0.5),
               Delta=float(tr.loss[0]), S=float(np.sum(np.asarray(prob.p) ** 2)), sigma=0.0,
               G=float(np.sqrt(np.nanmax(tr.g2_max))), gamma=gamma)
    setting = {"method": algo, **hyper, "gamma": gamma, "rounds": T, "local_steps": E}
    note = (f"L = {SAFETY:g} x the power-iteration estimate along a pilot run ({L:.4g}); the "
            f"estimate along this run's server models is {L_traj:.4g}; Delta = f(w0) >= "
            "f(w0) - f_inf (non-negative loss); G^2 a posteriori; full batch; measured: the "
            "mean of ||grad f||^2 over the virtual averages wbar_{t,k}, k < E")
    return judge(boundlab.get(bid), [float(np.mean(tr.grad_norm2_virtual))], prm,
                 check="contraction_nonconvex_mlp", case=label, problem=prob.name, seeds=[0],
                 deterministic=True, diverged=trace_diverged(tr), setting=setting, note=note,
                 extra_violations=[f"the trajectory's L estimate {L_traj:.4g} exceeds the L "
                                   f"used ({L:.4g}): the step is not the theorem's"]
                 if L_traj > L else [],
                 constants=constants_record(None, extra={
                     "L": (L, "estimate (x2 safety) of max_i L_i, power iteration"),
                     "Delta": (prm["Delta"], "upper estimate: f(w0), f_inf >= 0"),
                     "G": (prm["G"], "a posteriori: max ||g_i|| over the run")}))
