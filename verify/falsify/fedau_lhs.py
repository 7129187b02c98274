"""FedAU's (seed 002) other left-hand sides in :func:`verify.falsify`, on the participation
paths of :mod:`verify.falsify.fedau_paths`: what each one runs and measures per instance.

Every quantity below is an exact expectation (or conditional expectation) over the
2^(N (T-1)) Bernoulli(p) participation paths that :mod:`~verify.falsify.fedau_paths`
enumerates, and runs toys' own FedAU pieces; nothing here re-implements the algorithm.

* ``avg_grad_norm2_h`` (Theorem B.4.1): Algorithm 1 with **time-constant** weights omega_n
  (the theorem's assumption), omega_n = E[S_n] = (1 - (1 - p_n)^K) / p_n, the K-cutoff
  interval mean Algorithm 2 estimates (K = 1: omega = 1, average-all; K = inf: 1/p_n, known
  participation), K over the plan's grid. h = (1/P) sum_n omega_n p_n F_n is computed by
  :func:`verify.checks.weight_error_descent.reweighted` (with P, Q, deltat = max_n ||grad F_n -
  grad h||, exact: the tilted quadratic's clients share one Hessian, so grad F_n - grad h is
  constant) on the instance written as a ``toys.Quadratic`` (:func:`as_quadratic`). The run is
  on that quadratic **with data weights phi_n = omega_n p_n / P** (its F is h, so the engine's
  ``grad_norm2`` is ||grad h(x_t)||^2) and the weights omega'_n = P / (N p_n): phi_n omega'_n =
  omega_n / N, Algorithm 1's server step (x + (eta/N) sum_n chi_n omega_n Delta_n) unchanged.
  H = h(x_0) - h*. Quadratic families only (a tilted Huber or softplus h may have no minimum).
* ``one_round_descent`` (Lemma B.5.1): for every state (x_t, omega_t) of Algorithm 2 (round
  t <= T - 2, every prefix chi_0..chi_{t-1} of positive probability) the conditional
  expectation E_t f(x_{t+1}) - f(x_t), exactly: the probability-weighted sum over the 2^N
  outcomes of chi_t (:func:`conditional_next`), with the state's grad_norm2 = ||grad f(x_t)||^2,
  q_t = (1/N) sum_n p_n (omega_t^n)^2 and werr_t = (1/N) sum_n (p_n omega_t^n - 1)^2.
* ``local_drift`` (Lemma B.3.2, f~ = f, deltat = delta = max_n ||t_n|| exact: the tilts): for
  every state and path, max over the round's participants and local steps of
  ||y^n_{t,i} - x_t||^2 (toys' ``local_deviation``), with grad_norm2 = ||grad f(x_t)||^2.
  sigma = 0: the local iterates are deterministic given x_t, E_t is the value itself.
* ``S_sampled`` (Corollary 4, App. A.3 equiprobable sampling): every p_n = S/N, S in 1..N
  searched (from the first probability variable), omega_n = 1/p_n (W = 0, the corollary's
  premise), Algorithm 1 with those constant weights; S_sampled = N p is the instance's.

>>> conditional_next(np.array([1.0, 3.0]), np.array([0.25]), 0, 1).tolist()  # 3/4 1 + 1/4 3
[1.5, 1.5]
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["regime", "measured", "accepts", "omega_of", "sampled_probabilities",
           "as_quadratic", "h_setup", "conditional_next", "round_stats", "state_arrays",
           "STATE_LHS"]

#: the left-hand sides judged per state (round, path), not as a mean over the rounds
STATE_LHS = ("one_round_descent", "local_drift")


def regime(lhs: str, names) -> str:
    """``"h"`` (Theorem B.4.1: constant omega = E[S^K], the reweighted objective), ``"known"``
    (equiprobable p_n = S/N, omega = 1/p_n: a bound naming ``S_sampled``) or ``"alg2"``
    (Algorithm 2's omega_t, every other FedAU bound).

    >>> regime("avg_grad_norm2_h", {"H"}), regime("avg_grad_norm2", {"S_sampled"})
    ('h', 'known')
    """
    if lhs == "avg_grad_norm2_h":
        return "h"
    return "known" if "S_sampled" in set(names) else "alg2"


def measured(lhs: str, names) -> tuple:
    """The per-instance parameters this module gives a bound of ``lhs`` naming ``names``."""
    per = {"h": ("H", "P", "Q", "deltat"), "known": ("S_sampled",), "alg2": ()}
    out = per[regime(lhs, names)] + (("deltat",) if lhs == "local_drift" else ())
    return tuple(k for k in out if k in set(names))


def accepts(plan, family) -> bool:
    """Whether ``family`` gives this plan's quantities: h* exists in closed form on quadratics
    only (Theorem B.4.1)."""
    return regime(plan.lhs, ()) != "h" or family.name == "quadratic"


def omega_of(reg: str, p, K: float) -> np.ndarray:
    """The time-constant weights (P, N) of regime ``reg`` at probabilities ``p`` (P, N):
    E[S_n] (cutoff K, :func:`verify.checks.weight_error_descent.cutoff_mean`) or 1/p_n."""
    from ..checks.weight_error_descent import cutoff_mean

    p = np.asarray(p, dtype=float)
    if reg == "known" or math.isinf(K):
        return 1.0 / p
    return cutoff_mean(p, K)


def sampled_probabilities(zp, n_clients: int):
    """``(S (P,), p (P, N))``: S = 1 + floor(N (z + 1) / 2) clipped to 1..N from the first
    variable, every p_n = S / N.

    >>> sampled_probabilities(np.array([[-1.0, 0.3], [1.0, 0.0]]), 2)[0].tolist()
    [1.0, 2.0]
    """
    z = np.clip(np.atleast_2d(np.asarray(zp, dtype=float))[:, 0], -1, 1)
    S = np.clip(1.0 + np.floor(n_clients * (z + 1.0) / 2.0), 1.0, float(n_clients))
    return S, np.repeat((S / n_clients)[:, None], n_clients, axis=1)


def as_quadratic(prob, weights=None):
    """The tilted quadratic ``prob`` (``families.tilt.TiltedProblem`` over a
    ``toys.Quadratic`` with one Hessian) as a ``toys.Quadratic``: F_n(x) = 1/2 (x - c_n)^T A
    (x - c_n) + b_n + t_n^T (x - x*) = 1/2 (x - c'_n)^T A (x - c'_n) + b'_n, c'_n = c_n -
    A^{-1} t_n, b'_n = b_n + t_n^T (c_n - x*) - 1/2 t_n^T A^{-1} t_n; ``weights`` its data
    weights (default the base's)."""
    import toys

    base, t = prob.base, np.asarray(prob.t, dtype=float)
    A, c = np.asarray(base.A, dtype=float), np.asarray(base.c, dtype=float)
    b = np.zeros(A.shape[0]) if base.b is None else np.asarray(base.b, dtype=float)
    s = np.linalg.solve(A, t[..., None])[..., 0]  # A_n^{-1} t_n
    b2 = b + np.einsum("nd,nd->n", t, c - np.asarray(base.x_star)) - 0.5 * np.einsum(
        "nd,nd->n", t, s)
    return toys.Quadratic(A, c - s, b2, weights=base.p if weights is None else weights,
                          name="falsify quadratic + tilts")


def h_setup(prob, x0, p, K: float) -> dict:
    """Theorem B.4.1's h on one tilted quadratic at participation probabilities ``p`` (N,):
    ``{"problem": the quadratic with data weights phi (its F is h), "omega_run": the weights
    P / (N p_n) of its run, "omega": omega_n, "H", "P", "Q", "deltat"}`` (module docstring)."""
    from ..checks.weight_error_descent import h_values, reweighted

    p = np.asarray(p, dtype=float)
    omega = omega_of("h", p[None], K)[0]
    quad = as_quadratic(prob)
    rw = reweighted(quad, p, omega)
    H = max(float(h_values(quad, rw, np.asarray(x0, dtype=float))[0]) - rw.h_star, 0.0)
    return {"problem": as_quadratic(prob, weights=rw.phi), "omega": omega,
            "omega_run": rw.P / (p.size * p), "H": H, "P": rw.P, "Q": rw.Q,
            "deltat": rw.deltat}


def _outcomes(p) -> np.ndarray:
    """(2^N,) the probabilities of the outcomes of one round (bit n of the index: chi^n)."""
    p = np.asarray(p, dtype=float)
    bits = (np.arange(2 ** p.size)[:, None] >> np.arange(p.size)[None, :]) & 1
    return np.prod(np.where(bits == 1, p[None, :], 1.0 - p[None, :]), axis=1)


def conditional_next(v, p, t: int, n_rounds: int) -> np.ndarray:
    """E[v | chi_0..chi_{t-1}] (B,) of a value ``v`` (B,) of every path (rounds 0..n_rounds-1
    random, path b's round-r outcome in bits r N .. (r+1) N - 1 of b, as
    :func:`verify.falsify.fedau_paths.paths`) that depends on chi_0..chi_t only: the weighted
    sum over round t's outcomes, given back on every path of the prefix."""
    p = np.asarray(p, dtype=float)
    N, v = p.size, np.asarray(v, dtype=float)
    w = _outcomes(p)
    shape = (2 ** (N * (n_rounds - t - 1)), 2 ** N, 2 ** (N * t))
    V = np.where(w[None, :, None] > 0, v.reshape(shape), 0.0)
    E = np.einsum("hml,m->hl", V, w)
    return np.broadcast_to(E[:, None, :], shape).reshape(-1)


def round_stats(p, omega):
    """``(werr (P, B, T), q (P, B, T))``: (1/N) sum_n (p_n omega_t^n - 1)^2 and (1/N) sum_n
    p_n (omega_t^n)^2 of every round and path (``p`` (P, N), ``omega`` (B, T, N))."""
    p = np.asarray(p, dtype=float)[:, None, None, :]
    return np.mean((p * omega[None] - 1.0) ** 2, axis=-1), np.mean(p * omega[None] ** 2, axis=-1)


def _prefix_ok(masks, p, t: int) -> np.ndarray:
    """(B,) whether the path's rounds < t have positive probability."""
    sure = np.asarray(p, dtype=float) >= 1.0
    return np.all(masks[:, :t] | ~sure[None, None, :], axis=(1, 2))


def state_arrays(lhs: str, qq: dict, masks, p, omega) -> dict:
    """The per-state run arrays (1, K) of ``lhs`` (one of :data:`STATE_LHS`) from the path
    quantities ``qq`` ({name: (B, ...)}) of one instance, its path ``masks`` (B, T, N),
    probabilities ``p`` (N,) and Algorithm 2's ``omega`` (B, T, N); states of probability 0
    are NaN (never judged)."""
    from .. import measures

    B, T, _ = masks.shape
    g2 = np.asarray(qq["grad_norm2"], dtype=float)
    if lhs == "local_drift":
        dev = measures.measure("local_deviation", qq)[0]  # (B, T): toys' local deviation
        ok = np.stack([_prefix_ok(masks, p, t) for t in range(T)], axis=1)
        return {"local_drift_t": np.where(ok, dev, np.nan).T.reshape(1, -1),
                "local_drift_grad_norm2": g2[:, :T].T.reshape(1, -1)}
    loss = np.asarray(qq["loss"], dtype=float)
    werr, q = round_stats(np.asarray(p)[None], omega)
    out = {k: [] for k in ("descent_t", "descent_grad_norm2", "descent_q_t", "descent_werr_t")}
    for t in range(T - 1):  # the rounds (a few): round T - 1's outcome is not enumerated
        d = conditional_next(loss[:, t + 1], p, t, T - 1) - loss[:, t]
        out["descent_t"].append(np.where(_prefix_ok(masks, p, t), d, np.nan))
        out["descent_grad_norm2"].append(g2[:, t])
        out["descent_q_t"].append(q[0, :, t])
        out["descent_werr_t"].append(werr[0, :, t])
    return {k: np.concatenate(v)[None] for k, v in out.items()}
