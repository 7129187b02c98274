"""The constants a bound needs -- L, mu, Gamma, zeta, sigma^2, G^2, D -- measured on a problem,
each with how it was obtained.

``how`` is ``"exact"`` (closed form or solved to machine precision), ``"bound"`` (a valid upper
bound for L, zeta; a valid lower bound for mu) or ``"estimate(...)"`` (a measured maximum over
the points named in the parentheses: a lower estimate of the supremum). Spec:
seeds-000-001-004 §2 (A1-A4, DKR 5-7), seeds-002-003 §2.

Regions. zeta and G^2 are suprema that are infinite on all of R^d for strongly convex clients
with unequal Hessians, so they are taken over an explicit region, reported in
``Constants.region``:

* quadratics: the closed ball B(x*, R) with R = ``radius`` or, by default, the largest distance
  from x* to x_ref, to the trajectory points and to the client optima x_i* (exact: a
  trust-region problem per client);
* logistic problems: all of R^d (the data part of every client gradient is bounded; the l2 part
  cancels in grad F_i - grad F). One-parameter problems (d = 1, e.g. the seed-004 toy) get exact
  suprema over R by a 1-D global search; otherwise zeta is a bound, G^2 is measured at points.

Example
-------
>>> import toys
>>> prob = toys.quadratic(n_clients=3, dim=2, L=5.0, mu=0.5, heterogeneity=1.0, seed=0)
>>> c = toys.constants(prob)
>>> sorted(c.as_params())
['D', 'G', 'Gamma', 'L', 'mu', 'sigma', 'zeta']
>>> c.zeta.how, c.sigma2.value
('exact', 0.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Constants", "Value", "constants"]

_PARAM_NAMES = ("L", "mu", "Gamma", "zeta", "sigma", "G", "D")


@dataclass(frozen=True)
class Value:
    """A measured constant: ``value``, ``how`` (exact / bound / estimate(...)) and a ``note``.

    >>> v = Value(0.19, "bound", "Boehning bound")
    >>> v.kind, float(v)
    ('bound', 0.19)
    """

    value: float
    how: str
    note: str = ""

    @property
    def kind(self) -> str:
        """``exact``, ``bound`` or ``estimate``."""
        return self.how.split("(", 1)[0]

    def __float__(self) -> float:
        return float(self.value)

    def to_dict(self) -> dict:
        """JSON-ready dict.

        >>> Value(1.0, "exact").to_dict()
        {'value': 1.0, 'how': 'exact', 'note': ''}
        """
        return {"value": _jsonable(self.value), "how": self.how, "note": self.note}


@dataclass(frozen=True)
class Constants:
    """The constants of one problem (see the module docstring for the definitions).

    Fields: ``L`` (max_i L_i), ``L_F`` (smoothness of F), ``mu`` (min_i mu_i), ``mu_F``,
    ``Gamma``, ``zeta``, ``sigma2``, ``G2``, ``D``, ``F_star``; ``extra`` holds the secondary
    figures (empirical L estimates, zeta along the trajectory, ...); ``region`` describes where
    the suprema were taken.

    >>> import toys
    >>> c = toys.constants(toys.quadratic(2, 2, L=3.0, mu=1.0, heterogeneity=0.0, seed=0))
    >>> c.as_params()["Gamma"], c["L"].how
    (0.0, 'exact')
    """

    problem: str
    L: Value
    L_F: Value
    mu: Value
    mu_F: Value
    Gamma: Value
    zeta: Value
    sigma2: Value
    G2: Value
    D: Value
    F_star: Value
    extra: dict = field(default_factory=dict)
    region: dict = field(default_factory=dict)
    batch_size: int | None = None

    _MAIN = ("L", "L_F", "mu", "mu_F", "Gamma", "zeta", "sigma2", "G2", "D", "F_star")

    def __getitem__(self, name: str) -> Value:
        if name in self._MAIN:
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        from boundlab.errors import UnknownNameError

        raise UnknownNameError("constant", name, list(self._MAIN) + list(self.extra))

    def values(self) -> dict:
        """Every constant (main ones first, then ``extra``) as name -> :class:`Value`.

        >>> import toys
        >>> list(toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)).values())[:3]
        ['L', 'L_F', 'mu']
        """
        out = {k: getattr(self, k) for k in self._MAIN}
        out.update(self.extra)
        return out

    def as_params(self) -> dict:
        """Plain floats under the catalogue's parameter names: ``L, mu, Gamma, zeta, sigma, G, D``
        (``sigma`` and ``G`` are the square roots of sigma^2 and G^2).

        >>> import toys
        >>> p = toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 0.0, seed=0)).as_params()
        >>> p["L"], p["mu"]
        (3.0, 1.0)
        """
        return {
            "L": float(self.L.value), "mu": float(self.mu.value),
            "Gamma": float(self.Gamma.value), "zeta": float(self.zeta.value),
            "sigma": math.sqrt(max(float(self.sigma2.value), 0.0)),
            "G": math.sqrt(max(float(self.G2.value), 0.0)), "D": float(self.D.value),
        }

    def to_dict(self) -> dict:
        """JSON-ready dict: every constant with value, how and note, plus region and batch size.

        >>> import json, toys
        >>> d = toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)).to_dict()
        >>> json.loads(json.dumps(d))["constants"]["L"]["how"]
        'exact'
        """
        return {
            "problem": self.problem,
            "constants": {k: v.to_dict() for k, v in self.values().items()},
            "params": self.as_params(),
            "region": {k: _jsonable(v) for k, v in self.region.items()},
            "batch_size": self.batch_size,
        }


def constants(problem, x_ref=None, trajectory=None, batch_size=None, seed: int = 0,
              radius: float | None = None, max_points: int = 50) -> Constants:
    """Measure L, mu, Gamma, zeta, sigma^2, G^2 and D on ``problem``.

    ``x_ref`` is the start point (default ``problem.x0``, else zeros): D = ||x_ref - x*||.
    ``trajectory`` (K, d) are visited points (e.g. the global models of a run): sigma^2, G^2 and
    zeta are also evaluated there (at most ``max_points`` evenly spaced ones). ``batch_size`` is
    the minibatch size (None: full batch, sigma^2 = 0). ``radius`` overrides the radius of the
    quadratic region. ``seed`` drives the power iterations.

    >>> import toys
    >>> c = toys.constants(toys.seed004_toy(seed=0))
    >>> 0.18 < c.L_F.value < 0.20 < c.L.value < 0.25, c.L.how
    (True, 'exact')
    """
    from ._checks import check_float, check_int
    from ._constants_impl import measure

    d = problem.dim
    x_ref = getattr(problem, "x0", np.zeros(d)) if x_ref is None else x_ref
    x_ref = np.asarray(x_ref, dtype=float).reshape(-1)
    if x_ref.shape != (d,) or not np.all(np.isfinite(x_ref)):
        from boundlab.errors import DomainError

        raise DomainError("x_ref", x_ref, f"finite vector of length {d}")
    traj = None
    if trajectory is not None:
        traj = np.asarray(trajectory, dtype=float).reshape(-1, d) if np.size(trajectory) else None
        if traj is not None and not np.all(np.isfinite(traj)):
            from boundlab.errors import DomainError

            raise DomainError("trajectory", traj, f"finite array of shape (K, {d})")
        if traj is not None and len(traj) > max_points:
            idx = np.unique(np.linspace(0, len(traj) - 1, check_int("max_points", max_points,
                                                                         lo=2)).round().astype(int))
            traj = traj[idx]
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, lo=1)
    if radius is not None:
        radius = check_float("radius", radius, lo=0.0)
    rng = np.random.default_rng(check_int("seed", seed, lo=0))
    return measure(problem, x_ref, traj, batch_size, rng, radius)


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v
