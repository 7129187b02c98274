"""alg:fednova — FedNova vs FedAvg under heterogeneous local work: objective inconsistency
(Wang, Liu, Liang, Joshi, Poor 2020, NeurIPS).

The paper (quoted from memory; it is not in the project's seeds): when client i runs tau_i
local steps, FedAvg "converges to a stationary point of a mismatched objective function which
can be arbitrarily different from the true objective" (abstract): the surrogate
F~(x) = sum_i p_i tau_i F_i(x) / sum_j p_j tau_j (§3's quadratic example, where the limit is
the tau-weighted average of the client optima; §4, Theorem 1 for the general case, the
inconsistency not removed by a smaller learning rate); FedNova normalises each update by its
number of steps and "eliminates objective inconsistency while preserving fast error
convergence" (abstract; §5, Theorem 2).

Here: heterogeneous quadratics (``toys.quadratic``; exact optimum x* and surrogate optimum
x~ = (sum_i p_i tau_i A_i)^{-1} sum_i p_i tau_i A_i c_i in closed form), fixed per-client
step counts tau_i (``client_steps``), full participation, full-batch local steps, run to
their fixed point at two step sizes. Measured: the final model's distance to x* and to x~.

Example
-------
>>> import numpy as np, toys
>>> prob = toys.quadratic(n_clients=2, dim=2, seed=0)
>>> xs = surrogate_optimum(prob, np.array([1, 1]))   # equal work: the true optimum
>>> bool(np.allclose(xs, prob.x_star))
True
"""

from __future__ import annotations

import numpy as np

from .hetero import PAPERS_QUOTED, claim, in_decades, log10, median_band, quadratics, run_pop
from .registry import Result, register
from .seed000 import _fig
from .stats import power_note

LR = 0.01  # eta L = 0.1 for L = 10; and LR / 3
RES_DEC = 0.5  # decades: distances within a factor 10^0.5 are ties
RES_ETA = 0.25  # decades: "does not shrink with the step size"
MODEL = "quadratics F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i), eigenvalues in [1, 10]"
STAND_IN = ("toys.quadratic (heterogeneity 1) with fixed per-client local steps tau_i "
            "instead of the paper's quadratic example / CIFAR-10 runs with local epochs drawn "
            "per round; full participation, full-batch local steps, run to the fixed point; "
            + PAPERS_QUOTED)


def taus(n_clients: int) -> np.ndarray:
    """tau_i: 1, 1, 2, 2, 4, 4, 8, 8, ... (powers of two, two clients each, cycling)."""
    return 2 ** ((np.arange(n_clients) // 2) % 4)


def surrogate_optimum(prob, tau) -> np.ndarray:
    """x~ = argmin sum_i p_i tau_i F_i: (sum_i w_i A_i)^{-1} sum_i w_i A_i c_i, w = p tau."""
    w = np.asarray(prob.p, dtype=float) * np.asarray(tau, dtype=float)
    return np.linalg.solve(np.einsum("i,ijk->jk", w, prob.A),
                           np.einsum("i,ijk,ik->j", w, prob.A, prob.c))


def sizes(cfg) -> dict:
    return {"n_clients": cfg.pick(16, 8, 8), "dim": cfg.pick(10, 5, 3),
            "rounds": cfg.pick(800, 500, 300)}


def runs(cfg, seeds=None):
    """(problems, tau, {(algo, lr): Population}) of the item (``seeds``: default
    ``cfg.n_seeds``)."""
    seeds = list(range(cfg.n_seeds(30, 12, 3))) if seeds is None else list(seeds)
    sz = sizes(cfg)
    probs = quadratics(seeds, n_clients=sz["n_clients"], dim=sz["dim"], L=10.0, mu=1.0,
                       heterogeneity=1.0)
    tau = taus(sz["n_clients"])
    pops = {(a, lr): run_pop(probs, a, seeds, sz["rounds"], lr=lr,
                             client_steps=tuple(int(t) for t in tau))
            for a in ("fednova", "fedavg-hetero") for lr in (LR, LR / 3)}
    return probs, tau, pops


def distances(probs, tau, pops) -> dict:
    """{(algo, lr, "true" | "surrogate"): log10 distance of each seed's final model}."""
    xs = np.stack([p.x_star for p in probs])
    xt = np.stack([surrogate_optimum(p, tau) for p in probs])
    out = {}
    for (a, lr), pop in pops.items():
        out[a, lr, "true"] = log10(np.linalg.norm(pop.final_model - xs, axis=1))
        out[a, lr, "surrogate"] = log10(np.linalg.norm(pop.final_model - xt, axis=1))
    return out


@register("alg:fednova", "Wang et al. 2020, §3 example, Thms 1-2",
          "FedNova vs FedAvg under heterogeneous local work: objective inconsistency",
          STAND_IN, "FedAvg with heterogeneous tau_i converges to the optimum of the surrogate "
                    "sum p_i tau_i F_i, not of F (Thm 1), whatever the learning rate; FedNova "
                    "removes the inconsistency (Thm 2); no numbers quoted")
def fednova(cfg) -> Result:
    probs, tau, pops = runs(cfg)
    n = len(probs)
    D = distances(probs, tau, pops)
    claims, widths = _claims(D)
    rows = [{"algorithm": a, "lr": lr, "seed": s, "log10_dist_true_optimum": float(D[a, lr,
             "true"][s]), "log10_dist_surrogate_optimum": float(D[a, lr, "surrogate"][s]),
             "last_round_change_log10_dist2": float(np.max(np.abs(np.diff(
                 log10(pops[a, lr].dist2[s, -2:])))))}
            for (a, lr) in pops for s in range(n)]
    return Result(rows, claims, _figure(pops, D), setup=(
        f"N = {len(tau)} clients with tau_i = {', '.join(map(str, tau))} local steps, "
        f"d = {probs[0].dim}, L = 10, mu = 1, step sizes {LR:g} and {LR / 3:.4g}, "
        f"{sizes(cfg)['rounds']} rounds (to the fixed point: the last column of the rows is "
        "the last round's change of log10 ||x - x*||^2), full participation, x0 = 0, "
        f"{n} seeds (each draws its problem)"),
        notes=[power_note(n, RES_DEC, widths, " dec", paired=True)],
        data=f"toys.quadratic (heterogeneity 1), seeds 0..{n - 1}", model=MODEL)


def _claims(D):
    avg, nova, small = "fedavg-hetero", "fednova", LR / 3
    d1 = in_decades(D[avg, LR, "true"], D[avg, LR, "surrogate"], ">", RES_DEC)
    d2 = in_decades(D[nova, LR, "true"], D[avg, LR, "true"], "<", RES_DEC)
    d3 = in_decades(D[avg, small, "true"], D[avg, LR, "true"], "=", RES_ETA)
    d4 = in_decades(D[nova, small, "true"], D[nova, LR, "true"], "<", RES_ETA)
    m = {k: float(np.median(v)) for k, v in D.items()}
    claims = [
        claim("FedAvg converges to the surrogate optimum x~, not x*",
              "stationary point of sum p_i tau_i F_i (§3, Thm 1)", d1,
              f"log10 ||x_R - x*|| above log10 ||x_R - x~|| (paired; within ±{RES_DEC:g} decade: "
              "a tie)", f"median {m[avg, LR, 'true']:.2f} vs {m[avg, LR, 'surrogate']:.2f}"),
        claim("FedNova ends nearer x* than FedAvg", "inconsistency eliminated (Thm 2)", d2,
              f"log10 ||x_R - x*|| of FedNova below FedAvg's (within ±{RES_DEC:g} decade: a tie)",
              f"median {m[nova, LR, 'true']:.2f} vs {m[avg, LR, 'true']:.2f}"),
        claim("FedAvg's inconsistency does not shrink with the step size",
              "mismatched objective whatever the learning rate (Thm 1)", d3,
              f"log10 ||x_R - x*|| of FedAvg at lr {small:.4g} minus at {LR:g}: paired interval "
              f"inside ±{RES_ETA:g} decade (equivalence test)",
              f"median {m[avg, small, 'true']:.2f} vs {m[avg, LR, 'true']:.2f}"),
        claim("FedNova's remaining distance to x* shrinks with the step size",
              "converges to a stationary point of F (Thm 2)", d4,
              f"log10 ||x_R - x*|| of FedNova at lr {small:.4g} below at {LR:g} (within "
              f"±{RES_ETA:g} decade: a tie)",
              f"median {m[nova, small, 'true']:.2f} vs {m[nova, LR, 'true']:.2f}")]
    return claims, [d.width for d in (d1, d2, d3, d4)]


def _figure(pops, D):
    fig, axes = _fig(2)
    ax = axes[0, 0]
    for (a, lr), pop in pops.items():
        median_band(ax, 0.5 * log10(pop.dist2), f"{a}, lr {lr:.3g}")
    ax.set_xlabel("round")
    ax.set_ylabel("log10 ||x − x*||")
    ax.set_title("distance to the true optimum")
    ax.legend()
    ax = axes[0, 1]
    for (a, lr) in pops:
        ax.scatter(D[a, lr, "true"], D[a, lr, "surrogate"], s=10, label=f"{a}, lr {lr:.3g}")
    lim = [min(ax.get_xlim()[0], ax.get_ylim()[0]), max(ax.get_xlim()[1], ax.get_ylim()[1])]
    ax.plot(lim, lim, color="0.5", lw=0.8, ls=":")
    ax.set_xlabel("log10 ||x_R − x*||")
    ax.set_ylabel("log10 ||x_R − x~|| (surrogate)")
    ax.set_title("final model: true vs surrogate optimum")
    return fig
