"""Seed 002 (FedAU) Lemma B.3.2, the local drift, judged inside the rounds of a FedAU run.

E_t||y^n_{t,i} - x_t||^2 <= 5 I gamma^2 (sigma^2 + 6 I deltat^2) + 30 I^2 gamma^2
||grad f~(x_t)||^2 for every local step i, if gamma <= 1/(sqrt(30) L I). Judged with f~ = f
(deltat = delta, the spec's A3: ||grad F_n(x) - grad f(x)|| <= delta for all x, n) on a quadratic
whose clients share one Hessian A and differ by their centres c_n, so that grad F_n - grad f =
A (cbar - c_n) at every x: delta = max_n ||A (c_n - cbar)|| exactly, L = lambda_max(A). Full
batch (sigma = 0), full participation; the local iterates are read through the
:class:`~verify.checks.contraction_local.Recorded` client piece (the real FedAU client update,
unchanged), the largest ||y^n_{t,i} - x_t||^2 over clients and steps per round, judged at the
round of the largest ratio, for two step sizes at and below the lemma's limit.

Example
-------
>>> from verify.suite import Context
>>> rs = weight_error_local_drift(Context(quick=True))
>>> {r.bound_id for r in rs}, {r.verdict for r in rs}
({'weight_error.lemma_b32'}, {'holds'})
"""

from __future__ import annotations

import functools
import math

import numpy as np

import boundlab
import toys

from ._common import judge
from ._registry import register
from .contraction_local import recorded_run

I_STEPS = 5


@functools.lru_cache(maxsize=None)
def shared_hessian_problem():
    """8 clients, d = 3: one Hessian (eigenvalues in [0.5, 2]), centres apart; delta, L."""
    rng = np.random.default_rng(7)
    Q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    A = Q @ np.diag([0.5, 1.0, 2.0]) @ Q.T
    c = rng.normal(size=(8, 3))
    prob = toys.Quadratic(np.repeat(A[None], 8, axis=0), c, name="quadratic, one Hessian")
    cbar = prob.p @ c
    delta = float(np.max(np.linalg.norm((c - cbar) @ A.T, axis=1)))
    return prob, delta, float(np.linalg.eigvalsh(A)[-1])


@register("weight_error", "weight_error.lemma_b32")
def weight_error_local_drift(ctx):
    """Lemma B.3.2 at every round of FedAU: local drift vs the bound (exact delta and L)."""
    prob, delta, L = shared_hessian_problem()
    T = ctx.pick(40, 12)
    bound = boundlab.get("weight_error.lemma_b32")
    out = []
    for frac in (1.0, 0.3):
        gamma = frac / (math.sqrt(30.0) * L * I_STEPS)
        tr, W, _ = recorded_run(prob, "fedau", T, lr=gamma, local_steps=I_STEPS,
                                x0=prob.x_star + 3.0)
        drift = np.max(np.sum((W - W[:, :1]) ** 2, axis=-1), axis=(1, 2))  # (T,)
        g2 = np.asarray(tr.grad_norm2[:-1], dtype=float)
        rhs = np.asarray(bound.evaluate(I=I_STEPS, gamma=gamma, sigma=0.0, deltat=delta,
                                        grad_norm2=g2), dtype=float)
        t = int(np.argmax(drift / rhs))
        out.append(judge(
            bound, [float(drift[t])], {"I": I_STEPS, "gamma": gamma, "sigma": 0.0,
                                       "deltat": delta, "grad_norm2": float(g2[t]), "L": L},
            check="weight_error_local_drift", case=f"gamma = {frac:g} / (sqrt(30) L I)",
            problem=prob.name, seeds=[0], deterministic=True,
            setting={"rounds": T, "local_steps": I_STEPS, "lr": gamma, "x0": "x* + 3"},
            note=f"every round 0..{T - 1} judged; worst round {t} (max measured/bound = "
                 f"{drift[t] / rhs[t]:.3g}); delta = {delta:.4g} exact (one Hessian, "
                 f"centres apart), L = {L:g}"))
    return out
