"""Seed 004 (DKR: Dhasade, Kremer, Renard) — Fig. 2 (tau sweep), Fig. 3 (FedProx vs FedAvg),
Fig. 4 (FEMNIST iid vs non-iid, substitute) and Fig. 5 (measured vs the plateau bound).

Stand-in: the 2-D synthetic toy generated as the paper describes (``toys.seed004_toy``, spec
§6.3 defaults: M = 20, std 0.25, slope frozen at (1, 1), b0 = 2, eta = 0.2, full batch, 50
rounds; paper protocol: the outlier plus one uniformly drawn regular client each round,
weights 1/2, sampler seed 1) — a fresh draw, not the authors' data files (the spec's reference
values come from those). Fig. 4's FEMNIST is replaced by digits with a Dirichlet(0.1) label
split vs an IID split (spec §6.4).

Figs 2, 3 and 5 are one deterministic run each (the toy drawn once, full-batch local steps,
sampler seed 1): there is no seed-to-seed spread to put an interval on, and their sections say
so; Fig. 4's comparisons (several data seeds) are decided by paired 95 % intervals
(:mod:`verify.reproduce.stats`).
"""

from __future__ import annotations

import numpy as np

from ..figures.reproduce import reference_line
from .claims import UNREACHED, acc_pair, no_interval_note, rounds_pair, target_note, unreached
from .common import DIGITS, acc_curves, federate, pool, rounds_to, torch_backend
from .data import NotedCache, note
from .registry import Claim, Result, register
from .seed000 import _fig
from .stats import as_claim, km_rounds, power_note

TOY = ("the 2-D synthetic toy generated from the paper's recipe (toys.seed004_toy, seed 0; the "
       "authors' data files are not bundled)")
ETA = 0.2
SPEC_REF = {10: (-1.5380, 0.0235, 0.3387, 0.1999), 50: (-1.7254, 0.0442, 0.3597, 0.2689),
            300: (-2.2922, 0.1438, 0.4602, 0.3795), 1000: (-2.5190, 0.1981, 0.5148, 0.4040)}
TARGET4 = 0.79  # Fig. 4's accuracy target
RES_R = 1.0  # rounds: R79 differences below one round are ties
PAPER_PLATEAU = {10: 2.266, 50: 56.65, 300: 2039.0, 1000: 22661.0}
DETERMINISTIC = ("one deterministic run (the toy drawn once from seed 0, full-batch local steps, "
                 "the paper's sampler with seed 1, as the paper and the spec's re-simulation): no "
                 "seed-to-seed spread to put an interval on")
TOY_MODEL = ("DKR's perceptron z = w^T x + b with BCE-with-logits, the slope frozen, only the "
             "bias b trained (d = 1)")
_CACHE = NotedCache()  # notes its data and model again on every read


def toy():
    import toys

    if "toy" not in _CACHE:
        note(data=TOY, model=TOY_MODEL)
        _CACHE["toy"] = toys.seed004_toy(seed=0)
    return _CACHE["toy"]


def toy_iid():
    import toys

    if "iid" not in _CACHE:
        note(data="the same 2-D toy (toys.seed004_toy, seed 0), pooled and re-split uniformly "
                  "(the iid baseline)", model=TOY_MODEL)
        _CACHE["iid"] = toys.seed004_toy(seed=0, iid=True)
    return _CACHE["iid"]


def paper_run(cfg, tau, algo="fedavg", rounds=None, iid=False, **hyper):
    import toys
    from toys._array import one_cpu_thread
    from toys.engine import TestMetrics
    from toys.participation import Anchored

    R = rounds or cfg.pick(50, 50, 10)
    key = ("run", cfg.size, tau, algo, R, iid, tuple(sorted(hyper.items())))
    if key not in _CACHE:
        prob = toy_iid() if iid else toy()
        M = prob.n_clients
        with one_cpu_thread():  # as run_acc (verify.reproduce.common): small products
            _CACHE[key] = toys.run(prob, algo, rounds=R, seed=1, lr=ETA, local_steps=tau,
                                   participation=Anchored(M, fixed=(M - 1,), m=1),
                                   record="step" if algo == "fedavg" else "sync",
                                   callbacks=[TestMetrics(prob)], **hyper)
    return _CACHE[key]


def L_global(prob) -> float:
    """sup_b F''(b) of the pooled training loss (grid + second differences of F')."""
    b = np.linspace(-12.0, 12.0, 4801)
    g = np.array([float(np.dot(prob.p, prob.grads(np.full((prob.n_clients, 1), v))[:, 0]))
                  for v in b])
    return float(np.max(np.diff(g) / np.diff(b)))


def taus(cfg):
    return cfg.pick([10, 50, 300, 1000], [10, 50, 300, 1000], [10, 50])


@register("004:fig2", "DKR Fig. 2", "tau sweep on the toy: loss, separators, divergence; "
          "constants L, zeta, D", TOY, "L ≈ 0.190, ζ ≈ 0.407 (read off Fig. 2 right), "
          "D ≈ 2; larger τ: faster in rounds, higher loss plateau, divergence grows with τ and "
          "tends to ζ; the iid baseline (τ = 1000, data redistributed) converges to the optimum")
def fig2(cfg) -> Result:
    import toys

    prob = toy()
    c = toys.constants(prob)
    LF = L_global(prob)
    fig, axes = _fig(3, 3.8, 3.2)
    rows, fin, div, test, settle = _fig2_sweep(cfg, axes[0])
    claims = _fig2_constant_claims(c, LF, div) + _fig2_trend_claims(c, test, div)
    row, claim = _fig2_iid(cfg, axes[0, 0], fin[-1])
    rows.append(row)
    claims.append(claim)
    fast = bool(np.all(np.diff(settle) <= 0))
    claims.append(Claim("larger τ faster in rounds", "faster", "rounds until the gap stays "
                        "within 5 % of its final value: " + ", ".join(map(str, settle)),
                        "non-increasing in τ", fast, "" if fast else "not monotone"))
    return Result(rows, claims, fig, setup=f"{cfg.pick(50, 50, 10)} rounds, paper protocol, "
                  "sampler seed 1; spec reference columns: the spec's re-simulation on the "
                  "authors' data (not the paper's numbers)",
                  notes=[no_interval_note(DETERMINISTIC)])


def _settle_round(gap) -> int:
    """The first round from which the gap stays within 5 % of its final value (``len(gap)``
    when none)."""
    near = np.flatnonzero(np.abs(gap - gap[-1]) <= 0.05 * abs(gap[-1]))
    return int(near[np.argmax(np.all(np.abs(gap[near[0]:] - gap[-1]) <= 0.05 * abs(gap[-1])))]
               ) if near.size else len(gap)


def _fig2_sweep(cfg, axes):
    """Fig. 2's τ sweep, drawn on the figure's first row ``axes``: (rows, final gaps, largest
    divergences, final test losses, rounds to settle), one entry per τ."""
    rows, fin, div, test, settle = [], [], [], [], []
    for tau in taus(cfg):
        tr = paper_run(cfg, tau)
        gap, tl = tr.gap, tr.metrics["test_loss"]
        z = float(np.nanmax(tr.zeta_obs))
        k = _settle_round(gap)
        fin.append(float(gap[-1]))
        div.append(z)
        test.append(float(tl[-1]))
        settle.append(k)
        ref = SPEC_REF.get(tau, (np.nan,) * 4)
        rows.append({"tau": tau, "final_b": float(tr.final_model[0]), "train_gap": gap[-1],
                     "test_loss": tl[-1], "max_divergence": z, "rounds_to_settle": k,
                     "spec_ref_final_b": ref[0], "spec_ref_gap": ref[1],
                     "spec_ref_test_loss": ref[2], "spec_ref_divergence": ref[3]})
        axes[0].semilogy(np.maximum(gap, 1e-12), label=f"τ = {tau}")
        axes[1].plot(tr.zeta_obs, label=f"τ = {tau}")
        axes[2].plot(tl, label=f"τ = {tau}")
    axes[0].set_title("training gap F(b) - F*")
    axes[1].set_title("observed divergence")
    axes[2].set_title("test loss")
    axes[0].set_ylabel("F(b) \u2212 F*")
    axes[1].set_ylabel("divergence \u03b6 observed")
    axes[2].set_ylabel("test loss")
    for a in axes:
        a.set_xlabel("round")
    axes[0].legend(fontsize=7)
    return rows, fin, div, test, settle


#: Fig. 2's D: the paper prints ≈ 2; its own data give 3.04 (boundlab.errata DKR-13)
D_ERRATUM, D_AUTHORS = "DKR-13", 3.04


def _fig2_constant_claims(c, LF, div):
    """Fig. 2's claims on the constants L, ζ and D (``c``: ``toys.constants`` of the toy)."""
    return [
        Claim("L of the global F", "≈ 0.190", f"L_F = {LF:.4f} (max_i L_i = {c.L.value:.4f})",
              "within 5 % relative", abs(LF - 0.19) <= 0.05 * 0.19,
              "" if abs(LF - 0.19) <= 0.05 * 0.19 else f"{LF / 0.19 - 1:+.1%}"),
        Claim("ζ (largest observed divergence)", "≈ 0.407", f"ζ_obs = {max(div):.4f} "
              f"(ζ_sup = {c.zeta.value:.4f})", "within 5 % relative",
              abs(max(div) - 0.407) <= 0.05 * 0.407,
              "" if abs(max(div) - 0.407) <= 0.05 * 0.407 else f"{max(div) / 0.407 - 1:+.1%}"),
        Claim("D = |b0 - b*|", f"≈ 2 as printed: the paper's own error ({D_ERRATUM}: "
              f"its data give {D_AUTHORS:g})", f"{c.D.value:.4f} (printed ≈ 2: "
              f"{c.D.value / 2 - 1:+.0%})", f"within 15 % relative of {D_AUTHORS:g}, the value "
              f"of the authors' own data (erratum {D_ERRATUM}; the printed 2 is not ours to "
              "match)", abs(c.D.value - D_AUTHORS) <= 0.15 * D_AUTHORS,
              "" if abs(c.D.value - D_AUTHORS) <= 0.15 * D_AUTHORS else
              f"{c.D.value / D_AUTHORS - 1:+.0%} from the authors' data's {D_AUTHORS:g}"),
    ]


def _fig2_trend_claims(c, test, div):
    """Fig. 2's claims on the trends in τ of the loss plateau and the divergence."""
    inc = bool(np.all(np.diff(test) > 0))
    claims = [Claim("higher τ, higher loss plateau", "plateau grows with τ",
                    ", ".join(f"{t:.4f}" for t in test), "final test loss strictly "
                    "increasing in τ", inc, "" if inc else "not increasing")]
    inc = bool(np.all(np.diff(div) > 0)) and max(div) <= c.zeta.value + 1e-9
    claims.append(Claim("divergence grows with τ, towards ζ", "grows, tends to ζ",
                        ", ".join(f"{d:.4f}" for d in div), "strictly increasing in τ and "
                        "<= ζ_sup", inc, "" if inc else "not increasing"))
    return claims


def _fig2_iid(cfg, ax, g_non):
    """Fig. 2's iid baseline at the largest τ, drawn on ``ax``: (its row, its claim against
    the non-iid final gap ``g_non``)."""
    tau_iid = max(taus(cfg))
    iid = paper_run(cfg, tau_iid, iid=True)
    g_iid = float(iid.gap[-1])
    ax.semilogy(np.maximum(iid.gap, 1e-12), "k--", label=f"iid, τ = {tau_iid}")
    row = {"tau": tau_iid, "split": "iid", "final_b": float(iid.final_model[0]),
           "train_gap": g_iid, "test_loss": float(iid.metrics["test_loss"][-1]),
           "spec_ref_final_b": -0.9265 if tau_iid == 1000 else np.nan,
           "spec_ref_gap": 0.0012 if tau_iid == 1000 else np.nan}
    ok = g_iid < 0.1 * g_non
    return row, Claim(f"iid baseline (τ = {tau_iid}) converges to the optimum",
                      "converges (spec re-simulation: gap 0.0012 vs 0.1981 non-iid)",
                      f"final gap {g_iid:.4f} vs non-iid {g_non:.4f}",
                      "iid final gap < 10 % of the non-iid one at the same τ", bool(ok),
                      "" if ok else "no clear gain from iid data")


@register("004:fig3", "DKR Fig. 3", "FedProx (μ = 0.1) vs FedAvg, τ = 3000", TOY,
          "FedProx reaches a much better loss but converges more slowly (curves only); spec "
          "re-simulation: gap after rounds 1 / 5 / 20: FedProx 0.0891 / 0.0328 / 0.0415, "
          "FedAvg 0.1843 / 0.1848 / 0.1848")
def fig3(cfg) -> Result:
    tau, R = cfg.pick(3000, 3000, 300), cfg.pick(20, 20, 6)
    tr = {"fedavg": paper_run(cfg, tau, "fedavg", rounds=R),
          "fedprox": paper_run(cfg, tau, "fedprox", rounds=R, prox=0.1)}
    rows, early = [], {}
    fig, ax = _fig(1, 5.5, 3.4)
    for n, t in tr.items():
        g = t.gap
        early[n] = float(abs(g[1] / g[-1] - 1.0))  # distance from its plateau after round 1
        ax[0, 0].semilogy(np.maximum(g, 1e-12), label=n)
        rows += [{"algorithm": n, "round": r, "train_gap": float(v)} for r, v in enumerate(g)]
    ax[0, 0].set_xlabel("round")
    ax[0, 0].set_ylabel("training gap")
    ax[0, 0].legend()
    gp, ga = tr["fedprox"].gap[-1], tr["fedavg"].gap[-1]
    slow = early["fedprox"] > early["fedavg"]
    claims = [Claim("FedProx reaches a much better loss", "much better (0.0415 vs 0.1848 in the "
                    "spec's re-simulation)", f"final gap {gp:.4f} vs {ga:.4f}",
                    "FedProx's final gap < half of FedAvg's", bool(gp < 0.5 * ga),
                    "" if gp < 0.5 * ga else "not much better"),
              Claim("FedProx converges more slowly", "slower (spec: FedAvg flat from round 1, "
                    "FedProx 0.089 -> 0.033)", "relative distance of the round-1 gap from the "
                    f"final gap: FedProx {early['fedprox']:.2f}, FedAvg {early['fedavg']:.2f}",
                    "larger for FedProx", bool(slow), "" if slow else "not slower")]
    return Result(rows, claims, fig, setup=f"τ = {tau}, {R} rounds, paper protocol, seed 1",
                  notes=[no_interval_note(DETERMINISTIC)])


@register("004:fig4", "DKR Fig. 4", "FedAvg iid vs non-iid (FEMNIST substitute)",
          f"{DIGITS}; Dirichlet(0.1) label split vs uniform split, N = 50 clients, 20 per round, "
          "250 rounds at full size (N = 30, 10 per round, 60 rounds at quick size; N = 10, 5, "
          "12 at tiny: the setup line gives the run's); a one-hidden-layer MLP instead of DKR's "
          "CNN on FEMNIST", "FEMNIST: rounds to 79 % "
          "test accuracy 78 more for non-iid (≈ 55 % longer: R79 ≈ 142 iid, ≈ 220 non-iid); "
          "non-iid ends at a lower accuracy")
def fig4(cfg) -> Result:
    X, y, _ = pool(cfg.data, max_samples=None if cfg.data is None else 20000, seed=0)
    N, m = cfg.pick(50, 30, 10), cfg.pick(20, 10, 5)
    H, S = cfg.pick(250, 60, 12), cfg.n_seeds(5, 3, 2)
    backend = torch_backend(cfg)
    acc = {}
    for name, scheme, opt in (("iid", "iid", {}), ("non-iid", "dirichlet", {"alpha": 0.1})):
        acc[name] = acc_curves(  # the MLP: one run per seed (no population form)
            lambda s, scheme=scheme, opt=opt: federate(X, y, scheme, N, s, model="mlp",
                                                       hidden=cfg.pick(128, 32, 16), **opt),
            "fedavg", rounds=H, seeds=range(S), backend=backend, device=cfg.device,
            participation=f"uniform:m={m}", lr=0.02, local_steps=25, batch_size=20)
    claims, widths = _fig4_claims(acc, H)
    fig, ax = _fig(1, 5.5, 3.4)
    rows = []
    for k, a in acc.items():
        ax[0, 0].plot(np.arange(1, H + 1), a.mean(axis=0), label=k)
        rows += [{"split": k, "round": i + 1, "accuracy": float(v)}
                 for i, v in enumerate(a.mean(axis=0))]
    reference_line(ax[0, 0], TARGET4, "target accuracy 79 %")
    ax[0, 0].legend()
    ax[0, 0].set_xlabel("round")
    ax[0, 0].set_ylabel("test accuracy")
    return Result(rows, claims, fig, setup=f"N = {N}, {m} clients per round, τ = 25, η = 0.02, "
                  f"batch 20, {H} rounds (horizon H), {S} data seeds (split, test split, run "
                  "seed; both splits run on each, so the intervals are paired)",
                  notes=[power_note(S, RES_R, widths[:1], " round(s)", paired=True),
                         power_note(S, 0.5, widths[1:], " pp", paired=True),
                         target_note({k: rounds_to(a, TARGET4) for k, a in acc.items()}, H,
                                     "79 %", "≈ 142 (iid) and ≈ 220 (non-iid) rounds of DKR's "
                                     "250 on FEMNIST") + f" Here N = {N} clients, {m} per round "
                         "(DKR: the FEMNIST writers, 20 per round)."])


PAPER_SLOWER = 78 / 142  # Fig. 4: non-iid needs 78 rounds (+55 %) more than iid's 142 to 79 %


def _fig4_claims(acc, H):
    """Fig. 4's claims from the accuracy curves ``acc[split]`` (seeds, rounds): (claims,
    [width of the R79 interval in rounds, width of the final-accuracy interval in pp])."""
    R = {k: rounds_to(a, TARGET4) for k, a in acc.items()}  # NaN: never reached
    f = {k: a[:, -max(1, H // 10):].mean(axis=1) for k, a in acc.items()}
    km = {k: km_rounds(r, H) for k, r in R.items()}
    rm = {k: float(np.mean(np.where(np.isfinite(r), r, H))) for k, r in R.items()}
    eff = PAPER_SLOWER * rm["iid"]  # the paper's +55 % of our iid rounds
    slower = rounds_pair(R["non-iid"], R["iid"], ">", RES_R, H, effect=eff if eff > 0 else None)
    end = acc_pair(f["non-iid"], f["iid"], "<", 0.005)
    claims = [as_claim("non-iid needs more rounds to 79 %", "≈ 220 vs ≈ 142 (+55 %)",
                       f"Kaplan–Meier median {km['non-iid'].fmt()} vs {km['iid'].fmt()}; "
                       f"restricted mean {rm['non-iid']:.1f} vs {rm['iid']:.1f}, {slower.fmt()}",
                       "the paired 95 % interval of min(R79, H) (a run that never reaches 79 % "
                       f"counts H = {H}, never dropped), non-iid minus iid, above 0 and holding "
                       f"the paper's +{PAPER_SLOWER:.0%} of iid's rounds ({eff:+.1f} here; within "
                       f"±{RES_R:g} round: a tie); not exercised when no run reaches 79 % or "
                       "more than half are censored",
                       "not exercised" if unreached(*R.values()) else slower.outcome,
                       UNREACHED if unreached(*R.values()) else slower.how),
              as_claim("non-iid ends lower", "lower final accuracy",
                       f"{f['non-iid'].mean() * 100:.2f} % vs {f['iid'].mean() * 100:.2f} %, "
                       f"{end.fmt()}", "mean accuracy of the last 10 % of rounds lower for "
                       "non-iid by the paired 95 % interval (within ±0.5 pp: a tie)",
                       end.outcome, end.how)]
    return claims, [slower.width, end.width * 100]


@register("004:fig5", "DKR Fig. 5", "measured plateau vs the bound 18 τ² η² L ζ²", TOY,
          "bound with the paper's constants: 2.266, 56.65, 2039, 22 661 for τ = 10, 50, 300, "
          "1000 (computed in the spec); 'not tight by several orders of magnitude for large τ'")
def fig5(cfg) -> Result:
    import boundlab
    import toys

    prob = toy()
    c = toys.constants(prob)
    plateau = boundlab.get("drift.plateau")
    rows, ratio, holds = [], {}, True
    for tau in taus(cfg):
        gap = float(paper_run(cfg, tau).gap[-1])
        b_paper = float(plateau.evaluate(eta=ETA, tau=tau, L=0.19, zeta=0.407))
        b_ours = float(plateau.evaluate(eta=ETA, tau=tau, L=c.L.value, zeta=c.zeta.value))
        ratio[tau] = gap / b_ours  # measured / bound: the project's one orientation
        holds = holds and gap <= b_ours
        rows.append({"tau": tau, "measured_gap": gap, "bound_paper_constants": b_paper,
                     "paper_plateau_spec": PAPER_PLATEAU[tau], "bound_our_constants": b_ours,
                     "ratio": ratio[tau]})
    big = max(ratio)
    loose = ratio[big] <= 0.01
    claims = [Claim("bound above the measured plateau", "holds", "holds for every τ" if holds
                    else "violated", "measured final gap <= bound (our constants)", bool(holds),
                    "" if holds else "violated"),
              Claim("not tight by orders of magnitude for large τ", "several orders",
                    f"measured / bound = {ratio[big]:.3g} at τ = {big} (the bound "
                    f"{1 / ratio[big] if ratio[big] > 0 else float('inf'):.3g} x the measured)",
                    "measured / bound <= 0.01 at the largest τ (the bound at least 100 x the "
                    "measured)", loose, "" if loose else "tighter than claimed")]
    fig, ax = _fig(1, 5.5, 3.4)
    ts = list(ratio)
    ax[0, 0].loglog(ts, [r["measured_gap"] for r in rows], "o-", label="measured |F(x̄) - F*|")
    ax[0, 0].loglog(ts, [r["bound_our_constants"] for r in rows], "s--", label="18τ²η²Lζ² (ours)")
    ax[0, 0].loglog(ts, [r["bound_paper_constants"] for r in rows], "k:",
                    label="18τ²η²Lζ² (paper's L, ζ)")
    ax[0, 0].set_xlabel("local steps per round τ")
    ax[0, 0].set_ylabel("plateau of the gap F(x̄) − F*")
    ax[0, 0].legend(fontsize=7)
    return Result(rows, claims, fig, setup="the Fig. 2 runs; our constants: max_i L_i and "
                  "ζ_sup (theory-valid); the paper's: L = 0.190, ζ = 0.407; ratio = measured / "
                  "bound (our constants)", notes=[no_interval_note(DETERMINISTIC)])
