"""Worst-case models (PEP) of gradient descent and of federated local-update rounds.

One function per method, in the style of PEPit's examples: the docstring states the problem,
the algorithm, the theoretical guarantee with its reference, and an example; the body reads like
the algorithm. Every model is solved in normalized units (L = 1, initial radius r = 1) and
rescaled with the homogeneity of the class: ``W(c^2 r^2, c zeta) = c^2 W(r^2, zeta)``.

Metric of this module: the squared distance to the minimizer ``x*`` of ``F = sum_i p_i f_i``
after the method, given ``||x_0 - x*|| <= r``.

Many rounds: ``mode="full"`` solves one PEP over all rounds (exact, cost grows fast with the
Gram size ~ 2 + clients * tau * rounds); ``mode="chain"`` chains one-round PEPs,
``r_{k+1}^2 = W(r_k^2)``, an upper bound (the one-round worst case is nondecreasing and concave
in ``r^2``, so the chain also bounds expectations over random participation; it lets the
functions change between rounds) with no lower bound. ``mode="auto"`` takes ``full`` while
``clients * tau * rounds <= 24``. A chain rounds the normalized heterogeneity
``zeta / (L r_k)`` up to a geometric grid of ratio ``1 + chain_grid`` (still an upper bound, as
the normalized map is nondecreasing in it), so long chains reuse a few cached solves.

Example
-------
>>> from verify.tightness import wc_gradient_descent
>>> r = wc_gradient_descent(L=1.0, mu=0.1, eta=1.0, n=2, cache=False)
>>> abs(r.value - r.theoretical) < 1e-7
True
"""

from __future__ import annotations

import numpy as np

from ._common import (
    ZETA_AT,
    Federation,
    cached_solve,
    chain_record,
    check_choice,
    check_int,
    check_nonneg,
    check_pos,
    check_weights,
    grid_up,
    record_from,
)
from ._solve import PEPRecord

__all__ = [
    "FULL_LIMIT",
    "wc_beta_round",
    "wc_fedavg_round",
    "wc_fedprox_round",
    "wc_gradient_descent",
]

#: ``mode="auto"`` solves the full PEP while clients * tau * rounds stays at most this
FULL_LIMIT = 24
#: relative step of the geometric grid the chained heterogeneity ``zeta / (L r_k)`` is rounded
#: up to (so that a long chain reuses a few cached one-round solves); 0 = no rounding
CHAIN_GRID = 1e-3
_MODES = ("auto", "full", "chain")


def wc_gradient_descent(L, mu, eta, n, *, cache=True, solver=None) -> PEPRecord:
    """Worst case of gradient descent on an L-smooth mu-strongly convex function.

    **Problem**: ``min_x f(x)``, ``f`` L-smooth and mu-strongly convex (``0 <= mu < L``).

    **Algorithm**: ``x_{k+1} = x_k - eta grad f(x_k)``, ``k = 0..n-1``.

    **Metric**: ``||x_n - x*||^2`` over ``||x_0 - x*||^2 <= 1``.

    **Theoretical guarantee** (tight, attained on quadratics): ``max(|1 - eta mu|,
    |1 - eta L|)^(2n)``, e.g. Taylor, Hendrickx, Glineur, *Smooth strongly convex interpolation
    and exact worst-case performance of first-order methods*, Math. Prog. 161 (2017).

    Returns a :class:`~verify.tightness.PEPRecord` (``value`` dual, ``lower`` primal,
    ``theoretical`` the closed form).

    >>> r = wc_gradient_descent(L=1.0, mu=0.1, eta=0.5, n=3, cache=False)
    >>> round(r.value, 6), round(r.theoretical, 6)
    (0.735092, 0.735092)
    """
    L = check_pos("L", L)
    mu = check_nonneg("mu", mu)
    if mu >= L:
        from boundlab.errors import DomainError
        raise DomainError("mu", mu, f"real in [0, L) = [0, {L})")
    eta = check_pos("eta", eta)
    n = check_int("n", n, 1, 200)
    kappa_inv, h = mu / L, eta * L
    norm = {"mu": kappa_inv, "eta": h, "n": n}

    def build(pb):
        from PEPit.functions import SmoothStronglyConvexFunction

        f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=kappa_inv)
        xs = f.stationary_point()
        x0 = pb.set_initial_point()
        pb.set_initial_condition((x0 - xs) ** 2 <= 1)
        x = x0
        for _ in range(n):
            x = x - h * f.gradient(x)
        pb.set_performance_metric((x - xs) ** 2)

    raw = cached_solve("gradient_descent", "smooth_strongly_convex", norm, build,
                       cache=cache, solver=solver)
    theory = max(abs(1 - eta * mu), abs(1 - eta * L)) ** (2 * n)
    return record_from("gradient_descent", raw, scale=1.0, theoretical=theory,
                       params={"L": L, "mu": mu, "eta": eta, "n": n})


def wc_fedavg_round(L, mu, eta, tau, zeta, n_clients=2, rounds=1, *, r=1.0, zeta_at="x*",
                    weights=None, aggregation=None, scenarios=None, mode="auto",
                    chain_grid=CHAIN_GRID, cache=True, solver=None) -> PEPRecord:
    """Worst case of ``rounds`` rounds of FedAvg with ``tau`` local gradient steps.

    **Problem**: ``min_x F(x) = sum_i p_i f_i(x)`` over ``n_clients`` clients, each ``f_i``
    L-smooth and mu-strongly convex, heterogeneity ``||grad f_i(x*)|| <= zeta`` (exact class
    "zeta at x*"); with ``zeta_at="visited"`` also ``||grad f_i(y) - grad F(y)|| <= zeta`` at
    every point ``y`` where a gradient is evaluated (a relaxation of "for all x": the PEP is an
    upper bound on the worst case over functions dissimilar everywhere).

    **Algorithm**: each round, every client runs ``y <- y - eta grad f_i(y)`` ``tau`` times from
    the server model ``x``; the server sets ``x <- x + sum_i c_i (y_i - x)`` with
    ``c = aggregation`` (default ``p``). ``scenarios = [(prob, c), ...]`` models random
    participation: the metric becomes the expectation ``sum prob * ||x_c - x*||^2`` (exact for
    one round; chained over rounds by concavity).

    **Metric**: ``E||x_R - x*||^2`` over ``||x_0 - x*|| <= r``.

    **Theoretical guarantee**: at ``zeta = 0`` every client has minimizer ``x*`` and the worst
    case is gradient descent's, ``max(|1 - eta mu|, |1 - eta L|)^(2 tau R) r^2`` (attained with
    identical clients) whenever each ``c`` is a probability vector.

    **Reference**: PEP by Drori & Teboulle (2014), Taylor, Hendrickx, Glineur (2017); for
    FedAvg compare Glasgow, Yuan, Ma, *Sharp bounds for federated averaging*, AISTATS 2022.

    >>> r = wc_fedavg_round(L=1.0, mu=0.1, eta=0.1, tau=2, zeta=0.5, cache=False)
    >>> round(r.value, 5)
    0.96071
    """
    L, mu, eta, zeta, r = (check_pos("L", L), check_nonneg("mu", mu), check_pos("eta", eta),
                           check_nonneg("zeta", zeta), check_pos("r", r))
    _check_mu(mu, L)
    return _rounds("fedavg_round", L=L, mu=mu, eta=eta, tau=check_int("tau", tau, 1, 100),
                   zeta=zeta, n=check_int("n_clients", n_clients, 2, 8),
                   rounds=check_int("rounds", rounds, 1, 10_000), r=r,
                   zeta_at=check_choice("zeta_at", zeta_at, ZETA_AT), weights=weights,
                   aggregation=aggregation, scenarios=scenarios,
                   mode=check_choice("mode", mode, _MODES), cache=cache, solver=solver,
                   chain_grid=check_nonneg("chain_grid", chain_grid))


def wc_fedprox_round(L, mu, eta, tau, alpha, zeta, n_clients=2, rounds=1, *, r=1.0,
                     zeta_at="x*", weights=None, mode="auto", chain_grid=CHAIN_GRID,
                     cache=True, solver=None) -> PEPRecord:
    """Worst case of FedProx rounds with ``tau`` local gradient steps on the proximal objective.

    **Problem**: as :func:`wc_fedavg_round`.

    **Algorithm** (gradient-step version analysed by Buttaci & Calafiore, eq. (11); DKR §5.6):
    ``y <- y - eta (grad f_i(y) + alpha (y - x))`` ``tau`` times from the server model ``x``,
    then ``x <- sum_i p_i y_i``. The exact proximal point (``argmin f_i + alpha/2 ||. - x||^2``)
    is *not* modelled: the theorems analyse the gradient steps.

    **Metric**: ``||x_R - x*||^2`` over ``||x_0 - x*|| <= r``.

    **Theoretical guarantee**: Buttaci & Calafiore, Lemma A.3: per round
    ``E||x_{t+1} - x*||^2 <= kappa E||x_t - x*||^2 + A`` with
    ``kappa = (alpha + mu (1 - eta (alpha + mu))^tau) / (alpha + mu)`` (see
    :mod:`verify.tightness.brackets` for the brackets of Theorem 1).

    >>> r = wc_fedprox_round(L=1.0, mu=0.1, eta=0.1, tau=2, alpha=0.5, zeta=0.0, cache=False)
    >>> r.value < 1.0
    True
    """
    L, mu, eta, zeta, r = (check_pos("L", L), check_nonneg("mu", mu), check_pos("eta", eta),
                           check_nonneg("zeta", zeta), check_pos("r", r))
    _check_mu(mu, L)
    return _rounds("fedprox_round", L=L, mu=mu, eta=eta, tau=check_int("tau", tau, 1, 100),
                   zeta=zeta, n=check_int("n_clients", n_clients, 2, 8),
                   rounds=check_int("rounds", rounds, 1, 10_000), r=r,
                   zeta_at=check_choice("zeta_at", zeta_at, ZETA_AT), weights=weights,
                   aggregation=None, scenarios=None, prox=check_nonneg("alpha", alpha),
                   mode=check_choice("mode", mode, _MODES), cache=cache, solver=solver,
                   chain_grid=check_nonneg("chain_grid", chain_grid))


def wc_beta_round(L, mu, eta, tau, beta, zeta, rounds=1, *, r=1.0, zeta_at="x*", mode="auto",
                  cache=True, solver=None) -> PEPRecord:
    """Worst case of the beta-perturbed local SGD of Buttaci & Calafiore (Alg. 1), 2 clients.

    **Problem**: as :func:`wc_fedavg_round` with 2 clients. The message graph of BC has a zero
    diagonal, so with 2 clients ``p_12 = p_21 = 1/2``, ``p_i = 1/2`` and each client's anchor is
    the other client's last local model: ``u_1 = w^2_{t-1,E}``, ``u_2 = w^1_{t-1,E}``,
    ``u_i = w_bar_{0,0}`` in round 0.

    **Algorithm**: ``w <- w - eta grad f_i(beta w + (1 - beta) u_i)``, ``tau`` times, then
    ``w_bar <- (w^1 + w^2)/2``. ``beta = 1`` is FedAvg.

    **Metric**: ``||w_bar_R - x*||^2`` over ``||w_bar_0 - x*|| <= r``. Several rounds carry
    the anchors ``u``: ``mode="full"`` is exact; ``mode="chain"`` chains the state
    ``s = max_i ||w^i_{t,E} - x*||^2`` (both last local models in the ball of radius ``sqrt s``;
    an upper bound).

    **Theoretical guarantee**: BC Lemma B.3: ``kappa = 1 - 1/beta + (1/beta)(1 - beta mu
    eta)^tau`` per round plus an additive term in ``G^2``.

    >>> r = wc_beta_round(L=1.0, mu=0.1, eta=0.1, tau=2, beta=0.5, zeta=0.0, cache=False)
    >>> r.value < 1.0
    True
    """
    L, mu, eta, zeta, r = (check_pos("L", L), check_nonneg("mu", mu), check_pos("eta", eta),
                           check_nonneg("zeta", zeta), check_pos("r", r))
    _check_mu(mu, L)
    beta = check_pos("beta", beta, 1.0, "1")
    return _rounds("beta_round", L=L, mu=mu, eta=eta, tau=check_int("tau", tau, 1, 100),
                   zeta=zeta, n=2, rounds=check_int("rounds", rounds, 1, 10_000), r=r,
                   zeta_at=check_choice("zeta_at", zeta_at, ZETA_AT), weights=None,
                   aggregation=None, scenarios=None, beta=beta,
                   mode=check_choice("mode", mode, _MODES), cache=cache, solver=solver)


# ---------------------------------------------------------------------------------- internals
def _check_mu(mu, L):
    if mu >= L:
        from boundlab.errors import DomainError
        raise DomainError("mu", mu, f"real in [0, L) = [0, {L})")


def _scenarios(scenarios, aggregation, p, n):
    from boundlab.errors import DomainError

    if scenarios is None:
        c = p if aggregation is None else check_weights("aggregation", aggregation, n)
        return [(1.0, c)]
    out = []
    try:
        for prob, c in scenarios:
            c = np.asarray(c, dtype=float)
            if c.shape != (n,) or not np.all(np.isfinite(c)):
                raise ValueError
            out.append((float(prob), c))
    except (TypeError, ValueError):
        raise DomainError("scenarios", scenarios,
                          f"list of (probability, {n} aggregation coefficients)") from None
    probs = np.array([q for q, _ in out])
    if np.any(probs < 0) or abs(probs.sum() - 1) > 1e-9:
        raise DomainError("scenarios", [q for q, _ in out], "probabilities >= 0 summing to 1")
    return out


def _rounds(method, *, L, mu, eta, tau, zeta, n, rounds, r, zeta_at, weights, aggregation,
            scenarios, mode, cache, solver, prox=0.0, beta=1.0, chain_grid=0.0):
    p = check_weights("weights", weights, n)
    scen = _scenarios(scenarios, aggregation, p, n)
    params = {"L": L, "mu": mu, "eta": eta, "tau": tau, "zeta": zeta, "n_clients": n,
              "rounds": rounds, "r": r, "zeta_at": zeta_at}
    if method == "fedprox_round":
        params["alpha"] = prox
    if method == "beta_round":
        params["beta"] = beta
    if len(scen) > 1 and rounds > 1:
        if mode == "full":
            from boundlab.errors import DomainError
            raise DomainError("mode", mode, "'chain' or 'auto' with random participation "
                              "over several rounds (the full PEP would fix one scenario)")
        mode = "chain"
    if mode == "auto":
        mode = "full" if n * tau * rounds <= FULL_LIMIT else "chain"
    relaxed = ("zeta imposed at x* and at visited points only (not for all x)",) \
        if zeta_at == "visited" and zeta > 0 else ()
    theory = None
    if zeta == 0 and prox == 0 and beta == 1 and all(
            np.all(c >= 0) and abs(c.sum() - 1) < 1e-12 for _, c in scen):
        theory = max(abs(1 - eta * mu), abs(1 - eta * L)) ** (2 * tau * rounds) * r**2
    base = {"mu": mu / L, "eta": eta * L, "tau": tau, "n": n, "zeta_at": zeta_at,
            "p": p.tolist(), "scen": [[q, c.tolist()] for q, c in scen], "prox": prox / L,
            "beta": beta}
    fclass = "smooth_strongly_convex" if mu > 0 else "smooth_convex"
    if mode == "full" or rounds == 1:
        norm = {**base, "zeta": zeta / (L * r), "rounds": rounds}
        raw = cached_solve(method, fclass, norm, _build_rounds(norm), cache=cache, solver=solver)
        return record_from(method, raw, scale=r**2, theoretical=theory, relaxed=relaxed,
                           params=params)
    if beta != 1.0:
        return _beta_chain(method, base, fclass, params, r, zeta, L, rounds, relaxed,
                           cache, solver)
    # chain: r_{k+1}^2 = W(r_k^2), each step a normalized one-round PEP at z = zeta/(L r_k),
    # z rounded up to a geometric grid (valid: the normalized map is nondecreasing in z)
    r2, raws, memo = r**2, [], {}
    for _ in range(rounds):
        if r2 <= 0:
            break
        z = grid_up(zeta / (L * float(np.sqrt(r2))), chain_grid)
        if z not in memo:  # a chain revisits grid points (always, at zeta = 0)
            norm = {**base, "zeta": z, "rounds": 1}
            memo[z] = cached_solve(method, fclass, norm, _build_rounds(norm), cache=cache,
                                   solver=solver)
        raw = memo[z]
        raws.append(raw)
        if raw["value"] is None:
            break
        r2 = r2 * raw["value"]
    return chain_record(method, raws, r2, theory, params, relaxed)


def _build_rounds(norm):
    """PEP builder of ``norm['rounds']`` rounds from ``||x0 - x*|| <= 1`` (normalized units)."""
    def build(pb):
        fed = Federation(pb, norm["n"], 1.0, norm["mu"], norm["p"], zeta=norm["zeta"],
                         zeta_at=norm["zeta_at"])
        x0 = pb.set_initial_point()
        pb.set_initial_condition((x0 - fed.xs) ** 2 <= 1)
        scen = [(q, np.asarray(c)) for q, c in norm["scen"]]
        x = x0
        prev_ends = None
        for _ in range(norm["rounds"]):
            ends = []
            for i in range(norm["n"]):
                u = x if prev_ends is None else prev_ends[1 - i]
                ends.append(fed.local_run(i, x, norm["tau"], norm["eta"], prox=norm["prox"],
                                          beta=norm["beta"], u=u)[-1])
            prev_ends = ends
            outs = [(q, fed.aggregate(x, ends, c)) for q, c in scen]
            x = outs[0][1]
        metric = None
        for q, xo in outs:
            term = q * fed.dist2(xo)
            metric = term if metric is None else metric + term
        pb.set_performance_metric(metric)
    return build


def _beta_chain(method, base, fclass, params, r, zeta, L, rounds, relaxed, cache, solver):
    """Chain of the beta method over the state s = max_i ||w^i_{t,E} - x*||^2."""
    raws = []
    # round 0: from w_bar_0 (u = w_bar_0) to the local models
    s = None
    for t in range(rounds):
        last = t == rounds - 1
        rad2 = r**2 if t == 0 else s
        rk = float(np.sqrt(rad2))
        vals = []
        targets = ["avg"] if last else [0, 1]
        for target in targets:
            norm = {**base, "zeta": zeta / (L * rk), "first": t == 0, "target": target}
            raw = cached_solve(method + "_chain", fclass, norm, _build_beta_step(norm),
                               cache=cache, solver=solver)
            raws.append(raw)
            vals.append(raw["value"])
        if any(v is None for v in vals):
            return chain_record(method, raws, float("nan"), None, params, relaxed)
        s = rad2 * max(vals)
    return chain_record(method, raws, s, None, params, relaxed)


def _build_beta_step(norm):
    def build(pb):
        fed = Federation(pb, 2, 1.0, norm["mu"], [0.5, 0.5], zeta=norm["zeta"],
                         zeta_at=norm["zeta_at"])
        if norm["first"]:
            x = pb.set_initial_point()
            pb.set_initial_condition((x - fed.xs) ** 2 <= 1)
            anchors = [x, x]
        else:
            v = [pb.set_initial_point(), pb.set_initial_point()]
            for vi in v:
                pb.set_initial_condition((vi - fed.xs) ** 2 <= 1)
            x = 0.5 * v[0] + 0.5 * v[1]
            anchors = [v[1], v[0]]
        ends = [fed.local_run(i, x, norm["tau"], norm["eta"], beta=norm["beta"], u=anchors[i])[-1]
                for i in range(2)]
        target = norm["target"]
        y = 0.5 * ends[0] + 0.5 * ends[1] if target == "avg" else ends[target]
        pb.set_performance_metric(fed.dist2(y))
    return build
