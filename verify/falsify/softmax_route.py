""":func:`verify.falsify` for FedSoftMax's weight ratio (derived, seeds-000-001-004 §3.10): lhs
``inv_pi`` = 1/pi, pi = min over rounds and participants of alpha_t^i / p_i, against a bound in
x_range (the largest range over rounds of the participants' scores x_i = F_i(w_t) - F_i*) and
the temperature Temp (catalogue: ``skew.softmax_kappa_min``, 1/pi <= exp(x_range/Temp)).

Both sides are measured as :mod:`verify.checks.skew_softmax` measures them
(:func:`~verify.checks.skew_softmax.softmax_run`: FedSoftMax on the real engine one round at a
time, scores at each round's server model, kappa from the weights the engine used; one
implementation). An instance is a ``toys.quadratic`` problem (n_clients 2..6, dim 1..3, L
log-uniform in [0.5, 10], mu = L U[0.05, 0.9], heterogeneity log-uniform in [1e-3, 10] -- the
score range -- its seed, client weights p uniform or a Dirichlet draw), the temperature
(log-uniform in [0.05, 20], or the setting's Temp), 1..3 rounds and the participation (every
client, or m of N uniformly). Search (seeded, ``budget`` instances): 60 % random, then local
moves around the 8 worst (temperature, heterogeneity, p). The weights come from the engine in
float64: the certificate is ``float64-only`` (VIOLATED above 1 + 1e-6).

>>> import verify
>>> res = verify.falsify("skew.softmax_kappa_min", budget=12, seed=0)
>>> res.verdict, res.worst_ratio <= 1
('holds', True)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

__all__ = ["FAMILY", "LHS", "KINDS", "falsify_route", "measure_instance", "certify"]

FAMILY = "fedsoftmax.weights"
LHS = ("inv_pi",)
KINDS = ("upper",)
_MINE = ("x_range", "Temp")


def evaluate(bound, d: dict, fixed: dict) -> tuple:
    """``(ratio, lhs, rhs, x_range)`` of a (validated) instance ``d``."""
    import toys
    from verify.checks.skew_softmax import softmax_run

    from ._points import rhs_values
    from .judge import ratios

    opts = {k: d[k] for k in ("n_clients", "dim", "L", "mu", "heterogeneity", "seed")}
    prob = toys.make("quadratic", **opts, weights=None if d["p"] is None else np.array(d["p"]))
    part = "full" if d["participants"] >= d["n_clients"] else d["participants"]
    res = softmax_run(prob, d["temperature"], d["rounds"], part, seed=d["seed"])
    pi, xr = float(res["kappa_min"].min()), float(res["x_range"].max())
    if not pi > 0:  # a weight underflowed to 0 in float64: undefined, never a worst case
        return -math.inf, math.inf, math.nan, xr
    lhs = 1.0 / pi
    rhs = float(rhs_values(bound, {"x_range": np.array([xr]),
                                   "Temp": np.array([d["temperature"]])}, fixed)[0])
    return (float(ratios(lhs, rhs)) if math.isfinite(rhs) else -math.inf), lhs, rhs, xr


def _draw(rng, fixed) -> dict:
    N = int(rng.integers(2, 7))
    L = float(10.0 ** rng.uniform(np.log10(0.5), 1))
    p = rng.dirichlet(np.ones(N)) if rng.random() < 0.5 else None
    if p is not None:
        p = (np.maximum(p, 1e-3) / np.maximum(p, 1e-3).sum()).tolist()
    temp = fixed.get("Temp", 10.0 ** rng.uniform(np.log10(0.05), np.log10(20)))
    return {"n_clients": N, "dim": int(rng.integers(1, 4)), "L": L,
            "mu": L * float(rng.uniform(0.05, 0.9)),
            "heterogeneity": float(10.0 ** rng.uniform(-3, 1)),
            "seed": int(rng.integers(0, 1000)), "p": p, "temperature": float(temp),
            "rounds": int(rng.integers(1, 4)),
            "participants": int(N if rng.random() < 0.5 else rng.integers(1, N + 1))}


def _move(rng, d, fixed, scale) -> dict:
    d = dict(d)
    if "Temp" not in fixed:
        d["temperature"] = float(d["temperature"] * np.exp(scale * rng.normal()))
    d["heterogeneity"] = float(d["heterogeneity"] * np.exp(scale * rng.normal()))
    if d["p"] is not None:
        q = np.array(d["p"]) * np.exp(scale * rng.normal(size=d["n_clients"]))
        d["p"] = (q / q.sum()).tolist()
    return d


def _search(bound, budget, seed, fixed):
    rng = np.random.default_rng([int(seed), 2010])
    insts, R = [], []
    n1 = max(1, int(0.6 * budget))
    for _ in range(n1):
        insts.append(_draw(rng, fixed))
        R.append(evaluate(bound, insts[-1], fixed)[0])
    done, scale = n1, 1.0
    while done < budget:
        top = np.argsort(-np.asarray(R))[:8]
        for _ in range(min(budget - done, 8)):
            insts.append(_move(rng, insts[int(top[rng.integers(0, len(top))])], fixed, scale))
            R.append(evaluate(bound, insts[-1], fixed)[0])
            done += 1
        scale = max(0.8 * scale, 1e-3)
    return {**insts[int(np.argmax(R))], "fixed": fixed}, done


def falsify_route(bound, budget, seed, setting, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    from .plan import NotApplicable

    Falsification, Instance = types
    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names and k != "x_range"}
    missing = sorted(n for n in bound.params if n not in _MINE and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} are neither "
                            "x_range, Temp nor given in the setting")
    data, n = _search(bound, int(budget), int(seed), fixed)
    r, lhs, rhs, xr = measure_instance(bound, data)
    run = {"algorithm": "fedsoftmax", "rounds": data["rounds"], "temperature":
           data["temperature"], "x_range": xr}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=[
                             "inv_pi and x_range measured on FedSoftMax runs of the engine "
                             "(verify.checks.skew_softmax.softmax_run)"],
                         exact_reason="weights of the engine (float64); no PEP model")


def _check_data(data) -> tuple:
    from ._points import _num

    if not isinstance(data, dict):
        raise DomainError("instance data", data, "an object")
    d = {}
    for k, lo, hi in (("n_clients", 2, 16), ("dim", 1, 8), ("seed", 0, 2**31),
                      ("rounds", 1, 50), ("participants", 1, 16)):
        v = data.get(k)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise DomainError(f"instance {k}", v, f"an integer in {lo}..{hi}")
        d[k] = v
    for k in ("L", "mu", "heterogeneity", "temperature"):
        d[k] = _num(k, data.get(k), 0.0, 1e6)
    if not 0 < d["mu"] <= d["L"] or d["temperature"] <= 0:
        raise DomainError("instance mu", d["mu"], "0 < mu <= L, temperature > 0")
    p = data.get("p")
    if p is not None:
        p = [_num("p[]", v, 0.0, 1.0) for v in p] if isinstance(p, list) else p
        if not isinstance(p, list) or len(p) != d["n_clients"] or abs(sum(p) - 1) > 1e-9 \
                or min(p) <= 0:
            raise DomainError("instance p", p, f"{d['n_clients']} positive weights summing to 1")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    return {**d, "p": p}, {str(k): _num(f"fixed {k}", v) for k, v in fixed.items()}


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs, x_range)`` of one saved instance (the engine's float64 weights)."""
    return evaluate(bound, *_check_data(data))


def certify(inst, float_ratio: float):
    """``float64-only`` (module docstring), with the reason."""
    from .routes import float64_only

    return float64_only(inst, float_ratio, "FedSoftMax's weights as the engine computed them "
                                           "in float64")
