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

from . import _ridge, tilt

__all__ = ["RidgeFamily", "FAMILY"]


@dataclass(frozen=True)
class RidgeFamily:
    """Sums of ``m`` ridge functions per client with profile ``profile`` (+ mu/2 ||x - c_i||^2)."""

    name: str = "huber"
    profile: str = "huber"
    m: int = 2
    classes: tuple = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")
    tilt: bool = True
    #: sup_x ||grad F(x)|| is finite for mu = 0 (|h'| <= delta): :func:`_ridge.grad_sup2`
    bounded_gradient: bool = True

    def n_vars(self, spec) -> int:
        extra = 0 if spec.zeta is None else tilt.extra_vars(spec.n_clients, spec.dim)
        return _ridge.n_vars(spec, self.m) + extra

    def _arrays(self, Z, spec):
        Z = np.atleast_2d(Z)
        arr = _ridge.ridge_arrays(Z[:, :_ridge.n_vars(spec, self.m)], spec, self.profile,
                                  self.m)
        if spec.zeta is not None:  # one shared client, replicated (the tilts come on top)
            N = int(spec.n_clients)
            arr.update({k: np.repeat(arr[k][:, :1], N, axis=1) for k in _ridge.CLIENT_KEYS})
        return arr

    def _tilts(self, Z, spec):
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        return tilt.tilts(Z[:, _ridge.n_vars(spec, self.m):], spec.n_clients, spec.dim,
                          spec.zeta)

    def build(self, z, spec):
        arr = self._arrays(z, spec)
        one = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in arr.items()}
        prob = _ridge.RidgeSum(one, p=spec.weights, name=f"{self.name} ridge sum")
        if spec.zeta is not None:
            prob = tilt.TiltedProblem(prob, self._tilts(z, spec)[0])
        return prob, prob.x_star + spec.D * one["u"]

    def stack(self, Z, spec):
        st = _ridge.StackedRidge(self._arrays(Z, spec), spec.p)
        return st if spec.zeta is None else tilt.TiltedStack(st, self._tilts(Z, spec))


FAMILY = RidgeFamily()
