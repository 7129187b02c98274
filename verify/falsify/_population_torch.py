"""The torch oracle of a search family's stacked population (``verify.falsify(device=...)``).

:meth:`verify.falsify.population.FamilyPopulation.torch_oracle` builds it: the population's
arrays are moved to the device once, and the losses and gradients of client points
(P, N, d) (or server points (P, d), every client's row) are computed there with the formulas
of the families (:mod:`verify.falsify.families.quadratic`, :mod:`~verify.falsify.families._ridge`,
:mod:`~verify.falsify.families.tilt`) written in torch. A stacked population of another kind (a
user's family) is evaluated by its own numpy ``losses`` / ``grads`` with a host round trip
per call (:class:`_Host`): correct, not fast.

Example
-------
>>> import numpy as np
>>> from toys.engine.backends.torch import TorchOps
>>> from verify.falsify.families import Spec, get_family
>>> spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=2, dim=2)
>>> fam = get_family("huber")
>>> st = fam.stack(np.full((3, fam.n_vars(spec)), 0.3), spec)
>>> orc = oracle(st, TorchOps("cpu"))
>>> W = np.ones((3, 2, 2))
>>> bool(np.allclose(orc.grads(orc.ops.asarray(W)).numpy(), st.grads(W), rtol=1e-14))
True
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["oracle"]


def oracle(st, ops):
    """The torch oracle of the stacked population ``st`` on ``ops``' device and dtype."""
    from .families._ridge import StackedRidge
    from .families.quadratic import StackedQuadratic
    from .families.tilt import TiltedStack

    N = int(np.shape(st.p)[-1])
    if isinstance(st, TiltedStack):
        kernel = _Tilted(oracle(st.base, ops).kernel, ops, st)
    elif isinstance(st, StackedQuadratic):
        kernel = _Quadratic(ops, st)
    elif isinstance(st, StackedRidge):
        kernel = _Ridge(ops, st.arr)
    else:
        kernel = _Host(ops, st)
    return _Oracle(ops, kernel, N)


class _Oracle:
    """losses / grads of client points (P, N, d) or server points (P, d); full batch."""

    def __init__(self, ops, kernel, n_clients):
        self.ops, self.kernel, self.n_clients = ops, kernel, n_clients

    def _rows(self, W):
        if W.dim() == 2:  # server points: every client's row
            return W.unsqueeze(-2).expand(W.shape[0], self.n_clients, W.shape[1])
        return W

    def losses(self, W):
        return self.kernel.losses(self._rows(W))

    def grads(self, W):
        return self.kernel.grads(self._rows(W))

    def minibatch_grads(self, W, rng, batch_size):
        return self.grads(W)  # the families' gradients are exact


class _Quadratic:
    """F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i)."""

    def __init__(self, ops, st):
        self.torch, self.A, self.c = ops.torch, ops.asarray(st.A), ops.asarray(st.c)

    def losses(self, W):
        r = W - self.c
        return 0.5 * self.torch.einsum("pni,pnij,pnj->pn", r, self.A, r)

    def grads(self, W):
        return self.torch.einsum("pnij,pnj->pni", self.A, W - self.c)


class _Ridge:
    """F_i(x) = sum_j w_ij h(a_ij^T x - b_ij; delta_ij) + mu/2 ||x - c_i||^2 (huber, softplus)."""

    def __init__(self, ops, arr):
        self.torch, self.profile, self.mu = ops.torch, arr["profile"], float(arr["mu"])
        if self.profile not in ("huber", "softplus"):
            raise ValueError(f"no torch form of the ridge profile {self.profile!r}")
        self.a, self.b, self.w, self.delta, self.c = (ops.asarray(arr[k]) for k in
                                                      ("a", "b", "w", "delta", "c"))

    def _s(self, W):
        return self.torch.einsum("pnmd,pnd->pnm", self.a, W) - self.b

    def losses(self, W):
        t, s, dl = self.torch, self._s(W), self.delta
        if self.profile == "huber":
            a = t.abs(s)
            h = t.where(a <= dl, 0.5 * s * s, dl * a - 0.5 * dl * dl)
        else:
            u = t.abs(s / dl)
            h = dl * dl * (u + t.log1p(t.exp(-2.0 * u)) - math.log(2.0))
        dc = W - self.c
        return (self.w * h).sum(dim=-1) + 0.5 * self.mu * (dc * dc).sum(dim=-1)

    def grads(self, W):
        t, s, dl = self.torch, self._s(W), self.delta
        dh = t.minimum(t.maximum(s, -dl), dl) if self.profile == "huber" else dl * t.tanh(s / dl)
        return t.einsum("pnm,pnmd->pnd", self.w * dh, self.a) + self.mu * (W - self.c)


class _Tilted:
    """The base population plus linear tilts t_i^T (x - x*)."""

    def __init__(self, base, ops, st):
        self.torch, self.base = ops.torch, base
        self.t, self.x_star = ops.asarray(st.t), ops.asarray(st.x_star)

    def losses(self, W):
        return self.base.losses(W) + ((W - self.x_star[:, None, :]) * self.t).sum(dim=-1)

    def grads(self, W):
        return self.base.grads(W) + self.t


class _Host:
    """Any other stacked population: its numpy functions, with a host round trip per call."""

    def __init__(self, ops, st):
        self.ops, self.st = ops, st

    def losses(self, W):
        return self.ops.asarray(self.st.losses(self.ops.to_numpy(W)))

    def grads(self, W):
        return self.ops.asarray(self.st.grads(self.ops.to_numpy(W)))
