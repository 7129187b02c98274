"""alg:poc — Power-of-Choice vs random selection and FedMax(k): speed bought with bias
(Cho, Wang, Joshi: "Client Selection in Federated Learning: Convergence Analysis and
Power-of-Choice Selection Strategies", arXiv 2020; AISTATS 2022 as "Towards Understanding
Biased Client Selection in Federated Learning").

The paper (quoted from memory; it is not in the project's seeds): selecting the clients of
higher local loss speeds up convergence (the selection skew rho-bar > 1 divides the vanishing
term of Theorem 1's bound) at the price of a non-vanishing bias term (proportional to
rho-tilde / rho-bar - 1); pow-d (d candidates drawn, the m of largest loss kept) "converges
faster than random selection" and larger d trades solution bias for speed (its §5 quadratic
experiment: faster early convergence, a higher error floor as d grows).

In toys, ``poc`` with d = m is random selection (m clients drawn proportionally to p, weights
1/m) and with d = N it is FedMax(k) on the raw losses, bit for bit (spec BM-27; the item
checks it and runs FedMax(k) as ``fedmax-k`` with ``loss_offset="zero"``). Here:
heterogeneous quadratics (every F_i* = 0, so raw and excess losses agree), a far start x0, a
decaying step size (so random selection's own noise floor vanishes), full-batch local steps.
Measured: the global gap F(x_r) - F* relative to its start, early (round 5) and at the end.

Example
-------
>>> arms(30, 3)
{'rand (d = m)': 3, 'pow-d (d = 2m)': 6, 'pow-d (d = 5m)': 15, 'FedMax(k) (d = N)': 30}
"""

from __future__ import annotations

import numpy as np

from .claims import hows
from .hetero import PAPERS_QUOTED, claim, in_decades, log10, median_band, quadratics, run_pop
from .registry import Result, register
from .seed000 import _fig
from .stats import as_claim, combine, power_note

EARLY = 5  # the round whose gap is "early convergence"
LR0, DECAY = 0.01, 30.0  # eta_r = LR0 / (1 + r / DECAY)
K = 5  # local steps
X0 = 5.0  # x0 = X0 * (1, ..., 1): a start far from the optima
RES_EARLY = 0.1  # decades
RES_FLOOR = 0.25  # decades
MODEL = "quadratics F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i), eigenvalues in [1, 10], F_i* = 0"
STAND_IN = ("toys.quadratic (heterogeneity 1, uniform p) instead of the paper's quadratic "
            "model and FMNIST / CIFAR-10 runs; full participation with the selection in the "
            "weights (every client trains, as toys' FedMax(k)), full-batch local steps, a "
            "decaying step size; " + PAPERS_QUOTED)


def arms(N: int, m: int) -> dict:
    """{arm: d}: random selection (d = m), pow-d at 2m and 5m, FedMax(k) (d = N)."""
    return {"rand (d = m)": m, "pow-d (d = 2m)": min(2 * m, N), "pow-d (d = 5m)": min(5 * m, N),
            "FedMax(k) (d = N)": N}


def sizes(cfg) -> dict:
    return {"n_clients": cfg.pick(30, 30, 12), "m": cfg.pick(3, 3, 2), "dim": cfg.pick(5, 5, 3),
            "rounds": cfg.pick(600, 300, 60)}


def runs(cfg, seeds):
    """({arm: (seeds, rounds + 1) relative gap}, whether FedMax(k) equals pow-d at d = N)."""
    sz = sizes(cfg)
    N, m, R = sz["n_clients"], sz["m"], sz["rounds"]
    probs = quadratics(seeds, n_clients=N, dim=sz["dim"], L=10.0, mu=1.0,
                       heterogeneity=1.0)
    kw = {"lr": LR0 / (1.0 + np.arange(R) / DECAY), "local_steps": K,
          "x0": np.full(sz["dim"], X0), "k": m}
    gaps = {}
    for name, d in arms(N, m).items():
        gaps[name] = run_pop(probs, "poc", seeds, R, candidates=d, **kw).gap
    fm = run_pop(probs, "fedmax-k", seeds, R, loss_offset="zero", **kw).gap
    same = bool(np.array_equal(fm, gaps["FedMax(k) (d = N)"], equal_nan=True))
    return {a: g / g[:, :1] for a, g in gaps.items()}, same


@register("alg:poc", "Cho, Wang & Joshi 2020, Thm 1, §5 quadratic experiment",
          "Power-of-Choice vs random selection and FedMax(k): faster early, biased floor",
          STAND_IN, "biased selection of high-loss clients converges faster than random "
                    "selection, larger d faster still, at the price of a non-vanishing bias "
                    "(error floor) growing with d (Thm 1, §5); no numbers quoted")
def poc(cfg) -> Result:
    seeds = list(range(cfg.n_seeds(30, 12, 3)))
    sz = sizes(cfg)
    rel, same = runs(cfg, seeds)
    early = {a: log10(g[:, EARLY]) for a, g in rel.items()}
    final = {a: log10(g[:, -1]) for a, g in rel.items()}
    claims, widths = _claims(early, final)
    rows = [{"arm": a, "candidates_d": d, "seed": s, "log10_rel_gap_round5": float(early[a][i]),
             "log10_rel_gap_final": float(final[a][i])}
            for a, d in arms(sz["n_clients"], sz["m"]).items() for i, s in enumerate(seeds)]
    return Result(rows, claims, _figure(rel, early, final), setup=(
        f"N = {sz['n_clients']} clients, m = k = {sz['m']} kept per round, d = "
        f"{sorted(set(arms(sz['n_clients'], sz['m']).values()))}, dim {sz['dim']}, "
        f"{K} local steps, eta_r = {LR0:g} / (1 + r / {DECAY:g}), {sz['rounds']} rounds, "
        f"x0 = {X0:g} (1, ..., 1), full participation, {len(seeds)} seeds (each draws its "
        "problem and its candidates; the arms of a seed share the problem)"),
        notes=[power_note(len(seeds), RES_FLOOR, widths, " dec", paired=True),
               "FedMax(k) run as fedmax-k (loss_offset zero) "
               + ("equals" if same else "DIFFERS from") + " pow-d at d = N bit for bit "
               "(spec BM-27; a check of toys, not a claim of the paper)."],
        data=f"toys.quadratic (heterogeneity 1), seeds 0..{len(seeds) - 1}", model=MODEL)


def _claims(early, final):
    rand, fm, two = "rand (d = m)", "FedMax(k) (d = N)", "pow-d (d = 2m)"
    biased = [a for a in early if a != rand]
    fast = {a: in_decades(early[a], early[rand], "<", RES_EARLY) for a in biased}
    floor = {a: in_decades(final[a], final[rand], ">", RES_FLOOR) for a in biased}
    t_fast = in_decades(early[fm], early[two], "<", RES_EARLY)
    t_floor = in_decades(final[fm], final[two], ">", RES_FLOOR)
    med = {a: (float(np.median(early[a])), float(np.median(final[a]))) for a in early}
    shown = "; ".join(f"{a}: {e:.2f} / {f:.2f}" for a, (e, f) in med.items())
    claims = [
        as_claim("pow-d converges faster early than random selection",
                 "faster than rand (Thm 1: 1 / rho-bar; §5)", f"median log10 relative gap at "
                 f"round {EARLY} / final: {shown}", f"every d > m below rand at round {EARLY} "
                 f"by the paired 95 % interval (within ±{RES_EARLY:g} decade: a tie)",
                 combine(fast.values()), hows(fast)),
        as_claim("biased selection leaves a non-vanishing error floor",
                 "bias term rho-tilde / rho-bar - 1 (Thm 1)", "; ".join(
                     f"{a}: {d.fmt()}" for a, d in floor.items()),
                 f"every d > m ends above rand (final log10 gap, paired; within ±{RES_FLOOR:g} "
                 "decade: a tie); rand's step size decays, so its own floor vanishes",
                 combine(floor.values()), hows(floor)),
        claim("larger d: faster early (FedMax(k) vs d = 2m)", "speed grows with d (§5)",
              t_fast, f"round-{EARLY} log10 gap of d = N below d = 2m (within ±{RES_EARLY:g} "
              "decade: a tie)"),
        claim("larger d: higher floor (FedMax(k) vs d = 2m)", "bias grows with d (§5)",
              t_floor, f"final log10 gap of d = N above d = 2m (within ±{RES_FLOOR:g} decade: "
              "a tie)")]
    widths = [d.width for d in (*fast.values(), *floor.values(), t_fast, t_floor)]
    return claims, widths


def _figure(rel, early, final):
    fig, axes = _fig(2)
    ax = axes[0, 0]
    for a, g in rel.items():
        median_band(ax, log10(g), a, start=1)
    ax.axvline(EARLY + 1, color="0.5", lw=0.8, ls=":")
    ax.set_xscale("log")  # the early rounds stay visible
    ax.set_xlabel("round + 1")
    ax.set_ylabel("log10 (F(x) − F*) / (F(x0) − F*)")
    ax.set_title("global gap (median, IQR)")
    ax.legend()
    ax = axes[0, 1]
    for a in early:
        ax.scatter(early[a], final[a], s=10, label=a)
    ax.set_xlabel(f"log10 relative gap at round {EARLY}")
    ax.set_ylabel("log10 relative gap, final")
    ax.set_title("speed vs floor per seed")
    return fig
