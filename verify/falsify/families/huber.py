"""Huber ridge sums: the family of the exact worst case of gradient descent on smooth convex
functions (a one-dimensional Huber function, Drori and Teboulle 2014). See
:mod:`verify.falsify.families._ridge` for the construction (L and mu hold by construction).

>>> import numpy as np
>>> from verify.falsify.families.registry import Spec
>>> spec = Spec(L=2.0, mu=0.5, D=1.0, n_clients=2, dim=2)
>>> prob, x0 = FAMILY.build(np.linspace(-1, 1, FAMILY.n_vars(spec)), spec)
>>> bool(np.linalg.norm(prob.grad_F(prob.x_star)) <= 1e-10)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _ridge

__all__ = ["RidgeFamily", "FAMILY"]


@dataclass(frozen=True)
class RidgeFamily:
    """Sums of ``m`` ridge functions per client with profile ``profile`` (+ mu/2 ||x - c_i||^2)."""

    name: str = "huber"
    profile: str = "huber"
    m: int = 2
    classes: tuple = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")

    def n_vars(self, spec) -> int:
        return _ridge.n_vars(spec, self.m)

    def _arrays(self, Z, spec):
        return _ridge.ridge_arrays(np.atleast_2d(Z), spec, self.profile, self.m)

    def build(self, z, spec):
        arr = self._arrays(z, spec)
        one = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in arr.items()}
        prob = _ridge.RidgeSum(one, name=f"{self.name} ridge sum")
        return prob, prob.x_star + spec.D * one["u"]

    def stack(self, Z, spec):
        N = int(spec.n_clients)
        return _ridge.StackedRidge(self._arrays(Z, spec), np.full(N, 1.0 / N))


FAMILY = RidgeFamily()
