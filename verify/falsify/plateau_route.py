""":func:`verify.falsify` for DKR's plateau (seed 004, main-text eq. (2)): lhs ``plateau_gap``,
lim_{T -> inf} of FedAvg's time-averaged shadow gap (full participation, exact gradients,
constant step eta, tau local steps).

The limit is computed exactly, not estimated by a long run. On quadratic clients F_i(x) =
(1/2)(x - c_i)^T A_i (x - c_i) a local step is affine, w <- (I - eta A_i) w - eta grad F_i(0),
so after k steps from the server model x a client holds P_i^k x + q_i^k and the round is the
affine map x -> M x + v, M = sum_i p_i P_i^tau, v = sum_i p_i q_i^tau. With every A_i positive
definite and eta <= 1/(4L) each P_i^tau has norm < 1, so M is a contraction: the models
converge to the fixed point x_inf = (I - M)^{-1} v (one linear solve) and the time average to
the gap of the limit round, (1/tau) sum_{k=1..tau} F(xbar^k) - F*, xbar^k = sum_i p_i
(P_i^k x_inf + q_i^k) -- the registry's ``round_avg_gap`` of that round.

Constants (``toys.constants``, exact): L = max_i lambda_max(A_i); zeta = max_i sup over the
ball B(x*, R) of ||grad F_i - grad F||, R the largest distance from x* of the limit round's
points (every client iterate w_i^k, k = 0..tau, and the shadow iterates). On all of R^d zeta
is infinite for clients with unequal Hessians (and with equal Hessians the shadow sequence is
gradient descent on F: plateau 0), so zeta is taken, as ``toys.constants`` takes it, over the
region the limit orbit visits, where the proof evaluates the gradient differences.

Instances: the quadratic search family (:mod:`verify.falsify.families.quadratic`; n_clients,
dim, mu from the setting, default 3, 2, 0; L and D from the setting or log-uniform in
[0.01, 100] and [1e-3, 1e3]), eta = eta_max 20^((u - 1)/2), u in [-1, 1]
(eta_max = 1/(4L) of the instance), tau in 1..20 (or given). Search (seeded, ``budget``
instances): 60 % random, then local moves around the 8 worst. Certificate: the fixed point and
the gap again in mpmath (50 and 100 digits, the instance's float64 matrices,
:class:`verify.falsify._mpreplay._Clients`); L and zeta are float64 eigen/secular solves to
machine precision, so the bound carries a relative error 1e-10 into the certified error.

>>> import verify
>>> res = verify.falsify("drift.plateau", budget=20, seed=0)
>>> res.verdict, res.certificate, res.worst_ratio < 1
('holds', 'mpmath-50', True)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ._points import QUADRATIC_SPEC

__all__ = ["FAMILY", "LHS", "KINDS", "limit_round", "falsify_route", "measure_instance",
           "certify"]

FAMILY = "plateau.quadratic"
LHS = ("plateau_gap",)
KINDS = ("upper",)
_SPEC = QUADRATIC_SPEC  # the Spec fields a saved instance holds (verify.falsify._points)
_MINE = ("eta", "tau", "L", "zeta")
_RTOL_CONSTANTS = 1e-10


def limit_round(H, h, p, eta, tau: int, solve=np.linalg.solve):
    """The limit round of FedAvg on affine client gradients grad F_i(w) = H_i w + h_i:
    ``(x_inf, W)`` with W (tau + 1, N, d) the client iterates w_i^k of the round started at the
    fixed point (W[0] = x_inf for every client). Works on float arrays and on object arrays of
    mpmath numbers (``solve``: a linear solver for them).

    >>> H, h = np.array([[[1.0]], [[1.0]]]), np.array([[-1.0], [1.0]])  # (w-1)^2/2, (w+1)^2/2
    >>> x, W = limit_round(H, h, np.array([0.5, 0.5]), 0.5, 1)
    >>> float(x[0]), W[1, :, 0].tolist()
    (0.0, [0.5, -0.5])
    """
    N, d = h.shape
    eye = np.eye(d).astype(H.dtype)
    S = eye[None] - eta * H
    P, q = [np.broadcast_to(eye, H.shape).copy()], [np.zeros_like(h)]
    for _ in range(int(tau)):
        P.append(np.matmul(S, P[-1]))
        q.append(np.einsum("nij,nj->ni", S, q[-1]) - eta * h)
    M = np.einsum("n,nij->ij", p, P[-1])
    v = np.einsum("n,ni->i", p, q[-1])
    x = solve(eye - M, v)
    W = np.array([np.einsum("nij,j->ni", Pk, x) + qk for Pk, qk in zip(P, q)])
    return x, W


def _quadratic_parts(prob):
    """(H, h, p) of a toys quadratic problem: Hessians A_i, grad F_i(0), weights."""
    return (np.asarray(prob.A, dtype=float), np.asarray(prob.grads(np.zeros(prob.dim)),
                                                        dtype=float), np.asarray(prob.p, float))


def plateau(prob, eta, tau):
    """``(plateau_gap, L, zeta, radius)`` of one toys quadratic problem (module docstring)."""
    import toys

    H, h, p = _quadratic_parts(prob)
    x, W = limit_round(H, h, p, eta, tau)
    xbar = np.einsum("n,kni->ki", p, W[1:])
    gap = float(np.mean([prob.F(xb) for xb in xbar]) - prob.F_star)
    xs = np.asarray(prob.x_star, dtype=float)
    pts = np.concatenate([W.reshape(-1, prob.dim), xbar])
    radius = float(np.max(np.linalg.norm(pts - xs, axis=1)))
    c = toys.constants(prob, radius=radius)
    return gap, float(c.L.value), float(c.zeta.value), radius


def _spec(setting):
    from .families import Spec

    return Spec(L=float(setting.get("L", 1.0)), mu=float(setting.get("mu", 0.0)),
                D=float(setting.get("D", 1.0)), n_clients=int(setting.get("n_clients", 3)),
                dim=int(setting.get("dim", 2)))


def _fixed(bound, setting) -> dict:
    from .plan import NotApplicable

    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names and k not in _SPEC}
    missing = sorted(n for n in bound.params if n not in _MINE and n not in fixed)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} are neither "
                            f"computed on the limit round ({', '.join(_MINE)}) nor given")
    if "tau" in fixed and (not fixed["tau"].is_integer() or not 1 <= fixed["tau"] <= 200):
        raise DomainError("tau", fixed["tau"], "an integer in 1..200")
    return fixed


def evaluate(bound, z, u, tau, spec, fixed) -> tuple:
    """``(ratio, lhs, rhs, eta)`` of the instance (z, u, tau)."""
    from ._points import rhs_values
    from .families import get_family
    from .judge import ratios

    prob = get_family("quadratic").build(np.asarray(z, dtype=float), spec)[0]
    import toys

    L = float(toys.constants(prob, radius=0.0).L.value)
    eta = fixed.get("eta", 1.0 / (4 * L) * 20.0 ** ((float(np.clip(u, -1, 1)) - 1) / 2))
    tau = int(fixed.get("tau", tau))
    gap, L, zeta, _ = plateau(prob, eta, tau)
    rhs = rhs_values(bound, {"eta": np.array([eta]), "tau": np.array([float(tau)]),
                             "L": np.array([L]), "zeta": np.array([zeta])}, fixed)[0]
    r = float(ratios(gap, rhs)) if np.isfinite(rhs) else -math.inf
    return r, gap, float(rhs), eta


def _scaled(rng, spec, setting):
    """The setting's Spec, with L log-uniform in [0.01, 100] and D in [1e-3, 1e3] where the
    setting does not give them (the plateau scales with both)."""
    import dataclasses

    L = float(setting["L"]) if "L" in setting else float(10.0 ** rng.uniform(-2, 2))
    D = float(setting["D"]) if "D" in setting else float(10.0 ** rng.uniform(-3, 3))
    return dataclasses.replace(spec, L=L, mu=spec.mu * L / spec.L, D=D)


def _search(bound, budget, seed, spec, fixed, setting):
    from .families import get_family

    rng = np.random.default_rng([int(seed), 2005])
    nv = get_family("quadratic").n_vars(spec)
    n1 = max(1, int(0.6 * budget))
    Z, U = rng.uniform(-1, 1, (n1, nv)), rng.uniform(-1, 1, n1)
    K, S = rng.integers(1, 21, n1), [_scaled(rng, spec, setting) for _ in range(n1)]
    R = [evaluate(bound, *a, fixed)[0] for a in zip(Z, U, K, S)]
    done, scale = n1, 1.0
    while done < budget:
        n = min(budget - done, 8)
        i = np.argsort(-np.asarray(R))[:8][rng.integers(0, min(8, len(R)), n)]
        z = np.clip(Z[i] + 0.2 * scale * rng.normal(size=(n, nv)), -1, 1)
        u = np.clip(U[i] + 0.2 * scale * rng.normal(size=n), -1, 1)
        k = np.clip(K[i] + rng.integers(-1, 2, n), 1, 20)
        s = [S[j] for j in i]
        R += [evaluate(bound, *a, fixed)[0] for a in zip(z, u, k, s)]
        Z, U, K, S = np.vstack([Z, z]), np.concatenate([U, u]), np.concatenate([K, k]), S + s
        done, scale = done + n, max(0.8 * scale, 1e-3)
    b = int(np.argmax(R))
    return {"z": Z[b].tolist(), "u": float(U[b]), "tau": int(fixed.get("tau", K[b])),
            "spec": {k: getattr(S[b], k) for k in _SPEC}, "fixed": fixed}, done


def falsify_route(bound, budget, seed, setting, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    fixed = _fixed(bound, setting)
    data, n = _search(bound, int(budget), int(seed), _spec(setting), fixed, setting)
    r, lhs, rhs, eta = measure_instance(bound, data)
    run = {"algorithm": "fedavg", "horizon": "limit T -> inf", "local_steps": data["tau"],
           "lr": eta}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    notes = ["plateau_gap: the exact limit of FedAvg's time-averaged shadow gap on quadratic "
             "clients (fixed point of the affine round map, one linear solve)",
             "zeta over the ball around x* holding the limit round (toys.constants)"]
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=notes,
                         exact_reason="the limit is exact (linear solve); no PEP model")


def _check_data(data) -> tuple:
    from ._points import _num, quadratic_spec_z

    spec, z = quadratic_spec_z(data)
    tau = data.get("tau")
    if isinstance(tau, bool) or not isinstance(tau, int) or not 1 <= tau <= 200:
        raise DomainError("instance tau", tau, "an integer in 1..200")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    fixed = {str(k): _num(f"fixed {k}", v) for k, v in fixed.items()}
    return z, _num("u", data.get("u"), -1.0, 1.0), tau, spec, fixed


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs, eta)`` of one saved instance (float64)."""
    z, u, tau, spec, fixed = _check_data(data)
    return evaluate(bound, z, u, tau, spec, fixed)


def _mp_gap(prob, eta, tau, dps):
    import mpmath

    from ._mpreplay import _Clients

    with mpmath.workdps(dps):
        cl = _Clients(prob)
        H = np.array([[[mpmath.mpf(v) for v in row] for row in Ai] for Ai in prob.A],
                     dtype=object)
        zero = [mpmath.mpf(0)] * prob.dim
        h = np.array([cl.grad(i, zero) for i in range(prob.n_clients)], dtype=object)
        p = np.array(cl.p, dtype=object)

        def solve(A, b):
            return np.array(list(mpmath.lu_solve(mpmath.matrix(A.tolist()),
                                                 mpmath.matrix(b.tolist()))), dtype=object)

        _, W = limit_round(H, h, p, mpmath.mpf(eta), tau, solve)
        xbar = np.einsum("n,kni->ki", p, W[1:])
        Fs = cl.F(cl.optimum(prob.x_star))
        return mpmath.fsum(cl.F(list(xb)) for xb in xbar) / tau - Fs


def certify(inst, float_ratio: float):
    """The gap in mpmath at 50 and 100 digits over the float64 bound (its L and zeta to
    1e-10 relative); float64 only where the mpmath replay fails."""
    import mpmath

    from ._mpreplay import Unsupported
    from .certify import FLOAT64, Certificate, _float_error
    from .families import get_family

    bound = inst.judged_bound()
    z, u, tau, spec, fixed = _check_data(inst.data)
    r, lhs, rhs, eta = evaluate(bound, z, u, tau, spec, fixed)
    if r == -math.inf or not rhs > 0:
        return Certificate(f"mpmath-{50}", r, 0.0 if r == -math.inf else math.inf, lhs, rhs,
                           "outside the preconditions" if r == -math.inf else "bound <= 0")
    prob = get_family("quadratic").build(z, spec)[0]
    try:
        g1, g2 = _mp_gap(prob, eta, tau, 50), _mp_gap(prob, eta, tau, 100)
    except (Unsupported, ArithmeticError, ValueError, TypeError) as exc:
        return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), lhs, rhs,
                           f"no mpmath replay: {exc}")
    with mpmath.workdps(100):
        r2, r1 = g2 / mpmath.mpf(rhs), g1 / mpmath.mpf(rhs)
        err = 4 * abs(r2 - r1) + mpmath.mpf(10) ** -40 + abs(r2) * 4 * _RTOL_CONSTANTS
    return Certificate("mpmath-50", float(r2), float(err) * (1 + 2 ** -40), float(g2), rhs)
