"""The claims of seeds 000 (Figs 6-7), 001, 002 (Table 1, Fig. 1, Tables D.1.1 / D.3.1), 003
and 004 decided by intervals over seeds (issue 23, item 3), on per-seed values whose outcome is
known by hand (the runs replaced by fixed curves where a claim is built inside its item), and
the pieces they share (:mod:`verify.reproduce.claims`) against independent references.
Every item also runs end to end at tiny size in ``test_every_item_tiny.py``."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats as sps

from boundlab.errors import DomainError
from verify.reproduce import claims as cl
from verify.reproduce.registry import Config

TINY = Config.sized("tiny", backend="numpy", data="digits")


# ------------------------------------------------------------------ the shared pieces
@pytest.mark.parametrize("outs, need, want", [
    (["matches", "matches", "tie"], 2, "matches"),
    (["matches", "inconclusive", "tie"], 2, "inconclusive"),
    (["matches", "tie", "differs"], 2, "differs"),
    (["tie", "tie", "matches"], 2, "tie"),
    (["inconclusive", "inconclusive", "differs"], 3, "differs"),
    (["matches"] * 6 + ["differs"], 6, "matches"),
])
def test_at_least_by_hand(outs, need, want):
    assert cl.at_least(outs, need) == want


def test_at_least_bad_need():
    with pytest.raises(DomainError, match="need"):
        cl.at_least(["matches"], 2)


def test_rounds_pair_counts_the_unreached_at_the_horizon():
    a = [3.0, math.nan, 5.0, 4.0]
    b = [6.0, 8.0, math.nan, 7.0]
    d = cl.rounds_pair(a, b, "<", 1.0, horizon=10)
    diff = np.array([3 - 6, 10 - 8, 5 - 10, 4 - 7], dtype=float)  # by hand, H = 10
    lo, hi = sps.t.interval(0.95, 3, loc=diff.mean(), scale=sps.sem(diff))
    assert (d.diff, d.lo, d.hi, d.n) == (pytest.approx(diff.mean()), pytest.approx(lo),
                                         pytest.approx(hi), 4)
    assert cl.unreached([math.nan], [math.nan, math.nan])
    assert not cl.unreached([math.nan], [2.0])


def test_against_all_needs_every_rival():
    head = np.array([0.90, 0.91, 0.92, 0.905])
    near = head + np.array([0.001, -0.001, 0.0005, -0.0005])  # within ±0.5 pp: a TOST tie
    out, dec = cl.against_all(head, {"far": head - 0.10, "near": near}, ">", resolution=0.005)
    assert dec["far"].outcome == "matches" and dec["near"].outcome == "tie"
    assert out == "tie" and cl.hows(dec).startswith("near: tie")
    # an identical rival is a zero-width interval: not exercised, and the claim with it
    out, dec = cl.against_all(head, {"far": head - 0.10, "same": head.copy()}, ">",
                              resolution=0.005)
    assert dec["same"].outcome == "not exercised" and out == "not exercised"


def test_no_interval_note_is_a_power_line():
    assert cl.no_interval_note("one deterministic run").startswith(
        "Power: no interval: one deterministic run.")


# ------------------------------------------------------------------ seed 000, Figs 6-7
def test_slopes_are_least_squares_fits_per_seed():
    from verify.reproduce.seed000_claims import slopes

    y = np.exp(np.random.default_rng(0).normal(size=(4, 30)))
    t = np.arange(1, 31)
    ref = [np.polyfit(np.log(t[15:]), np.log(row[15:]), 1)[0] for row in y]  # per seed
    assert slopes(y) == pytest.approx(ref)


def test_top_slots_against_a_loop_per_seed():
    from verify.reproduce.seed000_claims import top_slots

    A = np.random.default_rng(1).random((3, 7, 10))
    M, share = top_slots(A, 0.2)
    for s in range(3):
        count = np.zeros(10)
        for r in range(7):
            for i in sorted(range(10), key=lambda j: -A[s, r, j])[:2]:
                count[i] += 1
                assert M[s, r, i]
        assert M[s].sum() == 14
        assert share[s] == pytest.approx(sum(sorted(count)[-2:]) / 14)  # the 2 most frequent


def test_fig6_claims_by_hand():
    from verify.reproduce.seed000_claims import fig6_claims

    t = np.arange(1, 41)
    # slopes -1.02, -0.98, -1.0 (a zero-spread slope of exactly -1 would measure nothing)
    iid = np.array([0.3 * t ** -1.02, 0.2 * t ** -0.98, 0.25 / t])
    tn = np.full((3, 40), 0.05)  # far from p: log10(0.05 / (c / 40)) > log10 2 by ~0.5
    claims, notes = fig6_claims({"IID": iid, "TNIID": tn})
    assert [c.outcome for c in claims] == ["matches", "matches"]
    assert all(n.startswith("Power: 3 seeds per arm") for n in notes)
    claims, _ = fig6_claims({"IID": np.full((3, 40), 0.05), "TNIID": tn})  # flat: slope 0
    assert [c.outcome for c in claims] == ["differs", "differs"]


def test_fig7_claim_by_hand():
    from verify.reproduce.seed000_claims import fig7_claim

    ever = np.array([6, 5, 7])
    assert fig7_claim(np.array([0.90, 0.85, 0.88]), ever, 20, 4)[0].outcome == "matches"
    assert fig7_claim(np.array([0.30, 0.28, 0.31]), ever, 20, 4)[0].outcome == "differs"
    assert fig7_claim(np.array([0.20, 0.90, 0.60]), ever, 20, 4)[0].outcome == "inconclusive"


# ------------------------------------------------------------------ seed 001
def _fake_001(monkeypatch, curve):
    """seed001's runs replaced by ``curve(fw, algo, hyper, seed)`` (2 seeds, 12 rounds)."""
    from verify.reproduce import seed001

    def runs(cfg, fw, algo, eta0=0.01, model="logistic", rounds=None, seeds=None, **hyper):
        return np.stack([curve(fw, algo, hyper, s) for s in range(seeds)]), None, None

    monkeypatch.setattr(seed001, "runs", runs)
    monkeypatch.setattr(seed001, "_switch_runs",
                        lambda cfg, target: np.stack([curve("TNIID", "switch", {}, s)
                                                      for s in range(2)]))
    return seed001


def _ramp(speed, cap=0.9, seed=0, R=12):
    return np.minimum(cap, 0.1 * speed * np.arange(1, R + 1)) + 1e-3 * seed


def test_001_equal_rules_tie_and_a_better_hybrid_matches(monkeypatch):
    def curve(fw, algo, hyper, s):  # the plain rules 0-0.4 pp apart by seed, never identical
        best = len(hyper.get("rules", ())) == 3  # the three-rule hybrid
        return _ramp(1.0, 0.95 if best else 0.9, s) + (
            0.002 * s if best else 1e-3 * ((len(algo) * (s + 2)) % 5))

    m = _fake_001(monkeypatch, curve)
    r = m.fig1(dataclasses.replace(TINY, seeds=6))
    assert [c.outcome for c in r.claims] == ["matches", "matches"]
    r = m.fig2(TINY)  # identical R60 (a zero-width interval [0, 0]): not exercised, never a
    # tie; the finals 0-0.4 pp apart at 2 seeds: too few to tell
    assert [c.outcome for c in r.claims] == ["not exercised"] * 2 + ["inconclusive"]
    assert sum(n.startswith("Power: 2 seeds per arm") for n in r.notes) == 2


def test_001_unreached_target_is_not_exercised(monkeypatch):
    m = _fake_001(monkeypatch, lambda fw, algo, hyper, s: _ramp(1.0, 0.5, s))
    r = m.fig2(TINY)
    assert [c.outcome for c in r.claims[:2]] == ["not exercised"] * 2
    assert {c.outcome for c in m.fig3(TINY).claims} == {"not exercised"}


def test_001_k_rules(monkeypatch):
    def curve(fw, algo, hyper, s):  # k = 20 % better than 10 %, the soft rules best
        soft = algo in ("fedsoftmax", "fedsoftbetter")
        cap = 0.95 if soft else (0.85 if hyper.get("k") == 0.2 else 0.75)
        return _ramp(1.0, cap, s)

    r = _fake_001(monkeypatch, curve).k_rules(TINY)
    assert [c.outcome for c in r.claims] == ["matches"] * 4


# ------------------------------------------------------------------ seed 002
def _seeds(base, step=0.01):
    return np.asarray(base, dtype=float) + step * np.array([0.0, 1.0, 0.5])


def test_002_table1_claims_by_hand():
    from verify.reproduce.seed002 import METHODS, PATTERNS, _table1_claims

    vals = {}
    for p in PATTERNS:
        for n in METHODS:
            vals[p, n] = _seeds(0.80)
        vals[p, "FedAU K=50"] = vals[p, "FedAU K→∞"] = _seeds(0.80) + [0.05, 0.051, 0.049]
    vals["cyclic", "MIFA"] = _seeds(0.60)
    claims, widths = _table1_claims(vals)
    outs = [c.outcome for c in claims]
    # FedAU 5 pp above both baselines in every pattern (the paper: 1.4 to 3.3 pp on SVHN):
    # the order matches, the size does not; K=50 = K→∞ identical: not exercised; 5 pp above
    # known statistics (paper 0.1 to 1.2 pp); MIFA 20 pp below the rest (paper 6.5 to 11.4)
    assert outs == ["differs in size"] * 3 + ["not exercised", "differs in size",
                                              "differs in size"]
    assert "excludes the paper's effect 2.4 pp" in claims[0].how
    assert len(widths) == 3 * 2 + 3 + 3 + 6
    # leads of the paper's size (bernoulli 2.4 / 2.6, markov 2.4 / 2.7, cyclic 3.3 / 1.4 pp;
    # MIFA 6.5 to 11.4 pp below): every interval holds them
    lead = {"bernoulli": [0.024, 0.026, 0.025], "markov": [0.024, 0.027, 0.0255],
            "cyclic": [0.015, 0.032, 0.0235]}
    for p in PATTERNS:
        vals[p, "FedAU K=50"] = vals[p, "Avg all"] + lead[p]
    vals["cyclic", "MIFA"] = vals["cyclic", "Avg all"] - [0.06, 0.11, 0.085]
    outs = [c.outcome for c in _table1_claims(vals)[0]]
    assert outs[:3] == ["matches"] * 3 and outs[-1] == "matches"


def test_002_fig1_claims_by_hand():
    from verify.reproduce.seed002 import _fig1_claims

    Ks, pmins = [5, 50, math.inf], [0.005, 0.1]
    vals = {(pm, k): _seeds(0.70) for pm in pmins for k in Ks}
    for pm in pmins:
        vals[pm, 50] = _seeds(0.75) + [0.0, 0.001, 0.002]
    claims, _ = _fig1_claims(vals, Ks, pmins)
    assert [c.outcome for c in claims] == ["matches", "matches", "matches"]
    vals[0.005, math.inf] = vals[0.005, 50].copy()  # K = ∞ never differs from K = 50
    claims, _ = _fig1_claims(vals, Ks, pmins)
    assert claims[-1].outcome == "not exercised"


def test_002_d1_claims_by_hand():
    from verify.reproduce.seed002 import METHODS
    from verify.reproduce.seed002_appendix import _d1_claims

    names, key = list(METHODS), ["alpha_p=0.01", "alpha_p=1"]
    v = {}
    for n in names:  # every method 3 pp higher at alpha_p = 1 but Known stats, level
        v[key[0], n] = _seeds(0.70)
        v[key[1], n] = _seeds(0.73 if n != "Known stats" else 0.70)
    for k, gap in zip(key, (0.06, 0.04)):  # FedAU above both, rising 1 pp, the gap shrinking
        v[k, "FedAU K=50"] = v[k, "Avg all"] + gap + np.array([0.0, 0.001, 0.002])
    claims, _ = _d1_claims(v, key, names, (0.01, 1.0))
    # the orders hold but not the paper's sizes (CIFAR-10: FedAU 4.6 / 7.4 pp above the
    # baselines at .01, the gap shrinking by 5.3 pp, the methods rising 1.0 to 6.4 pp)
    assert [c.outcome for c in claims] == ["differs in size"] * 3
    # the paper's own table plus seed noise (0.2 pp): every interval holds its effect
    from verify.reproduce.seed002_appendix import PAPER_D11

    rng = np.random.default_rng(11)
    v = {(k, n): PAPER_D11[n][i] / 100 + rng.normal(0, 0.002, 3)
         for k, i in zip(key, (0, 4)) for n in names}
    claims, _ = _d1_claims(v, key, names, (0.01, 1.0))
    assert [c.outcome for c in claims] == ["matches", "matches", "matches"]


# ------------------------------------------------------------------ seed 003
def _fake_003(monkeypatch, curve):
    from verify.reproduce import seed003

    def acc(cfg, data, model, beta, *, local_steps=10, lr=seed003.GAMMA, clip=math.inf,
            rounds=None, seed=0, batch=None):
        return curve(data, model, beta, clip, seed)

    monkeypatch.setattr(seed003, "acc", acc)
    return seed003


def test_003_table1_by_hand(monkeypatch):
    def curve(data, model, beta, clip, s):  # imbalanced: β = .5 3-4 rounds sooner of FedAvg's
        # 9 (convex; the paper: -37.5 %), 1-2 of 8 (MLP; the paper: -15 %); balanced: one
        # round either way by seed and β
        fast = data == "imbalanced" and beta < 1
        lead = (0.3 if model == "logistic" else 0.1) + 0.1 * (s % 2)
        wob = 0.1 * ((s + int(beta * 10)) % 2) if data == "balanced" else 0.0
        return np.minimum(0.95, 0.1 * np.arange(1, 13) + (lead if fast else 0.0) + wob) + \
            1e-3 * s

    r = _fake_003(monkeypatch, curve).table1(dataclasses.replace(TINY, seeds=6))
    assert [c.outcome for c in r.claims] == ["matches"] * 4
    assert r.notes[0].startswith("Power: 6 seeds per arm")
    r = _fake_003(monkeypatch, lambda *a: np.full(12, 0.5)).table1(TINY)  # never reached
    assert {c.outcome for c in r.claims} == {"not exercised"}


def test_003_fig10_by_hand(monkeypatch):
    def curve(data, model, beta, clip, s):  # G = 1 slows by 2 pp; G = 10 never clips
        return np.linspace(0.5, 0.9, 12) - (0.02 if clip == 1.0 else 0.0) + 1e-3 * s

    _fake_003(monkeypatch, curve)
    from verify.reproduce.seed003_sweeps import fig10

    r = fig10(TINY)
    assert [c.outcome for c in r.claims] == ["matches", "not exercised"] * 2


# ------------------------------------------------------------------ seed 004
def test_004_fig4_claims_by_hand():
    from verify.reproduce.seed004 import _fig4_claims

    r = np.arange(1, 13)
    acc = {"iid": np.stack([np.minimum(0.9, 0.2 * r + 0.01 * s) for s in range(3)]),
           "non-iid": np.stack([np.minimum(0.8, 0.1 * r + 0.01 * s) for s in range(3)])}
    claims, widths = _fig4_claims(acc, 12)  # R79: 4 vs 8 rounds; ends 0.9 vs 0.8
    # non-iid 4 rounds (+100 %) slower on every seed; the paper: +55 % (2.2 rounds here)
    assert [c.outcome for c in claims] == ["differs in size", "matches"] and len(widths) == 2
    assert "excludes the paper's effect 2.2 rd" in claims[0].how
    acc["non-iid"] = np.stack([np.minimum(0.8, k * r) for k in (0.14, 0.12, 0.14)])
    claims, _ = _fig4_claims(acc, 12)  # R79: 6, 7, 6 vs 4: +2.3 [0.9, 3.8] holds 2.2
    assert [c.outcome for c in claims] == ["matches", "matches"]
    low = {k: np.minimum(a, 0.5) for k, a in acc.items()}
    assert _fig4_claims(low, 12)[0][0].outcome == "not exercised"


def test_004_fig5_ratio_is_measured_over_bound():
    from verify.reproduce import seed004

    r = seed004.fig5(TINY)
    for row in r.rows:
        assert "ratio_bound_to_measured" not in row
        assert row["ratio"] == pytest.approx(row["measured_gap"] / row["bound_our_constants"])
        assert 0 <= row["ratio"] <= 1  # the bound holds on the toy
    assert "measured / bound" in r.claims[1].ours and "measured / bound <= 0.01" in \
        r.claims[1].rule
    assert r.notes[0].startswith("Power: no interval: one deterministic run")
