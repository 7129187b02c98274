"""Worst-case models (PEP) of the averaged function-value gap of FedAvg on convex clients (DKR).

The bounded quantity of Dhasade-Kremer-Renard, Theorem 2.1 (seed 004) is the time average of
the shadow sequence's gap, ``(1/(tau T)) sum_{t<T} sum_{k=1..tau} F(xbar^(t,k)) - F*``, with
``xbar^(t,k)`` the mean of the client iterates after ``k`` local steps of round ``t``; the
clients are convex and L-smooth (``mu = 0``), ``F = (1/M) sum_i f_i``, ``D = ||x^(0) - x*||``.

Three PEPs, all over one or more rounds of FedAvg:

* **full** -- all ``T`` rounds, ``||x_0 - x*|| <= D``; value (dual) and instance (primal).
  Gram size ~ 3 + clients * (2 tau - 1) * T (twice that with ``zeta_at="visited"``): used
  while clients * tau * T <= 24 (~10 s at the limit).
* **Lyapunov** (upper bound for any ``T``) -- one round from an arbitrary ``x_0`` with the
  progress constraint ``||x_0 - x*||^2 - ||xbar^(tau) - x*||^2 <= D^2 / T``. Its dual is a
  multiplier ``c >= 0`` and a certificate ``round_gap <= c (d_t - d_{t+1}) + P(c)`` valid for
  every round of every instance; summing over rounds gives ``avg <= c D^2/T + P(c)`` = the
  value. At ``D^2/T = 0`` it bounds the plateau ``lim_T``.
* **stationary** (lower bound for any ``T``) -- one round whose server update returns to its
  start (the last gradient is defined by ``sum_i p_i sum_k g_i^k = 0``): run forever, this
  instance has the same gap every round, so its round gap is a lower bound on the worst case
  for every ``T`` (with ``||x_0 - x*|| <= D``) and on the plateau.

Numerics: over convex (``mu = 0``) clients these worst cases are approached with ``x_0`` going
to infinity (not attained); the solvers stall at ~1e-4 relative accuracy. Records of this
module are accepted with tolerance :data:`TOL_CONVEX` and say so in ``detail``; of the
Lyapunov PEP only the dual certificate is used (and judged), of the stationary PEP only the
primal instance.

Normalization: L = 1 and the length unit ``b = D`` (for the plateau ``b = zeta sqrt(eta L
tau) / L``); ``detail["constant"]`` of the plateau is its value divided by
``tau^2 eta^2 L zeta^2`` (the bound's constant is 18).

Example
-------
>>> from verify.tightness import wc_fedavg_plateau
>>> r = wc_fedavg_plateau(L=1.0, eta=0.1, tau=2, zeta=1.0, cache=False)
>>> 0.04 < r.detail["constant"] < 0.05 and r.lower <= r.value * (1 + 1e-3)  # 18 in the bound
True
"""

from __future__ import annotations

import math

from ._common import (
    ZETA_AT,
    Federation,
    cached_solve,
    check_choice,
    check_int,
    check_nonneg,
    check_pos,
    record_from,
)
from ._solve import PEPRecord

__all__ = [
    "FULL_LIMIT_GAP",
    "TOL_CONVEX",
    "quadratic_instance_gap",
    "wc_fedavg_avg_gap",
    "wc_fedavg_plateau",
]

#: acceptance tolerance (relative gap and feasibility errors) of the convex-class models
TOL_CONVEX = 1e-3
#: ``mode="auto"`` uses the full PEP while clients * tau * T stays at most this
FULL_LIMIT_GAP = 24
_FCLASS = "smooth_convex"


def wc_fedavg_avg_gap(L, eta, tau, zeta, D, T, *, n_clients=2, zeta_at="x*", mode="auto",
                      cache=True, solver=None) -> PEPRecord:
    """Worst case of FedAvg's time-averaged shadow gap over ``T`` rounds (DKR Theorem 2.1).

    **Problem**: ``min_x F(x) = (1/M) sum_i f_i(x)``, ``M = n_clients``, each ``f_i`` convex and
    L-smooth, ``||x_0 - x*|| <= D``, ``||grad f_i(x*)|| <= zeta`` (``zeta_at="x*"``) or
    ``||grad f_i(y) - grad F(y)|| <= zeta`` at ``x*`` and every point ``y`` where a gradient
    is evaluated (``zeta_at="visited"``). Both are weaker than DKR's "for all x" assumption:
    the PEP is an upper bound on the worst case over DKR's class.

    **Algorithm**: FedAvg, full participation, ``tau`` gradient steps of size ``eta`` per round,
    exact gradients (``sigma = 0``).

    **Metric**: ``(1/(tau T)) sum_{t<T} sum_{k=1..tau} F(xbar^(t,k)) - F*``.

    **Theoretical guarantee** (DKR, Thm 2.1 at ``sigma = 0``, ``eta <= 1/(4L)``):
    ``D^2/(2 eta tau T) + 18 tau^2 eta^2 L zeta^2``.

    ``mode``: ``"full"`` (one PEP over ``T`` rounds), ``"lyapunov"`` (upper bound from the
    one-round Lyapunov PEP, lower bound from the stationary instance), ``"auto"`` (full while
    ``n_clients * tau * T <= 24``). The Lyapunov bound certifies a potential of DKR's kind
    (distance to x*) and is much looser than the full PEP at moderate T.

    >>> r = wc_fedavg_avg_gap(L=1.0, eta=0.2, tau=2, zeta=0.5, D=1.0, T=2, cache=False)
    >>> r.lower <= r.value < 1.0 / (2 * 0.2 * 2 * 2) + 18 * 4 * 0.04 * 0.25
    True
    """
    L, eta, zeta, D = (check_pos("L", L), check_pos("eta", eta), check_nonneg("zeta", zeta),
                       check_nonneg("D", D))
    tau, T = check_int("tau", tau, 1, 100), check_int("T", T, 1, 10**9)
    n = check_int("n_clients", n_clients, 2, 8)
    zeta_at = check_choice("zeta_at", zeta_at, ZETA_AT)
    mode = check_choice("mode", mode, ("auto", "full", "lyapunov"))
    params = {"L": L, "eta": eta, "tau": tau, "zeta": zeta, "D": D, "T": T, "n_clients": n,
              "zeta_at": zeta_at}
    relaxed = _relaxed(zeta_at)
    if D == 0 and zeta == 0:
        return _zero("fedavg_avg_gap", params, relaxed)
    b = max(D, eta * tau * zeta)  # length unit
    _check_scales({"eta": eta, "L": L, "zeta": zeta, "D": D}, eta * L, b, b * b, L * b * b,
                  *([zeta / (L * b)] if zeta else []), *([D / b] if D else []))
    base = {"eta": eta * L, "tau": tau, "n": n, "zeta_at": zeta_at, "zeta": zeta / (L * b)}
    scale = L * b**2
    if mode == "auto":
        mode = "full" if n * tau * T <= FULL_LIMIT_GAP else "lyapunov"
    if mode == "full":
        norm = {**base, "kind": "full", "D": D / b, "T": T}
        raw = _solve(norm, cache, solver)
        return record_from("fedavg_avg_gap", raw, scale=scale, params=params, relaxed=relaxed,
                           detail={"mode": "full", "tolerance": TOL_CONVEX,
                                   "lower_quadratic": quadratic_instance_gap(L, eta, tau * T, D)})
    up = _solve({**base, "kind": "lyapunov", "eps": (D / b) ** 2 / T}, cache, solver)
    low = _solve({**base, "kind": "stationary", "D": D / b}, cache, solver)
    rec = _combine("fedavg_avg_gap", up, low, scale, params, relaxed,
                   "Lyapunov one-round PEP (upper) + max(stationary instance, identical-client "
                   "quadratic instance) (lower)")
    quad = quadratic_instance_gap(L, eta, tau * T, D)
    rec.detail["lower_stationary"] = rec.lower
    rec.detail["lower_quadratic"] = quad
    import dataclasses
    return dataclasses.replace(rec, lower=max(quad, rec.lower if rec.lower is not None
                                              else -math.inf))


def wc_fedavg_plateau(L, eta, tau, zeta, *, n_clients=2, zeta_at="x*", cache=True,
                      solver=None) -> PEPRecord:
    """Worst case of FedAvg's plateau ``lim_{T->inf}`` of the averaged shadow gap (DKR eq. (2)).

    **Problem, algorithm**: as :func:`wc_fedavg_avg_gap` (any starting point).

    **Metric**: ``lim sup_{T->inf} (1/(tau T)) sum_{t<T} sum_{k=1..tau} F(xbar^(t,k)) - F*``.

    Upper bound: the Lyapunov PEP at ``D^2/T = 0``; lower bound: the worst stationary instance
    (a run that stays at a fixed point of the round map). By homogeneity the plateau is
    ``c(eta L, tau) tau^2 eta^2 L zeta^2``; ``detail["constant"]`` holds ``c`` (the bound's
    constant is 18).

    **Theoretical guarantee** (DKR main text eq. (2)): ``18 tau^2 eta^2 L zeta^2``.

    >>> r = wc_fedavg_plateau(L=1.0, eta=0.1, tau=2, zeta=0.0, cache=False)
    >>> r.value, r.lower
    (0.0, 0.0)
    """
    L, eta, zeta = check_pos("L", L), check_pos("eta", eta), check_nonneg("zeta", zeta)
    tau = check_int("tau", tau, 1, 100)
    n = check_int("n_clients", n_clients, 2, 8)
    zeta_at = check_choice("zeta_at", zeta_at, ZETA_AT)
    params = {"L": L, "eta": eta, "tau": tau, "zeta": zeta, "n_clients": n, "zeta_at": zeta_at}
    relaxed = _relaxed(zeta_at)
    if zeta == 0:
        return _zero("fedavg_plateau", params, relaxed)
    given = {"eta": eta, "L": L, "zeta": zeta}
    _check_scales(given, eta * L * tau, eta * eta, zeta * zeta)
    zt = 1.0 / math.sqrt(eta * L * tau)  # normalized zeta: between 1 and 1/(eta L tau), the
    b = zeta / (L * zt)                   # two natural scales (best conditioned in tests)
    _check_scales(given, zt, b, b * b, L * b * b, L * (eta * tau * zeta) * (eta * tau * zeta))
    base = {"eta": eta * L, "tau": tau, "n": n, "zeta_at": zeta_at, "zeta": zt,
            "metric_scale": 1.0 / (eta * L * tau)}  # the normalized metric is then the constant
    up = _solve({**base, "kind": "lyapunov", "eps": 0.0}, cache, solver)
    low = _solve({**base, "kind": "stationary", "D": None}, cache, solver)
    rec = _combine("fedavg_plateau", up, low, L * b**2, params, relaxed,
                   "Lyapunov one-round PEP at D^2/T = 0 (upper) + stationary instance (lower)")
    unit = L * eta**2 * tau**2 * zeta**2
    rec.detail["constant"] = None if rec.value is None else rec.value / unit
    rec.detail["constant_lower"] = None if rec.lower is None else rec.lower / unit
    return rec


def _check_scales(given: dict, *scales) -> None:
    """Refuse (DomainError naming the most extreme of the ``given`` parameters) values whose
    scales of the normalized PEP (eta L, the length unit b, L b^2, ...) leave [1e-300, 1e300]:
    the model would divide by 0 or square an infinity (OverflowError)."""
    from boundlab.errors import DomainError

    if all(1e-300 <= abs(v) <= 1e300 for v in scales):  # False for nan and inf too
        return
    name = max((k for k, v in given.items() if v), key=lambda k: abs(math.log10(given[k])))
    raise DomainError(name, given[name], "a value whose PEP scales (eta L, tau eta L, the "
                      "length unit b, L b^2) stay within [1e-300, 1e300] in float64")


def quadratic_instance_gap(L, eta, N, D) -> float:
    """Averaged gap of the worst identical-client quadratic instance (a lower bound on ``W``).

    All clients ``f_i(x) = (lam/2) ||x - x*||^2`` with ``0 < lam <= L``: the dissimilarity is 0
    everywhere, so the instance satisfies DKR's assumptions *exactly* for every ``zeta``; the
    shadow iterate is gradient descent and the averaged gap over ``N = tau T`` steps is
    ``(D^2 / N) sum_{k=1..N} (lam/2) (1 - eta lam)^(2k)``, maximized over ``lam`` on a fine
    grid refined by a bounded scalar search.

    >>> round(quadratic_instance_gap(L=1.0, eta=0.2, N=1, D=1.0), 6)  # lam = L: 0.5 * 0.8**2
    0.32
    """
    import numpy as np
    from scipy.optimize import minimize_scalar

    k = np.arange(1, N + 1)

    def avg(lam):
        return float(np.mean(0.5 * lam * (1.0 - eta * lam) ** (2 * k))) * D**2

    grid = np.geomspace(L * 1e-6, L, 2001)
    vals = [avg(x) for x in grid]
    i = int(np.argmax(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = minimize_scalar(lambda x: -avg(x), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-14 * L})
    return max(vals[i], -float(res.fun))


# ---------------------------------------------------------------------------------- internals
def _relaxed(zeta_at):
    where = "x*" if zeta_at == "x*" else "x* and at visited points"
    return (f"zeta imposed at {where} only (DKR: for all x)",)


def _zero(method, params, relaxed):
    return PEPRecord(method=method, value=0.0, lower=0.0, theoretical=None, solver="none",
                     status="trivial: zero worst case", gap=0.0, seconds=0.0, cached=False,
                     ok=True, gram_size=0, params=params, relaxed=relaxed, n_solves=0,
                     detail={"why": "D = 0 and zeta = 0 (x_0 minimizes every client)"
                             if "D" in params else "zeta = 0 (every client is minimized at x*)"})


def _solve(norm, cache, solver):
    """Solve; tolerances relative to max(|value|, floor): the plateau's metric is scaled to be
    the constant in front of tau^2 eta^2 L zeta^2 (typically 0.04-0.2; floor 1e-2), the averaged
    gap is in units of L D^2 (floor 1e-3)."""
    floor = 1e-2 if "metric_scale" in norm else 1e-3
    use = {"lyapunov": "upper", "stationary": "lower"}.get(norm["kind"], "both")
    raw = cached_solve("dkr_" + norm["kind"], _FCLASS, norm, _build(norm), cache=cache,
                       solver=solver, tol=TOL_CONVEX, tol_proof=TOL_CONVEX, scale_floor=floor,
                       use=use)
    m = norm.get("metric_scale", 1.0)
    if m != 1.0:
        raw = {**raw, **{k: (None if raw[k] is None else raw[k] / m)
                         for k in ("value", "lower", "gap")}}
    return raw


def _combine(method, up, low, scale, params, relaxed, how):
    def sc(v):
        return None if v is None else float(v) * scale

    lower = low["lower"] if low["ok"] else None
    return PEPRecord(
        method=method, value=sc(up["value"]) if up["ok"] else None, lower=sc(lower),
        theoretical=None, solver=",".join(sorted({up["solver"], low["solver"]})),
        status=f"upper: {up['status']}; lower: {low['status']}",
        gap=sc(max(abs(up["gap"] or 0.0), abs(low["gap"] or 0.0))),
        seconds=float(up["seconds"] + low["seconds"]), cached=bool(up["cached"] and low["cached"]),
        ok=bool(up["ok"] and low["ok"]), gram_size=max(up["gram_size"], low["gram_size"]),
        params=params, relaxed=relaxed, n_solves=2,
        errors={k: max(up["errors"].get(k, 0.0), low["errors"].get(k, 0.0))
                for k in set(up["errors"]) | set(low["errors"])},
        detail={"mode": "lyapunov", "how": how, "tolerance": TOL_CONVEX,
                "upper_ok": up["ok"], "lower_ok": low["ok"]})


def _build(norm):
    """Builder of the full / Lyapunov / stationary PEP (normalized units, L = 1)."""
    from PEPit.expression import Expression

    kind, n, tau, eta = norm["kind"], norm["n"], norm["tau"], norm["eta"]
    p = 1.0 / n

    def mean(points):
        out = p * points[0]
        for y in points[1:]:
            out = out + p * y
        return out

    def build(pb):
        fed = Federation(pb, n, 1.0, 0.0, [p] * n, zeta=norm["zeta"], zeta_at=norm["zeta_at"])
        x0 = pb.set_initial_point()
        if norm.get("D") is not None:
            pb.set_initial_condition((x0 - fed.xs) ** 2 <= norm["D"] ** 2)
        x, total, count = x0, None, 0
        for _ in range(norm.get("T", 1)):
            if kind == "stationary":
                # the server update returns to x: the last client's last gradient is defined
                # by sum_i sum_k g_i^k = 0 (uniform weights), the assumptions imposed after
                fed.defer_visited = True
                runs = [fed.local_run(i, x, tau, eta) for i in range(n - 1)]
                last = fed.local_run(n - 1, x, tau - 1, eta)
                queries = [(i, y) for i, run in enumerate(runs + [last]) for y in run[:-1]]
                acc = None
                for i, y in queries:
                    g = fed.fs[i].gradient(y)
                    acc = g if acc is None else acc + g
                y = last[-1]
                g_last = -1.0 * acc
                fed.fs[n - 1].add_point((y, g_last, Expression()))
                last.append(y - eta * g_last)
                runs.append(last)
                fed.defer_visited = False
                for _, q in queries + [(n - 1, y)]:
                    fed.impose_dissimilarity(q)
            else:
                runs = [fed.local_run(i, x, tau, eta) for i in range(n)]
            for k in range(1, tau + 1):
                term = fed.value(mean([run[k] for run in runs]))
                total = term if total is None else total + term
                count += 1
            x = mean([run[tau] for run in runs])
        if kind == "lyapunov":
            pb.add_constraint(fed.dist2(x0) - fed.dist2(x) <= norm["eps"])
        pb.set_performance_metric((norm.get("metric_scale", 1.0) / count) * total)
    return build
