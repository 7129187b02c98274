"""FedSoftMax's smallest weight ratio pi = min alpha/p against exp(-x_range/T), on real runs.

``skew.softmax_kappa_min`` (derived in the spec, seeds-000-001-004 §3.10) bounds
pi = min over rounds and participants of kappa_t^i = alpha_t^i / p_i below by
exp(-x_range/T), x_range the largest range over rounds of the scores x_i = F_i(w_t) - F_i*
among the round's participants, T the temperature; the catalogue writes it as 1/pi <=
exp(x_range/T). Both sides are measured on a real FedSoftMax run of the engine: the run is
taken one round at a time (``toys.run`` with ``rounds=1``, started at the previous round's
model, the round's participation given), so that the server model w_t of every round is known;
x_i is recomputed from the problem at w_t (``problem.losses(w_t) - problem.F_star_i``, the
engine's ``loss_offset="exact"`` scores at the broadcast model) and kappa from the weights
alpha the engine used (``Trace.alpha``). Settings: seed 000's quadratic toy at temperatures
1 (the catalogue's run for ``skew.pi_bound``), 0.2 (seed 001's value) and 5, partial
participation (3 of 5 clients, uniformly), and non-uniform client weights p, where the bound is
nearest to tight (its ratio is sum_j p_j exp((x_j - max x)/T), 1 when all weight sits on the
largest score).

Example
-------
>>> from verify.suite import Context
>>> rs = skew_softmax(Context(quick=True))
>>> sorted({r.verdict for r in rs}), len(rs)
(['holds'], 5)
"""

from __future__ import annotations

import numpy as np

import boundlab
import toys
from toys._array import to_numpy

from ._common import judge
from ._registry import register

_BM_PROBLEM = {"n_clients": 5, "dim": 2, "L": 4.0, "mu": 1.0, "heterogeneity": 1.0, "seed": 0}
_SKEWED_P = (0.05, 0.1, 0.15, 0.3, 0.4)
#: (temperature, participation: "full" or m of N uniformly, client weights p or None)
SETTINGS = ((1.0, "full", None), (0.2, "full", None), (5.0, "full", None), (1.0, 3, None),
            (1.0, "full", _SKEWED_P))
LR, LOCAL_STEPS = 0.05, 2


def _problem(p=None):
    opts = dict(_BM_PROBLEM)
    if p is not None:
        opts["weights"] = np.asarray(p, dtype=float)
    return toys.make("quadratic", **opts)


def softmax_run(prob, temperature: float, rounds: int, participation="full", seed: int = 0,
                backend: str = "numpy", device=None) -> dict:
    """Run FedSoftMax round by round; per round the participants' score range and min kappa.

    Returns ``{"x_range": (R,), "kappa_min": (R,), "models": (R + 1, d)}``.
    """
    n = prob.n_clients
    rng = np.random.default_rng(seed)
    if participation == "full":
        chi = np.ones((rounds, n), dtype=bool)
    else:
        proc = toys.participation.Uniform(n, int(participation))
        chi = toys.participation.sample(proc, rounds, rng)
    extra = {} if backend == "numpy" else {"backend": backend, "device": device}
    p, f_i = np.asarray(prob.p, dtype=float), np.asarray(prob.F_star_i, dtype=float)
    x = np.zeros(prob.dim)
    models, ranges, kmins = [x], [], []
    for r in range(rounds):
        scores = np.asarray(prob.losses(x), dtype=float) - f_i
        m = chi[r]
        tr = toys.run(prob, "fedsoftmax", rounds=1, seed=seed + r, participation=chi[r:r + 1],
                      x0=x, lr=LR, local_steps=LOCAL_STEPS, temperature=temperature,
                      record="none", **extra)
        alpha = to_numpy(tr.alpha).astype(float)[0]
        ranges.append(float(scores[m].max() - scores[m].min()))
        kmins.append(float(np.min(alpha[m] / p[m])))
        x = to_numpy(tr.final_model).astype(float)
        models.append(x)
    return {"x_range": np.array(ranges), "kappa_min": np.array(kmins),
            "models": np.array(models)}


@register("skew", "skew.softmax_kappa_min")
def skew_softmax(ctx) -> list:
    """pi >= exp(-x_range/T) for FedSoftMax, both sides measured on real runs."""
    bound = boundlab.get("skew.softmax_kappa_min")
    rounds = ctx.pick(20, 8)
    out = []
    for temp, part, p in SETTINGS:
        prob = _problem(p)
        res = softmax_run(prob, temp, rounds, part, backend=ctx.backend, device=ctx.device)
        pi, xr = float(res["kappa_min"].min()), float(res["x_range"].max())
        per_round = np.exp(-res["x_range"] / temp) / res["kappa_min"]
        r = int(np.argmax(per_round))
        who = "all 5 clients" if part == "full" else f"{part} of 5 clients uniformly"
        out.append(judge(
            bound, [1.0 / pi], {"x_range": xr, "Temp": temp}, check="skew_softmax",
            case=f"T={temp}, {who}" + (", skewed p" if p is not None else ""),
            problem="quadratic (seed 000 toy: N=5, d=2, L=4, mu=1)"
            + (f", p={list(p)}" if p is not None else ""), seeds=[0], deterministic=True,
            setting={"method": "fedsoftmax", "rounds": rounds, "lr": LR,
                     "local_steps": LOCAL_STEPS, "temperature": temp},
            note=(f"measured = 1/pi, pi = min over {rounds} rounds of min_i alpha_i/p_i over "
                  "the participants (Trace.alpha of each round); x_range = max over rounds of "
                  "the participants' score range, scores F_i(w_t) - F_i* at the round's server "
                  f"model; per round, exp(-range_t/T)/kappa_min_t is largest at round {r}: "
                  f"{per_round[r]:.4g}")))
    return out
