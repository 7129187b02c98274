"""The batched engine: FedAvg (gradient descent at N = 1, tau = 1), FedProx, seed 003's
beta-perturbed steps and seeds 000/001's FedSoftMax on a whole population at once.

One call runs every instance of a stacked population (:mod:`verify.falsify.families.registry`)
with exact gradients: per round, ``tau`` local steps ``W <- W - eta_t grad F_i(W)`` from the
server model, then ``x <- x + sum_i alpha_i (W_i - x)`` (the server step of ``toys.run``'s
FedAvg, alpha = p over the participants); FedProx's proximal steps, beta's perturbed gradients
and graph weights and FedSoftMax's loss weights are rules (:mod:`verify.falsify.algorithms`).
The step may follow a schedule (one value per SGD iteration) and the participation a mask per
instance and round (:mod:`verify.falsify.participation`). It records, per instance, the
quantities of ``toys.Trace`` a bound's left-hand side needs (``gap``, ``dist2``,
``grad_norm2`` at the server models; ``shadow_gap``, ``g2_max``, the step ``lr`` and the
weight ratios kappa = alpha / p per round), in the same indexing, so that :func:`measure`
judges a population and a replayed ``toys.run`` trace with one code path. The tests check the
batched values against ``toys.run`` instance by instance.

What a bound's ``lhs`` measures follows :data:`verify._check_lhs.PAPER_LHS`, the rule of
:func:`verify.check` (:func:`measured_lhs`): BC's non-convex theorems (``avg_grad_norm2`` of
FedProx or beta) bound (1/(T E)) sum_{t<T} sum_{k<E} ||grad F(wbar_{t,k})||^2 over the virtual
averages wbar_{t,k} (wbar_{t,0} = x_t), ``avg_grad_norm2_virtual``; the engine records it
(``virtual=True``, ``Trace.grad_norm2_virtual`` per round) only for them.

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

# the per-instance arrays run_batched records and quantities_of_trace reads: defined once
from ._keys import ROUND_KEYS, STATE_KEYS

__all__ = ["run_batched", "quantities_of_trace", "measure", "LHS", "PER_ROUND", "STATE_KEYS",
           "ROUND_KEYS", "KAPPA_KEYS", "VIRTUAL", "measured_lhs"]

#: left-hand sides (``bound.lhs``) falsify measures: doc, per round?
LHS = {
    "final_gap": "F(x_T) - F* of the last server model",
    "gap_t": "F(x_t) - F*, t = 0..T (the bound's t is the round)",
    "dist_next": "||x_{t+1} - x*||^2, t < T, with dist_t = ||x_t - x*||^2 and gamma_prev the "
                 "step of round t - 1 (0 at t = 0)",
    "avg_shadow_gap": "(1/T) sum_{t<T} (1/tau) sum_{k=1..tau} F(xbar^(t,k)) - F*",
    "avg_grad_norm2": "(1/T) sum_{t<T} ||grad F(x_t)||^2 (BC's FedProx and beta: VIRTUAL)",
    "grad_norm_sq": "||grad F(x_t)||^2, t = 0..T, with f_w = F(x_t) and f_star = F*",
    "max_client_drift": "max_{r,i,k} ||x_i^(r,k) - xbar^(r,k)||^2, k = 1..tau",
    "client_discrepancy": "max_k sum_i p_i ||xbar^(r,k) - x_i^(r,k)||^2 per round r < T",
    "round_avg_gap": "(1/tau) sum_{k=1..tau} F(xbar^(r,k)) - F* per round r < T, with dist0, "
                     "dist_tau and drift_sum = sum_i sum_{k=1..tau-1} ||x_i - xbar||^2",
    "Pi": "max over the run's rounds and clients of kappa = alpha_i / p_i (BM's Pi)",
}
#: the per-round parameters :func:`measure` gives each left-hand side (beside its values)
PER_ROUND = {"gap_t": ("t",), "dist_next": ("dist_t", "gamma_prev"),
             "grad_norm_sq": ("f_w", "f_star"),
             "round_avg_gap": ("dist0", "dist_tau", "drift_sum")}
#: min / max over the clients of kappa_i = alpha_i / p_i per round (BM's pi_t, Pi_t)
KAPPA_KEYS = ("kappa_min", "kappa_max")
#: (1/T) sum_{t<T} (1/tau) sum_{k=0}^{tau-1} ||grad F(xbar^(t,k))||^2 over the virtual averages
#: (xbar^(t,0) = x_t): what BC's non-convex theorems bound (:func:`measured_lhs`); its per-round
#: array (P, rounds), ``toys.Trace.grad_norm2_virtual``, is recorded with ``virtual=True``
VIRTUAL = "avg_grad_norm2_virtual"


def measured_lhs(lhs: str, algorithm: str) -> str:
    """The quantity :func:`measure` computes for a bound with left-hand side ``lhs`` run as
    ``algorithm`` (its plan's, i.e. its registered one): ``lhs`` itself, or the one
    :data:`verify._check_lhs.PAPER_LHS` maps it to, as :func:`verify.check` does (there by
    the registry's algorithm, :func:`verify._check_lhs.measured_name`; here by the plan's, so
    that an unregistered mutant carrying the original's algorithm is measured alike).

    >>> measured_lhs("avg_grad_norm2", "beta"), measured_lhs("avg_grad_norm2", "fedau")
    ('avg_grad_norm2_virtual', 'avg_grad_norm2')
    """
    from .._check_lhs import PAPER_LHS

    return PAPER_LHS.get((lhs, algorithm), lhs)


def run_batched(stacked, x0, eta, *, rounds: int, tau: int, rule=None, masks=None,
                virtual: bool = False) -> dict:
    """Run the population ``stacked`` from ``x0`` (P, d) with step sizes ``eta``.

    ``eta``: (P,) a constant step per instance, or (P, rounds * tau) the step of every SGD
    iteration t = r tau + k (a schedule, ``toys.run``'s per-iteration ``lr``). ``rule``: the
    algorithm's local steps and aggregation (:class:`verify.falsify.algorithms.LocalRule`;
    default FedAvg). ``masks``: (P, rounds, N) bool participation (None: every client every
    round); an absent client does no work and gets weight 0, a round without participants
    leaves the model where it is (its round arrays NaN), as in ``toys.run``. Returns
    per-instance arrays: the state ones :data:`STATE_KEYS` (P, rounds + 1) and the round ones
    :data:`ROUND_KEYS` and :data:`KAPPA_KEYS` (P, rounds), as ``toys.Trace`` defines them (the
    virtual average's weights are the round's aggregation weights). ``virtual``: also
    ``grad_norm2_virtual`` (P, rounds), (1/tau) sum_{k<tau} ||grad F(xbar^(r,k))||^2 at the
    virtual averages (one more gradient evaluation per local step but the last). Non-finite
    values mark a diverged instance.
    """
    from .algorithms import LocalRule

    rule = LocalRule() if rule is None else rule
    p = stacked.p
    x = np.array(x0, dtype=float)
    P = x.shape[0]
    eta = np.asarray(eta, dtype=float)
    eta = np.repeat(eta[:, None], rounds * tau, axis=1) if eta.ndim == 1 else eta
    if eta.shape != (P, rounds * tau):
        raise ValueError(f"eta has shape {eta.shape}: ({P},) or ({P}, {rounds * tau}) expected")
    masks = None if masks is None else np.asarray(masks, dtype=bool)
    F_star_i = getattr(stacked, "F_star_i", None) if rule.needs_losses else None
    out = {k: np.full((P, rounds + 1), np.nan) for k in STATE_KEYS}
    out.update({k: np.full((P, rounds), np.nan) for k in (*ROUND_KEYS, *KAPPA_KEYS)})
    if virtual:
        out["grad_norm2_virtual"] = np.full((P, rounds), np.nan)
    U = rule.init(x)
    with np.errstate(all="ignore"):
        for r in range(rounds + 1):
            X, G, Lx = _state(stacked, out, r, x)
            if r == rounds:
                break
            m = None if masks is None else masks[:, r]
            a = rule.round_weights(p, Lx, F_star_i, m, r)
            out["kappa_min"][:, r] = np.min(a / p, axis=-1)
            out["kappa_max"][:, r] = np.max(a / p, axis=-1)
            out["lr"][:, r] = eta[:, r * tau]
            x, U = _round(stacked, rule, out, r, (x, X, G, U, a, m),
                          eta[:, r * tau:(r + 1) * tau], tau)
    return out


def _state(stacked, out, r, x):
    """The state metrics at the server models ``x`` (P, d) into column ``r`` of ``out``;
    returns every client's copy ``X`` (P, N, d), gradients and losses there."""
    p = stacked.p
    X = np.broadcast_to(x[:, None, :], (x.shape[0], p.shape[0], x.shape[1]))
    G, Lx = stacked.grads(X), stacked.losses(X)
    out["loss"][:, r] = np.einsum("n,pn->p", p, Lx)
    out["gap"][:, r] = out["loss"][:, r] - stacked.F_star
    out["dist2"][:, r] = np.sum((x - stacked.x_star) ** 2, axis=1)
    out["grad_norm2"][:, r] = np.sum(np.einsum("n,pnd->pd", p, G) ** 2, axis=1)
    return X, G, Lx


def _round(stacked, rule, out, r, state, eta, tau):
    """One round's tau local steps from X (absent clients, ``m`` False, stay there; ``m`` None:
    every client): fills the round arrays of round r; returns the next server model and the
    rule's state."""
    x, X, G, U, a, m = state
    p, P = stacked.p, x.shape[0]
    W, shadow, g2, inner = X, 0.0, np.zeros(P), 0.0
    virtual = "grad_norm2_virtual" in out
    dmax, dsum, disc = np.zeros(P), np.zeros(P), np.zeros(P)
    sub = "n,pnd->pd" if a.ndim == 1 else "pn,pnd->pd"  # shared or per-instance weights
    for k in range(tau):
        if k or rule.perturbed:
            G = stacked.grads(rule.query(W, U))
        g2 = np.maximum(g2, np.max(_on(m, np.sum(G * G, axis=2), 0.0), axis=1))
        W = rule.step(W, G, X, eta[:, k, None, None])
        W = W if m is None else np.where(m[:, :, None], W, X)
        xbar = x + np.einsum(sub, a, W - X)
        xb = np.broadcast_to(xbar[:, None, :], W.shape)
        shadow = shadow + np.einsum("n,pn->p", p, stacked.losses(xb)) - stacked.F_star
        dev = np.sum((W - xb) ** 2, axis=2)  # (P, N) ||x_i^(r,k+1) - xbar^(r,k+1)||^2
        dev_p = _on(m, dev, 0.0)
        dmax = np.maximum(dmax, np.max(dev_p, axis=1))
        disc = np.maximum(disc, dev @ a if a.ndim == 1 else np.sum(dev * a, axis=1))
        if k < tau - 1:
            dsum = dsum + np.sum(dev_p, axis=1)
            if virtual:  # ||grad F(xbar^(r,k+1))||^2 (k + 1 = tau: x_{r+1}, the next state)
                inner = inner + np.sum(np.einsum("n,pnd->pd", p, stacked.grads(xb)) ** 2, axis=1)
    some = True if m is None else np.any(m, axis=1)  # toys.run measures nothing in a round
    for key, v in (("shadow_gap", shadow / tau), ("g2_max", g2), ("drift_max", dmax),
                   ("drift_sum", dsum), ("disc_max", disc)):  # without participants
        out[key][:, r] = np.where(some, v, np.nan)
    if virtual:  # a round without participants stays at x_r, as toys.run's
        g = out["grad_norm2"][:, r]
        out["grad_norm2_virtual"][:, r] = np.where(some, (g + inner) / tau, g)
    return xbar, rule.end_round(U, W, x)


def _on(m, v, off):
    """``v`` where the clients participate (``m`` None: all of them), ``off`` elsewhere."""
    return v if m is None else np.where(m, v, off)


def quantities_of_trace(tr, p=None) -> dict:
    """The same quantities from a ``toys.Trace`` (one instance: arrays of shape (1, ...)):
    :func:`verify.falsify.population.quantities`, the one reader of run quantities."""
    from .population import quantities

    return quantities(tr, p)


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
    if lhs == VIRTUAL:
        return np.mean(q["grad_norm2_virtual"], axis=1, keepdims=True), {}
    if lhs == "grad_norm_sq":
        return q["grad_norm2"], {"f_w": q["loss"], "f_star": q["loss"] - q["gap"]}
    if lhs == "max_client_drift":
        return np.max(q["drift_max"], axis=1, keepdims=True), {}
    if lhs == "client_discrepancy":
        return q["disc_max"], {}
    if lhs == "Pi":
        return np.max(q["kappa_max"], axis=1, keepdims=True), {}
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
