"""Seed 002 (FedAU) appendix tables: D.1.1 (the participation heterogeneity alpha_p), D.3.1
(the client-wise spread of loss and accuracy) and D.6.1 (no lower bound on p_n, mean
participation .1 / .01 / .001), on the stand-in of :mod:`verify.reproduce.seed002` (same split,
p_n recipe, methods, step sizes and metric). Their claims are decided by paired 95 % intervals
over the data seeds (:mod:`verify.reproduce.stats`), "k of n" claims by
:func:`verify.reproduce.claims.at_least`.
"""

from __future__ import annotations

import math

import numpy as np

from ..figures.reproduce import reference_line
from .claims import acc_pair, at_least, hows
from .common import LastProcess, sweep_runs
from .registry import Result, register
from .seed000 import _fig
from .seed002 import METHODS, RESOLUTION, STAND_IN, Settings, method_grid, rounds
from .seed002_claims import scored
from .stats import Decision, as_claim, combine, decide, power_note

PAPER_D11 = {  # CIFAR-10, Bernoulli, test accuracy % vs alpha_p (Table D.1.1)
    "FedAU K→∞": (76.2, 76.6, 77.1, 77.8, 78.1), "FedAU K=50": (76.9, 77.1, 77.3, 77.8, 78.0),
    "Avg participating": (72.3, 72.6, 74.1, 75.7, 76.8),
    "Avg all": (69.5, 70.6, 72.7, 74.6, 75.9), "FedVarp": (77.3, 77.5, 77.9, 78.1, 78.5),
    "MIFA": (77.0, 77.3, 77.5, 77.9, 78.0), "Known stats": (76.3, 76.7, 77.0, 77.7, 77.9)}
ALPHA_P = (0.01, 0.05, 0.1, 0.5, 1.0)


def _seed_sd(vals) -> float:
    sd = [float(np.std(v)) for v in vals.values() if len(v) > 1]
    return float(np.mean(sd)) if sd else math.nan


@register("002:tableD1", "FedAU Table D.1.1 (App. D.1)", "seven methods vs the participation "
          "heterogeneity alpha_p (Bernoulli)", STAND_IN, "CIFAR-10 test accuracy % for alpha_p "
          "= .01 / .05 / .1 / .5 / 1: FedAU K=50 76.9 / 77.1 / 77.3 / 77.8 / 78.0, avg "
          "participating 72.3 … 76.8, avg all 69.5 … 75.9, FedVarp 77.3 … 78.5, MIFA 77.0 … "
          "78.0, known stats 76.3 … 77.9, K→∞ 76.2 … 78.1")
def table_d1(cfg) -> Result:
    S = cfg.n_seeds(5, 3, 2)
    aps = cfg.pick(ALPHA_P, (0.01, 0.1, 1.0), (0.01, 1.0))
    names = list(METHODS)
    settings = {f"alpha_p={a:g}": ("bernoulli", 0.02, a, 0.1) for a in aps}
    vals = method_grid(cfg, names, settings, S, "tableD1")
    res = {k: float(np.mean(v)) for k, v in vals.items()}
    rows = [{"alpha_p": a, "method": n, "test_acc_mean": res[f"alpha_p={a:g}", n],
             "test_acc_std": float(np.std(vals[f"alpha_p={a:g}", n])), "seeds": S,
             "paper_cifar10_test": PAPER_D11[n][ALPHA_P.index(a)]} for n in names for a in aps]
    key = [f"alpha_p={a:g}" for a in aps]
    claims, widths = _d1_claims({k: scored(v) for k, v in vals.items()}, key, names, aps)
    fig, ax = _fig(1, 6, 3.6)
    for n in names:
        ax[0, 0].plot(aps, [res[k, n] * 100 for k in key], "o-", label=n)
    ax[0, 0].set_xscale("log")
    ax[0, 0].set_xlabel("alpha_p")
    ax[0, 0].set_ylabel("test accuracy %")
    ax[0, 0].legend(fontsize=6)
    sd = _seed_sd(vals)
    return Result(rows, claims, fig, setup=f"N = {cfg.pick(100, 40, 12)}, {rounds(cfg)} rounds, "
                  f"{S} data seed(s) (split, p_n, run; shared by every method and alpha_p, so "
                  f"the intervals are paired), p_min = 0.02, E[p_n] = 0.1, alpha_p in {aps}",
                  notes=[power_note(S, RESOLUTION * 100, np.array(widths) * 100, " pp",
                                    paired=True),
                         f"Mean seed-to-seed std of a cell: {sd * 100:.2f} pp (NaN: one seed). "
                         "A diverged run is scored at chance (10 %)."])


def _pos(x: float):
    """A paper's difference as the effect of a '>' claim (rounded to the paper's 0.1 pp), or
    None when it is not positive (the claim is then judged on its direction only)."""
    x = round(float(x), 6)
    return x if x > 0 else None


def _d1_claims(v, key, names, aps):
    """Table D.1.1's claims from ``v[alpha_p key, method]`` (per data seed): (claims,
    widths)."""
    rule = (f"by the paired 95 % interval (within ±{RESOLUTION * 100:g} pp: a tie), holding the "
            "paper's CIFAR-10 difference")
    col = dict(zip(key, (ALPHA_P.index(a) for a in aps)))

    def paper(n, k):
        return PAPER_D11[n][col[k]] / 100

    beats = {f"{k}, {b}": acc_pair(v[k, "FedAU K=50"], v[k, b], ">", RESOLUTION,
                                   _pos(paper("FedAU K=50", k) - paper(b, k)))
             for k in key for b in ("Avg participating", "Avg all")}
    claims = [as_claim("FedAU (K=50) above both averaging baselines at every alpha_p",
                       "76.9 > 72.3 / 69.5 … 78.0 > 76.8 / 75.9", "FedAU minus: " + "; ".join(
                           f"{n} {d.fmt()}" for n, d in beats.items()),
                       "above both at every alpha_p " + rule, combine(beats.values()),
                       hows(beats))]
    gap = {k: v[k, "FedAU K=50"] - v[k, "Avg all"] for k in (key[0], key[-1])}
    d = acc_pair(gap[key[0]], gap[key[-1]], ">", RESOLUTION, _pos(
        paper("FedAU K=50", key[0]) - paper("Avg all", key[0]) - paper("FedAU K=50", key[-1])
        + paper("Avg all", key[-1])))
    claims.append(as_claim("the gap to 'average all' shrinks as alpha_p grows",
                           "7.4 pp at alpha_p = .01 -> 2.1 pp at 1.0",
                           " -> ".join(f"{g.mean() * 100:+.2f} pp" for g in gap.values()) +
                           f"; first minus last {d.fmt()}", "the per-seed gap FedAU K=50 - avg "
                           f"all larger at alpha_p = {aps[0]:g} than at {aps[-1]:g} " + rule,
                           d.outcome, d.how))
    up = {n: acc_pair(v[key[-1], n], v[key[0], n], ">", RESOLUTION,
                      _pos(paper(n, key[-1]) - paper(n, key[0]))) for n in names}
    n_up = sum(x.outcome == "matches" for x in up.values())
    claims.append(as_claim("accuracy rises with alpha_p (more homogeneous participation)",
                           "7 of 7 methods", f"{n_up} of {len(names)} higher at alpha_p = "
                           f"{aps[-1]:g} than at {aps[0]:g}: " + "; ".join(
                               f"{n} {x.fmt()}" for n, x in up.items()),
                           f">= {len(names) - 1} of {len(names)} methods higher " + rule,
                           at_least(up.values(), len(names) - 1), hows(up)))
    widths = [x.width for x in (*beats.values(), d, *up.values())]
    return claims, widths


PAPER_D6 = {  # CIFAR-10, no floor, test accuracy % for E[p_n] = .1 / .01 / .001 (Table D.6.1)
    "FedAU K=50": (75.9, 67.7, 45.6), "Avg participating": (72.5, 57.9, 26.8),
    "Avg all": (71.5, 60.0, 33.5), "FedVarp": (59.5, 10.0, 12.8), "MIFA": (72.5, 10.0, 10.0),
    "Known stats": (14.9, 10.0, 10.0)}
MEANS = (0.1, 0.01, 0.001)


@register("002:tableD6", "FedAU Table D.6.1 (App. D.6)", "no lower bound on p_n, mean "
          "participation E[p_n] = .1 / .01 / .001 (Bernoulli)", STAND_IN,
          "CIFAR-10, 10k rounds, test accuracy %: FedAU K=50 75.9 / 67.7 / 45.6; avg "
          "participating 72.5 / 57.9 / 26.8; avg all 71.5 / 60.0 / 33.5; FedVarp 59.5 / 10 / "
          "12.8; MIFA 72.5 / 10 / 10; known stats 14.9 / 10 / 10 (10 % = chance)")
def table_d6(cfg) -> Result:
    from .seed002_claims import RARE_WEIGHT, d6_claims, fmt_acc

    S = cfg.n_seeds(10, 10, 2)  # quick: 3 left every claim inconclusive (about 5 decide one)
    means = cfg.pick(MEANS, (0.1, 0.01), (0.1, 0.01))
    names = list(PAPER_D6)
    settings = {f"E[p]={m:g}": ("bernoulli", 0.0, 0.1, m) for m in means}
    vals = method_grid(cfg, [n for n in names if n != "Known stats"], settings, S, "tableD6")
    known, rare = known_with_rare(cfg, settings, S)
    vals.update(known)
    key = [f"E[p]={m:g}" for m in means]
    res = {k: float(np.mean(v)) for k, v in vals.items()}  # NaN: a diverged run
    rows = [{"mean_p": m, "method": n, "test_acc_mean": res[f"E[p]={m:g}", n], "seeds": S,
             "rare_participations": sum(rare[f"E[p]={m:g}"]) if n == "Known stats" else "",
             "paper_cifar10_test": PAPER_D6[n][MEANS.index(m)]} for n in names for m in means]
    claims, dec = d6_claims(vals, rare, key, names, RESOLUTION)
    fig, ax = _fig(1, 6, 3.6)
    for n in names:
        ax[0, 0].plot(means, [res[k, n] * 100 for k in key], "o-", label=n)
    ax[0, 0].set_xscale("log")
    ax[0, 0].set_xlabel("E[p_n]")
    ax[0, 0].set_ylabel("test accuracy %")
    reference_line(ax[0, 0], 100 / 10, "chance (10 classes)")
    ax[0, 0].legend(fontsize=6)
    R, N = rounds(cfg), cfg.pick(100, 40, 12)
    return Result(rows, claims, fig, setup=f"N = {N}, {R} rounds (paper: 10 000), {S} seed(s), "
                  "p_n without a floor (1e-6 so that 1 / p_n is finite); " +
                  "; ".join(f"{k}: " + ", ".join(f"{n} {fmt_acc(res[k, n])}" for n in names)
                            for k in key),
                  notes=[power_note(S, RESOLUTION * 100, [d.width * 100 for d in dec], " pp",
                                    paired=True),
                         f"A client is rare when one participation of it weighs at least "
                         f"{RARE_WEIGHT:g} full rounds under the known statistics (1 / (N p_n) "
                         f">= {RARE_WEIGHT:g}); rare participations in the known-statistics "
                         "runs: " + ", ".join(f"{k}: {rare[k]}" for k in key) + " (per seed). "
                         "The collapse is judged only on runs where one took part; without one "
                         "the claim is not exercised (the paper's 10 000 rounds with N = 250 "
                         "make one near certain).",
                         f"At E[p_n] = {means[-1]:g} about {N * means[-1] * R:.0f} client updates "
                         "happen in the whole run: the stand-in is far from converged there, as "
                         "the paper's 10 000 rounds are not."])


class ClientSpread:
    """Round callback (after the last of ``rounds`` rounds): the client-wise standard
    deviations of Table D.3.1 — of the clients' training losses, training accuracies and test
    accuracies (a client's test accuracy: the per-class accuracies on the pooled test set
    weighted by its label mix). Recorded as metrics ``std_loss`` / ``std_train_acc`` /
    ``std_test_acc``."""

    def __init__(self, factory, rounds: int):
        self.factory, self.rounds = factory, int(rounds)

    def __call__(self, info):
        if info.round != self.rounds - 1:
            return
        prob = self.factory.last
        w = info.model
        T = w.reshape(prob.n_features, prob.classes)
        pred = np.matmul(prob.X, T).argmax(axis=-1)  # (N, n_max)
        n = prob.mask.sum(axis=1)
        train = ((pred == prob.y) & prob.mask).sum(axis=1) / n
        te = prob.test
        C = prob.classes
        pt = np.matmul(te["X"], T).argmax(axis=1)
        per_class = np.bincount(te["y"][pt == te["y"]], minlength=C) / np.maximum(
            np.bincount(te["y"], minlength=C), 1)
        hist = np.stack([np.bincount(prob.y[i][prob.mask[i]], minlength=C)
                         for i in range(prob.n_clients)]) / n[:, None]  # once per run
        losses = prob.losses(np.broadcast_to(w, (prob.n_clients, w.size)))
        info.record("std_loss", float(np.std(losses)))
        info.record("std_train_acc", float(np.std(train)))
        info.record("std_test_acc", float(np.std(hist @ per_class)))


PAPER_D3 = {"FedAU K→∞": (0.017, 9.9, 11.7), "FedAU K=50": (0.016, 9.5, 11.2),
            "Avg participating": (0.031, 13.3, 11.6), "Avg all": (0.030, 13.3, 12.2)}


@register("002:tableD3", "FedAU Table D.3.1 (App. D.3)", "client-wise spread of loss and "
          "accuracy at the end of training (Bernoulli)", STAND_IN, "CIFAR-10 client-wise std "
          "of loss / train acc / test acc: FedAU K→∞ .017 / 9.9 % / 11.7 %, K=50 .016 / 9.5 % / "
          "11.2 %, avg participating .031 / 13.3 % / 11.6 %, avg all .030 / 13.3 % / 12.2 %")
def table_d3(cfg) -> Result:
    S = cfg.n_seeds(10, 10, 2)  # quick: 3 left it inconclusive (about 4 decide, 30 matched)
    R = rounds(cfg)
    names = list(PAPER_D3)
    stats = ("std_loss", "std_train_acc", "std_test_acc")
    per = _d3_runs(cfg, names, stats, S, R)
    res = {key: float(np.nanmean(v)) for key, v in per.items()}
    rows = [{"method": n, **{k: res[n, k] for k in stats},
             "paper_std_loss": PAPER_D3[n][0], "paper_std_train_acc": PAPER_D3[n][1] / 100,
             "paper_std_test_acc": PAPER_D3[n][2] / 100, "seeds": S} for n in names]
    claims, notes = _d3_claims(per, res, names, S)
    fig = _d3_figure(res, names, stats)
    return Result(rows, claims, fig, setup=f"N = {cfg.pick(100, 40, 12)}, {R} rounds, {S} "
                  "data seed(s) (split, p_n, run; shared by the methods, so the intervals are "
                  "paired); stds over the clients of the final global model's training loss "
                  "(softmax regression), training accuracy and label-mix-weighted test accuracy",
                  notes=notes + ["The paper makes no claim about the test-accuracy spread (its "
                                 "numbers are mixed); it is reported, not compared. A seed "
                                 "where either run diverged drops out of that pair."])


def _d3_runs(cfg, names, stats, S, R):
    """Table D.3.1's runs: ``{(method, stat): value per data seed}`` (NaN: diverged)."""
    per = {}
    for name in names:
        algo, hyper = METHODS[name]
        fac = Settings(cfg, {"bernoulli": ("bernoulli", 0.02, 0.1, 0.1)})
        out = sweep_runs(cfg, fac, algo, grid={"data_seed": list(range(S)), "part": ["bernoulli"]},
                         rounds=R, label=f"002-tableD3-{name}", participation=LastProcess(fac),
                         callbacks=[ClientSpread(fac, R)], metrics=stats, local_steps=5,
                         batch_size=16, **hyper)
        for k in stats:
            per[name, k] = out[k][:, 0, -1]  # per data seed (NaN: diverged)
    return per


def _d3_claims(per, res, names, S):
    """Table D.3.1's claims on the loss and train-accuracy spreads: (claims, power notes)."""
    claims, notes = [], []
    for j, (k, res_k, unit) in enumerate((("std_loss", 0.002, ""), ("std_train_acc", 0.005,
                                                                    " pp"))):
        scale = 100 if unit else 1
        dec = {f"{a} - {b}": _below(per[a, k], per[b, k], res_k, scale, unit)
               for a in names[:2] for b in names[2:]}
        paper = " / ".join(f"{PAPER_D3[n][j]:g}" for n in names)
        claims.append(as_claim(f"FedAU (both K) has the smaller client-wise {k[4:]} spread",
                               paper, " / ".join(f"{res[n, k] * scale:.3f}" for n in names) +
                               "; " + "; ".join(f"{n} {d.fmt()}" for n, d in dec.items()),
                               "both FedAU stds below both averaging baselines' by the paired "
                               f"95 % interval (within ±{res_k * scale:g}{unit}: a tie)",
                               combine(dec.values()), hows(dec)))
        notes.append(power_note(S, res_k * scale, [d.width * scale for d in dec.values()],
                                unit, paired=True) + f" ({k})")
    return claims, notes


_D3_WORDS = {"std_loss": "training loss", "std_train_acc": "training accuracy",
             "std_test_acc": "test accuracy"}


def _d3_figure(res, names, stats):
    """One bar panel per spread statistic, ours vs the paper's."""
    fig, ax = _fig(3, 3.6, 3.2)
    for j, k in enumerate(stats):
        ax[0, j].bar(range(len(names)), [res[n, k] for n in names], label="ours")
        ax[0, j].plot(range(len(names)), [PAPER_D3[n][j] / (1 if j == 0 else 100)
                                          for n in names], "k_", ms=14, label="paper")
        ax[0, j].set_xticks(range(len(names)), names, rotation=90)
        ax[0, j].set_title(_D3_WORDS[k])
        ax[0, j].set_ylabel("standard deviation over clients")
    ax[0, 0].legend(fontsize=7)
    return fig


def _below(a, b, res, scale, unit):
    """The paired decision of a < b over the seeds where both are finite (a diverged run has
    no spread); inconclusive when no seed is left."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if not ok.any():
        return Decision("inconclusive", "?", math.nan, -math.inf, math.inf, 0, res, None,
                        "every seed has a diverged run", scale, unit)
    return decide(a[ok], b[ok], expect="<", resolution=res, paired=True, scale=scale, unit=unit)


def known_with_rare(cfg, settings: dict, seeds: int):
    """The known-statistics runs of ``settings`` with the rare participations counted:
    ``({(setting, "Known stats"): [value per seed]}, {setting: [rare participations per
    seed]})`` (value: test accuracy over the last 10 % of the rounds, NaN when diverged)."""
    from .seed002_claims import RareTookPart

    algo, hyper = METHODS["Known stats"]
    R, names = rounds(cfg), list(settings)
    fac = Settings(cfg, settings)
    out = sweep_runs(cfg, fac, algo, grid={"data_seed": list(range(seeds)), "part": names},
                     rounds=R, label="002-tableD6-known-rare", participation=LastProcess(fac),
                     callbacks=[RareTookPart(fac)], metrics=("test_accuracy", "rare_part"),
                     local_steps=5, batch_size=16, **hyper)
    acc, rare = out["test_accuracy"][:, 0], out["rare_part"][:, 0]
    tail = acc[:, -max(1, R // 10):]
    cnt = np.isfinite(tail).sum(axis=1)
    val = np.where(cnt > 0, np.nansum(tail, axis=1) / np.maximum(cnt, 1), np.nan)
    vals, counts = {}, {}
    for j in range(acc.shape[0]):
        k = names[j % len(names)]
        vals.setdefault((k, "Known stats"), []).append(float(val[j]))
        counts.setdefault(k, []).append(int(np.nansum(rare[j])))
    return vals, counts
