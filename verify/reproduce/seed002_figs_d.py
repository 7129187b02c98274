"""Seed 002 (FedAU) appendix figures: D.2.1-D.2.4 (loss and accuracy over the rounds, seven
methods, Bernoulli participation) and D.4.1 / D.4.2 (FedAU's aggregation weights beside the
known 1 / p_n, Bernoulli and cyclic participation).

``002:figD2`` runs the seven methods of Table 1 on the stand-in of :mod:`verify.reproduce.seed002`
(same split, p_n recipe, step sizes, I = 5 local steps of batch 16) with the training loss, the
training accuracy and the test accuracy recorded every round, smoothed as the paper smooths them
(a moving window of 3 % of the rounds; mean and standard deviation over every sample of every
seed in the window). The four figures differ only in their data set (SVHN, CIFAR-10, CIFAR-100,
CINIC-10), none of which is offline: one stand-in item stands for all four.

``002:figD4`` needs no data and no model: Algorithm 2's weight omega_n(t) depends only on
client n's participation sample path. It runs at the paper's scale at every size but tiny
(N = 250 clients, p_n by the recipe of spec §5.1.4 with kappa_n ~ Dir(0.1), q ~ Dir(0.1),
E[p_n] = 0.1, p_min = 0.02; 10 000 rounds as CIFAR-10; K -> infinity as the paper's figure),
over several seeds (the paper shows one run), the seeds stacked as extra clients so nothing
loops over clients.

Not registered, with the reason (:data:`NOT_REGISTERED`: paper 002's entries of
:data:`verify.reproduce.unregistered.NOT_REGISTERED`, which ``boundlab reproduce --list``
prints; Table 1's other columns and Table C.4.1 are there too):

- the data sets of Figs D.2.1-D.2.4 (SVHN, CIFAR-10, CIFAR-100, CINIC-10) need downloads and the
  paper's CNNs GPU-days; ``002:figD2`` runs their experiment on the stand-in instead;
- the jump of Fig. D.2.3 at round 10 000 comes from CIFAR-100's step-size decay schedule
  (halved every 1 000 rounds from round 10 000), which only the 20 000-round CIFAR-100 run has.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .common import LastProcess, sweep_runs
from .registry import Result, register
from .seed000 import _fig
from .seed002 import METHODS, RESOLUTION, STAND_IN, Settings, rounds
from .stats import as_claim, decide, power_note, relation
from .unregistered import as_dict

NOT_REGISTERED = as_dict("002")  # {ref: reason}: a view of the public list
LOSS_RES = 0.005  # training loss (nats): smaller differences are ties
METRICS = (("train_loss", "training loss", "<", LOSS_RES, 1.0, ""),
           ("train_accuracy", "training accuracy", ">", RESOLUTION, 100.0, " pp"),
           ("test_accuracy", "test accuracy", ">", RESOLUTION, 100.0, " pp"))
HEAD = "FedAU K=50"


class TrainMetrics:
    """Round callback: the global model's mean loss (no l2 term) and accuracy on every
    client's training samples pooled (metrics ``train_loss`` / ``train_accuracy``), on the
    problem the factory built last (:class:`~.seed002.Settings`)."""

    def __init__(self, factory):
        self.factory, self._pooled = factory, None

    def __call__(self, info):
        from toys._array import to_numpy

        prob = self.factory.last
        if self._pooled is None or self._pooled[0] is not prob:
            mask = np.asarray(prob.mask, dtype=bool)
            self._pooled = (prob, np.asarray(prob.X)[mask], np.asarray(prob.y)[mask])
        _, X, y = self._pooled
        w = np.asarray(to_numpy(info.model), dtype=float)
        info.record("train_loss", prob.pooled_loss(w, X, y))
        info.record("train_accuracy", prob.accuracy(w, X, y))

    def __getstate__(self):  # the pooled copy is rebuilt where the runs happen (Dask)
        return {"factory": self.factory, "_pooled": None}


def smooth(curves: np.ndarray, frac: float = 0.03):
    """The paper's smoothing of per-seed curves (S, R): a trailing window of ``frac`` of the
    rounds (at least 1); per window end, the mean and standard deviation of all S x w samples
    in it (NaN samples, diverged runs, left out). Returns ``(rounds, mean, std)``, rounds
    1-based at each window's end.

    >>> r, m, s = smooth(np.array([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]]), frac=0.5)
    >>> r.tolist(), m.tolist(), s.tolist()
    ([2, 3, 4], [2.5, 3.5, 4.5], [1.118033988749895, 1.118033988749895, 1.118033988749895])
    """
    c = np.atleast_2d(np.asarray(curves, dtype=float))
    R = c.shape[1]
    w = max(1, int(round(frac * R)))
    win = np.lib.stride_tricks.sliding_window_view(c, w, axis=1)  # (S, R - w + 1, w)
    flat = np.moveaxis(win, 0, 1).reshape(R - w + 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN window: NaN
        return np.arange(w, R + 1), np.nanmean(flat, axis=1), np.nanstd(flat, axis=1)


def _curves(cfg, S, R):
    """{method: {metric: (S, R) array}} of the seven methods, Bernoulli participation."""
    out = {}
    for name, (algo, hyper) in METHODS.items():
        fac = Settings(cfg, {"bernoulli": ("bernoulli", 0.02, 0.1, 0.1)})
        res = sweep_runs(cfg, fac, algo, grid={"data_seed": list(range(S)), "part": ["bernoulli"]},
                         rounds=R, label=f"002-figD2-{name}", participation=LastProcess(fac),
                         callbacks=[TrainMetrics(fac)], metrics=[m[0] for m in METRICS],
                         local_steps=5, batch_size=16, **hyper)
        out[name] = {m: v[:, 0] for m, v in res.items()}
    return out


def _area(curve: np.ndarray) -> np.ndarray:
    """Per seed, the mean over the rounds (NaN when the whole curve is)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(curve, axis=1)


def _shares(cur, rival, metric, expect, res):
    """Shares of the smoothed rounds where FedAU is ahead of / tied with / behind ``rival``."""
    _, a, _ = smooth(cur[HEAD][metric])
    _, b, _ = smooth(cur[rival][metric])
    d = (a - b) if expect == ">" else (b - a)
    ok = np.isfinite(d)
    n = max(1, int(ok.sum()))
    return (float(np.sum(d[ok] >= res)) / n, float(np.sum(np.abs(d[ok]) < res)) / n,
            float(np.sum(d[ok] <= -res)) / n)


def _metric_claim(cur, metric, words, expect, res, scale, unit):
    """FedAU (K=50) against the best other non-FedAU method, on the area under the curve."""
    head = _area(cur[HEAD][metric])
    others = {n: _area(c[metric]) for n, c in cur.items() if not n.startswith("FedAU")}
    finite = {n: v for n, v in others.items() if np.all(np.isfinite(v))}
    better = max if expect == ">" else min
    paper = ("FedAU best in the vast majority of cases and rounds (SVHN, CIFAR-100, CINIC-10; "
             "on CIFAR-10 FedVarp and MIFA have a slightly higher test accuracy, FedAU still "
             "the highest training accuracy)")
    side = "higher" if expect == ">" else "lower"
    rule = (f"the 95 % interval (paired by data seed) of FedAU (K=50)'s mean {words} over the "
            f"rounds minus the best other method's shows FedAU {side}"
            f" (a tie within {res * scale:g}{unit}; too wide: inconclusive)")
    if not np.all(np.isfinite(head)) or not finite:
        who = "FedAU (K=50)" if not np.all(np.isfinite(head)) else "every other method"
        return as_claim(f"FedAU (K=50) best in {words}", paper, f"{who} diverged", rule,
                        "differs", f"{who} diverged"), None
    rival = better(finite, key=lambda n: float(np.mean(finite[n])))
    d = decide(head, finite[rival], expect=expect, resolution=res, paired=True, scale=scale,
               unit=unit)
    ahead, tied, behind = _shares(cur, rival, metric, expect, res)
    shown = "{:.2f} %" if unit else "{:.3f}"
    ours = (f"FedAU {shown.format(np.mean(head) * scale)} vs {rival} "
            f"{shown.format(np.mean(finite[rival]) * scale)} ({d.fmt()}); over the smoothed "
            f"rounds FedAU ahead in {ahead:.0%}, tied in {tied:.0%}, behind in {behind:.0%}")
    return as_claim(f"FedAU (K=50) best in {words} over the rounds", paper, ours, rule,
                    d.outcome, d.how), d


def _plot_d2(cur, R):
    fig, axes = _fig(3, 4.0, 3.0)
    for ax, (metric, words, *_rest) in zip(axes[0], METRICS):
        for name in cur:
            r, m, s = smooth(cur[name][metric])
            scale = 1.0 if metric == "train_loss" else 100.0
            (line,) = ax.plot(r, m * scale, lw=0.9, label=name)
            ax.fill_between(r, (m - s) * scale, (m + s) * scale, color=line.get_color(),
                            alpha=0.15, lw=0)
        ax.set_xlabel("round")
        ax.set_title(words)
        ax.set_ylabel("loss" if metric == "train_loss" else "accuracy %")
    axes[0, 0].legend()
    return fig


@register("002:figD2", "FedAU Figs D.2.1-D.2.4 (App. D.2)", "loss and accuracy over the rounds, "
          "seven methods, Bernoulli participation (one stand-in for the four data sets)",
          STAND_IN + "; training loss, training accuracy and test accuracy every round",
          "curves only (mean ± std over 5 seeds, moving window of 3 % of the rounds): FedAU "
          "performs best in the vast majority of cases and across most rounds; on CIFAR-10 "
          "FedVarp / MIFA reach a slightly higher test accuracy, FedAU the highest training "
          "accuracy")
def fig_d2(cfg) -> Result:
    S = cfg.n_seeds(5, 3, 2)
    R = rounds(cfg)
    cur = _curves(cfg, S, R)
    claims, widths = [], []
    for metric, words, expect, res, scale, unit in METRICS:
        c, d = _metric_claim(cur, metric, words, expect, res, scale, unit)
        claims.append(c)
        if d is not None and unit:  # the accuracies' widths, in pp
            widths.append(d.width * scale)
    rows = []
    for name, per in cur.items():
        for metric, *_ in METRICS:
            area = _area(per[metric])
            rows.append({"method": name, "metric": metric, "mean_over_rounds": float(
                np.nanmean(area)) if np.isfinite(area).any() else math.nan,
                "final": float(np.nanmean(per[metric][:, -1])) if np.isfinite(
                    per[metric][:, -1]).any() else math.nan, "seeds": S, "rounds": R})
    N = cfg.pick(100, 40, 12)
    return Result(rows, claims, _plot_d2(cur, R), setup=f"N = {N} clients (paper: 250), {R} "
                  f"rounds, {S} seed(s), Bernoulli participation (p_min = 0.02, E[p_n] = 0.1); "
                  "'best' read as the mean of the curve over all rounds, the area the "
                  "figures show; smoothing as the paper (window 3 % of the rounds)",
                  notes=[power_note(S, RESOLUTION * 100, widths, " pp", paired=True),
                         "One stand-in replaces the four data sets of Figs D.2.1-D.2.4; the "
                         "training loss is the mean loss over every client's samples pooled "
                         "(no l2 term)."])


# ------------------------------------------------------------------ Figs D.4.1 / D.4.2
DEV_RES = 0.01  # 1 % relative deviation of omega_n from 1 / p_n: smaller differences are ties
SHARE_RES = 0.03  # the share of weights inside the paper's 2-sigma range: +- 3 pp is "equal"
PATTERNS = ("bernoulli", "cyclic")


def participation_probs(N: int, seeds, p_min=0.02, mean=0.1) -> np.ndarray:
    """(S, N) p_n per seed: FedAU's recipe (spec §5.1.4) with label mixes kappa_n ~ Dir(0.1)
    over 10 classes, q ~ Dir(0.1), E[p_n] = ``mean``, floor ``p_min``, clipped to 1.

    >>> p = participation_probs(250, [0, 1])
    >>> p.shape, bool(p.min() >= 0.02)
    ((2, 250), True)
    """
    from toys.participation import fedau_probs

    return np.stack([fedau_probs(np.random.default_rng([int(s), 4]), n_clients=N,
                                 p_min=p_min, mean=mean).probs for s in seeds])


def weight_paths(probs: np.ndarray, pattern: str, rounds: int, seed: int = 0):
    """Algorithm 2's omega_n(t) (K -> infinity) on participation sample paths of ``pattern``
    (``"bernoulli"`` or ``"cyclic"``, cycle 100) for every row of ``probs`` (S, N) at once
    (the rows stacked as S N independent clients). Returns ``(omega, chi)``: omega (rounds, S,
    N), the weight of round t (chosen before chi_t is seen), and chi (rounds, S, N) the
    participation."""
    from toys import participation as part
    from toys.algorithms.fedau import fedau_init, fedau_update

    S, N = probs.shape
    flat = probs.reshape(-1)
    proc = part.make(pattern, S * N, **({"p": flat} if pattern == "bernoulli" else
                                        {"p": flat, "cycle": 100}))
    chi = part.sample(proc, rounds, np.random.default_rng([seed, 5]))
    omega = np.empty((rounds, S * N))
    st = fedau_init(S * N)
    for t in range(rounds):  # a loop over rounds; every client of every seed at once
        omega[t] = st.omega
        st = fedau_update(st, chi[t], math.inf)
    return omega.reshape(rounds, S, N), chi.reshape(rounds, S, N)


def _deviation(omega, probs):
    """(S, N) mean over the second half of the rounds of |omega_n(t) p_n - 1|."""
    half = omega.shape[0] // 2
    return np.mean(np.abs(omega[half:] * probs[None] - 1.0), axis=0)


def _clients(probs, p_min):
    """Per seed: the index of the most frequent client and a mask of the clients at the floor
    (a seed without any: its least frequent client)."""
    high = np.argmax(probs, axis=1)
    low = np.isclose(probs, p_min)
    none = ~low.any(axis=1)
    low[none, np.argmin(probs[none], axis=1)] = True
    return high, low


def two_sigma_range(T: int, p: float) -> tuple[float, float]:
    """The paper's range of T / (number of participations) within two standard deviations:
    T / (mu' + 2 sigma'), T / (mu' - 2 sigma') with mu' = T p, sigma' = sqrt(T p (1 - p)).

    >>> [round(v, 1) for v in two_sigma_range(10_000, 0.02)]
    [43.9, 58.1]
    """
    mu, sd = T * p, math.sqrt(T * p * (1 - p))
    return T / (mu + 2 * sd), (T / (mu - 2 * sd) if mu > 2 * sd else math.inf)


def _share_claim(final_low, T, p_min):
    lo, hi = two_sigma_range(T, p_min)
    inside = (final_low >= lo) & (final_low <= hi)
    n = int(inside.size)
    share = float(inside.mean()) if n else math.nan
    z = 1.959963984540054
    centre = (share + z * z / (2 * n)) / (1 + z * z / n) if n else math.nan  # Wilson
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / (1 + z * z / n) \
        if n else math.nan
    rel = relation(centre - half - 0.954, centre + half - 0.954, SHARE_RES)
    outcome = {"tie": "matches", ">": "differs", "<": "differs"}.get(rel, "inconclusive")
    need = int(math.ceil(n * ((2 * half) / SHARE_RES) ** 2)) + 1 if n and half > 0 else None
    how = ("" if outcome == "matches" else
           f"share {share:.3f}, 95 % interval [{centre - half:.3f}, {centre + half:.3f}]"
           + (f"; about {need} weights would decide it" if outcome == "inconclusive" and need
              else ""))
    return as_claim(
        f"Bernoulli, p_n = {p_min:g}: FedAU's final weights spread as the paper's 2-sigma "
        "range says", "T / (mu' ± 2 sigma') = 43.9 … 58.1 at T = 10 000 (1 / p_n = 50), i.e. "
        "about 95 % of sample paths", f"{share:.1%} of {n} weights inside [{lo:.1f}, {hi:.1f}]"
        f" (T = {T})", f"95 % (Wilson) interval of the share within ±{SHARE_RES:g} of 0.954 "
        "(outside: differs; neither: inconclusive)", outcome, how)


def _plot_d4(res, T):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.ticker import MaxNLocator

    from ..figures.reproduce import paper_axes

    fig, axes = paper_axes(5, 2.1, nrows=2)
    t = np.arange(1, T + 1) / 1000.0
    for row, pattern in enumerate(PATTERNS):
        omega, probs, high, low = res[pattern]
        panels = [("(a) mean, all", omega[:, 0].mean(axis=1), float(np.mean(1 / probs[0])))]
        picks = [int(high[0])] + [int(i) for i in np.flatnonzero(low[0])[:3]]
        for k, i in enumerate(picks):
            panels.append((f"({'bcde'[k]}) p = {probs[0, i]:.3f}", omega[:, 0, i],
                           1 / probs[0, i]))
        for ax, (title, curve, known) in zip(axes[row], panels):
            ax.plot(t, curve, lw=0.8, color="tab:blue", label="FedAU (K → ∞)")
            ax.axhline(known, color="tab:red", ls="--", lw=0.9,
                       label="known statistics 1 / p_n")
            ax.set_title(title)
            ax.xaxis.set_major_locator(MaxNLocator(3))
            ax.yaxis.set_major_locator(MaxNLocator(4))
        axes[row, 0].set_ylabel(f"{pattern}: weight")
        axes[row, 0].legend()
    for ax in axes[1]:
        ax.set_xlabel("round (1000s)")
    return fig


def _d4_claims(dev, p_min):
    """The two comparisons of the deviations |omega_n p_n - 1| (per seed); (claims, widths)."""
    claims = []
    d1 = decide(dev["bernoulli", "low"], dev["bernoulli", "high"], expect=">",
                resolution=DEV_RES, paired=True)
    claims.append(as_claim(
        "Bernoulli: weights of p_n = 2 % clients further from 1 / p_n than the most frequent "
        "client's", "quite different from 1 / p_n, especially at low p_n (Fig. D.4.1 (b) vs "
        "(c)-(e))", f"mean |omega_n p_n - 1| over the second half: p_n = {p_min:g} clients "
        f"{dev['bernoulli', 'low'].mean():.3f}, most frequent {dev['bernoulli', 'high'].mean():.3f}"
        f" ({d1.fmt()})", f"95 % interval (paired by seed) of the difference shows '>' (a tie "
        f"within {DEV_RES:g}; too wide: inconclusive)", d1.outcome, d1.how))
    d2 = decide(dev["cyclic", "low"], dev["bernoulli", "low"], expect="<", resolution=DEV_RES,
                paired=True)
    claims.append(as_claim(
        "p_n = 2 % clients: cyclic weights closer to 1 / p_n than Bernoulli's",
        "more similar with cyclic participation (Fig. D.4.2 vs D.4.1)",
        f"mean |omega_n p_n - 1|: cyclic {dev['cyclic', 'low'].mean():.4f}, Bernoulli "
        f"{dev['bernoulli', 'low'].mean():.4f} ({d2.fmt()})", "95 % interval (paired by seed) "
        f"of the difference shows '<' (a tie within {DEV_RES:g}; too wide: inconclusive)",
        d2.outcome, d2.how))
    return claims, [d1.width, d2.width]


def _d4_rows(res, probs, high, low, p_min):
    """Per pattern and seed: the most frequent client and three at the floor."""
    S = probs.shape[0]
    rows = [{"pattern": pat, "seed": s, "client": int(i), "p_n": float(probs[s, i]),
             "known_weight": float(1 / probs[s, i]), "fedau_final_weight":
             float(res[pat][0][-1, s, i]), "mean_abs_rel_dev_second_half":
             float(_deviation(res[pat][0][:, s:s + 1], probs[s:s + 1])[0, i]),
             "kind": "most frequent" if i == high[s] else f"p_n = {p_min:g}"}
            for pat in PATTERNS for s in range(S)
            for i in [int(high[s])] + [int(j) for j in np.flatnonzero(low[s])[:3]]]
    return rows


@register("002:figD4", "FedAU Figs D.4.1 / D.4.2 (App. D.4)", "FedAU's aggregation weights "
          "beside the known 1 / p_n over the rounds, Bernoulli and cyclic participation",
          "no data and no model: Algorithm 2's weights depend only on the participation sample "
          "paths; p_n by FedAU's recipe (kappa_n ~ Dir(0.1), q ~ Dir(0.1), E[p_n] = 0.1, p_min "
          "= 0.02) over N = 250 clients, as the paper's CIFAR-10 runs",
          "curves only (CIFAR-10, K → ∞, one run): with Bernoulli participation the weights "
          "can be quite different from 1 / p_n, especially for clients with p_n = 2 %; with "
          "cyclic participation FedAU's and the known statistics' weights are more similar; "
          "§5: for p_n = 0.02 and T = 10 000, T / (mu' ± 2 sigma') spans 43.9 … 58.1 around 50")
def fig_d4(cfg) -> Result:
    S = cfg.n_seeds(10, 5, 2)
    T = cfg.pick(10_000, 10_000, 500)
    N, p_min = 250, 0.02
    probs = participation_probs(N, range(S), p_min=p_min)
    high, low = _clients(probs, p_min)
    res, dev = {}, {}
    for pattern in PATTERNS:
        omega, chi = weight_paths(probs, pattern, T)
        res[pattern] = (omega, probs, high, low)
        d = _deviation(omega, probs)
        dev[pattern, "low"] = np.array([d[s][low[s]].mean() for s in range(S)])
        dev[pattern, "high"] = d[np.arange(S), high]
    claims, widths = _d4_claims(dev, p_min)
    omega_b = res["bernoulli"][0]
    final_low = np.concatenate([omega_b[-1, s][low[s]] for s in range(S)])
    claims.append(_share_claim(final_low, T, p_min))
    rows = _d4_rows(res, probs, high, low, p_min)
    lo, hi = two_sigma_range(T, p_min)
    return Result(rows, claims, _plot_d4(res, T), setup=f"N = {N} clients, {T} rounds, {S} "
                  f"seed(s) (the paper: one run); K → ∞; cyclic: cycle 100; deviation read as "
                  f"the mean over the second half of the rounds of |omega_n p_n - 1|",
                  notes=[power_note(S, DEV_RES, widths, paired=True),
                         f"{int(low.sum())} clients over the {S} seeds sit at the floor p_n = "
                         f"{p_min:g} (the paper's (c)-(e)); the most frequent client has p_n "
                         f"{probs[np.arange(S), high].min():.3f} … "
                         f"{probs[np.arange(S), high].max():.3f} (the paper's: 0.527); the "
                         f"2-sigma range at T = {T} is [{lo:.1f}, {hi:.1f}]."],
                  data="none: participation sample paths only",
                  model="none: the weights of Algorithm 2 do not depend on the model")
