"""Numerical pieces behind :func:`toys.constants`: the exact maximum of an affine map's norm over
a ball (a trust-region problem), exact 1-D suprema (grid + golden-section refinement), and power
iteration on Hessian-vector products.

Example
-------
>>> import numpy as np
>>> from toys.constants._math import sup_norm_affine_ball
>>> # sup_{|u| <= 2} |3 + 0.5 u| = 3 + 0.5 * 2
>>> sup_norm_affine_ball(np.array([[[0.5]]]), np.array([[3.0]]), 2.0).tolist()
[4.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["sup_1d", "sup_norm_affine_ball", "top_eigenvalue"]


def sup_norm_affine_ball(M: np.ndarray, r: np.ndarray, R: float) -> np.ndarray:
    """Exact sup_{||u|| <= R} ||r_b + M_b u|| for symmetric M_b (B, d, d) and r_b (B, d).

    The maximum of a convex quadratic over a ball lies on the sphere; with M = V diag(m) V^T and
    s = V^T r the maximiser is u_j = m_j s_j / (lambda - m_j^2) where lambda >= max m_j^2 solves
    sum_j (m_j s_j)^2 / (lambda - m_j^2)^2 = R^2 (bisection to machine precision); the "hard
    case" (no weight on the top eigenspace) takes lambda = max m_j^2 and spends the remaining
    radius along the top eigenvector.

    >>> import numpy as np
    >>> M = np.array([[[2.0, 0.0], [0.0, -1.0]]]); r = np.array([[0.0, 1.0]])
    >>> # ||r + M u||^2 = 5 - 3 s^2 - 2 s on the circle (s = u_2): max at s = -1/3, sqrt(16/3)
    >>> round(float(sup_norm_affine_ball(M, r, 1.0)[0]), 12)
    2.309401076759
    """
    M = np.asarray(M, dtype=float)
    r = np.asarray(r, dtype=float)
    R = float(R)
    if R > 1e100:  # homogeneity in the radius: sup_{|u| <= R} |r + M u| = R sup_{|v| <= 1}
        with np.errstate(over="ignore", under="ignore"):  # |r / R + M v| (the squares of R M
            return R * sup_norm_affine_ball(M, r / R, 1.0)  # would overflow); inf: overflows
    # the sup is positively homogeneous in (M, r): solve the problem scaled to O(1) per batch so
    # that squares of huge entries (L ~ 1e200) cannot overflow, then scale back
    scale = np.maximum(np.abs(M).max(axis=(1, 2)) * max(R, 1.0), np.abs(r).max(axis=1))
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    if np.any((scale > 1e100) | (scale < 1e-100)):
        return scale * sup_norm_affine_ball(M / scale[:, None, None], r / scale[:, None], R)
    m, V = np.linalg.eigh(0.5 * (M + M.transpose(0, 2, 1)))
    s = np.einsum("bji,bj->bi", V, r)
    a, e = m * s, m * m
    emax = e.max(axis=1)
    scale = np.maximum(emax, 1e-300)
    top = e >= emax[:, None] * (1.0 - 1e-12)
    out = np.linalg.norm(r, axis=1)
    if R <= 0.0:
        return out
    live = emax > 0.0
    a_top2 = np.where(top, a * a, 0.0).sum(axis=1)
    rest = ~top
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(rest, emax[:, None] - e, 1.0)
        phi_rest = np.where(rest, (a / gap) ** 2, 0.0).sum(axis=1)
    hard = live & (a_top2 <= 1e-28 * scale * np.maximum(1.0, (s * s).sum(axis=1))) & (
        phi_rest <= R * R)
    # hard case: lambda = emax, leftover radius along the top eigenspace
    w_rest = np.where(rest, a / gap, 0.0)
    val_hard = (np.where(rest, (s + m * w_rest) ** 2, 0.0).sum(axis=1)
                + np.where(top, s * s, 0.0).sum(axis=1) + emax * np.maximum(R * R - phi_rest, 0))
    # regular case: bisection on t = lambda - emax in (0, ||a|| / R]; denominators are formed
    # as (emax - e_j) + t so that a root t much smaller than emax keeps its precision
    gaps = emax[:, None] - e
    lo = np.zeros_like(emax)
    hi = np.linalg.norm(a, axis=1) / R + 1e-300
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            phi = np.nan_to_num((a / (gaps + mid[:, None])) ** 2, nan=0.0).sum(axis=1)
            big = phi > R * R
            lo = np.where(big, mid, lo)
            hi = np.where(big, hi, mid)
        w = np.nan_to_num(a / (gaps + hi[:, None]), nan=0.0, posinf=0.0, neginf=0.0)
    val_reg = ((s + m * w) ** 2).sum(axis=1)
    val = np.where(hard, val_hard, val_reg)
    return np.where(live, np.sqrt(np.maximum(val, out ** 2)), out)


def sup_1d(fn, lo: float, hi: float, spacing: float, max_grid: int = 200_001):
    """Global sup over [lo, hi] of B scalar functions, evaluated together.

    ``fn(theta)`` maps a (B, G) array of points to (B, G) values. A grid of the given
    ``spacing`` locates the best cell of every function, golden-section search refines inside
    the neighbouring cells. Returns (values (B,), argmax (B,)).

    >>> import numpy as np
    >>> vals, where = sup_1d(lambda t: -(t - np.array([[1.0], [2.5]])) ** 2, -5.0, 5.0, 0.1)
    >>> np.round(where, 8).tolist(), np.round(vals, 12).tolist()
    ([1.0, 2.5], [-0.0, -0.0])
    """
    n = int(min(max_grid, max(3, np.ceil((hi - lo) / spacing) + 1)))
    grid = np.linspace(lo, hi, n)
    vals = fn(grid[None, :])
    k = np.argmax(vals, axis=1)
    h = grid[1] - grid[0]
    a = np.maximum(grid[k] - h, lo)
    b = np.minimum(grid[k] + h, hi)
    g = (np.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = _col(fn, c), _col(fn, d)
    for _ in range(64):  # 0.618^64 ~ 4e-14 of the bracket
        left = fc >= fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = b - g * (b - a)
        d_new = a + g * (b - a)
        c, d = np.where(left, c_new, d), np.where(left, c, d_new)
        fc, fd = np.where(left, _col(fn, c), fd), np.where(left, fc, _col(fn, d))
    best_ref = np.maximum(fc, fd)
    where_ref = np.where(fc >= fd, c, d)
    grid_best = vals[np.arange(len(k)), k]
    take = best_ref >= grid_best
    return np.where(take, best_ref, grid_best), np.where(take, where_ref, grid[k])


def _col(fn, t):
    return fn(t[:, None])[:, 0]


def top_eigenvalue(hvp, shape, rng: np.random.Generator, iters: int = 100) -> np.ndarray:
    """Largest eigenvalue of B PSD operators by power iteration; ``hvp(V)`` maps (B, d) -> (B, d).

    Returns the final Rayleigh quotients, which never exceed the true largest eigenvalues (a
    lower estimate, exact in the limit).

    >>> import numpy as np
    >>> H = np.array([np.diag([1.0, 3.0]), np.diag([2.0, 0.5])])
    >>> hvp = lambda V: np.einsum("bij,bj->bi", H, V)
    >>> est = top_eigenvalue(hvp, (2, 2), np.random.default_rng(0))
    >>> np.round(est, 8).tolist()
    [3.0, 2.0]
    """
    V = rng.standard_normal(shape)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    lam = np.zeros(shape[0])
    for _ in range(iters):
        HV = hvp(V)
        lam = np.einsum("bi,bi->b", V, HV)
        nrm = np.linalg.norm(HV, axis=1, keepdims=True)
        V = np.where(nrm > 0, HV / np.where(nrm > 0, nrm, 1.0), V)
    return lam
