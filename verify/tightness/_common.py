"""Shared pieces of the PEP models: input validation, the cached solve, the federated setup.

:class:`Federation` declares the client functions of one PEP and offers the operations every
federated method is made of: a client gradient at a point (imposing the dissimilarity and
gradient-bound assumptions there), the local steps of FedAvg / FedProx / the beta-perturbed
method, aggregation, and the global objective's value.

Example
-------
>>> from verify.tightness._common import check_pos
>>> check_pos("eta", 0.1)
0.1
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import pathlib

import numpy as np

from boundlab.errors import DomainError

from ._solve import TIGHT, PEPRecord, solve_pep
from .cache import PEPCache
from .certificate import certified_hit, problem_rows, rows_digest, uncertified_claim

__all__ = [
    "CACHE_ONLY",
    "ZETA_AT",
    "Federation",
    "NotCached",
    "SHIPPED",
    "cached_solve",
    "check_choice",
    "check_int",
    "check_nonneg",
    "check_pos",
    "check_weights",
    "resolve_cache",
]

#: when set (by :func:`verify.tightness.bracket` with ``cache_only=True``), a cache miss raises
#: :class:`NotCached` instead of solving
CACHE_ONLY: contextvars.ContextVar = contextvars.ContextVar("boundlab_pep_cache_only",
                                                            default=False)


#: cleared while a caller draws its own progress display on stderr (``boundlab tightness
#: --vary``): the per-solve spinner then stays off instead of fighting it for the line
SPINNER: contextvars.ContextVar = contextvars.ContextVar("boundlab_pep_spinner", default=True)


class NotCached(LookupError):
    """Raised on a cache miss while :data:`CACHE_ONLY` is set."""


#: where the dissimilarity bound is imposed: at x* only, or at x* and every point where a
#: gradient is evaluated
ZETA_AT = ("x*", "visited")


def _real(name, value, domain):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise DomainError(name, value, domain, "not a real number")
    v = float(value)
    if not math.isfinite(v):
        raise DomainError(name, value, domain)
    return v


def check_pos(name: str, value, upper: float | None = None, upper_text: str = "") -> float:
    """A finite real > 0 (and <= ``upper`` when given).

    >>> check_pos("L", 2)
    2.0
    """
    dom = f"positive real (0, {upper_text or 'inf'})" + ("]" if upper is not None else "")
    v = _real(name, value, dom)
    if v <= 0 or (upper is not None and v > upper * (1 + 1e-12)):
        raise DomainError(name, value, dom)
    return v


def check_nonneg(name: str, value) -> float:
    """A finite real >= 0.

    >>> check_nonneg("zeta", 0)
    0.0
    """
    v = _real(name, value, "non-negative real [0, inf)")
    if v < 0:
        raise DomainError(name, value, "non-negative real [0, inf)")
    return v


def check_int(name: str, value, lo: int = 1, hi: int | None = None) -> int:
    """An integer in ``[lo, hi]``.

    >>> check_int("tau", 3)
    3
    """
    dom = f"integer >= {lo}" if hi is None else f"integer in [{lo}, {hi}]"
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float, np.floating)):
        raise DomainError(name, value, dom)
    if isinstance(value, (float, np.floating)) and not float(value).is_integer():
        raise DomainError(name, value, dom)
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        raise DomainError(name, value, dom)
    return v


def check_choice(name: str, value, choices) -> str:
    """One of ``choices``.

    >>> check_choice("zeta_at", "x*", ("x*", "visited"))
    'x*'
    """
    if value not in choices:
        raise DomainError(name, value, "one of " + ", ".join(map(repr, choices)))
    return value


def check_weights(name: str, value, n: int, *, allow_zero: bool = True) -> np.ndarray:
    """A probability vector of length ``n`` (default uniform).

    >>> check_weights("weights", None, 2).tolist()
    [0.5, 0.5]
    """
    dom = f"{n} non-negative reals summing to 1"
    if value is None:
        return np.full(n, 1.0 / n)
    try:
        w = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DomainError(name, value, dom) from None
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) \
            or abs(w.sum() - 1.0) > 1e-9 or (not allow_zero and np.any(w == 0)):
        raise DomainError(name, value, dom if allow_zero else dom.replace("non-negative",
                                                                           "positive"))
    return w


def resolve_cache(cache) -> PEPCache | None:
    """``True`` -> default directory, ``False``/``None`` -> no cache, a path or a PEPCache."""
    if cache is True:
        return PEPCache()
    if cache is False or cache is None:
        return None
    if isinstance(cache, PEPCache):
        return cache
    return PEPCache(cache)


#: PEP results shipped with boundlab (read-only): the README's examples, so they finish in
#: seconds on a fresh install; consulted after the user's cache, and checked the same way
SHIPPED = pathlib.Path(__file__).with_name("shipped_cache")


def cached_solve(method: str, fclass: str, norm: dict, build, *, cache, solver,
                 tol: float | None = None, tol_proof: float | None = None,
                 scale_floor: float | None = None, use: str | None = None) -> dict:
    """Solve the normalized PEP (or read it from the cache); returns the raw result dict.

    ``norm`` holds every normalized parameter the PEP depends on (the cache key); ``build(pb)``
    declares the PEP. The dict carries ``cached`` (bool). The user's cache is read first, then
    the shipped one (:data:`SHIPPED`); an entry is used only when its seal matches this PEP's
    data and its bracket is recomputed from its certificate
    (:func:`verify.tightness.certificate.verify_result`); a refused entry warns and the PEP is
    solved. A solve shows a rich status line on a terminal. A solve under
    :data:`verify.tightness._solve.TIGHT` has its own cache key.
    """
    store = resolve_cache(cache)
    extra = {"_tight": True} if TIGHT.get() else {}
    key = store.key(method, fclass, {**norm, "_solver": solver, **extra}) if store else None
    settings = {"tol": tol, "tol_proof": tol_proof, "scale_floor": scale_floor, "use": use}
    problem = None
    if store is not None:
        hit, problem = certified_hit((store, PEPCache(SHIPPED, read_only=True)), key, build,
                                     settings)
        if hit is not None:
            return {**hit, "cached": True}
    if CACHE_ONLY.get():
        raise NotCached(method)
    kw = {k: v for k, v in settings.items() if v is not None}
    with _progress(method, norm):
        out = solve_pep(build, solver=solver, **kw)
    out["cached"] = False
    # a retry's answer is kept even when not ok (it is marked so): it is the final word;
    # an infeasible / unbounded claim has no certificate and is solved again when asked
    if store is not None and (out["ok"] or TIGHT.get()) and not uncertified_claim(out):
        if problem is None:
            problem = problem_rows(build)
        store.put(key, {k: v for k, v in out.items() if k != "cached"}, rows_digest(problem))
    return out


@contextlib.contextmanager
def _progress(method: str, norm: dict):
    """A rich status line (spinner, elapsed time) on stderr while a PEP is solved; nothing when
    stderr is not a terminal or :data:`SPINNER` is cleared."""
    import sys

    if not sys.stderr.isatty() or not SPINNER.get():
        yield
        return
    from rich.console import Console

    what = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in norm.items() if k in ("kind", "tau", "T", "t", "E", "n"))
    tight = " (tighter solver settings)" if TIGHT.get() else ""
    with Console(stderr=True).status(f"solving PEP {method} [{what}]{tight} ..."):
        yield


def record_from(method, raw, *, scale, params, theoretical=None, relaxed=(), lower=True,
                n_solves=1, detail=None) -> PEPRecord:
    """De-normalize a raw result into a :class:`PEPRecord` (values times ``scale``)."""
    def sc(v):
        return None if v is None else float(v) * scale

    return PEPRecord(
        method=method, value=sc(raw["value"]), lower=sc(raw["lower"]) if lower else None,
        theoretical=theoretical, solver=raw["solver"], status=raw["status"],
        gap=sc(raw["gap"]), seconds=float(raw["seconds"]), cached=bool(raw["cached"]),
        ok=bool(raw["ok"]), gram_size=int(raw["gram_size"]), params=dict(params),
        relaxed=tuple(relaxed), errors=dict(raw.get("errors") or {}), n_solves=n_solves,
        detail=dict(detail or {}))


def grid_up(z, step):
    """Smallest point ``(1 + step)^j >= z`` of a geometric grid (``z`` itself if step = 0).

    >>> grid_up(1.0, 0.0), round(grid_up(1.0005, 1e-3), 6)
    (1.0, 1.001)
    """
    if step <= 0 or z <= 0:
        return z
    j = math.ceil(math.log(z) / math.log1p(step) - 1e-9)
    up = math.exp(j * math.log1p(step))
    while up < z:
        j += 1
        up = math.exp(j * math.log1p(step))
    return up


def chain_record(method, raws, value, theory, params, relaxed):
    """One record for a chain of one-round solves (upper bound only: ``lower = None``)."""
    if not raws:  # nothing to solve (the state is exactly 0)
        return PEPRecord(method=method, value=float(value), lower=None, theoretical=theory,
                         status="chained: state 0", params=params, relaxed=tuple(relaxed),
                         n_solves=0)
    ok = all(w["ok"] for w in raws) and all(w["value"] is not None for w in raws)
    gaps = [w["gap"] for w in raws if w["gap"] is not None]
    return PEPRecord(
        method=method, value=float(value) if ok else None, lower=None, theoretical=theory,
        solver=",".join(sorted({w["solver"] for w in raws})),
        status="chained: " + ",".join(sorted({w["status"] for w in raws})),
        gap=max(gaps) if gaps else None, seconds=float(sum(w["seconds"] for w in raws)),
        cached=all(w["cached"] for w in raws), ok=ok,
        gram_size=max(w["gram_size"] for w in raws), params=params, relaxed=tuple(relaxed),
        errors={k: max(w["errors"].get(k, 0.0) for w in raws)
                for k in ("primal_psd", "primal_constraints", "dual_psd", "dual_sign", "proof")},
        n_solves=len(raws))


class Federation:
    """The client functions of one PEP and the operations of local-update methods.

    Parameters
    ----------
    pb : PEPit.PEP
    n : int
        Number of clients.
    L, mu : float
        Every client is L-smooth and mu-strongly convex (``mu = 0``: convex).
    weights : array
        ``p``; the global objective is ``F = sum_i p_i f_i`` and ``x*`` its minimizer.
    zeta : float or None
        Dissimilarity bound ``||grad f_i(x) - grad F(x)|| <= zeta`` imposed at ``x*`` (where it
        reads ``||grad f_i(x*)|| <= zeta``) and, with ``zeta_at = "visited"``, at every point
        where a client gradient is evaluated. ``None``: not imposed.
    G : float or None
        ``||grad f_i(y)|| <= G`` at every point ``y`` where client ``i`` queries its gradient
        (and wherever :meth:`bound_gradient` is called). ``None``: not imposed.
    Gamma : float or None
        ``F(x*) - sum_i p_i min f_i <= Gamma`` (declares each client's minimizer).
    """

    def __init__(self, pb, n, L, mu, weights, *, zeta=None, zeta_at="x*", G=None, Gamma=None):
        from PEPit.functions import SmoothConvexFunction, SmoothStronglyConvexFunction

        self.pb, self.n, self.p = pb, n, np.asarray(weights, dtype=float)
        if mu > 0:
            self.fs = [pb.declare_function(SmoothStronglyConvexFunction, L=L, mu=mu)
                       for _ in range(n)]
        else:
            self.fs = [pb.declare_function(SmoothConvexFunction, L=L) for _ in range(n)]
        self.F = _combine(self.fs, self.p)
        if zeta is not None and zeta == 0:
            # x* minimizes every client: declare zero gradients there (exact), rather than the
            # degenerate constraints ||grad f_i(x*)||^2 <= 0, which cost ~1e-6 of accuracy
            from PEPit.expression import Expression
            from PEPit.point import Point

            self.xs = Point()
            for f in self.fs:
                f.add_point((self.xs, Point(is_leaf=False, decomposition_dict={}), Expression()))
        else:
            self.xs = self.F.stationary_point()
        self.Fs = self.F(self.xs)
        self.zeta, self.zeta_at, self.G = zeta, zeta_at, G
        self._seen: set = set()
        #: when True, :meth:`grad` does not impose the dissimilarity (the caller does it later
        #: with :meth:`impose_dissimilarity`, e.g. after defining a gradient by an equation)
        self.defer_visited = False
        if zeta is not None and zeta > 0:
            for f in self.fs:
                pb.add_constraint(f.gradient(self.xs) ** 2 <= zeta ** 2)
        if Gamma is not None:
            star = []
            for f in self.fs:
                xi = f.stationary_point()
                star.append(f(xi))
            pb.add_constraint(self.Fs - _lincomb(star, self.p) <= Gamma)

    # ------------------------------------------------------------------ oracles
    def grad(self, i, y):
        """Gradient of client ``i`` at ``y``, imposing the assumptions made at queried points."""
        g = self.fs[i].gradient(y)
        if self.G is not None:
            self.pb.add_constraint(g ** 2 <= self.G ** 2)
        if not self.defer_visited:
            self.impose_dissimilarity(y)
        return g

    def impose_dissimilarity(self, y):
        """``||grad f_j(y) - grad F(y)|| <= zeta`` for every client (``zeta_at="visited"``)."""
        if self.zeta is not None and self.zeta_at == "visited" and id(y) not in self._seen:
            self._seen.add(id(y))
            gs = [f.gradient(y) for f in self.fs]
            gbar = _lincomb(gs, self.p)
            for gj in gs:
                self.pb.add_constraint((gj - gbar) ** 2 <= self.zeta ** 2)

    def bound_gradient(self, i, y):
        """Impose ``||grad f_i(y)|| <= G`` at a point the method visits without querying it."""
        if self.G is not None:
            self.pb.add_constraint(self.fs[i].gradient(y) ** 2 <= self.G ** 2)

    def value(self, x):
        """``F(x) - F(x*)``."""
        return self.F(x) - self.Fs

    def dist2(self, x):
        """``||x - x*||^2``."""
        return (x - self.xs) ** 2

    # ------------------------------------------------------------------ local methods
    def local_run(self, i, x0, tau, eta, *, prox=0.0, beta=1.0, u=None):
        """``tau`` local steps of client ``i`` from ``x0``; returns ``[y_0 = x0, ..., y_tau]``.

        * FedAvg: ``y <- y - eta grad f_i(y)``;
        * FedProx, gradient-step version (BC eq. (11), DKR §5.6):
          ``y <- y - eta (grad f_i(y) + prox (y - x0))``;
        * beta-perturbed (BC Alg. 1): ``y <- y - eta grad f_i(beta y + (1 - beta) u)``.
        """
        ys = [x0]
        y = x0
        for _ in range(tau):
            if beta != 1.0:
                q = beta * y + (1.0 - beta) * u
                self.bound_gradient(i, y)
                y = y - eta * self.grad(i, q)
            else:
                step = self.grad(i, y)
                if prox:
                    step = step + prox * (y - x0)
                y = y - eta * step
            ys.append(y)
        return ys

    @staticmethod
    def aggregate(x0, ends, coeffs):
        """``x0 + sum_i c_i (y_i - x0)`` (clients with ``c_i = 0`` are skipped)."""
        x = x0
        for y, c in zip(ends, coeffs):
            if c != 0.0:
                x = x + float(c) * (y - x0)
        return x


def _combine(fs, p):
    out = None
    for f, w in zip(fs, p):
        if w == 0.0:
            continue
        term = float(w) * f
        out = term if out is None else out + term
    return out


def _lincomb(items, p):
    out = None
    for it, w in zip(items, p):
        if w == 0.0:
            continue
        term = float(w) * it
        out = term if out is None else out + term
    return out
