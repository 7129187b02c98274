"""Seed 003's constants that no theorem run measures, judged on what defines them.

* ``contraction.fedprox_kappa`` / ``contraction.beta_kappa`` -- Lemmas A.3 and B.3 contract
  ||w_{t+1} - w*||^2 by a factor kappa^2 per round; their kappa is the *exact* one-round factor
  on clients f_i(x) = (mu/2)(x - c)^2 (identical clients, full batch), where every local step
  is linear. Measured on the real engine: one round of ``toys.run`` (FedProx with prox = alpha,
  or the beta algorithm) on that problem in one dimension, kappa = (x_1 - x*)/(x_0 - x*),
  signed (kappa < 0 when a step overshoots). Points spread over alpha or beta, mu, gamma and E,
  including overshooting steps.
* ``contraction.corollary1_e_opt`` -- Corollary 1's E_opt is the minimiser over real E > 0 of
  Theorem 4's bound ``contraction.beta_nc`` (its other parameters fixed), found numerically
  (:mod:`verify.checks._derive`; no run).

Example
-------
>>> from verify.suite import Context
>>> rs = contraction_constants(Context(quick=True))
>>> sorted({r.verdict for r in rs}), len(rs)
(['holds'], 20)
"""

from __future__ import annotations

import numpy as np

import boundlab
import toys
from toys._array import to_numpy

from ._common import judge
from ._derive import DERIVED, argmin, mp_function
from ._registry import register

#: (alpha, mu, gamma, E) for FedProx (alpha = 0: FedAvg) and (beta, mu, gamma, E) for the beta
#: algorithm; gamma (alpha + mu) > 1 or beta mu gamma > 1 overshoots (kappa < 0 or > 1)
PROX_POINTS = ((0.0, 0.5, 0.3, 3), (0.7, 0.5, 0.3, 2), (2.3, 1.0, 0.1, 5), (1.3, 0.7, 1.9, 3),
               (0.4, 2.0, 0.05, 4), (5.0, 0.3, 0.15, 2), (0.9, 1.5, 0.25, 1), (3.0, 0.2, 0.45, 6))
BETA_POINTS = ((1.0, 0.5, 0.3, 3), (0.5, 0.5, 0.3, 2), (0.4, 0.7, 1.9, 3), (0.9, 1.0, 0.1, 5),
               (0.25, 2.0, 0.05, 4), (0.7, 0.3, 0.15, 2), (0.6, 1.5, 0.25, 1), (0.35, 0.2, 0.45, 6))
#: (L, Delta, S, sigma, G, beta, T) for E_opt
E_OPT_POINTS = ((1.0, 2.0, 0.25, 1.0, 1.0, 0.5, 1000), (3.0, 0.5, 1.0, 0.0, 2.0, 1.0, 50),
                (0.5, 10.0, 0.1, 3.0, 0.3, 0.2, 20000), (2.0, 1.0, 0.5, 0.5, 5.0, 0.8, 10))
X0_OFFSET = 1.0


def measured_kappa(algo: str, hyper: dict, mu: float, gamma: float, E: int,
                   backend: str = "numpy", device=None) -> float:
    """One round of ``algo`` on N = 3 identical clients (mu/2)(x - c)^2 in one dimension,
    started at x* + 1: the signed factor (x_1 - x*)/(x_0 - x*)."""
    prob = toys.quadratic(n_clients=3, dim=1, L=mu, mu=mu, heterogeneity=0.0, seed=1)
    xs = np.asarray(prob.x_star, dtype=float)
    extra = {} if backend == "numpy" else {"backend": backend, "device": device}
    tr = toys.run(prob, algo, rounds=1, seed=0, lr=gamma, local_steps=E, record="none",
                  x0=xs + X0_OFFSET, **hyper, **extra)
    return float((to_numpy(tr.final_model).astype(float)[0] - xs[0]) / X0_OFFSET)


def e_opt(L, Delta, S, sigma, G, beta, T) -> float:
    """The minimiser over real E > 0 of contraction.beta_nc at the other parameters."""
    r = mp_function(boundlab.get("contraction.beta_nc"),
                    ("E", "T", "L", "beta", "Delta", "S", "sigma", "G"))
    return argmin(lambda E: r(E, T, L, beta, Delta, S, sigma, G), 1e-9, 1e12)


def _kappa_rows(ctx, bid, algo, name, points):
    bound, out = boundlab.get(bid), []
    for a, mu, gamma, E in points:
        hyper = {"prox": a} if name == "alpha" else {"beta": a}
        run_algo = "fedavg" if name == "alpha" and a == 0 else algo
        k = measured_kappa(run_algo, hyper if run_algo != "fedavg" else {}, mu, gamma, E,
                           ctx.backend, ctx.device)
        out.append(judge(bound, [k], {name: a, "mu": mu, "gamma": gamma, "E": E},
                         check="contraction_constants", case=f"{name}={a}, mu={mu}, "
                         f"gamma={gamma}, E={E}", problem="quadratic (N=3, d=1, identical "
                         "clients, L = mu)", seeds=[0], deterministic=True,
                         setting={"method": run_algo, "x0": f"x* + {X0_OFFSET}"},
                         note="measured = (x_1 - x*)/(x_0 - x*) after one round of toys.run"))
    return out


@register("contraction", "contraction.fedprox_kappa", "contraction.beta_kappa",
          "contraction.corollary1_e_opt")
def contraction_constants(ctx) -> list:
    """Lemma A.3's and B.3's kappa measured on one round; Corollary 1's E_opt rebuilt."""
    out = _kappa_rows(ctx, "contraction.fedprox_kappa", "fedprox", "alpha", PROX_POINTS)
    out += _kappa_rows(ctx, "contraction.beta_kappa", "beta", "beta", BETA_POINTS)
    bound = boundlab.get("contraction.corollary1_e_opt")
    names = ("L", "Delta", "S", "sigma", "G", "beta", "T")
    for pt in E_OPT_POINTS:
        prm = dict(zip(names, pt))
        out.append(judge(bound, [e_opt(*pt)], prm, check="contraction_constants",
                         case=", ".join(f"{k}={v}" for k, v in prm.items()), problem=DERIVED,
                         deterministic=True, note="measured = minimiser over real E > 0 of "
                         "contraction.beta_nc (Theorem 4's bound)"))
    return out
