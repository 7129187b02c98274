"""Batched damped Newton method (many independent smooth strictly convex problems at once).

Used for the exact optima of the logistic problems: all N client problems are solved together
(one batched linear solve per iteration, one step size per problem, Armijo backtracking), and
the global problem is the same code with a batch of one. For large dimensions the Newton system
is solved by batched conjugate gradients on Hessian-vector products instead of an explicit
Hessian.

Example
-------
>>> import numpy as np
>>> from toys.problems._newton import newton
>>> A = np.array([[[2.0]], [[4.0]]]); c = np.array([[1.0], [-1.0]])
>>> fun = lambda X: 0.5 * np.einsum("bi,bij,bj->b", X - c, A, X - c) + np.cosh(X[:, 0])
>>> grad = lambda X: np.einsum("bij,bj->bi", A, X - c) + np.sinh(X)
>>> hess = lambda X, rows: (A + np.cosh(X)[:, :, None])[rows]
>>> x = newton(fun, grad, np.zeros((2, 1)), hess=hess)
>>> bool(np.all(np.linalg.norm(grad(x), axis=1) <= 1e-12))
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["NewtonError", "newton"]

GRAD_TOL = 1e-12  # target gradient norm; results are checked against 1e-10 afterwards


class NewtonError(RuntimeError):
    """Newton's method did not reach the gradient tolerance (a numerical failure, not bad input)."""


def newton(fun, grad, x0: np.ndarray, hess=None, hvp=None, max_iter: int = 200,
           tol: float = GRAD_TOL, accept_tol: float = 1e-10) -> np.ndarray:
    """Minimise ``B`` independent functions from ``x0`` (B, d).

    ``fun(X) -> (B,)``, ``grad(X) -> (B, d)``; either ``hess(X, rows) -> (len(rows), d, d)``
    (the Hessians of the problems ``rows`` (indices) at their rows of X: only the problems
    still iterating) or ``hvp(X, V) -> (B, d)``. (Reusing a Hessian over several iterations,
    Shamanskii's variant, was measured slower here: a logistic Hessian costs about one
    gradient evaluation in these batched products, and it tripled the iterations.) Stops when
    every gradient norm is <=
    ``tol`` (or no further progress is possible in floating point) and raises
    :class:`NewtonError` if some gradient norm is still above ``accept_tol``.
    """
    X = np.array(x0, dtype=float, copy=True)
    B = X.shape[0]
    f = fun(X)
    g = grad(X)
    gn = np.linalg.norm(g, axis=1)
    stall = np.zeros(B, dtype=int)
    lazy = _LazyHessian(hess, B, X.shape[1]) if hess is not None else None
    for _ in range(max_iter):
        active = (gn > tol) & (stall < 3)
        if not active.any():
            break
        P = np.zeros_like(g)
        P[active] = -_newton_direction(X, g, lazy, hvp, active)
        slope = np.einsum("bi,bi->b", g, P)
        bad = active & (~(slope < 0) | ~np.all(np.isfinite(P), axis=1))
        if bad.any():  # fall back to steepest descent where the direction is unusable
            P[bad] = -g[bad]
            slope[bad] = -gn[bad] ** 2
        t, Xn, fn = _line_search(fun, X, f, P, slope, active)
        gnew = grad(Xn)
        gnn = np.linalg.norm(gnew, axis=1)
        progressed = (gnn < 0.9 * gn) | (fn < f - 1e-14 * (1.0 + np.abs(f)))
        stall = np.where(active & ~progressed, stall + 1, 0)
        if lazy is not None:
            lazy.stale |= active
        X, f, g, gn = Xn, fn, gnew, gnn
    if np.any(gn > accept_tol) or not np.all(np.isfinite(X)):
        raise NewtonError(
            f"Newton's method stopped with gradient norm {float(np.max(gn)):.3e} > {accept_tol:g}"
        )
    return X


def _line_search(fun, X, f, P, slope, active):
    """Armijo backtracking from t = 1 (per problem); returns (t, X + t P, f there)."""
    t = np.where(active, 1.0, 0.0)
    ftol = 1e-14 * (1.0 + np.abs(f))
    for _ls in range(60):
        Xn = X + t[:, None] * P
        fn = fun(Xn)
        ok = (fn <= f + 1e-4 * t * slope + ftol) & np.isfinite(fn)
        if ok.all():
            return t, Xn, fn
        t = np.where(ok, t, 0.5 * t)
    t = np.where(ok, t, 0.0)
    Xn = X + t[:, None] * P
    return t, Xn, fun(Xn)


class _LazyHessian:
    """The problems' Hessians, computed only for the active problems marked ``stale``."""

    def __init__(self, hess, B, d):
        self.hess, self.H = hess, np.empty((B, d, d))
        self.stale = np.ones(B, dtype=bool)

    def at(self, X, active):
        rows = np.flatnonzero(active & self.stale)
        if rows.size:
            self.H[rows] = self.hess(X, rows)
            self.stale[rows] = False
        return self.H[active]


def _newton_direction(X, g, lazy, hvp, active):
    """Newton directions H_b^{-1} g_b for the active problems only."""
    if lazy is not None:
        H = lazy.at(X, active)
        try:
            return np.linalg.solve(H, g[active][..., None])[..., 0]
        except np.linalg.LinAlgError:
            return np.einsum("bij,bj->bi", np.linalg.pinv(H), g[active])

    def matvec(V):
        full = np.zeros_like(g)
        full[active] = V
        return hvp(X, full)[active]

    return _cg(matvec, g[active])


def _cg(matvec, rhs: np.ndarray, max_iter: int | None = None) -> np.ndarray:
    """Batched conjugate gradients for SPD systems ``H_b x_b = rhs_b``."""
    _B, d = rhs.shape
    max_iter = max_iter or 4 * d + 20
    x = np.zeros_like(rhs)
    r = rhs.copy()
    p = r.copy()
    rs = np.einsum("bi,bi->b", r, r)
    tol2 = (1e-14 * np.linalg.norm(rhs, axis=1)) ** 2
    for _ in range(max_iter):
        live = rs > tol2
        if not live.any():
            break
        Ap = matvec(p)
        pAp = np.einsum("bi,bi->b", p, Ap)
        alpha = np.where(live & (pAp > 0), rs / np.where(pAp > 0, pAp, 1.0), 0.0)
        x += alpha[:, None] * p
        r -= alpha[:, None] * Ap
        rs_new = np.einsum("bi,bi->b", r, r)
        beta = np.where(live, rs_new / np.where(rs > 0, rs, 1.0), 0.0)
        p = r + beta[:, None] * p
        rs = rs_new
    return x
