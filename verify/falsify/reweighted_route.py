""":func:`verify.falsify` for FedAU's Lemma B.3.1 (seed 002): lhs ``reweighted_divergence_sq``,
max_n sup_x ||grad F_n(x) - grad f~(x)||^2 for f~ = sum_n phi_n F_n, phi in the simplex, against
a bound in delta, A3's divergence from the uniform average f.

Both suprema are computed exactly by :func:`verify.checks.weight_error_reweighted.divergence_sq`
(one implementation; the trust-region sup of an affine map over the ball B(x*, R), x* the
minimiser of f), over the same ball, as the check does. An instance is a problem of the
quadratic search family (:mod:`verify.falsify.families.quadratic`: z, Spec), the weights phi
and the radius R. Search (seeded, ``budget`` instances): 60 % random -- N in 2..4 clients
(or the setting's n_clients), dim 1..3 (or dim), L log-uniform in [0.1, 10] (or L), a third of
the problems with one Hessian shared by every client (where Lemma B.3.1's constant 4 is
attained), phi a vertex, a near-vertex, a Dirichlet(0.3) draw or uniform, R log-uniform in
[0.01, 100] -- then local moves around the 8 worst (z, phi towards a vertex, R). The sup is a
float64 secular-equation solve to machine precision with no mpmath form: the certificate is
``float64-only`` (VIOLATED above 1 + 1e-6).

>>> import verify
>>> res = verify.falsify("weight_error.lemma_b31", budget=40, seed=0)
>>> res.verdict, 0.9 < res.worst_ratio <= 1 + 1e-6
('holds', True)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ._points import QUADRATIC_SPEC

__all__ = ["FAMILY", "LHS", "KINDS", "falsify_route", "measure_instance", "certify"]

FAMILY = "reweighted.quadratic"
LHS = ("reweighted_divergence_sq",)
KINDS = ("upper",)
_SPEC = QUADRATIC_SPEC  # the Spec fields a saved instance holds (verify.falsify._points)


def evaluate(bound, z, spec, phi, radius, fixed) -> tuple:
    """``(ratio, lhs, rhs, delta)`` of one instance."""
    from verify.checks.weight_error_reweighted import divergence_sq

    from ._points import rhs_values
    from .families import get_family
    from .judge import ratios

    prob = get_family("quadratic").build(np.asarray(z, dtype=float), spec)[0]
    n = prob.n_clients
    lhs = float(divergence_sq(prob, phi, radius).max())
    delta = float(np.sqrt(divergence_sq(prob, np.full(n, 1.0 / n), radius).max()))
    rhs = float(rhs_values(bound, {"delta": np.array([delta])}, fixed)[0])
    r = float(ratios(lhs, rhs)) if math.isfinite(rhs) else -math.inf
    return r, lhs, rhs, delta


def _draw(rng, setting):
    """One random instance (z, spec, phi, radius)."""
    from .families import Spec, get_family

    N = int(setting.get("n_clients", rng.integers(2, 5)))
    d = int(setting.get("dim", rng.integers(1, 4)))
    L = float(setting.get("L", 10.0 ** rng.uniform(-1, 1)))
    spec = Spec(L=L, mu=float(setting.get("mu", 0.0)), D=float(setting.get("D", 1.0)),
                n_clients=N, dim=d)
    z = rng.uniform(-1, 1, get_family("quadratic").n_vars(spec))
    if rng.random() < 1 / 3:  # one Hessian for every client (G_i and eigenvalues of client 0)
        k = N * d * d
        z[:k] = np.tile(z[:d * d], N)
        z[k:k + N * d] = np.tile(z[k:k + d], N)
    mode = rng.integers(0, 4)
    e = np.eye(N)[rng.integers(0, N)]
    phi = [e, 0.9 * e + 0.1 * rng.dirichlet(np.ones(N)), rng.dirichlet(np.full(N, 0.3)),
           np.full(N, 1.0 / N)][mode]
    return z, spec, phi, float(10.0 ** rng.uniform(-2, 2))


def _move(rng, inst, scale):
    z, spec, phi, radius = inst
    z = np.clip(z + 0.1 * scale * rng.normal(size=z.shape), -1, 1)
    e = np.eye(len(phi))[rng.integers(0, len(phi))]
    t = min(1.0, scale * rng.random())
    phi = (1 - t) * phi + t * e if rng.random() < 0.5 else phi
    return z, spec, phi / phi.sum(), float(radius * np.exp(scale * rng.normal()))


def _search(bound, budget, seed, setting, fixed):
    rng = np.random.default_rng([int(seed), 2031])
    insts, R = [], []
    n1 = max(1, int(0.6 * budget))
    for _ in range(n1):
        insts.append(_draw(rng, setting))
        R.append(evaluate(bound, *insts[-1], fixed)[0])
    done, scale = n1, 1.0
    while done < budget:
        top = np.argsort(-np.asarray(R))[:8]
        for _ in range(min(budget - done, 8)):
            insts.append(_move(rng, insts[int(top[rng.integers(0, len(top))])], scale))
            R.append(evaluate(bound, *insts[-1], fixed)[0])
            done += 1
        scale = max(0.8 * scale, 1e-3)
    z, spec, phi, radius = insts[int(np.argmax(R))]
    return {"z": z.tolist(), "spec": {k: getattr(spec, k) for k in _SPEC},
            "phi": phi.tolist(), "radius": radius, "fixed": fixed}, done


def _fixed(bound, setting) -> dict:
    from .plan import NotApplicable

    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names and k not in _SPEC}
    missing = sorted(n for n in bound.params if n != "delta" and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} are neither delta "
                            "(computed) nor given in the setting")
    return fixed


def falsify_route(bound, budget, seed, setting, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    data, n = _search(bound, int(budget), int(seed), setting, _fixed(bound, setting))
    r, lhs, rhs, delta = measure_instance(bound, data)
    run = {"algorithm": "none", "radius": data["radius"], "delta": delta}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=[
                             "reweighted_divergence_sq and delta: exact suprema over the same "
                             "ball B(x*, R) on quadratic clients "
                             "(verify.checks.weight_error_reweighted.divergence_sq)"],
                         exact_reason="suprema solved exactly (trust region); no PEP model")


def _check_data(data) -> tuple:
    from ._points import _num, _vector, quadratic_spec_z

    spec, z = quadratic_spec_z(data)
    phi = _vector("phi", data.get("phi"), spec.n_clients)
    if np.any(phi < 0) or abs(phi.sum() - 1) > 1e-9:
        raise DomainError("instance phi", phi.tolist(), "weights >= 0 summing to 1")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    fixed = {str(k): _num(f"fixed {k}", v) for k, v in fixed.items()}
    return z, spec, phi, _num("radius", data.get("radius"), 0.0, 1e100), fixed


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs, delta)`` of one saved instance (float64, exact suprema)."""
    return evaluate(bound, *_check_data(data))


def certify(inst, float_ratio: float):
    """``float64-only`` (module docstring), with the reason."""
    from .routes import float64_only

    return float64_only(inst, float_ratio, "suprema by toys' float64 secular-equation solve "
                                           "(machine precision); no mpmath form")
