"""Exact worst cases (PEP) of gradient descent, with the worst-case points kept.

:func:`gd_worst_case` solves the performance-estimation problem of ``T`` steps of gradient
descent with step ``eta`` on an L-smooth mu-strongly convex function (mu = 0: convex),
``||x_0 - x*|| <= D``, for the last-iterate gap ``f(x_T) - f*`` (``final_gap``) or the
averaged gap ``(1/T) sum_{t=1..T} f(x_t) - f*`` (``avg_shadow_gap`` at tau = 1), with PEPit
(Clarabel). It returns the dual value (an upper bound on the worst case, ``upper``) and the
primal worst-case instance: the points, gradients and function values of one optimal Gram
matrix (``lower`` is the metric measured on them). :mod:`verify.falsify.interpolate` turns
those into a concrete function.

Reference value: for eta = 1/L and mu = 0 the last-iterate worst case is
L D^2 / (4T + 2) (Drori and Teboulle, Math. Prog. 145, 2014; Taylor, Hendrickx and Glineur,
Math. Prog. 161, 2017).

>>> w = gd_worst_case("final_gap", T=3, eta=1.0, L=1.0, mu=0.0, D=1.0)
>>> round(w["upper"], 5), round(1 / 14, 5)
(0.07143, 0.07143)
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["gd_worst_case", "worst_case", "MODELS", "IDENTICAL_CLIENTS"]

#: (lhs, algorithm) pairs with a PEP model here
MODELS = {("final_gap", "gd"), ("avg_shadow_gap", "gd"), ("final_gap", "fedavg"),
          ("avg_shadow_gap", "fedavg")}
#: the algorithms whose model is the identical-clients case of their class (see
#: :func:`worst_case`): the PEP's value is then a lower bound on the class's worst case only
IDENTICAL_CLIENTS = {"fedavg"}


def worst_case(lhs: str, algorithm: str, *, T: int, tau: int, eta: float, L: float,
               mu: float, D: float) -> dict:
    """The PEP of ``lhs`` for ``algorithm`` run ``T`` rounds of ``tau`` local steps.

    ``"gd"``: ``tau`` must be 1. ``"fedavg"`` (full participation, exact gradients, server
    step 1) on **identical clients**: every client takes the same ``tau`` steps from the same
    model, so the average is that model and the run is gradient descent with ``T * tau`` steps;
    its last iterate is x_T (``final_gap``) and DKR's shadow average of round r, step k is the
    GD iterate r * tau + k (``avg_shadow_gap`` = the GD average over all ``T * tau`` steps).
    Identical clients are one instance of the heterogeneous class, so the worst case found
    (``lower``) is a valid counterexample there; ``upper`` only bounds the identical-clients
    case (``"identical_clients": True`` in the result).

    >>> w = worst_case("final_gap", "fedavg", T=2, tau=2, eta=1.0, L=1.0, mu=0.0, D=1.0)
    >>> round(w["upper"], 5), round(1 / 18, 5), w["rounds"], w["local_steps"]
    (0.05556, 0.05556, 2, 2)
    """
    if (lhs, algorithm) not in MODELS:
        raise ValueError(f"no PEP model for lhs={lhs!r}, algorithm={algorithm!r}")
    if algorithm == "gd" and int(tau) != 1:
        raise ValueError(f"tau = {tau}: gradient descent takes one step per round")
    w = gd_worst_case(lhs, T=int(T) * int(tau), eta=eta, L=L, mu=mu, D=D)
    w.update(rounds=int(T), local_steps=int(tau), algorithm=algorithm,
             identical_clients=algorithm in IDENTICAL_CLIENTS)
    return w


def gd_worst_case(lhs: str, *, T: int, eta: float, L: float, mu: float, D: float) -> dict:
    """The PEP of ``lhs`` (see the module docstring), in the units of L and D. CLARABEL first,
    then SCS when it fails (it does on some ill-scaled problems); RuntimeError when both fail
    (e.g. a step beyond 2/L, where the worst case is unbounded)."""
    t0 = time.perf_counter()
    errors = []
    for solver in ("CLARABEL", "SCS"):
        try:
            upper, X, G, F = _gd_pep(lhs, int(T), eta * L, mu / L, solver)
        except Exception as exc:  # noqa: BLE001 - cvxpy's SolverError, PEPit's unsolved eval
            errors.append(f"{solver}: {type(exc).__name__}")
            continue
        lower = F[-1] - F[0] if lhs == "final_gap" else float(np.mean(F[2:]) - F[0])
        scale = L * D * D
        return {"upper": float(upper) * scale, "lower": float(lower) * scale,
                "points": X * D, "grads": G * L * D, "values": (F - F[0]) * scale,
                "L": float(L), "mu": float(mu), "T": int(T), "eta": float(eta),
                "seconds": time.perf_counter() - t0, "solver": f"PEPit + {solver}"}
    raise RuntimeError("the PEP solve failed (" + "; ".join(errors) + ")")


def _gd_pep(lhs, T, h, q, solver):
    """One PEP solve in units L = D = 1 (step h = eta L, q = mu / L): ``(value, X, G, F)``."""
    from PEPit import PEP
    from PEPit.functions import SmoothStronglyConvexFunction

    pb = PEP()
    f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=q)
    xs = f.stationary_point()
    fs = f(xs)
    x0 = pb.set_initial_point()
    pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    xk, pts = x0, [x0]
    for _ in range(T):
        xk = xk - h * f.gradient(xk)
        pts.append(xk)
    vals = [f(x) for x in pts]
    pb.set_performance_metric(vals[-1] - fs if lhs == "final_gap" else sum(vals[1:]) / T - fs)
    upper = pb.solve(wrapper="cvxpy", solver=solver, verbose=0)
    X = np.array([np.asarray(p.eval(), dtype=float) for p in [xs, *pts]])
    G = np.array([np.asarray(f.gradient(p).eval(), dtype=float) for p in [xs, *pts]])
    F = np.array([float(v.eval()) for v in [fs, *vals]])
    return upper, X, G, F
