"""An independent, hand-written Gram-matrix SDP for one FedAvg round (cross-check of PEPit).

Written from the interpolation theorem alone, without PEPit: Taylor, Hendrickx, Glineur,
*Smooth strongly convex interpolation and exact worst-case performance of first-order methods*,
Math. Prog. 161 (2017), Theorem 4. A set ``{(x_a, g_a, f_a)}`` is interpolable by an L-smooth,
mu-strongly convex function iff for every ordered pair ``(a, b)``

    f_a >= f_b + <g_b, x_a - x_b> + 1/(2(1 - mu/L)) * ( ||g_a - g_b||^2 / L
           + mu ||x_a - x_b||^2 - 2 (mu/L) <g_a - g_b, x_a - x_b> ).

Setting (the spec's table): 2 clients with weights 1/2, ``x* = 0`` minimizes
``(f_1 + f_2)/2``, so ``g_1(x*) = g* = -g_2(x*)``, ``||g*|| <= zeta``, ``||x_0|| <= r``;
each client runs ``tau`` gradient steps with step ``eta`` from ``x_0``; the metric is
``||(y_1 + y_2)/2||^2``. Every vector is a coefficient vector in the basis
``(x_0, g*, g_1^0..g_1^{tau-1}, g_2^0..g_2^{tau-1})`` and the Gram matrix ``G`` of that basis
is the unknown; function values are shifted so that ``f_i(x*) = 0``.

Example
-------
>>> from verify.tightness.gram_sdp import fedavg_round_gram_sdp
>>> round(fedavg_round_gram_sdp(L=1.0, mu=0.1, eta=0.1, tau=2, zeta=0.5)["value"], 5)
0.96071
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["fedavg_round_gram_sdp"]


def fedavg_round_gram_sdp(L, mu, eta, tau, zeta, r=1.0, solver="CLARABEL") -> dict:
    """Worst case of one 2-client FedAvg round by a Gram SDP written by hand in cvxpy.

    Returns ``{"value", "status", "gram"}`` (the optimal value, the solver status, the
    optimal Gram matrix of the basis described in the module docstring).

    >>> out = fedavg_round_gram_sdp(L=1.0, mu=0.1, eta=0.1, tau=1, zeta=0.0)
    >>> round(out["value"], 6)
    0.9801
    """
    import cvxpy as cp

    if not (0 <= mu < L):
        raise ValueError("need 0 <= mu < L")
    d = 2 + 2 * tau
    basis = np.eye(d)
    x0, gstar = basis[0], basis[1]

    def grad(i, k):  # gradient of client i (0/1) at its k-th iterate
        return basis[2 + i * tau + k]

    clients = []
    for i in range(2):
        xs, gs = [np.zeros(d)], [gstar if i == 0 else -gstar]  # the point x* = 0
        y = x0.copy()
        for k in range(tau):
            xs.append(y.copy())
            gs.append(grad(i, k))
            y = y - eta * grad(i, k)
        clients.append((xs, gs, y))

    G = cp.Variable((d, d), PSD=True)

    def inner(u, v):
        return cp.sum(cp.multiply(G, np.outer(u, v)))

    cons = [G[0, 0] <= r**2, G[1, 1] <= zeta**2]
    c = 1.0 / (2.0 * (1.0 - mu / L))
    for xs, gs, _ in clients:
        f = cp.Variable(len(xs))
        cons.append(f[0] == 0)  # f_i(x*) = 0: the class is invariant to a constant shift
        for a, b in itertools.permutations(range(len(xs)), 2):
            dx, dg = xs[a] - xs[b], gs[a] - gs[b]
            cons.append(f[a] >= f[b] + inner(gs[b], dx)
                        + c * (inner(dg, dg) / L + mu * inner(dx, dx)
                               - 2 * mu / L * inner(dg, dx)))
    ybar = 0.5 * (clients[0][2] + clients[1][2])
    prob = cp.Problem(cp.Maximize(inner(ybar, ybar)), cons)
    prob.solve(solver=solver)
    return {"value": float(prob.value), "status": prob.status, "gram": G.value}
