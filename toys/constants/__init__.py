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

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_float, check_int
from ._impl import measure
from .values import Constants, Value

__all__ = ["Constants", "Value", "constants"]

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
    d = problem.dim
    x_ref = getattr(problem, "x0", np.zeros(d)) if x_ref is None else x_ref
    x_ref = np.asarray(x_ref, dtype=float).reshape(-1)
    if x_ref.shape != (d,) or not np.all(np.isfinite(x_ref)):
        raise DomainError("x_ref", x_ref, f"finite vector of length {d}")
    traj = None
    if trajectory is not None:
        traj = np.asarray(trajectory, dtype=float).reshape(-1, d) if np.size(trajectory) else None
        if traj is not None and not np.all(np.isfinite(traj)):
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
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # reported: _honest
        return _honest(measure(problem, x_ref, traj, batch_size, rng, radius))


_FIELDS = ("L", "L_F", "mu", "mu_F", "Gamma", "zeta", "sigma2", "G2", "D", "F_star")


def _honest(c: Constants) -> Constants:
    """A constant whose computation overflowed or cancelled to nan/inf in float64 is
    ``how="unavailable"`` with the reason, never a nan or inf labelled exact or bound.

    >>> import math
    >>> v = _honest_value(Value(math.nan, "exact", "max_i ||grad F_i - grad F||"))
    >>> v.how, v.note
    ('unavailable', 'not computable in float64: max_i ||grad F_i - grad F|| gave nan')
    """
    import dataclasses

    return dataclasses.replace(c, **{k: _honest_value(getattr(c, k)) for k in _FIELDS})


def _honest_value(v: Value) -> Value:
    try:
        finite = np.isfinite(float(v.value))
    except (TypeError, ValueError):
        finite = False
    if finite or v.how == "unavailable":
        return v
    return Value(np.nan, "unavailable", f"not computable in float64: {v.note or v.how} gave "
                                        f"{float(v.value)!r}")
