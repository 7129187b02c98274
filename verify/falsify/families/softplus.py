"""Softplus ridge sums: h(s) = delta^2 log cosh(s/delta) (a symmetric softplus), smooth and
strictly convex ridges; see :mod:`verify.falsify.families._ridge`.

>>> import numpy as np
>>> from verify.falsify.families.registry import Spec
>>> spec = Spec(L=1.0, mu=0.0, D=2.0, n_clients=1, dim=3)
>>> prob, x0 = FAMILY.build(np.full(FAMILY.n_vars(spec), 0.3), spec)
>>> round(float(np.linalg.norm(x0 - prob.x_star)), 12), prob.F_star
(2.0, 0.0)
"""

from __future__ import annotations

from .huber import RidgeFamily

__all__ = ["FAMILY"]

FAMILY = RidgeFamily(name="softplus", profile="softplus")
