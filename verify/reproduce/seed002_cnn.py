"""Seed 002 (FedAU) with its own model: the small CNN for 3-channel images
(:func:`toys.problems.cnn.make_fedau_cnn`: 2 x (conv3x3 32, ReLU, max-pool) + two fully connected
layers) on 3-channel data, Bernoulli participation.

Data: with ``--data DIR`` holding CIFAR-10 binary batches (``*.bin``), the user's CIFAR-10
(32 x 32 x 3, subsampled); otherwise generated 3-channel images: the bundled 8x8 digits, each
tinted with a random RGB colour per sample (colour carries no label information, so the CNN must
use the shapes). FedAU's Dirichlet(0.1) split, p_n recipe (p_min = 0.02) and I = 5 local steps
of batch 16 with the SVHN column's (gamma, eta); uniform weights 1/N; test accuracy averaged over
the last 10 % of the rounds. Backend torch (CUDA when present), as the CNN needs it. Every
server step size is scaled by N / 250 (the paper's N), so that one client's step
eta omega_n Delta_n / N is the paper's (:data:`DEPARTURE` says why); FedAU vs the best averaging
baseline is decided by the paired 95 % interval over the data seeds.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .common import Factory, LastProcess, sweep_runs
from .registry import Claim, Result, register
from .seed000 import _fig
from .seed002 import METHODS, PAPER_SVHN, RESOLUTION, process
from .seed002_claims import scored
from .stats import as_claim, decide, power_note

N_PAPER = 250  # the paper's clients
#: the accuracy gate: a best final accuracy more than this below the paper's 89.6 % means the
#: stand-in CNN has not trained to the paper's regime (its comparisons are not exercised)
TRAINED_GAP = 0.15
DEPARTURE = ("Departure: N = {N} clients, not the paper's 250. With the paper's (gamma, eta) one "
             "participating client's step eta omega_n Delta_n / N would be 250 / N times the "
             "paper's (12.5x at N = 20: a client at p_min = 0.02 with omega_n up to K = 50 then "
             "moves the model 2.5 rounds' worth, and FedAU's curve collapsed from 0.64 to 0.08 "
             "and recovered), so every method's server step size eta is scaled by N / 250 = "
             "{scale:g}: one client's step is the paper's, the local step gamma and the "
             "participation recipe unchanged. The price: each round moves the model N / 250 as "
             "far as the paper's (its 250 clients average 25 updates a round), so the runs are "
             "further from converged. No step size rescales the ratio of one client's kick to "
             "the round's mean (omega_n / N); only a larger N does (full size: N = 100).")

STAND_IN = ("generated 3-channel images (scikit-learn's 8x8 digits, each tinted with a random "
            "RGB colour) or, with --data, the user's CIFAR-10 binary batches; FedAU's small CNN "
            "(two conv layers, two fully connected layers) as in the paper")
_CACHE: dict = {}


def images(cfg, seed=0):
    """(X (n, 3, side, side), y, description)."""
    import toys

    rng = np.random.default_rng([seed, 7])
    if cfg.data is not None and os.path.isdir(cfg.data) and \
            any(f.endswith(".bin") for f in os.listdir(cfg.data)):
        from toys.problems.cnn import load_cifar_bin

        bins = [f for f in sorted(os.listdir(cfg.data)) if f.endswith(".bin") and "test" not in f]
        X, y = load_cifar_bin(os.path.join(cfg.data, bins[0]) if len(bins) == 1 else cfg.data)
        n = min(len(y), cfg.pick(20000, 3000, 600))
        keep = np.sort(rng.choice(len(y), size=n, replace=False))
        return X[keep], y[keep], f"the user's CIFAR-10 batches in {cfg.data} ({n} images)"
    X, y = toys.load_bundled("digits")
    n = min(len(y), cfg.pick(1797, 800, 300))
    keep = np.sort(rng.choice(len(y), size=n, replace=False))
    X, y = X[keep] / 16.0, y[keep]
    tint = rng.uniform(0.2, 1.0, size=(n, 3))
    return (X.reshape(n, 1, 8, 8) * tint[:, :, None, None]), y, "tinted digits (generated)"


def setting(cfg, seed):
    """(CNN problem, p_n) of one seed."""
    from toys.participation import fedau_probs
    from toys.problems.cnn import CNNProblem
    from toys.problems.partitions import class_histograms, partition_dirichlet

    key = (cfg.data, cfg.size, seed)
    if key not in _CACHE:
        X, y, _ = images(cfg, 0)
        rng = np.random.default_rng(seed)
        perm = rng.permutation(len(y))
        n_test = round(0.2 * len(y))
        te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
        mean, std = X[tr].mean(axis=(0, 2, 3)), X[tr].std(axis=(0, 2, 3))
        Z = (X - mean[None, :, None, None]) / std[None, :, None, None]
        N = cfg.pick(100, 20, 4)
        parts = partition_dirichlet(y[tr], N, 0.1, rng)
        n_max = max(len(ix) for ix in parts)
        imgs = np.zeros((N, n_max, *Z.shape[1:]))
        labs = np.zeros((N, n_max), dtype=int)
        mask = np.zeros((N, n_max), dtype=bool)
        for i, ix in enumerate(parts):  # building the padded arrays once, not a hot path
            imgs[i, :len(ix)], labs[i, :len(ix)], mask[i, :len(ix)] = Z[tr][ix], y[tr][ix], True
        C = int(y.max()) + 1
        prob = CNNProblem(imgs, labs, mask, classes=C, weights=np.ones(N), seed=seed,
                          hidden=cfg.pick(128, 32, 16), arch="fedau", name="fedau-cnn")
        prob.test = {"X": Z[te], "y": y[te]}
        hist = class_histograms(y[tr], parts, C)
        probs = fedau_probs(np.random.default_rng([seed, 2]), class_hist=hist, p_min=0.02).probs
        _CACHE[key] = (prob, probs)
    return _CACHE[key]


def _problem(cfg, seed):
    """The CNN problem of a data seed; its Bernoulli process goes to ``Factory.process``."""
    prob, probs = setting(cfg, seed)
    prob.process = process("bernoulli", probs)
    return prob


@register("002:cnn", "FedAU Table 1 (Bernoulli), FedAU's CNN", "FedAU vs the averaging "
          "baselines with the paper's small CNN on 3-channel images", STAND_IN,
          "SVHN test accuracy % (Bernoulli): FedAU K=50 89.6, K→∞ 89.3, avg participating "
          "87.2, avg all 87.0, FedVarp 88.9, MIFA 88.7, known 88.4 (CIFAR-10: 77.3, 77.1, 74.1, "
          "72.7, 77.9, 77.5, 77.0)")
def cnn_table(cfg) -> Result:
    S = cfg.n_seeds(3, 2, 1)
    R = cfg.pick(1000, 100, 4)
    N = cfg.pick(100, 20, 4)
    scale = N / N_PAPER  # every server step: one client's eta omega_n Delta_n / N as the paper's
    names = cfg.pick(list(METHODS), ["FedAU K=50", "Avg all"],
                     ["FedAU K=50", "Avg all"])
    backend, dev = _cnn_backend(cfg)
    res, curves, vals = _cnn_runs(cfg, names, S, R, scale, backend, dev)
    rows = [{"method": n, "test_acc_mean": res[n], "seeds": S,
             "paper_svhn_test": PAPER_SVHN["bernoulli"][n]} for n in names]
    rows += [{"method": n, "round": r + 1, "accuracy": float(v)}
             for n in names for r, v in enumerate(np.mean(curves[n], axis=0))]
    claims, d = _cnn_claims(names, res, vals, R)
    fig = _cnn_figure(names, curves)
    _, _, what = images(cfg, 0)
    hidden = cfg.pick(128, 32, 16)
    return Result(rows, claims, fig, data=what, model="FedAU's small CNN (two conv layers, two "
                  f"fully connected layers, hidden width {hidden})",
                  setup=f"{what}; N = {N} clients, {R} "
                  f"rounds, {S} seed(s), CNN hidden width {hidden}, backend "
                  f"{backend}, server step sizes x {scale:g} (N / {N_PAPER})", notes=[
                      power_note(S, RESOLUTION * 100, [d.width * 100], " pp", paired=True),
                      "The paper's numbers are SVHN / CIFAR-10 at 2 000 / 10 000 rounds; only "
                      "the ordering is compared.", DEPARTURE.format(N=N, scale=scale),
                      _participants_note(cfg, R)])


def _participants_note(cfg, R) -> str:
    """Why a small N cannot reach the paper's regime: the expected participants per round
    (sum of p_n of data seed 0) beside the paper's, and the rounds run."""
    part = float(np.sum(setting(cfg, 0)[1]))
    return (f"Regime: about {part:.1f} participating clients per round (sum of p_n, data seed "
            f"0) against about {0.1 * N_PAPER:.0f} in the paper (250 clients, mean p_n 0.1), "
            f"for {R} rounds against the paper's 2 000: each round averages the updates of "
            "that few clients, most holding one or two classes (Dirichlet 0.1), so with few "
            "participants the accuracy wanders, and the accuracy gate, not more seeds, "
            "decides whether the comparison is exercised.")


def _cnn_backend(cfg):
    """(backend, extra run keywords: the torch device unless the backend is numpy)."""
    from .common import torch_backend

    backend = "torch" if cfg.backend == "auto" else cfg.backend
    dev = {} if backend == "numpy" else {"device": cfg.device or (
        "cuda" if torch_backend(cfg) == "torch" and cfg.backend == "auto" else "cpu")}
    return backend, dev


def _cnn_runs(cfg, names, S, R, scale, backend, dev):
    """Each method's runs over ``S`` data seeds, server step sizes x ``scale``: (mean scored
    accuracy, accuracy curves (seeds, rounds), scored accuracy per seed), each by method."""
    res, curves, vals = {}, {}, {}
    fac = Factory(functools.partial(_problem, cfg), "fedau-cnn")
    for n in names:
        algo, hyper = METHODS[n]
        hyper = {**hyper, "server_lr": hyper["server_lr"] * scale}
        acc = sweep_runs(cfg, fac, algo, grid={"data_seed": list(range(S))}, rounds=R,
                         label=f"002-cnn {n} eta x {scale:g}", participation=LastProcess(fac),
                         backend=backend, local_steps=5, batch_size=16, **dev,
                         **hyper)["test_accuracy"][:, 0]
        vals[n] = scored([np.nanmean(a[-max(1, R // 10):]) for a in acc])
        res[n] = float(np.mean(vals[n]))
        curves[n] = acc
    return res, curves, vals


def _cnn_claims(names, res, vals, R):
    """The CNN table's claims: (claims, the FedAU vs best 'Avg' baseline decision)."""
    base = max((n for n in names if n.startswith("Avg")), key=lambda n: res[n])
    d = decide(vals["FedAU K=50"], vals[base], expect=">", resolution=RESOLUTION, paired=True,
               scale=100, unit=" pp")
    chance, paper = 1.0 / 10, PAPER_SVHN["bernoulli"]["FedAU K=50"] / 100
    trained = max(res.values()) >= paper - TRAINED_GAP
    # a comparison of methods that have not trained to the paper's regime is not the paper's
    gate = (f"not exercised when the best method ends more than {TRAINED_GAP * 100:g} pp below "
            f"the paper's {paper * 100:.1f} % (the accuracy gate of this item)")
    claims = [as_claim("FedAU (K=50) beats the averaging baselines (Bernoulli)", "89.6 vs 87.2 / "
                       "87.0 (SVHN)", ", ".join(f"{n} {res[n] * 100:.2f}" for n in names) +
                       f"; FedAU - {base} {d.fmt()}",
                       f"above the best 'Avg' baseline by the paired 95 % interval (within "
                       f"±{RESOLUTION * 100:g} pp: a tie); " + gate,
                       d.outcome if trained else "not exercised",
                       d.how if trained else f"the CNN has not trained: the best method ends at "
                       f"{max(res.values()) * 100:.1f} %, more than {TRAINED_GAP * 100:g} pp "
                       f"below the paper's {paper * 100:.1f} %")]
    # a precondition of the comparison, not a finding of the paper: a CNN near chance is a
    # stand-in that has not trained, so the claim is not exercised (never "differs")
    ok = min(res.values()) > chance + 0.1
    claims.append(Claim("the CNN learns (above chance)", "77-90 % (far above 10 %)",
                        f"lowest {min(res.values()) * 100:.1f} %", "every method > chance + 10 "
                        "pp; not exercised when one is not (the stand-in has not trained)",
                        ok, "" if ok else f"near chance: the CNN has not trained in {R} rounds",
                        status=None if ok else "not exercised"))
    return claims, d


def _cnn_figure(names, curves):
    """The mean test-accuracy curve of each method."""
    fig, ax = _fig(1, 6, 3.6)
    for n in names:
        m = np.mean(curves[n], axis=0)
        ax[0, 0].plot(np.arange(1, len(m) + 1), m, label=n)
    ax[0, 0].set_xlabel("round")
    ax[0, 0].set_ylabel("test accuracy")
    ax[0, 0].legend(fontsize=7)
    return fig
