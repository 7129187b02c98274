"""Ridge sums: clients F_i(x) = sum_j w_ij h(a_ij^T x - b_ij; delta_ij) + mu/2 ||x - c_i||^2.

``h`` is a one-dimensional convex profile with h(0) = h'(0) = 0 and 0 <= h'' <= 1:

* ``huber``: h(s) = s^2/2 for |s| <= delta, delta |s| - delta^2/2 beyond (the profile of the
  exact worst case of gradient descent, Drori and Teboulle 2014);
* ``softplus``: h(s) = delta^2 log cosh(s / delta) = delta^2 (softplus(2s/delta) - s/delta -
  log 2), smooth and strictly convex.

The weights are scaled so that lambda_max(sum_j w_ij a_ij a_ij^T) = L - mu for every client:
each F_i is then L-smooth and mu-strongly convex **by construction** (its Hessian lies between
mu I and (L - mu) I + mu I). With ``mu = 0`` the ridges of every client pass through one common
point x_c (b_ij = a_ij^T x_c): x* = x_i* = x_c and F* = F_i* = 0 exactly. With ``mu > 0`` the
offsets b_ij and centres c_i are free and the optima are solved by a batched damped Newton method
(gradient norm <= 1e-12).

Every function here takes arrays with any leading batch axes (..., N, m, d), so the single
problem (:class:`RidgeSum`, a ``toys.FederatedProblem``) and a stacked population
(:class:`StackedRidge`) share one implementation.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from toys.problems.base import FederatedProblem

__all__ = ["RidgeSum", "StackedRidge", "ridge_arrays", "PROFILES", "CLIENT_KEYS", "grad_sup2"]

_LOG2 = math.log(2.0)


def _huber(s, delta):
    a = np.abs(s)
    return np.where(a <= delta, 0.5 * s * s, delta * a - 0.5 * delta * delta)


def _logcosh(s, delta):
    u = np.abs(s / delta)
    return delta * delta * (u + np.log1p(np.exp(-2.0 * u)) - _LOG2)


PROFILES = {
    "huber": (_huber, lambda s, d: np.clip(s, -d, d), lambda s, d: (np.abs(s) < d) * 1.0),
    "softplus": (_logcosh, lambda s, d: d * np.tanh(s / d),
                 lambda s, d: 1.0 / np.cosh(np.minimum(np.abs(s / d), 350.0)) ** 2),
}


def _s(arr, W):
    return np.einsum("...md,...d->...m", arr["a"], W) - arr["b"]


def losses(arr, W):
    """F_i(W_i): W (..., N, d) -> (..., N)."""
    h = PROFILES[arr["profile"]][0]
    s = _s(arr, W)
    quad = 0.5 * arr["mu"] * np.sum((W - arr["c"]) ** 2, axis=-1)
    return np.sum(arr["w"] * h(s, arr["delta"]), axis=-1) + quad


def grads(arr, W):
    """grad F_i(W_i): (..., N, d) -> (..., N, d)."""
    dh = PROFILES[arr["profile"]][1]
    s = _s(arr, W)
    return np.einsum("...m,...md->...d", arr["w"] * dh(s, arr["delta"]), arr["a"]) \
        + arr["mu"] * (W - arr["c"])


def hessians(arr, W):
    """Hessians of F_i at W_i: (..., N, d, d)."""
    d2h = PROFILES[arr["profile"]][2]
    s = _s(arr, W)
    H = np.einsum("...m,...md,...me->...de", arr["w"] * d2h(s, arr["delta"]), arr["a"], arr["a"])
    return H + arr["mu"] * np.eye(W.shape[-1])


def ridge_arrays(Z, spec, profile: str, m: int) -> dict:
    """The arrays of a population Z (P, n_vars) (see :func:`n_vars`), constants by construction."""
    P, N, d = Z.shape[0], int(spec.n_clients), int(spec.dim)
    Z = np.clip(np.asarray(Z, dtype=float), -1.0, 1.0)
    pos = 0

    def take(*shape):
        nonlocal pos
        k = int(np.prod(shape))
        out = Z[:, pos:pos + k].reshape(P, *shape)
        pos += k
        return out

    a = take(N, m, d).copy()
    norms = np.linalg.norm(a, axis=-1, keepdims=True)
    a = np.where(norms > 1e-9, a / np.maximum(norms, 1e-300), np.eye(d)[0])
    w = 0.05 + (take(N, m) + 1.0) / 2  # in [0.05, 1.05]: every ridge counts
    delta = spec.D * 10.0 ** (2.0 * take(N, m) - 1.0)  # in [D/1000, 10 D]
    off_b, off_c, u = take(N, m), take(N, d), take(d)
    M = np.einsum("pnm,pnmd,pnme->pnde", w, a, a)
    top = np.linalg.eigvalsh(M)[..., -1]
    w = w * ((spec.L - spec.mu) / top)[..., None]
    nu = np.linalg.norm(u, axis=-1, keepdims=True)
    u = np.where(nu > 1e-9, u / np.maximum(nu, 1e-300), np.eye(d)[0])
    if spec.mu > 0:
        b, c = spec.D * off_b, spec.D * off_c
    else:
        b, c = np.zeros((P, N, m)), np.zeros((P, N, d))
    return {"profile": profile, "a": a, "b": b, "w": w, "delta": delta, "c": c,
            "mu": float(spec.mu), "u": u, "common": spec.mu == 0, "D": float(spec.D)}


def n_vars(spec, m: int) -> int:
    N, d = int(spec.n_clients), int(spec.dim)
    return N * m * (d + 3) + N * d + d


def grad_sup2(arr, p) -> np.ndarray:
    """sup_x ||grad F(x)||^2 of F = sum_i p_i F_i for arrays with leading batch axes
    (..., N, m, d) -> (...): inf when mu > 0 (unbounded). Both profiles have |h'| <= delta
    (Huber: attained, softplus: approached), so grad F lies in {sum_ij c_ij p_i w_ij a_ij :
    |c_ij| <= delta_ij}, whose largest norm is at a vertex c = +-delta. Identical clients (a
    tilted population's shared function) count once, and then, m ridges with independent
    directions in d >= m, every vertex is approached (s = A x is onto): the supremum exactly;
    otherwise the vertex maximum is an upper bound.

    >>> a = np.eye(2)[None, None]                       # one client, ridges e_1, e_2
    >>> arr = {"a": a, "w": np.ones((1, 1, 2)), "delta": np.array([[[1.0, 2.0]]]), "mu": 0.0}
    >>> float(grad_sup2(arr, np.ones(1))[0])            # ||(1, 2)||^2
    5.0
    """
    a, w, dl = (np.asarray(arr[k], dtype=float) for k in ("a", "w", "delta"))
    if float(arr.get("mu", 0.0)) > 0:
        return np.full(a.shape[:-3], np.inf)
    p = np.asarray(p, dtype=float)
    same = all(np.array_equal(x, np.broadcast_to(x[..., :1, :], x.shape))
               for x in (a, w[..., None], dl[..., None]))
    if same:  # sum_i p_i (one function) = that function
        v = (w * dl)[..., 0, :, None] * a[..., 0, :, :]
    else:
        v = (p[:, None] * w * dl)[..., None] * a
        v = v.reshape(*v.shape[:-3], -1, v.shape[-1])
    k = v.shape[-2]
    signs = 1.0 - 2.0 * ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1)
    g = np.einsum("sk,...kd->...sd", signs, v)
    return np.max(np.sum(g * g, axis=-1), axis=-1)


_KEYS = ("a", "b", "w", "delta", "c")
#: the per-client arrays (axis 1 of a population's arrays)
CLIENT_KEYS = _KEYS


def solve_optima(arr, p, W0):
    """x* of sum_i p_i F_i for every population row: W0 (P, d) start -> (P, d)."""
    from toys.problems._newton import newton

    arr = {k: arr[k] for k in (*_KEYS, "profile", "mu")}

    def fun(X):
        return np.einsum("n,pn->p", p, losses(arr, X[:, None, :]))

    def grad(X):
        return np.einsum("n,pnd->pd", p, grads(arr, X[:, None, :]))

    def hess(X, rows):
        sub = {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in arr.items()}
        return np.einsum("n,pnde->pde", p, hessians(sub, X[rows][:, None, :]))

    return newton(fun, grad, W0, hess=hess)


def client_optima(arr):
    """``(x_i* (P, N, d), F_i* (P, N))``: every client of every population row minimised on its
    own (one batched Newton solve, as :class:`RidgeSum` does for one problem; exactly 0 when
    the ridges share a point)."""
    P, N, _, d = arr["a"].shape
    if arr["common"]:
        return np.zeros((P, N, d)), np.zeros((P, N))
    per = {k: arr[k].reshape(P * N, 1, *arr[k].shape[2:]) for k in _KEYS}
    per.update(profile=arr["profile"], mu=arr["mu"])
    X = solve_optima(per, np.ones(1), np.zeros((P * N, d)))
    return X.reshape(P, N, d), losses(per, X[:, None, :])[:, 0].reshape(P, N)


class StackedRidge:
    """A population of ridge-sum problems (row k = instance k), for toys.run_many;
    ``F_star_i`` (P, N) the clients' own minima (solved on first use)."""

    def __init__(self, arr, p):
        self.arr, self.p = arr, np.asarray(p, dtype=float)
        P, N, _, d = arr["a"].shape
        if arr["common"]:
            self.x_star = np.zeros((P, d))
        else:
            self.x_star = solve_optima(arr, self.p, np.zeros((P, d)))
        self.F_star = np.einsum("n,pn->p", self.p, losses(arr, self.x_star[:, None, :]))
        self.x0 = self.x_star + arr["D"] * arr["u"]

    @functools.cached_property
    def F_star_i(self):
        return client_optima(self.arr)[1]

    def losses(self, W):
        return losses(self.arr, W)

    def grads(self, W):
        return grads(self.arr, W)


class RidgeSum(FederatedProblem):
    """One ridge-sum federated problem (see the module docstring); ``arr`` holds one row of
    :func:`ridge_arrays` (arrays (N, m, d), (N, m), (N, d))."""

    kind = "ridge"

    def __init__(self, arr, p=None, name="ridge sum"):
        self.arr = arr
        N, m, d = arr["a"].shape
        self.name, self.n_clients, self.dim = name, N, d
        self.p = np.full(N, 1.0 / N) if p is None else np.asarray(p, dtype=float)
        self.counts = np.ones(N, dtype=int)
        if arr["common"]:
            self.x_star, self.F_star = np.zeros(d), 0.0
            self.x_star_i, self.F_star_i = np.zeros((N, d)), np.zeros(N)
        else:
            arr = {k: arr[k] for k in (*_KEYS, "profile", "mu", "common", "D", "u")}
            one = {k: (v[None] if isinstance(v, np.ndarray) else v) for k, v in arr.items()}
            self.x_star = solve_optima(one, self.p, np.zeros((1, d)))[0]
            self.F_star = self.F(self.x_star)
            per = {k: (arr[k][:, None] if k in _KEYS else arr[k])
                   for k in (*_KEYS, "profile", "mu")}
            self.x_star_i = solve_optima(per, np.ones(1), np.zeros((N, d)))
            self.F_star_i = losses(arr, self.x_star_i)

    def losses(self, W):
        return losses(self.arr, self._broadcast(W))

    def grads(self, W):
        return grads(self.arr, self._broadcast(W))

    def hvps(self, W, V):
        return np.einsum("nde,ne->nd", hessians(self.arr, self._broadcast(W)), V)

    def minibatch_grads(self, W, rng, batch_size):
        return self.grads(W)  # sample-free and noise-free: every gradient is exact

    def arrays(self):
        return {k: v for k, v in self.arr.items() if isinstance(v, np.ndarray)}
