""":func:`verify.falsify` for seed 003's contraction coefficients (Buttaci & Calafiore): lhs
``lemma_kappa`` (the exact kappa of Lemmas A.3 / B.3, ``contraction.fedprox_kappa`` /
``contraction.beta_kappa``) and ``contraction_factor`` (eq. (9)'s factors
``contraction.fedavg_factor`` / ``fedprox_factor`` / ``beta_factor``).

**The measured side.** On clients that all equal f(x) = (mu/2)(x - c)^2 in one dimension
(homogeneous: Gamma = 0; full batch: sigma = 0; every local model the same, so the client drift
is 0) every local step is affine and one round maps x_t - x* to kappa (x_t - x*):

* FedProx (alpha; alpha = 0 is FedAvg): w <- w - gamma (mu (w - c) + alpha (w - x_t)), E times,
  gives kappa = (alpha + mu (1 - gamma (alpha + mu))^E)/(alpha + mu);
* beta: w <- w - gamma mu (beta w + (1 - beta) u - c) with u = x_t (the neighbour average of
  identical clients), E times, gives kappa = 1 - 1/beta + (1/beta)(1 - beta mu gamma)^E.

That is Lemma A.3's / B.3's kappa (the catalogue's ``lemma_kappa``: the exact coefficient of the
recursion, the per-step recursions of the proofs unrolled). It is measured on the real engine:
one round of ``toys.run`` on that problem, kappa = (x_1 - x*)/(x_0 - x*)
(:func:`verify.checks.contraction_constants.measured_kappa`, the main job's measurement), at a
step gamma and E searched freely (overshooting steps gamma (alpha + mu) > 1 included: kappa < 0).
Never by evaluating the closed form under test.

**Why contraction_factor is this measurement at the theorem's step.** Eq. (9)'s factor c
(1 - mu/(3L), 1 - mu/(3(L + alpha)), 1 - mu/((beta + 2)L)) is the rate of the transient
(L Delta/mu) c^t of Theorems 1 / 3. It enters as an upper bound on the lemma's kappa at the
theorem's own step size, gamma = 1/(2E(L + alpha)) (FedAvg: alpha = 0) or 1/(2LE) (beta): the
chains (54)-(57) and (187)-(191) prove kappa <= c for every E >= 1 and 0 < mu <= L, and the
theorem unrolls D_{t+1} <= kappa D_t + A with kappa <= c. The instance above is L-smooth for
every L >= mu, its additive term A (noise, heterogeneity, drift) is zero in the proof (G^2
there bounds a drift that is 0), and it attains the lemma's kappa as its linear per-round factor
(its squared distance contracts by kappa^2 <= kappa: the weaker test, not used). So a measured
kappa above c at the theorem's step refutes c (or the chain behind it). The distance ratio of a
general run is no measure of c: with heterogeneous clients A > 0 and the ratio tends to 1 > c
near the floor, so ``contraction_factor`` stays out of :mod:`verify.measures` and is judged here.

**Search** (seeded; ``budget`` instances, one ``toys.run`` each): 60 % random, then local moves
around the 8 worst: mu in [1e-2, 1e2], alpha = 0 or mu 10^U(-3, 2), beta = 1 or 10^U(-3, 0),
E a log-uniform integer up to 128 (kappa) or 256 (factor); gamma = q/(alpha + mu) or
q/(beta mu), q in [1e-3, 2] (kappa), or the theorem's step with L = mu/r, r in [1e-4, 1]
(factor). The algorithm: the bound's metadata, else its parameters (beta, alpha, neither:
FedAvg for a factor). An identity's float ranking counts a difference within round-off as none.
**Certificate** (``mpmath-50``): the E local steps replayed in mpmath at 60 digits
(:func:`kappa_mp`, the float64 values taken exactly), the bound at 60 digits (sympy).

>>> import verify
>>> res = verify.falsify("contraction.beta_kappa", budget=20, seed=0)
>>> res.verdict, res.certificate, abs(res.worst_ratio - 1) < 1e-12
('holds', 'mpmath-50', True)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ._kappa_measure import DPS as _DPS
from ._kappa_measure import kappa_mp, theorem_step
from ._kappa_measure import measured as _measured
from .routes import identity_ratio

__all__ = ["FAMILY", "LHS", "KINDS", "ALGORITHMS", "algorithm_of", "theorem_step", "kappa_mp",
           "evaluate", "falsify_route", "measure_instance", "certify"]

FAMILY = "contraction.kappa"
LHS = ("lemma_kappa", "contraction_factor")
KINDS = ("upper", "identity")
CERTIFICATE = "mpmath-50"
ALGORITHMS = ("fedavg", "fedprox", "beta")
_HYPER = {"fedavg": None, "fedprox": "alpha", "beta": "beta"}
_VARS = ("alpha", "beta", "mu", "L", "gamma", "E")
_E_HI = {"lemma_kappa": 128, "contraction_factor": 256}


def algorithm_of(bound) -> str:
    """The algorithm whose kappa ``bound`` speaks of (module docstring), or NotApplicable. A
    factor read as FedAvg's for want of alpha / beta is judged against the smallest kappa of
    the three (the exact kappas are ordered beta <= FedAvg <= FedProx, spec B6, and a
    statement for every alpha >= 0 or beta in (0, 1] holds at alpha = 0 / beta = 1): never a
    false VIOLATED."""
    import boundlab

    from .plan import NotApplicable

    try:
        algo = boundlab.registry.meta(bound.id).get("algorithm")
    except Exception:  # noqa: BLE001 - an unregistered Bound: read its parameters
        algo = None
    names = set(bound.params) | set(bound.extra_params)
    if algo is None:
        algo = "beta" if "beta" in names else "fedprox" if "alpha" in names else (
            "fedavg" if bound.lhs == "contraction_factor" else None)
    if algo not in ALGORITHMS:
        raise NotApplicable(f"{bound.id}: {bound.lhs} is measured for {ALGORITHMS} (seed 003), "
                            f"not for algorithm {algo!r}")
    return algo


def _values(algo: str, pts: dict) -> dict:
    """The parameters of the instances ``pts`` by their bound names (the hyper-parameter as
    alpha or beta, mu, L, gamma, E and the setting's fixed values)."""
    out = {k: np.asarray(pts[k], dtype=float) for k in ("mu", "L", "gamma", "E")}
    if _HYPER[algo] is not None:
        out[_HYPER[algo]] = np.asarray(pts["h"], dtype=float)
    out.update({k: np.broadcast_to(float(v), out["mu"].shape) for k, v in
                pts.get("fixed", {}).items() if k not in out})
    return out


def _tolerance(algo, m, s, pts) -> np.ndarray:
    """The round-off of a float64 measurement and evaluation (the ranking's 'no difference')."""
    E = np.asarray(pts["E"], dtype=float)
    grow = 1.0 / np.asarray(pts["h"], dtype=float) if algo == "beta" else 1.0
    return 64 * np.finfo(float).eps * (E + 1) * (1 + np.abs(m) + np.abs(s)) * (1 + grow)


def evaluate(bound, algo: str, pts: dict) -> tuple:
    """``(ranking ratio, ratio, measured, stated)`` (P,) of the instances ``pts`` (arrays
    ``h``, ``mu``, ``L``, ``gamma``, ``E``; one ``toys.run`` each): the ratio measured / bound
    (upper, :func:`verify.falsify.judge.ratios`) or :func:`~verify.falsify.routes.
    identity_ratio` (identity); -inf outside the bound's domains or preconditions."""
    from .judge import _evaluate, _preconditions_ok, ratios

    n = np.size(pts["mu"])
    m = np.array([_measured(algo, h, mu, g, E) for h, mu, g, E in
                  zip(pts["h"], pts["mu"], pts["gamma"], pts["E"])], dtype=float)
    names = set(bound.params) | set(bound.extra_params)
    use = {k: v for k, v in _values(algo, pts).items() if k in names}
    s = _evaluate(bound, use, n)
    ok = _preconditions_ok(bound, use, n) & np.isfinite(m) & np.isfinite(s)
    if bound.kind == "identity":
        diff = np.abs(m - s)
        with np.errstate(all="ignore"):
            r = np.where(diff == 0, 1.0, np.where(s == 0, np.inf, 1 + diff / np.abs(s)))
        rank = np.where(diff <= _tolerance(algo, m, s, pts), 1.0, r)
    else:
        r = rank = ratios(m, s)
    return (np.where(ok, rank, -np.inf), np.where(ok, r, -np.inf), m, s)


def _domain_flags(bound, algo) -> tuple:
    """(0 allowed for alpha, 1 allowed for beta) by the bound's domain of its hyper-parameter
    (both allowed when the bound does not name it)."""
    hy = _HYPER[algo]
    dom = bound.params.get(hy) or bound.extra_params.get(hy) if hy else None
    dom = getattr(dom, "domain", None)
    if dom is None:
        return True, True
    return (dom.lo <= 0 and not (dom.lo == 0 and dom.lo_open)), (dom.hi >= 1 and not (
        dom.hi == 1 and dom.hi_open))


def _complete(bound, algo: str, pts: dict, fixed: dict) -> dict:
    """The fixed values put in, then gamma (lemma_kappa: q / rate; a factor: the theorem's
    step) and L (a factor: mu / r)."""
    for k, v in fixed.items():
        key = "h" if k == _HYPER[algo] else k
        if key in pts and key != "gamma":
            pts[key] = np.full_like(pts[key], v)
    if bound.lhs == "contraction_factor":
        pts["L"] = np.full_like(pts["mu"], fixed["L"]) if "L" in fixed else pts["mu"] / pts["r"]
        pts["gamma"] = theorem_step(algo, pts["h"], pts["L"], pts["E"])
    else:
        rate = pts["h"] * pts["mu"] if algo == "beta" else pts["mu"] + (
            pts["h"] if algo == "fedprox" else 0.0)
        pts["gamma"] = np.full_like(pts["mu"], fixed["gamma"]) if "gamma" in fixed else \
            pts["q"] / rate
        pts["L"] = np.full_like(pts["mu"], fixed.get("L", np.nan))
    pts["fixed"] = fixed
    return pts


def _log_int(rng, n, hi) -> np.ndarray:
    return np.clip(np.floor(np.exp(rng.uniform(0, np.log(hi + 1), n))), 1, hi)


def _sample(rng, n: int, bound, algo: str, fixed: dict) -> dict:
    """n random instances (module docstring)."""
    zero_ok, one_ok = _domain_flags(bound, algo)
    mu = 10 ** rng.uniform(-2, 2, n)
    if algo == "beta":
        h = 10 ** rng.uniform(-3, 0, n)
        h = np.where((rng.random(n) < 0.1) & one_ok, 1.0, np.minimum(h, 1 - 1e-9))
    else:
        h = np.where((rng.random(n) < 0.1) & zero_ok | (algo == "fedavg"), 0.0,
                     mu * 10 ** rng.uniform(-3, 2, n))
    pts = {"mu": mu, "h": h, "E": _log_int(rng, n, _E_HI[bound.lhs]),
           "q": 10 ** rng.uniform(-3, np.log10(2.0), n),
           "r": np.where(rng.random(n) < 0.1, 1.0, 10 ** rng.uniform(-4, 0, n))}
    return _complete(bound, algo, pts, fixed)


def _moves(rng, pts: dict, top, n: int, bound, algo: str, fixed: dict, scale: float) -> dict:
    """n local moves around the instances ``top`` of ``pts``."""
    i = rng.choice(top, n)
    z = lambda: np.exp(rng.normal(0.0, scale, n))  # noqa: E731 - a log-normal factor
    h = pts["h"][i] * z()
    h = np.minimum(h, 1.0 if _domain_flags(bound, algo)[1] else 1 - 1e-9) if algo == "beta" \
        else h
    E = np.clip(np.round(pts["E"][i] * z()) + rng.integers(-1, 2, n), 1, _E_HI[bound.lhs])
    new = {"mu": pts["mu"][i] * z(), "h": h, "E": E, "q": np.minimum(pts["q"][i] * z(), 2.0),
           "r": np.minimum(pts["r"][i] * z(), 1.0)}
    return _complete(bound, algo, new, fixed)


def search(bound, algo: str, budget: int, seed: int, fixed: dict) -> tuple:
    """``(the worst instance {h, mu, L, gamma, E}, evaluations)``: random, then local moves
    around the 8 worst (module docstring)."""
    rng = np.random.default_rng([int(seed), 3003])
    n1 = max(1, int(0.6 * budget))
    pts = _sample(rng, n1, bound, algo, fixed)
    rank = evaluate(bound, algo, pts)[0]
    done, scale = n1, 1.0
    keys = ("mu", "h", "E", "q", "r", "L", "gamma")
    while done < budget:
        top = np.argsort(-rank)[:8]
        n = min(budget - done, 40)
        new = _moves(rng, pts, top, n, bound, algo, fixed, scale)
        rank = np.concatenate([rank, evaluate(bound, algo, new)[0]])
        pts = {**{k: np.concatenate([pts[k], new[k]]) for k in keys}, "fixed": fixed}
        done, scale = done + n, max(scale * 0.7, 1e-3)
    b = int(np.argmax(rank))
    return {k: float(pts[k][b]) for k in ("mu", "h", "L", "gamma", "E")}, done


def _fixed(bound, algo: str, setting: dict) -> dict:
    """The setting's values of the searched variables and of the bound's other parameters; a
    parameter neither searched nor given: NotApplicable."""
    from .plan import NotApplicable

    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names or k in _VARS}
    searched = {"mu", "E", _HYPER[algo]} | (
        {"L", "gamma"} if bound.lhs == "contraction_factor" else {"gamma"})
    missing = sorted(n for n in bound.params if n not in searched and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} of a {bound.lhs} "
                            f"bound are not those of {algo}'s kappa (alpha or beta, mu, gamma, "
                            "E, L) and not given in the setting")
    if "E" in fixed and not (fixed["E"].is_integer() and 1 <= fixed["E"] <= 10 ** 4):
        raise DomainError("E", fixed["E"], "an integer in 1..10000 (local steps)")
    if "gamma" in fixed and bound.lhs == "contraction_factor":
        raise DomainError("gamma", fixed["gamma"], "not given: a factor is judged at its "
                          "theorem's own step size")
    return fixed


def falsify_route(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    algo = algorithm_of(bound)
    fixed = _fixed(bound, algo, setting)
    best, n = search(bound, algo, int(budget), int(seed), fixed)
    data = {"algorithm": algo, "hyper": None if algo == "fedavg" else best["h"],
            "mu": best["mu"], "L": None if math.isnan(best["L"]) else best["L"],
            "gamma": best["gamma"], "E": int(best["E"]), "fixed": fixed}
    r, lhs, rhs = measure_instance(bound, data)
    run = {"algorithm": algo if algo != "fedprox" or best["h"] > 0 else "fedavg",
           **({} if algo == "fedavg" else {_HYPER[algo]: best["h"]}), "rounds": 1,
           "local_steps": int(best["E"]), "lr": best["gamma"]}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    step = ("the theorem's step (" + ("1/(2LE)" if algo == "beta" else "1/(2E(L + alpha))")
            + "), L = mu / r searched") if bound.lhs == "contraction_factor" else \
        "gamma and E searched (overshooting steps included)"
    notes = [f"{bound.lhs}: kappa = (x_1 - x*)/(x_0 - x*) after one round of toys.run "
             f"({algo}) on identical clients (mu/2)(x - c)^2 in one dimension; {step}"]
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=notes,
                         exact_reason="the instance is exact (an affine scalar recursion); "
                                      "no PEP model")


def _number(name, v, lo=0.0, lo_open=True, hi=math.inf, hi_open=True) -> float:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and \
        (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        raise DomainError(f"instance {name}", v, f"a number in {'(' if lo_open else '['}{lo}, "
                                                 f"{hi}{')' if hi_open else ']'}")
    return float(v)


def _check_data(bound, data) -> tuple:
    """``(algorithm, points (P = 1))`` of a saved instance (validated: it comes from a file)."""
    if not isinstance(data, dict) or data.get("algorithm") not in ALGORITHMS:
        raise DomainError("instance algorithm", getattr(data, "get", lambda k: data)(
            "algorithm"), f"one of {ALGORITHMS}")
    algo = data["algorithm"]
    h = 0.0 if algo == "fedavg" else _number(
        _HYPER[algo], data.get("hyper"), 0.0, algo == "beta", 1.0 if algo == "beta" else math.inf,
        algo != "beta")
    E = data.get("E")
    if isinstance(E, bool) or not isinstance(E, int) or not 1 <= E <= 10 ** 4:
        raise DomainError("instance E", E, "an integer in 1..10000")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
            for k, v in fixed.items()):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    mu, gamma = _number("mu", data.get("mu")), _number("gamma", data.get("gamma"))
    L = math.nan if data.get("L") is None else _number("L", data.get("L"))
    if bound.lhs == "contraction_factor" and gamma != theorem_step(algo, h, L, E):
        raise DomainError("instance gamma", gamma, f"the theorem's step "
                          f"{theorem_step(algo, h, L, E)!r} at its L, E and hyper-parameter")
    pts = {"h": np.array([h]), "mu": np.array([mu]), "L": np.array([L]),
           "gamma": np.array([gamma]), "E": np.array([float(E)]),
           "fixed": {k: float(v) for k, v in fixed.items()}}
    return algo, pts


def measure_instance(bound, data) -> tuple:
    """``(ratio, measured kappa, stated)`` of one saved instance (float64, ``toys.run``)."""
    algo, pts = _check_data(bound, data)
    _, r, m, s = evaluate(bound, algo, pts)
    return float(r[0]), float(m[0]), float(s[0])


def certify(inst, float_ratio: float):
    """The ``mpmath-50`` certificate (module docstring); ``float64-only`` with the reason
    where the high-precision replay fails."""
    from .routes import or_float64

    return or_float64(_certify_mp, inst, float_ratio)


def _stated(bound, algo, pts):
    """The bound at the instance at 60 digits (sympy; the float values taken exactly)."""
    import mpmath
    import sympy as sp

    vals = {k: float(v[0]) for k, v in _values(algo, pts).items()}
    sub = {}
    for s in bound.expr.free_symbols:
        if s.name not in vals or math.isnan(vals[s.name]):
            raise ValueError(f"no value of {s.name} at the instance")
        sub[s] = sp.Integer(int(vals[s.name])) if s.name == "E" else sp.Rational(vals[s.name])
    stated = sp.N(bound.expr.xreplace(sub), _DPS)
    if not stated.is_real or stated.free_symbols:
        raise ArithmeticError(f"the bound is not a real number at the instance: {stated}")
    with mpmath.workdps(_DPS):
        return mpmath.mpf(str(stated))


def _certify_mp(inst):
    import mpmath

    from .certify import Certificate

    bound = inst.judged_bound()
    algo, pts = _check_data(bound, inst.data)
    r_f = measure_instance(bound, inst.data)[0]
    if r_f == -math.inf:
        return Certificate(CERTIFICATE, -math.inf, 0.0, math.nan, math.nan,
                           "the instance lies outside the bound's domains or preconditions")
    h, E = float(pts["h"][0]), int(pts["E"][0])
    m = kappa_mp(algo, h, float(pts["mu"][0]), float(pts["gamma"][0]), E)
    s = _stated(bound, algo, pts)
    with mpmath.workdps(_DPS):
        grow = 1 + abs(m) + (1 / mpmath.mpf(h) if algo == "beta" else 0)
        err = mpmath.mpf(10) ** -50 * (E + 1) * grow + mpmath.mpf(10) ** -55 * abs(s)
        diff = abs(m - s)
        if bound.kind == "identity":
            if diff <= err:
                return Certificate(CERTIFICATE, 1.0, float(err / abs(s)) if s else 0.0,
                                   float(m), float(s), "equal within the replay's rounding")
            ratio = identity_ratio(m, s)
        elif m <= err:  # zero or negative: the judge's zero floor
            return Certificate(CERTIFICATE, 0.0, 0.0, float(m), float(s))
        else:
            ratio = m / s if s > 0 else mpmath.inf
        if ratio == mpmath.inf:
            return Certificate(CERTIFICATE, math.inf, 0.0, float(m), float(s))
        e = err / abs(s) + abs(ratio) * mpmath.mpf(10) ** -50
        return Certificate(CERTIFICATE, float(ratio), float(e) * (1 + 2 ** -40) + 1e-300,
                           float(m), float(s))
