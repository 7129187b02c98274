"""Worst-case models (PEP) matching the strongly convex theorems of seeds 000/001 and 003.

* :func:`wc_fedprox_gap` -- FedProx (gradient-step version) rounds, metric
  ``F(w_bar_t) - F*`` given ``F(w_bar_0) - F* <= Delta``: Buttaci & Calafiore, Theorem 1.
* :func:`wc_beta_gap` -- the beta-perturbed method, same metric: BC Theorem 3.
* :func:`wc_skew_step` -- one SGD iteration of the virtual sequence of FedAvg (alpha = p),
  metric ``||w_{t+1} - w*||^2`` given ``||w_t - w*||^2 <= Delta``: Ben Mansour et al.,
  Theorem 3 (seed 000) = Theorem 1 (seed 001), the ``skew.recursion`` bound.

Assumptions matched exactly (with exact gradients, ``sigma = 0``, and 2 clients): every client
L-smooth and mu-strongly convex; ``Gamma = F* - sum_i p_i min f_i`` (imposed as ``<= Gamma``,
the bounds are increasing in Gamma); ``||grad f_i|| <= G`` at every point the trajectory visits
(BC A3: the local iterates ``w^i_{t,k}``, ``k = 0..E``, and the perturbed query points; BM A4:
the local iterates) -- the papers' G is a trajectory assumption, which a PEP imposes exactly.

Many rounds: ``mode="full"`` (one PEP over all rounds; Gram size grows ~ 6 E per round) or
``"chain"``: FedProx chains the state ``F(w_bar_t) - F*``; the beta method, whose round
depends on the previous local models through the anchors ``u``, chains the state
``max_i F(w^i_{t,E}) - F*`` (both last local models in that sublevel set, and ``||grad f_i||
<= G`` there). Chains are upper bounds (they let the functions change between rounds) with no
instance, so ``lower`` is ``None``.

Example
-------
>>> from verify.tightness import wc_fedprox_gap
>>> r = wc_fedprox_gap(t=1, L=1.0, mu=0.1, alpha=0.5, Delta=1.0, Gamma=0.1, G=2.0, E=2,
...                    cache=False)
>>> 0.0 < r.value < 1.0
True
"""

from __future__ import annotations

import math

from boundlab.errors import DomainError

from ._common import (
    Federation,
    cached_solve,
    chain_record,
    check_choice,
    check_int,
    check_nonneg,
    check_pos,
    check_weights,
    record_from,
)
from ._solve import PEPRecord

__all__ = [
    "FULL_ROUNDS_GAP",
    "quadratic_instance_rounds",
    "wc_beta_gap",
    "wc_fedprox_gap",
    "wc_local_dist_step",
    "wc_skew_step",
]

#: ``mode="auto"`` solves the full PEP while rounds * E stays at most this
FULL_ROUNDS_GAP = 6
_FCLASS = "smooth_strongly_convex+Gamma+G_on_trajectory"


def wc_fedprox_gap(t, L, mu, alpha, Delta, Gamma, G, E, *, gamma=None, weights=None,
                   mode="auto", cache=True, solver=None) -> PEPRecord:
    """Worst case of ``F(w_bar_t) - F*`` after ``t`` FedProx rounds (BC Theorem 1 setting).

    **Problem**: ``min F = p_1 f_1 + p_2 f_2``, ``f_i`` L-smooth mu-strongly convex,
    ``F(w_bar_0) - F* <= Delta``, ``Gamma``, ``||grad f_i(w^i_{t,k})|| <= G`` for
    ``k = 0..E`` (BC A3 with ``sigma = 0``).

    **Algorithm** (BC eq. (11)): ``w <- (1 - alpha gamma) w + alpha gamma w_bar - gamma grad
    f_i(w)``, ``E`` times, then ``w_bar <- sum_i p_i w^i``; ``gamma = 1/(2 E (L + alpha))``
    (the theorem's step) unless given.

    **Theoretical guarantee** (BC Thm 1, ``sigma = 0``): ``(L Delta/mu)(1 - mu/(3(L +
    alpha)))^t + (L/(L + alpha)) (3 L Gamma/(2 mu) + 2 E^2 G^2/mu)``.

    >>> r = wc_fedprox_gap(t=0, L=1.0, mu=0.1, alpha=0.5, Delta=1.0, Gamma=0.1, G=2.0, E=2,
    ...                    cache=False)
    >>> round(r.value, 6)
    1.0
    """
    L, mu, alpha = check_pos("L", L), check_pos("mu", mu), check_nonneg("alpha", alpha)
    _mu_lt(mu, L)
    E = check_int("E", E, 1, 100)
    gamma = 1.0 / (2 * E * (L + alpha)) if gamma is None else check_pos("gamma", gamma)
    return _gap("fedprox_gap", t=t, L=L, mu=mu, Delta=Delta, Gamma=Gamma, G=G, E=E,
                gamma=gamma, prox=alpha, beta=1.0, weights=weights, mode=mode, cache=cache,
                solver=solver, extra={"alpha": alpha})


def wc_beta_gap(t, L, mu, beta, Delta, Gamma, G, E, *, gamma=None, mode="auto", cache=True,
                solver=None) -> PEPRecord:
    """Worst case of ``F(w_bar_t) - F*`` after ``t`` rounds of the beta method (BC Theorem 3).

    **Problem**: as :func:`wc_fedprox_gap` with ``p = (1/2, 1/2)`` (forced by BC's
    zero-diagonal message graph with 2 clients), ``||grad f_i|| <= G`` at the local iterates
    ``w^i_{t,k}`` (``k = 0..E``) and at the perturbed query points ``w~^i_{t,k}``.

    **Algorithm** (BC Alg. 1): ``w <- w - gamma grad f_i(beta w + (1 - beta) u_i)``, ``E``
    times; ``u_1 = w^2_{t-1,E}``, ``u_2 = w^1_{t-1,E}``, ``u_i = w_bar_0`` in round 0;
    ``gamma = 1/(2 L E)`` unless given.

    **Theoretical guarantee** (BC Thm 3, ``sigma = 0``): ``(L Delta/mu)(1 - mu/((beta + 2)
    L))^t + 3 L Gamma/(2 mu) + 2 A(beta) E^2 G^2/mu + beta (1 - beta) E G^2/(8 L)``.

    >>> r = wc_beta_gap(t=1, L=1.0, mu=0.1, beta=0.5, Delta=1.0, Gamma=0.1, G=2.0, E=2,
    ...                 cache=False)
    >>> 0.0 < r.value < 1.0
    True
    """
    L, mu = check_pos("L", L), check_pos("mu", mu)
    _mu_lt(mu, L)
    beta = check_pos("beta", beta, 1.0, "1")
    E = check_int("E", E, 1, 100)
    gamma = 1.0 / (2 * L * E) if gamma is None else check_pos("gamma", gamma)
    return _gap("beta_gap", t=t, L=L, mu=mu, Delta=Delta, Gamma=Gamma, G=G, E=E, gamma=gamma,
                prox=0.0, beta=beta, weights=None, mode=mode, cache=cache, solver=solver,
                extra={"beta": beta})


def wc_skew_step(Delta, eta, mu, L, E, G, Gamma, *, weights=None, cache=True,
                 solver=None) -> PEPRecord:
    """Worst case of one virtual-sequence step of FedAvg (BM Theorem 3 with alpha = p).

    **Problem**: ``min F = sum_i p_i f_i`` (2 clients), ``f_i`` L-smooth mu-strongly convex,
    ``Gamma``, ``||grad f_i(w_i)|| <= G`` at every local iterate of the round.

    **Algorithm**: a round starts at a synchronised model ``z`` (free: earlier rounds are not
    modelled, a relaxation); after ``s`` local steps ``w_s = sum_i p_i w^i_s`` is the virtual
    sequence; ``||w_s - w*||^2 <= Delta``; one more step each. Every ``s = 0..E-1`` is solved
    and the largest value returned (``detail["per_step"]`` lists them).

    **Metric**: ``||w_{s+1} - w*||^2``.

    **Theoretical guarantee** (BM Thm 3, alpha = p so rho_bar = rho_tilde = 1, ``sigma = 0``,
    ``eta <= 1/(4L)``): ``(1 - 11 eta mu/8) Delta + eta^2 (32 E^2 G^2 + 6 L Gamma)``.

    >>> r = wc_skew_step(Delta=1.0, eta=0.1, mu=0.1, L=1.0, E=2, G=2.0, Gamma=0.1, cache=False)
    >>> 0.9 < r.value < (1 - 1.1 / 8) + 0.01 * (32 * 4 * 4 + 0.6)
    True
    """
    L, mu, eta = check_pos("L", L), check_pos("mu", mu), check_pos("eta", eta)
    _mu_lt(mu, L)
    Delta, Gamma, G = check_nonneg("Delta", Delta), check_nonneg("Gamma", Gamma), \
        check_pos("G", G)
    E = check_int("E", E, 1, 50)
    p = check_weights("weights", weights, 2, allow_zero=False)
    b = math.sqrt(Delta) if Delta > 0 else G / L
    scale = b**2
    norm0 = {"mu": mu / L, "eta": eta * L, "G": G / (L * b), "Gamma": Gamma / (L * b**2),
             "Delta": Delta / b**2, "p": p.tolist()}
    raws = []
    for s in range(E):
        norm = {**norm0, "s": s}
        raws.append(cached_solve("skew_step", _FCLASS, norm, _build_skew(norm), cache=cache,
                                 solver=solver))
    params = {"Delta": Delta, "eta": eta, "mu": mu, "L": L, "E": E, "G": G, "Gamma": Gamma,
              "weights": p.tolist()}
    vals = [w["value"] for w in raws]
    feasible = [i for i, v in enumerate(vals) if v is not None]
    if not feasible:
        rec = chain_record("skew_step", raws, float("nan"), None, params, _SKEW_RELAXED)
        return _replace(rec, value=None, lower=None, status="infeasible (empty class)",
                        ok=all(w["ok"] for w in raws))
    k = max(feasible, key=lambda i: vals[i])
    rec = record_from("skew_step", raws[k], scale=scale, params=params, relaxed=_SKEW_RELAXED,
                      n_solves=E, detail={"per_step": [None if v is None else v * scale
                                                       for v in vals], "worst_s": k})
    return _replace(rec, ok=all(w["ok"] for w in raws),
                    seconds=float(sum(w["seconds"] for w in raws)),
                    cached=all(w["cached"] for w in raws))


_SKEW_RELAXED = ("round start free: earlier rounds not modelled",)


def wc_local_dist_step(L, mu, gamma, E, dist_t, Gamma, G, *, alpha=0.0, beta=1.0, cache=True,
                       solver=None) -> PEPRecord:
    """Worst case of one round of FedProx / the beta method in squared distance (BC Lemmas A.3,
    B.3 at ``t = 0``).

    **Problem**: 2 clients, ``p = (1/2, 1/2)``, L-smooth mu-strongly convex, ``Gamma``,
    ``||grad f_i|| <= G`` at the local iterates ``k = 0..E`` (and the perturbed query points).

    **Algorithm**: FedProx gradient steps (``alpha``) or beta-perturbed steps with anchors
    ``u_i = w_bar_{0,0}`` (round 0), step ``gamma``.

    **Metric**: ``||w_bar_1 - w*||^2`` over ``||w_bar_0 - w*||^2 <= dist_t``.

    **Theoretical guarantee**: Lemma A.3: ``kappa dist_t + gamma^2 E S sigma^2 + 6 gamma^2 L E
    Gamma + 8 gamma^2 E^3 G^2``, ``kappa = (alpha + mu (1 - gamma (alpha + mu))^E)/(alpha +
    mu)``; Lemma B.3 (``t = 0``): ``kappa = 1 - 1/beta + (1/beta)(1 - beta mu gamma)^E``, plus
    ``8 gamma^2 E^3 G^2 (4 + (1 - beta)^2) + mu gamma^3 beta (1 - beta) E^3 G^2 + ...``.

    >>> r = wc_local_dist_step(1.0, 0.1, 0.25, 2, 1.0, 0.1, 2.0, alpha=0.5, cache=False)
    >>> 0.0 < r.value < 1.0
    True
    """
    L, mu, gamma = check_pos("L", L), check_pos("mu", mu), check_pos("gamma", gamma)
    _mu_lt(mu, L)
    E = check_int("E", E, 1, 100)
    dist_t, Gamma, G = check_nonneg("dist_t", dist_t), check_nonneg("Gamma", Gamma), \
        check_pos("G", G)
    alpha, beta = check_nonneg("alpha", alpha), check_pos("beta", beta, 1.0, "1")
    b2 = max(dist_t, Gamma / L) or (G / L) ** 2  # squared length unit
    norm = {"mu": mu / L, "gamma": gamma * L, "E": E, "prox": alpha / L, "beta": beta,
            "p": [0.5, 0.5], "Gamma": Gamma / (L * b2), "G": G / (L * b2**0.5),
            "Delta": dist_t / b2, "rounds": 1, "metric": "dist"}
    raw = cached_solve("local_dist_step", _FCLASS, norm, _build_gap(norm), cache=cache,
                       solver=solver)
    return record_from("local_dist_step", raw, scale=b2,
                       params={"L": L, "mu": mu, "gamma": gamma, "E": E, "dist_t": dist_t,
                               "Gamma": Gamma, "G": G, "alpha": alpha, "beta": beta})


def quadratic_instance_rounds(t, L, mu, Delta, G, E, gamma, *, alpha=0.0, beta=1.0,
                              n_grid=4001) -> float:
    """``F(w_bar_t) - F*`` of the worst identical-client quadratic instance (a lower bound).

    Both clients ``f_i(x) = (lam/2) x^2`` (1-D), ``mu <= lam <= L``, start ``F(w_bar_0) - F* =
    Delta``: ``Gamma = 0`` and exact gradients, so the instance satisfies the theorems'
    assumptions exactly provided ``|grad f_i| = lam |w| <= G`` at every visited point, which
    is checked along the simulated trajectory (``lam`` failing it are discarded). Returns the
    largest gap over a grid of ``lam`` (0 if no ``lam`` is feasible).

    >>> round(quadratic_instance_rounds(1, 1.0, 0.1, 1.0, 10.0, 1, 0.5), 6)  # lam = mu
    0.9025
    """
    import numpy as np

    lam = np.linspace(mu, L, n_grid)
    w = np.sqrt(2.0 * Delta / lam)  # F(w) = lam w^2 / 2 = Delta
    prev = w.copy()  # anchors of round 0: u = w_bar_0
    ok = lam * np.abs(w) <= G * (1 + 1e-12)
    for _ in range(t):
        y = w.copy()
        for _ in range(E):
            q = beta * y + (1.0 - beta) * prev
            ok &= lam * np.abs(y) <= G * (1 + 1e-12)
            ok &= lam * np.abs(q) <= G * (1 + 1e-12)
            y = y - gamma * (lam * q + alpha * (y - w))
        ok &= lam * np.abs(y) <= G * (1 + 1e-12)
        prev, w = y, y  # identical clients: both local models equal y, u_i = the other's = y
    gap = 0.5 * lam * w**2
    return float(gap[ok].max()) if ok.any() else 0.0


# ---------------------------------------------------------------------------------- internals
def _replace(rec, **kw):
    import dataclasses
    return dataclasses.replace(rec, **kw)


def _mu_lt(mu, L):
    if mu >= L:
        raise DomainError("mu", mu, f"real in (0, L) = (0, {L})")


def _gap(method, *, t, L, mu, Delta, Gamma, G, E, gamma, prox, beta, weights, mode, cache,
         solver, extra):
    t = check_int("t", t, 0, 10_000)
    Delta, Gamma, G = check_nonneg("Delta", Delta), check_nonneg("Gamma", Gamma), \
        check_pos("G", G)
    mode = check_choice("mode", mode, ("auto", "full", "chain"))
    p = check_weights("weights", weights, 2, allow_zero=False)
    params = {"t": t, "L": L, "mu": mu, "Delta": Delta, "Gamma": Gamma, "G": G, "E": E,
              "gamma": gamma, "weights": p.tolist(), **extra}
    relaxed = ()
    if mode == "auto":
        mode = "full" if t * E <= FULL_ROUNDS_GAP else "chain"
    base = {"mu": mu / L, "gamma": gamma * L, "E": E, "prox": prox / L, "beta": beta,
            "p": p.tolist()}

    def norm_for(s):  # length unit b with L b^2 = s (function-value unit s)
        return {**base, "Gamma": Gamma / s, "G": G / math.sqrt(L * s)}

    # function-value unit: the initial gap or Gamma, whichever is larger (G only if both are 0;
    # a large G is a slack constraint and must not shrink the normalized problem)
    ref = max(Delta, Gamma) or G**2 / L
    quad = quadratic_instance_rounds(t, L, mu, Delta, G, E, gamma, alpha=prox, beta=beta)
    detail = {"lower_quadratic": quad}
    if mode == "full" or t <= 1:
        norm = {**norm_for(ref), "Delta": Delta / ref, "rounds": t}
        raw = cached_solve(method, _FCLASS, norm, _build_gap(norm), cache=cache, solver=solver)
        return record_from(method, raw, scale=ref, params=params, relaxed=relaxed,
                           detail=detail)
    raws, s = [], Delta
    for k in range(t):
        s_ref = max(s, Gamma) or G**2 / L
        stage = ("first" if k == 0 else ("last" if k == t - 1 else "middle")) \
            if beta != 1.0 else "round"
        norm = {**norm_for(s_ref), "Delta": s / s_ref, "stage": stage}
        raw = cached_solve(method + "_chain", _FCLASS, norm, _build_gap_step(norm),
                           cache=cache, solver=solver)
        raws.append(raw)
        if raw["value"] is None:
            return chain_record(method, raws, float("nan"), None, params, relaxed)
        s = s_ref * raw["value"]
    rec = chain_record(method, raws, s, None, params, relaxed)
    # a chain has no instance: the identical-client quadratic instance is the lower bound
    return _replace(rec, lower=quad, detail={**detail, "lower_from": "quadratic instance"})


def _client_round(fed, i, x, norm, u):
    """E local steps of client i from x; A3 imposed at every local iterate k = 0..E."""
    ys = fed.local_run(i, x, norm["E"], norm["gamma"], prox=norm["prox"], beta=norm["beta"],
                       u=u)
    fed.bound_gradient(i, ys[-1])
    return ys[-1]


def _build_gap(norm):
    """Full PEP: ``rounds`` rounds from ``F(w_bar_0) - F* <= Delta``; metric F(w_bar_R) - F*."""
    def build(pb):
        p = norm["p"]
        fed = Federation(pb, 2, 1.0, norm["mu"], p, G=norm["G"], Gamma=norm["Gamma"])
        dist = norm.get("metric") == "dist"
        measure = fed.dist2 if dist else fed.value
        x = pb.set_initial_point()
        pb.set_initial_condition(measure(x) <= norm["Delta"])
        prev = None
        for _ in range(norm["rounds"]):
            anchors = [x, x] if prev is None else [prev[1], prev[0]]
            ends = [_client_round(fed, i, x, norm, anchors[i]) for i in range(2)]
            prev = ends
            x = p[0] * ends[0] + p[1] * ends[1]
        pb.set_performance_metric(measure(x))
    return build


def _build_gap_step(norm):
    """One chained round. FedProx: state F(w_bar) - F* <= Delta, metric F(w_bar_next) - F*.
    beta method: state max_i F(w^i_E) - F* (stage 'first': from w_bar_0 with u = w_bar_0)."""
    beta_method = norm["beta"] != 1.0

    def build(pb):
        p = norm["p"]
        fed = Federation(pb, 2, 1.0, norm["mu"], p, G=norm["G"], Gamma=norm["Gamma"])
        if not beta_method or norm["stage"] == "first":
            x = pb.set_initial_point()
            pb.set_initial_condition(fed.value(x) <= norm["Delta"])
            anchors = [x, x]
        else:
            v = [pb.set_initial_point(), pb.set_initial_point()]
            for i, vi in enumerate(v):
                pb.set_initial_condition(fed.value(vi) <= norm["Delta"])
                fed.bound_gradient(i, vi)
            x = p[0] * v[0] + p[1] * v[1]
            anchors = [v[1], v[0]]
        ends = [_client_round(fed, i, x, norm, anchors[i]) for i in range(2)]
        if beta_method and norm["stage"] != "last":
            # both clients' last models; by the symmetry of the class (p = 1/2, symmetric
            # graph and constraints) the worst case of client 0 is that of client 1
            pb.set_performance_metric(fed.value(ends[0]))
        else:
            pb.set_performance_metric(fed.value(p[0] * ends[0] + p[1] * ends[1]))
    return build


def _build_skew(norm):
    def build(pb):
        p = norm["p"]
        fed = Federation(pb, 2, 1.0, norm["mu"], p, G=norm["G"], Gamma=norm["Gamma"])
        z = pb.set_initial_point()
        runs = [fed.local_run(i, z, norm["s"] + 1, norm["eta"]) for i in range(2)]
        s = norm["s"]
        ws = p[0] * runs[0][s] + p[1] * runs[1][s]
        pb.set_initial_condition(fed.dist2(ws) <= norm["Delta"])
        for i in range(2):
            fed.bound_gradient(i, runs[i][s + 1])
        pb.set_performance_metric(fed.dist2(p[0] * runs[0][s + 1] + p[1] * runs[1][s + 1]))
    return build
