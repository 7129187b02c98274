"""Seed 003's iteration complexities, judged by running the rounds they promise.

``contraction.t_eps_fedprox`` / ``contraction.t_eps_beta`` say: every T >= T_eps rounds, run
with the theorem's step gamma(T) = 1/(2(L + alpha) sqrt(T E)) (beta: 1/(2 L sqrt(T E))), give
E||grad f(w_hat_T)||^2 = (1/(T E)) sum_{t<T} sum_{k<E} ||grad f(wbar_{t,k})||^2 <= eps (w_hat_T
uniform over the virtual averages, as the theorems; ``Trace.grad_norm2_virtual``). The left-
hand side ``rounds_to_eps`` is measured as the smallest T of a doubling grid (T_eps / 2^k down
to 1, ..., T_eps, 2 T_eps, 4 T_eps) whose own run reaches eps, tried from the smallest up: a
bound that holds has it <= T_eps (ratio = T_needed / T_eps, resolution a factor 2); if T_eps
rounds do not reach eps the grid goes on to 4 T_eps and the bound is VIOLATED. The
``complexity_*`` O-forms are order-only on the same runs. Same toy, methods, start and G as
:mod:`verify.checks.contraction` (full batch: sigma = 0); G^2 is taken from a pilot run and the
judgement is not-applicable when a judged run's own G exceeds it.

Example
-------
The doubling grid of T_eps = 8 is 1, 2, 4, 8, 16, 32: an eps every run reaches is reached at
T = 1, and one no run reaches (0) leaves the grid's top, 4 T_eps (the whole check,
``contraction_rounds_to_eps(Context(quick=True))``, runs in
tests/verify/checks/test_contraction_complexity.py):

>>> from verify.checks.contraction import _problem
>>> prob, consts = _problem()
>>> [rounds_needed(prob, "fedavg", {}, consts.L.value, eps, 8)[0] for eps in (1e9, 0.0)]
[1, 32]
"""

from __future__ import annotations

import math

import numpy as np

import boundlab
import toys

from ._common import judge
from ._registry import register
from .contraction import METHODS, NEAR, E, _problem, _problem_label

#: eps relative to ||grad f(x0)||^2 (an eps the first rounds already reach tells nothing)
EPS_REL = 0.02
#: the methods judged (FedProx at alpha = 1 has T_eps ~ 5e5: its runs up to T_needed are slow)
LABELS = ("fedavg", "beta_0.5", "beta_0.9")
IDS = {"fedprox": ("contraction.t_eps_fedprox", "contraction.complexity_fedprox"),
       "beta": ("contraction.t_eps_beta", "contraction.complexity_beta")}


def _gamma(algo, alpha, L, T):
    return 1.0 / (2.0 * ((0.0 if algo == "beta" else alpha) + L) * math.sqrt(T * E))


def _avg_grad2(prob, algo, hyper, L, T):
    """E||grad f(w_hat_T)||^2 = (1/(T E)) sum_{t<T} sum_{k<E} ||grad f(wbar_{t,k})||^2 over the
    virtual averages (the theorems' w_hat_T; Trace.grad_norm2_virtual) and max ||g_i|| of the
    run with gamma(T)."""
    tr = toys.run(prob, algo, rounds=int(T), seed=0, local_steps=E,
                  lr=_gamma(algo, hyper.get("prox", 0.0), L, T),
                  x0=prob.x_star + NEAR * np.ones(prob.dim), record="step", **hyper)
    return float(np.mean(tr.grad_norm2_virtual)), float(np.sqrt(np.nanmax(tr.g2_max)))


def rounds_needed(prob, algo, hyper, L, eps, T_eps):
    """(the smallest T of the doubling grid reaching eps, largest G seen, the grid's top)."""
    T0 = int(math.ceil(T_eps))
    grid = sorted({max(1, T0 >> k) for k in range(T0.bit_length())} | {2 * T0, 4 * T0})
    G_seen = 0.0
    for T in grid:
        v, G = _avg_grad2(prob, algo, hyper, L, T)
        G_seen = max(G_seen, G)
        if v <= eps:
            return T, G_seen, grid[-1]
    return grid[-1], G_seen, grid[-1]


@register("contraction", *IDS["fedprox"], *IDS["beta"])
def contraction_rounds_to_eps(ctx):
    """Theorems 2 / 4's T_eps: do T_eps rounds with gamma(T_eps) reach eps? (doubling grid)."""
    prob, consts = _problem()
    L = consts.L.value
    x0 = prob.x_star + NEAR * np.ones(prob.dim)
    eps = EPS_REL * float(np.sum(prob.grad_F(x0) ** 2))
    out = []
    for label, algo, hyper, _ in METHODS:
        if label not in LABELS:
            continue
        kind = "beta" if algo == "beta" else "fedprox"
        _, G = _avg_grad2(prob, algo, hyper, L, 50)  # pilot: the region the runs visit
        prm = dict(L=L, alpha=hyper.get("prox", 0.0), beta=hyper.get("beta", 0.5), E=E,
                   eps=eps, S=float(np.sum(prob.p ** 2)), sigma=0.0, G=G)
        prm["Delta"] = float(prob.F(prob.x_star + NEAR * np.ones(prob.dim)) - prob.F_star)
        t_eps = float(boundlab.get(IDS[kind][0]).evaluate(
            **{k: prm[k] for k in boundlab.get(IDS[kind][0]).params}))
        T_need, G_seen, top = rounds_needed(prob, algo, hyper, L, eps, t_eps)
        for bid in IDS[kind]:
            out.append(judge(
                boundlab.get(bid), [float(T_need)], prm, check="contraction_rounds_to_eps",
                case=f"{label}, eps = {eps:.3g}", problem=_problem_label(prob), seeds=[0],
                deterministic=True, setting={"method": algo, **hyper, "x0": f"x* + {NEAR}"},
                extra_violations=[f"a judged run's G = {G_seen:.4g} exceeds the pilot's "
                                  f"{G:.4g}"] if G_seen > G * (1 + 1e-9) else [],
                note=f"T_eps = {t_eps:.5g}; measured: the smallest T of the doubling grid "
                     f"up to {top} whose run with gamma(T) reaches (1/T) sum ||grad f||^2 <= "
                     f"{eps:.4g} = {EPS_REL:g} ||grad f(x0)||^2 (resolution a factor 2"
                     + ("; none did)" if T_need == top else ")")))
    return out
