"""Seed 001 (BM-B: Ben Mansour, Duplessis, Carenini, Naccache) — Figs 1-3, App. B.

Stand-in: the seed-000 digits clients (:mod:`verify.reproduce.seed000`: N = 20, 10 local
steps of batch 16) with the one-hidden-layer MLP (non-convex like BM's CNN; 128 ReLU units, 32
at quick size) and eta_r = 0.03 * 0.99^r (eta_0 chosen once so that FedAvg needs ~5 rounds to
60 %, the paper's R60 scale: softmax regression on digits passes 60 % after one round from any
step size, which would make every R60 = 1); IID = uniform split (MNIST IID
in the paper), non-IID = 2 classes per client (FMNIST shards in the paper); the soft rules with
the paper's "T = 0.2" read as the [repo]'s multiplier alpha ∝ p exp(0.2 x) on the raw losses;
hybrids switch at round 20 (FedSoftBetterAvgSoftWorse at rounds 20 and 40: the switch rounds
are not given, spec §5.4); k = 10 % and 20 % of the clients.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..figures.reproduce import reference_line
from .common import DIGITS, ci95, fmt_ci, rounds_to
from .registry import Claim, Result, order, register
from .seed000 import _fig, runs

STAND_IN = (f"{DIGITS}; N = 20 clients; IID = uniform split (paper: MNIST), non-IID = 2 classes "
            "per client (paper: FMNIST shards); a one-hidden-layer MLP instead of BM's CNN")
SOFT = {"inv_temperature": 0.2, "loss_offset": "zero"}
RES_ACC = 0.002  # 0.2 pp: smaller differences of a final accuracy are ties
RULES = {"fedavg": ("fedavg", {}), "fedsoftworse": ("fedsoftmax", SOFT),
         "fedsoftbetter": ("fedsoftbetter", SOFT)}
HYBRIDS = {"fedavg": ("fedavg", {}),
           "fedsoftworseavg": ("hybrid", {"rules": ("fedsoftmax", "fedavg"), **SOFT}),
           "fedsoftbetteravg": ("hybrid", {"rules": ("fedsoftbetter", "fedavg"), **SOFT}),
           "fedavgsoftworse": ("hybrid", {"rules": ("fedavg", "fedsoftmax"), **SOFT})}


def _size(cfg):
    return {"rounds": cfg.pick(100, 30, 12), "seeds": cfg.n_seeds(10, 3, 1)}


def _runs(cfg, fw, algo, hyper):
    return runs(cfg, fw, algo, eta0=0.03, model="mlp", **_size(cfg), **hyper)[0]


def _curves(ax, accs, title):
    for name, a in accs.items():
        m = a.mean(axis=0)
        ax.plot(np.arange(1, len(m) + 1), m, label=name)
    ax.set_title(title)
    ax.set_xlabel("round")
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=7)


def _rows(accs, fw):
    return [{"framework": fw, "algorithm": n, "round": r + 1, "accuracy": float(v)}
            for n, a in accs.items() for r, v in enumerate(a.mean(axis=0))]


@register("001:fig1", "BM-B Fig. 1 / §4", "IID accuracy after all rounds: SoftWorse, SoftBetter, "
          "FedAvg", STAND_IN, "IID MNIST after 100 rounds: FedSoftWorse 89.77 %, FedSoftBetter "
          "89.70 %, FedAvg 89.67 %; FedSoftBetterAvgSoftWorse best in IID (no number)")
def fig1(cfg) -> Result:
    accs = {n: _runs(cfg, "IID", a, h) for n, (a, h) in RULES.items()}
    accs["fedsoftbetteravgsoftworse"] = _runs(
        cfg, "IID", "hybrid", {"rules": ("fedsoftbetter", "fedavg", "fedsoftmax"),
                               "switch_round": cfg.pick((20, 40), (10, 20), (4, 8)), **SOFT})
    final = {n: float(a[:, -1].mean()) for n, a in accs.items()}
    spread = max(final[n] for n in RULES) - min(final[n] for n in RULES)
    ok1 = spread <= 0.01
    best = max(final, key=final.get)
    hyb = final["fedsoftbetteravgsoftworse"]
    others = max(v for n, v in final.items() if n != "fedsoftbetteravgsoftworse")
    o = order(hyb, others, RES_ACC)
    ties = [n for n in final if n != "fedsoftbetteravgsoftworse" and
            order(hyb, final[n], RES_ACC) == "tie"]
    ok2 = o == ">"
    claims = [Claim("final accuracies about equal", "89.77 / 89.70 / 89.67 % (spread 0.10 pp)",
                    " / ".join(f"{final[n] * 100:.2f} %" for n in RULES),
                    "spread within 1 percentage point", ok1,
                    "" if ok1 else f"spread {spread * 100:.2f} pp"),
              Claim("FedSoftBetterAvgSoftWorse best in IID", "best (no number)",
                    f"best: {best} ({final[best] * 100:.2f} %; hybrid "
                    f"{final['fedsoftbetteravgsoftworse'] * 100:.2f} %)",
                    f"highest mean final accuracy by >= {RES_ACC * 100:g} pp (below: a tie)",
                    ok2, "" if ok2 else (f"tied with {', '.join(ties)}" if o == "tie"
                                         else f"{best} is higher"),
                    status="tie" if o == "tie" else None)]
    fig, ax = _fig(1, 6, 3.6)
    _curves(ax[0, 0], accs, "IID")
    sw = cfg.pick("20 and 40", "10 and 20", "4 and 8")
    return Result(_rows(accs, "IID"), claims, fig, setup=f"switch rounds of the three-rule "
                  f"hybrid: {sw} (assumption; the paper gives none)")


def _extreme_tied(R, names, best) -> bool:
    """Whether the extreme method ``best`` is not separated from another: equal means, or
    overlapping 95 % intervals of the rounds-to-target (no ordering can be read off)."""
    mb, hb, _ = ci95(R[best])
    for n in names:
        if n != best:
            mn, hn, _ = ci95(R[n])
            if not (abs(mb - mn) > (hb if np.isfinite(hb) else 0.0) +
                    (hn if np.isfinite(hn) else 0.0)):
                return True
    return False


@register("001:fig2", "BM-B Fig. 2 / Table", "non-IID R60: FedAvg, FedSoftWorse, FedSoftBetter",
          STAND_IN, "non-IID FMNIST R60 (mean ± 95 % CI): FedAvg 5.90 ± 0.37, FedSoftWorse "
          "5.73 ± 0.35, FedSoftBetter 5.57 ± 0.32; App. B.1: FedSoftBetter's R60 advantage "
          "vanishes later and FedAvg ends best")
def fig2(cfg) -> Result:
    target = 0.6
    accs = {n: _runs(cfg, "TNIID", a, h) for n, (a, h) in RULES.items()}
    R = {n: rounds_to(a, target) for n, a in accs.items()}
    m = {n: ci95(r) for n, r in R.items()}
    ok1 = m["fedsoftbetter"][0] < m["fedsoftworse"][0] < m["fedavg"][0]
    has_ci = all(np.isfinite(m[n][1]) for n in RULES)
    overl = has_ci and all(abs(m[a][0] - m[b][0]) <= (m[a][1] + m[b][1])
                           for a in RULES for b in RULES if a < b)
    claims = [Claim("ordering of mean R60", "SoftBetter 5.57 < SoftWorse 5.73 < FedAvg 5.90",
                    ", ".join(f"{n} {fmt_ci(R[n])}" for n in RULES),
                    "same strict ordering of the means", bool(ok1),
                    "" if ok1 else "different order (or ties)"),
              Claim("differences within the CIs", "all three CIs overlap",
                    "overlap" if overl else ("no CI (fewer than 2 runs reached 60 %)"
                                             if not has_ci else "some CIs disjoint"),
                    "pairwise 95 % CIs overlap", bool(overl),
                    "" if overl else ("not evaluable" if not has_ci
                                      else "a significant difference"))]
    final = {n: float(a[:, -1].mean()) for n, a in accs.items()}
    o = order(final["fedavg"], max(final["fedsoftworse"], final["fedsoftbetter"]), RES_ACC)
    claims.append(Claim("FedAvg ends best (App. B.1)", "FedSoftBetter's early advantage "
                        "vanishes; FedAvg ends best", " / ".join(f"{n} {final[n] * 100:.2f} %"
                                                                  for n in RULES),
                        f"FedAvg's final accuracy above both soft rules' by >= "
                        f"{RES_ACC * 100:g} pp (below: a tie)", o == ">",
                        "" if o in (">", "tie") else "a soft rule ends higher",
                        status="tie" if o == "tie" else None))
    rows = [{"algorithm": n, "R60_mean": m[n][0], "R60_half": m[n][1], "reached": m[n][2],
             "final_accuracy": final[n]} for n in RULES] + _rows(accs, "non-IID")
    fig, ax = _fig(1, 6, 3.6)
    _curves(ax[0, 0], accs, "non-IID (2 classes per client)")
    reference_line(ax[0, 0], target, f"target accuracy {target:.0%}")
    return Result(rows, claims, fig, setup="target 60 % test accuracy")


@register("001:fig3", "BM-B Fig. 3 / App. B.3", "hybrid strategies, non-IID R60", STAND_IN,
          "non-IID FMNIST R60: FedAvg 5.48 ± 0.75, FedSoftWorseAvg 6.13 ± 0.91, "
          "FedSoftBetterAvg 4.97 ± 0.57, FedAvgSoftWorse 5.76 ± 0.72 (switch at round 20)")
def fig3(cfg) -> Result:
    import functools

    import toys
    from toys.algorithms.switch import AccuracySwitch, SwitchOnAccuracy
    from toys.algorithms.weights import FedAvgWeights, LossWeighted

    from .common import Factory, sweep_runs, torch_backend
    from .seed000 import LOCAL, _problem_at, lr

    target, sw = 0.6, cfg.pick(20, 20, 6)
    accs = {n: _runs(cfg, "TNIID", a, {**h, **({"switch_round": sw} if a == "hybrid" else {})})
            for n, (a, h) in HYBRIDS.items()}
    # the accuracy-triggered switch (spec §5.4): SoftBetter until 60 % test accuracy, then FedAvg
    rule = AccuracySwitch((LossWeighted("fedsoftbetter"), FedAvgWeights()), (target,))
    algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="softbetter-until-60",
                               weights=rule)
    size = _size(cfg)
    backend = torch_backend(cfg)
    fac = Factory(functools.partial(_problem_at, cfg, "TNIID", "mlp"), "TNIID-mlp")
    accs["softbetter-until-60%"] = sweep_runs(
        cfg, fac, algo, grid={"data_seed": list(range(size["seeds"]))}, rounds=size["rounds"],
        label="001-switch eta0=0.03 target=0.6", lr=functools.partial(lr, eta0=0.03),
        backend=backend, **({} if backend == "numpy" else {"device": cfg.device}),
        callbacks=[SwitchOnAccuracy(rule)], **LOCAL, **SOFT)["test_accuracy"][:, 0]
    R = {n: rounds_to(a, target) for n, a in accs.items()}
    m = {n: ci95(r)[0] for n, r in R.items()}
    names = list(HYBRIDS)
    fastest, slowest = min(names, key=m.get), max(names, key=m.get)
    ok1, ok2 = fastest == "fedsoftbetteravg", slowest == "fedsoftworseavg"
    tie1, tie2 = _extreme_tied(R, names, fastest), _extreme_tied(R, names, slowest)
    same = np.array_equal(accs["fedavg"][:, :sw], accs["fedavgsoftworse"][:, :sw])
    sep = " and its 95 % interval apart from every other's (else a tie)"
    claims = [Claim("FedSoftBetterAvg fastest", "4.97 (lowest)",
                    ", ".join(f"{n} {fmt_ci(R[n])}" for n in names), "lowest mean R60" + sep,
                    ok1, (f"lowest mean {fastest}, within another's interval" if tie1 else
                          "" if ok1 else f"{fastest} is faster"),
                    status="tie" if tie1 else None),
              Claim("FedSoftWorseAvg slowest", "6.13 (highest)", f"slowest: {slowest}",
                    "highest mean R60" + sep, ok2,
                    (f"highest mean {slowest}, within another's interval" if tie2 else
                     "" if ok2 else f"{slowest} is slower"),
                    status="tie" if tie2 else None)]
    notes = [f"FedAvgSoftWorse is FedAvg until round {sw}: our runs are bit-identical to "
             f"FedAvg's before the switch ({same}), so with R60 < {sw} its R60 equals FedAvg's. "
             "The paper's 5.76 vs 5.48 for these two can only come from different run sets "
             "(spec §6.2 notes the two FedAvg values 5.90 / 5.48 differ likewise).",
             "Accuracy-triggered switch (no paper number): R60 "
             f"{fmt_ci(R['softbetter-until-60%'])}."]
    rows = [{"algorithm": n, "R60_mean": ci95(r)[0], "R60_half": ci95(r)[1],
             "reached": ci95(r)[2]} for n, r in R.items()] + _rows(accs, "non-IID")
    fig, ax = _fig(1, 6, 3.6)
    _curves(ax[0, 0], accs, "hybrids, non-IID")
    return Result(rows, claims, fig, setup=f"switch at round {sw}; target 60 %", notes=notes)


@register("001:k", "BM-B §4 / App. B.1", "FedWorse(k) / FedBetter(k): k and softening",
          STAND_IN, "qualitative: unsoftened FedWorse / FedBetter 'too unstable'; k: 10 % -> 20 % "
          "increases final accuracy; softening improves FedBetter(k) / FedWorse(k)")
def k_rules(cfg) -> Result:
    accs = {}
    for base in ("fedmax-k", "fedbetter-k"):
        for k in (0.1, 0.2):
            accs[f"{base}({k:.0%})"] = _runs(cfg, "TNIID", base, {"k": k, "loss_offset": "zero"})
    for n in ("fedsoftworse", "fedsoftbetter"):
        a, h = RULES[n]
        accs[n] = _runs(cfg, "TNIID", a, h)
    final = {n: float(a[:, -1].mean()) for n, a in accs.items()}
    claims = []
    for base, soft in (("fedmax-k", "fedsoftworse"), ("fedbetter-k", "fedsoftbetter")):
        lo, hi = final[f"{base}(10%)"], final[f"{base}(20%)"]
        o = order(hi, lo, RES_ACC)
        claims.append(Claim(f"{base}: k 10 % -> 20 % raises final accuracy", "increases",
                            f"{lo * 100:.2f} -> {hi * 100:.2f} %",
                            f"higher at 20 % by >= {RES_ACC * 100:g} pp (below: a tie)",
                            o == ">", "" if o in (">", "tie") else "lower",
                            status="tie" if o == "tie" else None))
        s = final[soft]
        o = order(s, max(lo, hi), RES_ACC)
        claims.append(Claim(f"softening improves {base}", "improves",
                            f"{soft} {s * 100:.2f} % vs best k {max(lo, hi) * 100:.2f} %",
                            f"soft rule's final accuracy above the k rules' by >= "
                            f"{RES_ACC * 100:g} pp (below: a tie)", o == ">",
                            "" if o in (">", "tie") else "worse",
                            status="tie" if o == "tie" else None))
    fig, ax = _fig(1, 6, 3.6)
    _curves(ax[0, 0], accs, "non-IID")
    return Result(_rows(accs, "non-IID") + [{"algorithm": n, "final_accuracy": v}
                                            for n, v in final.items()], claims, fig,
                  setup="non-IID = 2 classes per client")
