"""Seed 003's per-round lemmas (Appendices A and B), judged inside the rounds of the real runs.

The lemmas speak of the local iterates w^i_{t,k}, their average wbar_{t,k} = sum_i p_i w^i_{t,k},
the beta algorithm's neighbour averages u^i_t and perturbed points w~^i_{t,k} = beta w^i_{t,k} +
(1 - beta) u^i_t. None of them is in a run's trace, so the runs here use the algorithm with its
client piece wrapped by :class:`Recorded`: a composition that runs the real piece unchanged and
reads every local step through the piece's observer hook (``observer(k, W, G, lr)``), plus the
piece's own state (U, the neighbour averages) at the start of each round. Same toy, methods,
step sizes and G^2 as :mod:`verify.checks.contraction` (full participation, full batch: sigma =
0, every run deterministic); each lemma is judged at its worst round.

* ``contraction.lemma_a1`` max_{i,k<=E} ||w^i_{t,k} - wbar_{t,0}||^2 (FedAvg, FedProx);
* ``contraction.lemma_a2`` max_{i,k} ||wbar_{t,k} - w^i_{t,k}||^2 (FedAvg, FedProx);
* ``contraction.lemma_a4`` / ``contraction.lemma_a4.printed`` / ``contraction.lemma_b4``
  (1/E) sum_{k<E} ||grad f(wbar_{t,k})||^2 with ``decrease`` = f(wbar_{t,0}) - f(wbar_{t+1,0});
* ``contraction.lemma_b1`` max_{i,j} ||u^i_t - u^j_t||^2 (gamma_prev = 0 at t = 0);
* ``contraction.lemma_b2`` max_{i,k} ||wbar_{t,k} - w~^i_{t,k}||^2 (beta).

Example
-------
>>> from verify.suite import Context
>>> rs = contraction_local_lemmas(Context(quick=True))
>>> sorted({r.verdict for r in rs})
['holds']
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

import boundlab
import toys
from toys._array import to_numpy

from ._common import judge
from ._registry import register
from .contraction import METHODS, NEAR, _gamma, _params, _problem, _problem_label
from .contraction import E as _E

A_IDS = ("contraction.lemma_a1", "contraction.lemma_a2", "contraction.lemma_a4",
         "contraction.lemma_a4.printed")
B_IDS = ("contraction.lemma_b1", "contraction.lemma_b2", "contraction.lemma_b4")


@dataclass(frozen=True)
class Recorded:
    """A client piece running ``inner`` unchanged and keeping, per round, the models after each
    local step (``sink["W"]``: list of (E + 1, N, d), step 0 the broadcast model) and the
    piece's state before the round (``sink["state"]``)."""

    inner: object
    sink: dict = field(default_factory=dict, compare=False)

    def __getattr__(self, name):  # hyper_names, local_steps, lrs, first_grad_at_x, ...
        return getattr(self.inner, name)

    def bind(self, hyper, setup):
        inner = self.inner.bind(hyper, setup) if hasattr(self.inner, "bind") else self.inner
        return dataclasses.replace(self, inner=inner)

    def init(self, x, n_clients):
        return self.inner.init(x, n_clients)

    def update(self, state, *, x, observer=None, **kw):
        x_np = to_numpy(x).astype(float)
        steps = [np.broadcast_to(x_np, (kw["oracle"].n_clients, x_np.size)).copy()]

        def watch(k, W, G, lr):
            steps.append(to_numpy(W).astype(float, copy=True))
            if observer is not None:
                observer(k, W, G, lr)

        W, new = self.inner.update(state, x=x, observer=watch, **kw)
        self.sink.setdefault("W", []).append(np.stack(steps))
        self.sink.setdefault("state", []).append(
            to_numpy(state).astype(float, copy=True) if getattr(state, "ndim", 0) == 2
            else None)
        return W, new


def recorded_run(prob, algo: str, rounds: int, **kw):
    """``toys.run`` of ``algo`` with its client piece :class:`Recorded`; returns the trace,
    the per-round step stacks (rounds, E + 1, N, d) and the client states before each round."""
    base = toys.algorithms.get(algo)
    rec = Recorded(base.client)
    tr = toys.run(prob, dataclasses.replace(base, client=rec), rounds=rounds, seed=0, **kw)
    return tr, np.stack(rec.sink["W"]), rec.sink["state"]


def _sq(a, b):
    d = a - b
    return np.einsum("...d,...d->...", d, d)


def local_quantities(prob, tr, W, U, beta=None) -> dict:
    """Per round t: the lemmas' left-hand sides (see the module docstring)."""
    p = np.asarray(prob.p, dtype=float)
    wbar = np.einsum("n,tknd->tkd", p, W)  # (T, E + 1, d)
    E = W.shape[1] - 1
    g = np.stack([[prob.grad_F(wbar[t, k]) for k in range(E)] for t in range(W.shape[0])])
    out = {"local_deviation": _sq(W, W[:, :1]).max(axis=(1, 2)),
           "local_divergence": _sq(W, wbar[:, :, None, :]).max(axis=(1, 2)),
           "round_avg_grad_norm2": np.einsum("tkd,tkd->tk", g, g).mean(axis=1),
           "decrease": np.asarray(tr.loss[:-1] - tr.loss[1:], dtype=float)}
    if beta is not None:
        Ut = np.stack(U)  # (T, N, d): u^i_t before round t
        out["neighbour_avg_deviation"] = _sq(Ut[:, :, None, :], Ut[:, None, :, :]).max(
            axis=(1, 2))
        tilde = beta * W[:, :E] + (1 - beta) * Ut[:, None]
        out["perturbed_divergence"] = _sq(tilde, wbar[:, :E, None, :]).max(axis=(1, 2))
    return out


_LHS = {"contraction.lemma_a1": "local_deviation", "contraction.lemma_a2": "local_divergence",
        "contraction.lemma_a4": "round_avg_grad_norm2",
        "contraction.lemma_a4.printed": "round_avg_grad_norm2",
        "contraction.lemma_b1": "neighbour_avg_deviation",
        "contraction.lemma_b2": "perturbed_divergence",
        "contraction.lemma_b4": "round_avg_grad_norm2"}


def _judge_worst(bid, q, prm, T, label, prob_label, setting):
    """The lemma at every round (per-round parameters), judged at its worst round."""
    bound = boundlab.get(bid)
    per_round = {"decrease": q["decrease"],
                 "gamma_prev": np.where(np.arange(T) == 0, 0.0, prm["gamma"])}
    args = {k: per_round.get(k, prm.get(k)) for k in bound.params}
    lhs = q[_LHS[bid]]
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 at t = 0 (lemma B.1): nan
        ratio = lhs / np.asarray(bound.evaluate(**args), dtype=float)
    t = int(np.nanargmax(ratio))
    at = {**prm, **{k: float(v[t]) for k, v in per_round.items()}}
    return judge(bound, [float(lhs[t])], at, check="contraction_local_lemmas",
                 case=f"{label}, round {t}", problem=prob_label, seeds=[0], deterministic=True,
                 setting=setting,
                 note=f"every round 0..{T - 1} judged inside its {prm['E']} local steps; worst "
                      f"round {t} shown (max measured/bound = {ratio[t]:.3g}); rounds "
                      f"violated: {int(np.sum(ratio > 1 + 1e-9))}")


@register("contraction", *A_IDS, *B_IDS)
def contraction_local_lemmas(ctx):
    """Lemmas A.1, A.2, A.4, B.1, B.2, B.4 at every round, measured inside the rounds."""

    prob, consts = _problem()
    T = ctx.pick(60, 15)
    out = []
    for label, algo, hyper, _ in METHODS:
        gamma = _gamma(algo, hyper, consts.L.value)
        extra = {} if ctx.backend == "numpy" else {"backend": ctx.backend, "device": ctx.device}
        tr, W, U = recorded_run(prob, algo, T, lr=gamma, local_steps=_E, **hyper, **extra,
                                x0=prob.x_star + NEAR * np.ones(prob.dim))
        prm = _params(tr, consts, prob, hyper, gamma)
        q = local_quantities(prob, tr, W, U, hyper.get("beta"))
        setting = {"method": algo, **hyper, "gamma": gamma, "x0": f"x* + {NEAR} * ones"}
        for bid in (B_IDS if algo == "beta" else A_IDS):
            out.append(_judge_worst(bid, q, prm, T, label, _problem_label(prob), setting))
    return out
