"""Per-family measurement of the constants (the body of :func:`toys.constants`).

Example
-------
>>> import numpy as np, toys
>>> from toys.constants._impl import measure
>>> prob = toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)
>>> measure(prob, prob.x0, None, None, np.random.default_rng(0), None).mu.value
1.0
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import BoundlabError

from ..problems.base import OptimumUnavailable
from ..problems.quadratic import Quadratic
from . import _buckets as bk
from ._math import sup_1d, sup_norm_affine_ball, top_eigenvalue
from .values import Constants, Value

__all__ = ["measure"]

_POWER_POINTS = 8  # at most this many points get a power iteration (cost control)


def _opt(problem, name) -> np.ndarray:
    """The optimum ``name`` as rows (k, d): x* as one row, x_i* as N rows, no row when it is
    unavailable (OptimumUnavailable)."""
    try:
        v = getattr(problem, name)
    except OptimumUnavailable:
        return np.zeros((0, problem.dim))
    if v is None:  # a non-convex problem (MLP, CNN) has none
        return np.zeros((0, problem.dim))
    return np.asarray(v, dtype=float).reshape(-1, problem.dim)


def _common(problem, x_ref) -> dict:
    """Gamma, D and F* -- or ``how="unavailable"`` with the reason when an optimum is missing."""
    out = {}
    if getattr(problem, "x_star", 0) is None:  # non-convex: no optimum is known
        return {k: Value(np.nan, "unavailable", f"{problem.kind}: non-convex, no known optimum")
                for k in ("D", "F_star", "Gamma")}
    try:
        x_star = np.asarray(problem.x_star, dtype=float)
        out["D"] = Value(float(np.linalg.norm(x_ref - x_star)), "exact", "||x_ref - x*||")
        out["F_star"] = Value(float(problem.F_star), "exact", "F(x*)")
        out["Gamma"] = Value(float(problem.Gamma), "exact",
                             "F* - sum_i p_i F_i* at the solved optima")
    except OptimumUnavailable as exc:
        for k in ("D", "F_star", "Gamma"):
            out.setdefault(k, Value(np.nan, "unavailable", exc.reason))
    return out


def measure(problem, x_ref, traj, batch_size, rng, radius) -> Constants:
    x_star = _opt(problem, "x_star")
    pts = np.vstack([x_ref[None], traj]) if traj is not None else np.vstack([x_ref, *x_star])
    where = (f"x_ref and {len(traj)} trajectory points" if traj is not None else
             "x_ref, x*" if len(x_star) else "x_ref")
    common = _common(problem, x_ref)
    extra = {}
    if traj is not None:
        z = max(_divergence(problem, x) for x in traj)
        extra["zeta_traj"] = Value(z, f"estimate(max over {len(traj)} trajectory points)",
                                   "max_i ||grad F_i(x_t) - grad F(x_t)|| at the given points")
    if isinstance(problem, Quadratic):
        parts = _quadratic(problem, x_ref, traj, batch_size, radius, extra)
    elif bk.is_logistic(problem) and problem.kind == "logistic" and problem.dim == 1:
        parts = _logistic_1d(problem, x_ref, traj, pts, where, batch_size, extra)
    elif bk.is_logistic(problem):  # padded or size-bucketed (toys/constants/_buckets.py)
        parts = _logistic(problem, pts, where, batch_size, rng, extra)
    else:
        parts = _generic(problem, pts, where, batch_size, rng, extra)
    parts.update(common)
    return Constants(problem=problem.name, extra=extra, batch_size=batch_size, **parts)


# ----------------------------------------------------------------------------- quadratics
def _quadratic(prob, x_ref, traj, batch_size, radius, extra) -> dict:
    x_star = prob.x_star
    eig_bar = np.linalg.eigvalsh(prob.A_bar)
    if radius is None:
        cands = [np.linalg.norm(x_ref - x_star), np.linalg.norm(prob.c - x_star, axis=1).max()]
        if traj is not None:
            cands.append(np.linalg.norm(traj - x_star, axis=1).max())
        radius = float(max(cands))
        how_r = "max distance from x* to x_ref, the trajectory and the client optima"
    else:
        how_r = "given"
    region = {"kind": "ball", "center": x_star, "radius": radius, "radius_from": how_r}
    sig2 = float(prob.minibatch_variance(None, batch_size).max())
    g_star = prob.grads(x_star)  # grad F_i(x*) ; grad F(x*) = 0
    zeta = float(sup_norm_affine_ball(prob.A - prob.A_bar, g_star, radius).max())
    gmax = float(sup_norm_affine_ball(prob.A, g_star, radius).max())
    ball = f"sup over the ball B(x*, {radius:.6g})"
    if traj is not None:
        extra["G2_traj"] = Value(
            float(max((prob.grads(x) ** 2).sum(axis=1).max() for x in traj)) + sig2,
            f"estimate(max over {len(traj)} trajectory points)", "max_i ||grad F_i||^2 + sigma^2")
    built = getattr(prob, "options", None) or {}
    built = built if getattr(prob, "name", "") == "quadratic" and "mu" in built else {}
    return {
        "L": _eig_value(float(prob.eigs.max()), prob.eigs, "max_i lambda_max(A_i)",
                        built.get("L")),
        "L_F": _eig_value(float(eig_bar.max()), eig_bar, "lambda_max(sum_i p_i A_i)"),
        "mu": _eig_value(float(prob.eigs.min()), prob.eigs, "min_i lambda_min(A_i)",
                         built.get("mu")),
        "mu_F": _eig_value(float(eig_bar.min()), eig_bar, "lambda_min(sum_i p_i A_i)"),
        "zeta": Value(zeta, "exact", f"max_i {ball} of ||grad F_i - grad F|| (trust region)"),
        "sigma2": _sigma_value(sig2, batch_size, "d * noise_std^2 / batch_size", "exact"),
        "G2": Value(_square(gmax) + sig2, "exact",
                    f"max_i {ball} of ||grad F_i||^2, + sigma^2"),
        "region": region,
    }


def _square(x: float) -> float:
    """x**2, inf where it truly overflows float64 (Python's ** raises OverflowError there)."""
    with np.errstate(over="ignore"):
        return float(np.square(np.float64(x)))


#: relative accuracy below which an eigenvalue from eigvalsh is reported as ``exact``
EIG_EXACT_RTOL = 1e-10


def _eig_value(value: float, eigs, note: str, built=None) -> Value:
    """An extreme eigenvalue with how it was obtained and how accurate it is.

    ``eigvalsh`` is backward stable: each eigenvalue has an absolute error up to about
    ``d * eps * max|lambda|`` of its matrix. Relative to the reported value that is the accuracy
    estimate; above :data:`EIG_EXACT_RTOL` (ill-conditioned: L/mu ~ 1e15 gave mu = 0.95 for 1,
    at 1e17 a negative mu) the value is an ``estimate`` and says so. Where the problem was built
    with known extreme eigenvalues (``toys.quadratic``'s ``L`` and ``mu``), the construction
    value is checked against eigvalsh (agreement within the accuracy estimate) and reported.

    >>> import numpy as np
    >>> _eig_value(1.0, np.array([[1.0, 2.0]]), "mu").how
    'exact'
    >>> v = _eig_value(0.95, np.array([[0.95, 1e15]]), "mu", built=1.0)
    >>> v.value, v.how.split("(")[0]
    (1.0, 'estimate')
    """
    eigs = np.atleast_2d(np.asarray(eigs, dtype=float))
    scale = float(np.abs(eigs).max()) if eigs.size else 0.0
    abs_err = 8.0 * eigs.shape[-1] * np.finfo(float).eps * scale
    rel = abs_err / abs(value) if value != 0 else (0.0 if abs_err == 0 else np.inf)
    if rel <= EIG_EXACT_RTOL:
        return Value(value, "exact", note)
    if built is not None and np.isfinite(built):
        agrees = abs(value - built) <= abs_err
        return Value(float(built), f"estimate(construction value; eigvalsh of the float "
                     f"matrices gives {value:.6g}, accurate to ~{rel:.1e} relative"
                     f"{'' if agrees else ', DISAGREES with the construction'})", note)
    return Value(value, f"estimate(eigvalsh, ill-conditioned: relative accuracy ~{rel:.1e})",
                 note)


# ----------------------------------------------------------------------------- 1-parameter BCE
def _logistic_1d(prob, x_ref, traj, pts, where, batch_size, extra) -> dict:
    p, l2, N = prob.p, prob.l2, prob.n_clients
    xs, os_ = bk.slopes_1d(prob)
    ends = np.concatenate([(-40.0 - os_) / xs, (40.0 - os_) / xs])
    anchors = np.concatenate([_opt(prob, "x_star_i")[:, 0], _opt(prob, "x_star")[:, 0], x_ref,
                              pts[:, 0]])
    lo = float(min(ends.min(), anchors.min())) - 1.0
    hi = float(max(ends.max(), anchors.max())) + 1.0
    spacing = 0.05 / max(float(np.abs(xs).max()), 1e-12)

    def at(theta, what):  # theta (B, G): all clients at (1, G), client i at row i if B == N
        return bk.at_1d(prob, theta, what)

    def curv(theta):
        return at(theta, "curv")

    def curv_F(theta):  # global F: theta is (1, G)
        return (p @ at(theta, "curv"))[None, :]

    def div(theta):
        flat = theta.reshape(1, -1)
        g = at(flat, "slope")  # (N, B*G)
        d = np.abs(g - p @ g).reshape(N, *theta.shape)
        return d[:, 0, :] if theta.shape[0] == 1 else d[np.arange(N), np.arange(N), :]

    L_i, _ = sup_1d(curv, lo, hi, spacing)
    L_F, _ = sup_1d(curv_F, lo, hi, spacing)
    z_i, _ = sup_1d(div, lo, hi, spacing)
    sup = f"global sup over theta in R (grid step {spacing:.3g} on [{lo:.4g}, {hi:.4g}] + refine)"
    sig = _sample_sigma2(prob, pts, where, batch_size)
    return {
        "L": Value(float(L_i.max()), "exact", f"max_i {sup} of F_i''"),
        "L_F": Value(float(L_F[0]), "exact", f"{sup} of F''"),
        "mu": Value(l2, "exact", "inf over R of F_i'' (the data curvature vanishes as "
                                  "|theta| -> inf; not attained)"),
        "mu_F": Value(l2, "exact", "inf over R of F''"),
        "zeta": Value(float(z_i.max()), "exact", f"max_i {sup} of |F_i' - F'|"),
        "sigma2": sig,
        "G2": _sample_G2(prob, pts, where, batch_size),
        "region": {"kind": "R^d", "description": "all of R (one-parameter problem)"},
    }


# ----------------------------------------------------------------------------- logistic, d >= 2
def _logistic(prob, pts, where, batch_size, rng, extra) -> dict:
    c = 4.0 if prob.kind == "logistic" else 2.0
    lam_i, lam_F = bk.client_gram_eigs(prob)  # bucket by bucket for a Bucketed problem
    rule = "lambda_max(X_i^T X_i / n_i) / " + ("4" if c == 4.0 else "2") + " + l2"
    norms = bk.row_norm_means(prob)
    a = norms * (1.0 if prob.kind == "logistic" else np.sqrt(2.0))
    S = prob.p @ a
    zeta_bound = float(((1.0 - prob.p) * a + (S - prob.p * a)).max())
    L_est, LF_est = _power_L(prob, pts, rng)
    probe = _unique_rows(np.vstack([pts, _opt(prob, "x_star"), _opt(prob, "x_star_i")]))
    zeta_est = max(_divergence(prob, x) for x in probe)
    at = where if where.endswith("x*") else where + ", x*"
    extra["L_est"] = Value(L_est, f"estimate(power iteration at {at}, x_i*)",
                           "empirical lower estimate of max_i L_i")
    extra["L_F_est"] = Value(LF_est, f"estimate(power iteration at {at})",
                             "empirical lower estimate of L_F")
    extra["zeta_est"] = Value(zeta_est, f"estimate(max over {len(probe)} points: {at}, x_i*)",
                              "lower estimate of zeta (the bound can be loose: it takes every "
                              "residual |sigma - y| at its maximum 1)")
    exact_L = prob.kind == "logistic" and not bk.has_offsets(prob)
    L_how = "exact" if exact_L else "bound"
    L_note = " (attained at theta = 0: no offsets, curvature 1/4 on every row)" if exact_L else (
        " (Boehning)")
    flat = "; softmax has a flat direction" if prob.kind == "multinomial" else ""
    return {
        "L": Value(float(lam_i.max() / c + prob.l2), L_how, f"max_i {rule}{L_note}"),
        "L_F": Value(float(lam_F / c + prob.l2), L_how, f"lambda_max(sum_i p_i X_i^T X_i / "
                                                        f"n_i) / {c:g} + l2{L_note}"),
        "mu": Value(prob.l2, "exact", "inf over R^d of lambda_min(grad^2 F_i) = l2 (data "
                                      f"curvature vanishes along generic directions{flat})"),
        "mu_F": Value(prob.l2, "exact", "inf over R^d of lambda_min(grad^2 F)"),
        "zeta": Value(zeta_bound, "bound", "sup over R^d: (1-p_i) a_i + sum_{k!=i} p_k a_k with "
                                           "a_i = mean_j ||grad of row j's loss|| bound"),
        "sigma2": _sample_sigma2(prob, pts, where, batch_size),
        "G2": _sample_G2(prob, pts, where, batch_size),
        "region": {"kind": "R^d", "description": "zeta over all of R^d (bound); G^2 and sigma^2 "
                                                 f"at {where}"},
    }


def _power_L(prob, pts, rng, iters: int = 60):
    """Power-iteration lower estimates of max_i L_i and L_F at ``pts``, x* and (clients) x_i*."""
    P = _unique_rows(np.vstack([pts, _opt(prob, "x_star")]))
    if len(P) > _POWER_POINTS:
        P = P[np.linspace(0, len(P) - 1, _POWER_POINTS).round().astype(int)]
    N, d = prob.n_clients, prob.dim
    L_est, LF_est = 0.0, 0.0
    x_i = _opt(prob, "x_star_i")
    hvps = _hvps_of(prob)
    for W in list(P) + ([x_i] if len(x_i) else []):
        lam = top_eigenvalue(lambda V, W=W: hvps(W, V), (N, d), rng, iters)
        L_est = max(L_est, float(lam.max()))
    for W in P:
        lam = top_eigenvalue(lambda V, W=W: (prob.p @ hvps(W, V[0]))[None], (1, d), rng,
                             iters)
        LF_est = max(LF_est, float(lam[0]))
    return L_est, LF_est


def _hvps_of(prob):
    """``prob.hvps``, or central differences of ``prob.grads`` for a problem without it (the
    MLP): (g(W + hV) - g(W - hV)) / (2h) row by row, h = 1e-5 (1 + ||W||) / ||V||."""
    try:
        prob.hvps(np.zeros((prob.n_clients, prob.dim)), np.zeros((prob.n_clients, prob.dim)))
        return prob.hvps
    except BoundlabError:
        pass

    def fd(W, V):
        W = np.broadcast_to(np.asarray(W, dtype=float), (prob.n_clients, prob.dim))
        V = np.broadcast_to(np.asarray(V, dtype=float), W.shape)
        nv = np.maximum(np.linalg.norm(V, axis=1, keepdims=True), 1e-300)
        h = 1e-5 * (1.0 + np.linalg.norm(W, axis=1, keepdims=True)) / nv
        return (prob.grads(W + h * V) - prob.grads(W - h * V)) / (2 * h)

    return fd


def _unique_rows(P):
    _, idx = np.unique(P, axis=0, return_index=True)
    return P[np.sort(idx)]


# ----------------------------------------------------------------------------- any problem
def _generic(prob, pts, where, batch_size, rng, extra) -> dict:
    L_est, LF_est = _power_L(prob, pts, rng)
    N, d = prob.n_clients, prob.dim
    mu_est, hvps = np.inf, _hvps_of(prob)
    for W in list(pts) + list(_opt(prob, "x_star")):
        lam = top_eigenvalue(lambda V, W=W: L_est * V - hvps(W, V), (N, d), rng)
        mu_est = min(mu_est, float((L_est - lam).min()))
    probe = _unique_rows(np.vstack([pts, _opt(prob, "x_star"), _opt(prob, "x_star_i")]))
    est = f"estimate(at {where})"
    return {
        "L": Value(L_est, est, "power iteration (lower estimate)"),
        "L_F": Value(LF_est, est, "power iteration (lower estimate)"),
        "mu": Value(mu_est, est, "shifted power iteration (an upper estimate of mu)"),
        "mu_F": Value(float("nan"), "estimate(not measured)", ""),
        "zeta": Value(max(_divergence(prob, x) for x in probe),
                      f"estimate(max over {len(probe)} points)", "lower estimate"),
        "sigma2": _mc_sigma2(prob, pts, where, batch_size, rng),
        "G2": Value(float(max((prob.grads(x) ** 2).sum(axis=1).max() for x in pts)),
                    f"estimate(max over {len(pts)} points: {where})", "full-gradient part only"),
        "region": {"kind": "points", "description": where},
    }


# ----------------------------------------------------------------------------- shared pieces
def _divergence(prob, x) -> float:
    G = prob.grads(x)
    return float(np.linalg.norm(G - prob.p @ G, axis=1).max())


def _sigma_value(s2, batch_size, formula, how):
    if batch_size is None:
        return Value(0.0, "exact", "full batch")
    return Value(float(s2), how, formula)


def _sample_sigma2(prob, pts, where, batch_size):
    if batch_size is None:
        return Value(0.0, "exact", "full batch")
    s2 = max(float(prob.minibatch_variance(x, batch_size).max()) for x in pts)
    return Value(s2, f"estimate(max over {len(pts)} points: {where})",
                 f"exact without-replacement formula (spec A3) at each point, b = {batch_size}")


def _sample_G2(prob, pts, where, batch_size):
    vals = []
    for x in pts:
        g2 = (prob.grads(x) ** 2).sum(axis=1)
        if batch_size is not None:
            g2 = g2 + prob.minibatch_variance(x, batch_size)
        vals.append(float(g2.max()))
    return Value(max(vals), f"estimate(max over {len(pts)} points: {where})",
                 "max_i E||g_i||^2 = ||grad F_i||^2 + minibatch variance (a posteriori G^2)")


def _mc_sigma2(prob, pts, where, batch_size, rng, draws: int = 200):
    if batch_size is None:
        return Value(0.0, "exact", "full batch")
    best = 0.0
    for x in pts:
        G = prob.grads(x)
        acc = np.zeros(prob.n_clients)
        for _ in range(draws):
            acc += ((prob.minibatch_grads(x, rng, batch_size) - G) ** 2).sum(axis=1)
        best = max(best, float((acc / draws).max()))
    return Value(best, f"estimate(Monte Carlo, {draws} draws at {len(pts)} points)", "")
