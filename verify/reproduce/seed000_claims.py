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

from .claims import rounds_pair
from .stats import as_claim, combine, decide, km_rounds, power_note

__all__ = ["FW", "PAPER_HALF", "PAPER_R90", "PAPER_SMOOTH", "PAPER_TARGET", "RES_ACC", "RES_EQ",
           "RES_R", "RES_SMOOTH", "both_finite", "capped", "fig2_4_claims", "fig5_claim",
           "fig6_claims", "fig7_claim", "paper_gap", "slopes", "table3_claims", "top_slots"]

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


def paper_gap(fw: str) -> float:
    """The paper's R90(FedAvg) - R90(FedSoftMax) in ``fw`` (rounds; MNIST, Table 3): the effect
    the claims' intervals must hold (absolute rounds: our target may be below 0.90, a
    departure each section names).

    >>> round(paper_gap("TNIID"), 2), paper_gap("IID")
    (7.08, 0.0)
    """
    return PAPER_R90[fw, "fedavg"] - PAPER_R90[fw, "fedsoftmax"]


def table3_claims(R, H, x):
    """Table 3's claims from ``R[fw, algo]`` (R_x per data seed, NaN = censored at ``H``) and
    the target ``x``: (claims, decisions, Kaplan–Meier estimates, capped values)."""
    c = {k: capped(v, H) for k, v in R.items()}
    km = {k: km_rounds(v, H) for k, v in R.items()}
    lab = f"R{x * 100:g}"
    claims, dec = [], []
    for fw in FW:
        iid = fw == "IID"
        d = rounds_pair(R[fw, "fedsoftmax"], R[fw, "fedavg"], "=" if iid else "<", RES_R, H,
                        effect=None if iid else -paper_gap(fw))
        dec.append(d)
        paper = (f"{PAPER_R90[fw, 'fedsoftmax']:.2f} vs {PAPER_R90[fw, 'fedavg']:.2f}" +
                 ("" if iid else " (disjoint CIs)"))
        ours = (f"KM median {km[fw, 'fedsoftmax'].fmt()} vs {km[fw, 'fedavg'].fmt()}; "
                f"restricted mean {c[fw, 'fedsoftmax'].mean():.2f} vs {c[fw, 'fedavg'].mean():.2f}"
                f", {d.fmt()}")
        rule = ("paired 95 % interval of the difference of min(R_x, H) (FedSoftMax - FedAvg) "
                + (f"inside ±{RES_R:g} round (equivalence test)" if iid else
                   f"below 0 and holding the paper's {-paper_gap(fw):+.2f} rounds; within "
                   f"±{RES_R:g} round: a tie"))
        claims.append(as_claim(f"{fw}: " + ("no difference" if iid else
                                            f"FedSoftMax reaches {x:.0%} sooner"),
                               paper, ours, rule, d.outcome, d.how))
    g = {fw: c[fw, "fedavg"] - c[fw, "fedsoftmax"] for fw in FW}
    parts = [decide(g["TNIID"], g["NIID"], expect=">", resolution=RES_R, paired=True,
                    unit=" rd", effect=paper_gap("TNIID") - paper_gap("NIID")),
             decide(g["NIID"], g["IID"], expect=">", resolution=RES_R, paired=True,
                    unit=" rd", effect=paper_gap("NIID") - paper_gap("IID"))]
    dec += parts
    out = combine(parts)
    claims.append(as_claim("gap grows with non-IIDness (Remark 9)", "7.08 > 2.68 > 0.00",
                           " > ".join(f"{g[f].mean():.2f}" for f in FW) +
                           f" (TNIID - NIID {parts[0].fmt()}; NIID - IID {parts[1].fmt()})",
                           f"{lab}(FedAvg) - {lab}(FedSoftMax): TNIID > NIID > IID, each step by "
                           "the paired 95 % interval, holding the paper's steps (4.40, 2.68 "
                           "rounds)", out,
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


RES_SLOPE = 0.5  # Fig. 6: a log-log slope within -1 ± 0.5 is "like 1/t" (the band [-1.5, -0.5])
RES_DEC = 0.1  # decades: smaller differences of a log10 ratio of deviations are ties
RES_SHARE = 0.05  # Fig. 7: 5 pp of the top slots


def slopes(y, floor: float = 1e-10) -> np.ndarray:
    """The least-squares slope of log y against log t over the second half of the rounds, per
    row of ``y`` (seeds, rounds; values below ``floor`` are numerical zeros, read at it)."""
    y = np.log(np.maximum(np.asarray(y, dtype=float), floor))
    t = np.log(np.arange(1, y.shape[1] + 1, dtype=float))
    h = y.shape[1] // 2
    x = t[h:] - t[h:].mean()
    return (y[:, h:] - y[:, h:].mean(axis=1, keepdims=True)) @ x / float(x @ x)


def fig6_claims(dev, floor: float = 1e-10):
    """Fig. 6's claims from ``dev[fw]`` = mean |alpha_i - p_i| over the clients (seeds,
    rounds), paired by data seed: (claims, power notes)."""
    s = slopes(dev["IID"], floor)
    d1 = decide(s, np.full(s.size, -1.0), expect="=", resolution=RES_SLOPE, paired=True)
    fin = {fw: np.maximum(v[:, -1], floor) for fw, v in dev.items()}
    lr = np.log10(fin["TNIID"] / fin["IID"])
    d2 = decide(lr, np.full(lr.size, np.log10(2.0)), expect=">", resolution=RES_DEC, paired=True,
                unit=" decades")
    claims = [as_claim("IID: |alpha - p| decays like 1/t", "rate 1/t (slope -1)",
                       f"log-log slope over the second half {s.mean():.2f} (mean of {s.size} "
                       f"seeds); slope + 1 {d1.fmt()}", "the paired 95 % interval of the "
                       f"per-seed slope inside -1 ± {RES_SLOPE:g} (the band [-1.5, -0.5])",
                       d1.outcome, f"slope {s.mean():.2f}, not -1" if d1.outcome == "differs"
                       else d1.how),
              as_claim("TNIID: alpha stays away from p", "non-p limit (RQ3)",
                       f"final mean deviation {fin['TNIID'].mean():.4f} vs IID "
                       f"{fin['IID'].mean():.4f}; log10(TNIID / IID) - log10 2 {d2.fmt()}",
                       "final TNIID deviation > 2 x IID's: the paired 95 % interval of "
                       "log10(TNIID / IID) above log10 2 (within ±"
                       f"{RES_DEC:g} decade: a tie)", d2.outcome,
                       "no larger than 2 x IID's" if d2.outcome == "differs" else d2.how)]
    return claims, [power_note(s.size, RES_SLOPE, [d1.width], " (slope)", paired=True),
                    power_note(lr.size, RES_DEC, [d2.width], " decade(s)", paired=True)]


def top_slots(alphas, share: float = 0.2):
    """The top-``share`` clients of every round by alpha (``alphas``: seeds, rounds, N):
    (the mask (seeds, rounds, N), the share of all top slots held by the ``share`` most
    frequent clients of each seed)."""
    A = np.asarray(alphas, dtype=float)
    top = max(1, int(A.shape[-1] * share))
    M = np.zeros(A.shape, dtype=bool)
    np.put_along_axis(M, np.argsort(-A, axis=-1)[..., :top], True, axis=-1)
    counts = np.sort(M.sum(axis=1), axis=-1)[:, ::-1]
    return M, counts[:, :top].sum(axis=1) / M.sum(axis=(1, 2))


def fig7_claim(shares, ever, N, top):
    """'a small group of clients dominates': the share of the top slots held by the top-20 %
    most frequent clients above 50 % by the 95 % interval over the seeds."""
    d = decide(shares, np.full(shares.size, 0.5), expect=">", resolution=RES_SHARE, paired=True,
               scale=100, unit=" pp")
    claim = as_claim("a small group of clients dominates", "a small group over the whole run",
                     f"{ever.mean():.1f} of {N} clients ever in the top {top} (mean over "
                     f"{shares.size} seeds); the {top} most frequent hold {shares.mean():.0%} "
                     f"of the top slots; minus 50 % {d.fmt()}", "the top-20 % most frequent "
                     "clients hold more than 50 % of the top slots: the 95 % interval over the "
                     f"seeds above 50 % (within ±{RES_SHARE * 100:g} pp: a tie)", d.outcome,
                     "top slots spread out" if d.outcome == "differs" else d.how)
    return claim, power_note(shares.size, RES_SHARE * 100, [d.width * 100], " pp")
