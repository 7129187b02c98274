"""Asymptotic floors: the fixed point of a one-round worst-case map.

Chaining one-round PEPs, ``s_{k+1} = W(s_k)``, bounds the state after ``k`` rounds. Where the
map contracts for large states and pushes up small ones (heterogeneity), the chain converges
to the largest fixed point ``s* = W(s*)``: an upper bound on the worst-case asymptotic state,
to be compared with a paper's asymptotic term (e.g. a heterogeneity plateau).

By homogeneity ``W(s) = s * w(s)`` where ``w`` is the normalized one-round map at scale ``s``
(heterogeneity ``zeta / sqrt(L s)`` or ``Gamma / s``, ``G / sqrt(L s)``), nonincreasing in
``s``; ``s*`` solves ``w(s) = 1`` and is found by bisection on ``log s`` (~20 SDPs).

Example
-------
>>> from verify.tightness import fixed_point_floor
>>> f = fixed_point_floor("fedavg_round", L=1.0, mu=0.1, eta=0.1, tau=2, zeta=0.0, cache=False)
>>> f.value
0.0
"""

from __future__ import annotations

import dataclasses
import math

from boundlab.errors import DomainError

from ._solve import PEPRecord

__all__ = ["fixed_point_floor"]

_METHODS = ("fedavg_round", "fedprox_round", "fedprox_gap")


def fixed_point_floor(method, *, rtol=1e-4, cache=True, solver=None, **params) -> PEPRecord:
    """Largest fixed point of the one-round worst-case map of ``method``.

    ``method`` and its parameters (the one-round model's, without the radius / Delta / t):

    * ``"fedavg_round"``: ``L, mu, eta, tau, zeta`` (+ ``n_clients``, ``zeta_at``) -- state
      ``||x - x*||^2``;
    * ``"fedprox_round"``: the same plus ``alpha`` (proximal coefficient);
    * ``"fedprox_gap"``: ``L, mu, alpha, Gamma, G, E`` (+ ``gamma``) -- state
      ``F(w_bar) - F*`` (BC Theorem 1's floor is ``(L/(L+alpha))(3 L Gamma/(2 mu) +
      2 E^2 G^2/mu)`` at ``sigma = 0``).

    Returns a :class:`PEPRecord` with ``value`` = the floor (``inf`` if the map never
    contracts, 0 without heterogeneity), ``lower = None``, ``detail`` = the final bracket of
    the bisection.

    >>> f = fixed_point_floor("fedavg_round", L=1.0, mu=0.1, eta=0.1, tau=2, zeta=1.0,
    ...                       rtol=1e-3, cache=False)
    >>> 0.0 < f.value < 1.0
    True
    """
    if method not in _METHODS:
        raise DomainError("method", method, "one of " + ", ".join(_METHODS))
    step = _one_round(method, params, cache, solver)
    records = []

    def w(s):  # normalized one-round map at state s: W(s)/s
        rec = step(s)
        records.append(rec)
        if rec.value is None or not rec.ok:
            raise RuntimeError(f"one-round PEP failed at s = {s:g}: {rec.status}")
        return rec.value / s

    het = _heterogeneity(method, params)
    if het == 0:
        big = w(1.0)
        value = 0.0 if big < 1 else math.inf
        return _record(method, value, records, params, {"contraction": big})
    lo = hi = het
    for _ in range(60):  # find w(lo) >= 1 >= w(hi)
        if w(hi) < 1:
            break
        hi *= 10
    else:
        return _record(method, math.inf, records, params, {"why": "no contraction"})
    for _ in range(60):
        if w(lo) >= 1:
            break
        lo /= 10
    else:
        return _record(method, 0.0, records, params, {"why": "contracts at every scale"})
    while hi / lo > 1 + rtol:
        mid = math.sqrt(lo * hi)
        if w(mid) >= 1:
            lo = mid
        else:
            hi = mid
    return _record(method, hi, records, params, {"bracket": [lo, hi], "rtol": rtol})


def _heterogeneity(method, params):
    L = float(params["L"])
    if method == "fedprox_gap":
        return max(float(params["Gamma"]), float(params["G"]) ** 2 / L)
    return (float(params["zeta"]) / L) ** 2


def _one_round(method, params, cache, solver):
    from .pep_gap import wc_fedprox_gap
    from .pep_models import wc_fedavg_round, wc_fedprox_round

    if method == "fedavg_round":
        return lambda s: wc_fedavg_round(**params, rounds=1, r=math.sqrt(s), cache=cache,
                                         solver=solver)
    if method == "fedprox_round":
        return lambda s: wc_fedprox_round(**params, rounds=1, r=math.sqrt(s), cache=cache,
                                          solver=solver)
    return lambda s: wc_fedprox_gap(t=1, Delta=s, **params, cache=cache, solver=solver)


def _record(method, value, records, params, detail):
    last = records[-1]
    return dataclasses.replace(
        last, method=f"{method}_floor", value=value, lower=None, theoretical=None,
        seconds=float(sum(r.seconds for r in records)), cached=all(r.cached for r in records),
        ok=all(r.ok for r in records), params=dict(params), n_solves=len(records),
        status="fixed point of the one-round map", detail=detail,
        gap=max((abs(r.gap) for r in records if r.gap is not None), default=None))
