"""The batched engine: FedAvg (gradient descent at N = 1, tau = 1), FedProx and seed 003's
beta-perturbed steps on a whole population at once.

One call runs every instance of a stacked population (:mod:`verify.falsify.families.registry`)
with exact gradients and full participation: per round, ``tau`` local steps
``W <- W - eta grad F_i(W)`` from the server model, then ``x <- x + sum_i p_i (W_i - x)``
(the server step of ``toys.run``'s FedAvg); FedProx's proximal steps and beta's perturbed
gradients and graph weights are local-step rules (:mod:`verify.falsify.algorithms`). It
records, per instance, the quantities of ``toys.Trace`` a bound's left-hand side needs
(``gap``, ``dist2``, ``grad_norm2`` at the server models; ``shadow_gap``, ``g2_max`` and the
step ``lr`` per round), in the same indexing, so that :func:`measure` judges a population and
a replayed ``toys.run`` trace with one code path. The tests check the batched values against
``toys.run`` instance by instance.

Example
-------
>>> import numpy as np
>>> from verify.falsify.families import Spec, get_family
>>> spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=1, dim=1)
>>> st = get_family("quadratic").stack(np.ones((1, 3)), spec)
>>> q = run_batched(st, st.x0, np.array([1.0]), rounds=2, tau=1)
>>> float(q["gap"][0, -1])  # one step of size 1/L on L/2 x^2 lands on x*
0.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["run_batched", "quantities_of_trace", "measure", "LHS", "PER_ROUND", "STATE_KEYS",
           "ROUND_KEYS"]

#: left-hand sides (``bound.lhs``) falsify measures: doc, per round?
LHS = {
    "final_gap": "F(x_T) - F* of the last server model",
    "gap_t": "F(x_t) - F*, t = 0..T (the bound's t is the round)",
    "dist_next": "||x_{t+1} - x*||^2, t < T, with dist_t = ||x_t - x*||^2 and gamma_prev the "
                 "step of round t - 1 (0 at t = 0)",
    "avg_shadow_gap": "(1/T) sum_{t<T} (1/tau) sum_{k=1..tau} F(xbar^(t,k)) - F*",
    "avg_grad_norm2": "(1/T) sum_{t<T} ||grad F(x_t)||^2",
    "grad_norm_sq": "||grad F(x_t)||^2, t = 0..T, with f_w = F(x_t) and f_star = F*",
    "max_client_drift": "max_{r,i,k} ||x_i^(r,k) - xbar^(r,k)||^2, k = 1..tau",
    "client_discrepancy": "max_k sum_i p_i ||xbar^(r,k) - x_i^(r,k)||^2 per round r < T",
    "round_avg_gap": "(1/tau) sum_{k=1..tau} F(xbar^(r,k)) - F* per round r < T, with dist0, "
                     "dist_tau and drift_sum = sum_i sum_{k=1..tau-1} ||x_i - xbar||^2",
}
#: the per-round parameters :func:`measure` gives each left-hand side (beside its values)
PER_ROUND = {"gap_t": ("t",), "dist_next": ("dist_t", "gamma_prev"),
             "grad_norm_sq": ("f_w", "f_star"),
             "round_avg_gap": ("dist0", "dist_tau", "drift_sum")}
#: the per-instance arrays :func:`run_batched` records (and :func:`quantities_of_trace` reads)
STATE_KEYS = ("gap", "dist2", "grad_norm2", "loss")
ROUND_KEYS = ("shadow_gap", "g2_max", "drift_max", "drift_sum", "disc_max", "lr")


def run_batched(stacked, x0, eta, *, rounds: int, tau: int, rule=None) -> dict:
    """Run the population ``stacked`` from ``x0`` (P, d) with step sizes ``eta`` (P,).

    ``rule``: the algorithm's local steps and aggregation
    (:class:`verify.falsify.algorithms.LocalRule`; default FedAvg). Returns per-instance
    arrays: the state ones :data:`STATE_KEYS` (P, rounds + 1) and the round ones
    :data:`ROUND_KEYS` (P, rounds), as ``toys.Trace`` defines them (full participation: the
    virtual average's weights are the aggregation weights). Non-finite values mark a diverged
    instance.
    """
    from .algorithms import LocalRule

    rule = LocalRule() if rule is None else rule
    p = stacked.p
    eta = np.asarray(eta, dtype=float)[:, None, None]
    x = np.array(x0, dtype=float)
    P, N = x.shape[0], p.shape[0]
    out = {k: np.full((P, rounds + 1), np.nan) for k in STATE_KEYS}
    out.update({k: np.full((P, rounds), np.nan) for k in ROUND_KEYS})
    U = rule.init(x)
    with np.errstate(all="ignore"):
        for r in range(rounds + 1):
            X = np.broadcast_to(x[:, None, :], (P, N, x.shape[1]))
            G = stacked.grads(X)
            out["loss"][:, r] = np.einsum("n,pn->p", p, stacked.losses(X))
            out["gap"][:, r] = out["loss"][:, r] - stacked.F_star
            out["dist2"][:, r] = np.sum((x - stacked.x_star) ** 2, axis=1)
            out["grad_norm2"][:, r] = np.sum(np.einsum("n,pnd->pd", p, G) ** 2, axis=1)
            if r == rounds:
                break
            out["lr"][:, r] = eta[:, 0, 0]
            x, U = _round(stacked, rule, out, r, (x, X, G, U), eta, tau)
    return out


def _round(stacked, rule, out, r, state, eta, tau):
    """One round's tau local steps from X: fills the round arrays of round r; returns the
    next server model and the rule's state."""
    x, X, G, U = state
    p, a, P = stacked.p, rule.weights(stacked.p), x.shape[0]
    W, shadow, g2 = X, 0.0, np.zeros(P)
    dmax, dsum, disc = np.zeros(P), np.zeros(P), np.zeros(P)
    for k in range(tau):
        if k or rule.perturbed:
            G = stacked.grads(rule.query(W, U))
        g2 = np.maximum(g2, np.max(np.sum(G * G, axis=2), axis=1))
        W = rule.step(W, G, X, eta)
        xbar = x + np.einsum("n,pnd->pd", a, W - X)
        xb = np.broadcast_to(xbar[:, None, :], W.shape)
        shadow = shadow + np.einsum("n,pn->p", p, stacked.losses(xb)) - stacked.F_star
        dev = np.sum((W - xb) ** 2, axis=2)  # (P, N) ||x_i^(r,k+1) - xbar^(r,k+1)||^2
        dmax = np.maximum(dmax, np.max(dev, axis=1))
        disc = np.maximum(disc, dev @ a)
        if k < tau - 1:
            dsum = dsum + np.sum(dev, axis=1)
    for key, v in (("shadow_gap", shadow / tau), ("g2_max", g2), ("drift_max", dmax),
                   ("drift_sum", dsum), ("disc_max", disc)):
        out[key][:, r] = v
    return xbar, rule.end_round(U, W, x)


def quantities_of_trace(tr) -> dict:
    """The same quantities from a ``toys.Trace`` (one instance: arrays of shape (1, ...))."""
    return {k: np.asarray(getattr(tr, k), dtype=float)[None, :]
            for k in (*STATE_KEYS, *ROUND_KEYS)}


def measure(lhs: str, q: dict):
    """``(values (P, K), per-round parameters {name: (P, K)})`` of left-hand side ``lhs``."""
    if lhs == "final_gap":
        return q["gap"][:, -1:], {}
    if lhs == "gap_t":
        t = np.broadcast_to(np.arange(q["gap"].shape[1], dtype=float), q["gap"].shape)
        return q["gap"], {"t": t}
    if lhs == "dist_next":
        return q["dist2"][:, 1:], {"dist_t": q["dist2"][:, :-1], **_previous_step(q)}
    if lhs == "avg_shadow_gap":
        return np.mean(q["shadow_gap"], axis=1, keepdims=True), {}
    if lhs == "avg_grad_norm2":
        return np.mean(q["grad_norm2"][:, :-1], axis=1, keepdims=True), {}
    if lhs == "grad_norm_sq":
        return q["grad_norm2"], {"f_w": q["loss"], "f_star": q["loss"] - q["gap"]}
    if lhs == "max_client_drift":
        return np.max(q["drift_max"], axis=1, keepdims=True), {}
    if lhs == "client_discrepancy":
        return q["disc_max"], {}
    if lhs == "round_avg_gap":
        return q["shadow_gap"], {"dist0": q["dist2"][:, :-1], "dist_tau": q["dist2"][:, 1:],
                                 "drift_sum": q["drift_sum"]}
    raise KeyError(lhs)


def _previous_step(q) -> dict:
    """``gamma_prev`` of round t: the step size of round t - 1, 0 at t = 0 (seed 003's
    encoding of t = 0, where u_i = wbar_0); absent when the run did not record ``lr``."""
    if "lr" not in q:
        return {}
    lr = np.asarray(q["lr"], dtype=float)
    return {"gamma_prev": np.concatenate([np.zeros((lr.shape[0], 1)), lr[:, :-1]], axis=1)}
