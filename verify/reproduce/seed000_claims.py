"""The outcome rules of seed 000's items (:mod:`verify.reproduce.seed000`): the paper's
numbers, the stated resolutions, and the claims decided from per-seed values by the paired 95 %
intervals of :mod:`verify.reproduce.stats` (the arms of a comparison share their data seeds).
Kept apart from the runs so that each module stays small.

Example
-------
>>> import numpy as np
>>> capped([3.0, float("nan")], 50).tolist()
[3.0, 50.0]
"""

from __future__ import annotations

import numpy as np

from .stats import as_claim, combine, decide, km_rounds

__all__ = ["FW", "PAPER_HALF", "PAPER_R90", "PAPER_SMOOTH", "PAPER_TARGET", "RES_ACC", "RES_EQ",
           "RES_R", "RES_SMOOTH", "both_finite", "capped", "fig2_4_claims", "fig5_claim",
           "table3_claims"]

FW = ("TNIID", "NIID", "IID")

PAPER_R90 = {("TNIID", "fedavg"): 15.36, ("TNIID", "fedsoftmax"): 8.28,
             ("NIID", "fedavg"): 13.3421, ("NIID", "fedsoftmax"): 10.6579,
             ("IID", "fedavg"): 23.0556, ("IID", "fedsoftmax"): 23.0556}
PAPER_HALF = {("TNIID", "fedavg"): 0.4821, ("TNIID", "fedsoftmax"): 0.4241,
              ("NIID", "fedavg"): 0.6158, ("NIID", "fedsoftmax"): 0.6616,
              ("IID", "fedavg"): 1.5281, ("IID", "fedsoftmax"): 1.4484}
PAPER_SMOOTH = {("TNIID", "fedavg"): 1.3686, ("TNIID", "fedsoftmax"): 2.3227,
                ("NIID", "fedavg"): 1.3404, ("NIID", "fedsoftmax"): 1.7307,
                ("IID", "fedavg"): 2.8107, ("IID", "fedsoftmax"): 2.7724}
RES_R = 1.0  # rounds: R_x differences below one round are ties
RES_ACC = 0.005  # 0.5 pp: accuracy orderings
RES_EQ = 0.02  # 2 pp: "about equal" final accuracies (the paper's 'rather low' difference)
PAPER_TARGET = 0.90


def capped(r, H) -> np.ndarray:
    """min(R_x, H) per run (a run that never reached counts H: the restricted mean's terms)."""
    r = np.asarray(r, dtype=float)
    return np.where(np.isfinite(r), np.minimum(r, H), float(H))


def table3_claims(R, H, x):
    """Table 3's claims from ``R[fw, algo]`` (R_x per data seed, NaN = censored at ``H``) and
    the target ``x``: (claims, decisions, Kaplan–Meier estimates, capped values)."""
    c = {k: capped(v, H) for k, v in R.items()}
    km = {k: km_rounds(v, H) for k, v in R.items()}
    lab = f"R{x * 100:g}"
    claims, dec = [], []
    for fw in FW:
        iid = fw == "IID"
        d = decide(c[fw, "fedsoftmax"], c[fw, "fedavg"], expect="=" if iid else "<",
                   resolution=RES_R, paired=True,
                   unit=" rd")
        dec.append(d)
        paper = (f"{PAPER_R90[fw, 'fedsoftmax']:.2f} vs {PAPER_R90[fw, 'fedavg']:.2f}" +
                 ("" if iid else " (disjoint CIs)"))
        ours = (f"KM median {km[fw, 'fedsoftmax'].fmt()} vs {km[fw, 'fedavg'].fmt()}; "
                f"restricted mean {c[fw, 'fedsoftmax'].mean():.2f} vs {c[fw, 'fedavg'].mean():.2f}"
                f", {d.fmt()}")
        rule = ("paired 95 % interval of the difference of min(R_x, H) (FedSoftMax - FedAvg) "
                + (f"inside ±{RES_R:g} round" if iid else f"below 0; within ±{RES_R:g} round: "
                   "a tie"))
        claims.append(as_claim(f"{fw}: " + ("no difference" if iid else
                                            f"FedSoftMax reaches {x:.0%} sooner"),
                               paper, ours, rule, d.outcome, d.how))
    g = {fw: c[fw, "fedavg"] - c[fw, "fedsoftmax"] for fw in FW}
    parts = [decide(g["TNIID"], g["NIID"], expect=">", resolution=RES_R, paired=True,
                   unit=" rd"),
             decide(g["NIID"], g["IID"], expect=">", resolution=RES_R, paired=True,
                   unit=" rd")]
    dec += parts
    out = combine(parts)
    claims.append(as_claim("gap grows with non-IIDness (Remark 9)", "7.08 > 2.68 > 0.00",
                           " > ".join(f"{g[f].mean():.2f}" for f in FW) +
                           f" (TNIID - NIID {parts[0].fmt()}; NIID - IID {parts[1].fmt()})",
                           f"{lab}(FedAvg) - {lab}(FedSoftMax): TNIID > NIID > IID, each step by "
                           "the paired 95 % interval", out,
                           "; ".join(p.how for p in parts if p.outcome != "matches")))
    return claims, dec, km, c


RES_SMOOTH = {"S1": 0.2, "S2": 0.1}  # absolute: S2 is a correlation near 0


def both_finite(a, b):
    """The pairs (a_i, b_i) where both are finite (an undefined smoothness drops its pair)."""
    ok = np.isfinite(a) & np.isfinite(b)
    return a[ok], b[ok]


def fig2_4_claims(acc):
    """The claims of Figs 2-4 from the per-seed curves ``acc[fw, algo]`` (seeds, rounds)."""
    claims, widths = [], []
    for fw in FW:
        s, a = acc[fw, "fedsoftmax"][:, -1], acc[fw, "fedavg"][:, -1]
        d = decide(s, a, expect="=", resolution=RES_EQ, paired=True, scale=100, unit=" pp")
        widths.append(d.width)
        claims.append(as_claim(f"{fw}: final accuracy FedSoftMax ≈ FedAvg",
                               "'rather low' difference",
                               f"{s.mean():.3f} vs {a.mean():.3f}, {d.fmt()}",
                               f"paired 95 % interval of the difference inside ±{RES_EQ * 100:g} "
                               "pp", d.outcome, d.how))
    for fw in ("NIID", "TNIID"):
        k, a = acc[fw, "fedmax-k"], acc[fw, "fedavg"]
        early = decide(k[:, 2], a[:, 2], expect=">", resolution=RES_ACC, paired=True, scale=100,
                       unit=" pp")
        final = decide(k[:, -1], a[:, -1], expect="<", resolution=RES_ACC, paired=True, scale=100,
                       unit=" pp")
        widths += [early.width, final.width]
        out = combine([early, final])
        how = "; ".join(f"{w}: {p.outcome}" + (f" ({p.how})" if p.how else "")
                        for w, p in (("round 3", early), ("final", final))
                        if p.outcome != "matches")
        claims.append(as_claim(f"{fw}: FedMax(k = 10 %) fast early, worse at the end",
                               "qualitative (Remark 10)",
                               f"round 3: {k[:, 2].mean():.3f} vs {a[:, 2].mean():.3f} "
                               f"({early.fmt()}); final {k[:, -1].mean():.3f} vs "
                               f"{a[:, -1].mean():.3f} ({final.fmt()})",
                               "above FedAvg at round 3 and below it at the end (paired 95 % "
                               f"intervals; within ±{RES_ACC * 100:g} pp: a tie)", out, how))
    return claims, widths


def fig5_claim(temps, c, x):
    """'higher T, faster': R_x(T max) < R_x(T min) by the paired interval, and no step up
    between neighbouring temperatures that the interval shows."""
    end = decide(c[-1], c[0], expect="<", resolution=RES_R, paired=True,
                   unit=" rd")
    steps = [decide(c[i + 1], c[i], expect="<", resolution=RES_R, paired=True,
                   unit=" rd")
             for i in range(len(temps) - 1)]
    up = [f"T {temps[i]:g} -> {temps[i + 1]:g}" for i, s in enumerate(steps)
          if s.relation == ">"]
    out = "differs" if up else end.outcome
    how = f"R_x rises at {', '.join(up)}" if up else end.how
    return as_claim("higher T, faster (NIID)", "speed increases with T in [5, 30]",
                    ", ".join(f"T={t:g}: {v.mean():.2f}" for t, v in zip(temps, c)) +
                    f"; T max - T min {end.fmt()}",
                    f"restricted mean R{x * 100:g}: T max below T min by the paired 95 % "
                    f"interval (within ±{RES_R:g} round: a tie) and no significant rise between "
                    "neighbouring T", out, how), [end.width] + [s.width for s in steps]
