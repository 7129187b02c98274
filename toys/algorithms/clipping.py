"""Gradient clipping as a client update: local (S)GD steps with every per-client gradient
clipped to norm at most ``clip`` (seed 003, App. C.7: G in {1, 10, inf}).

``ClippedSteps`` is :class:`~toys.algorithms.client.LocalSteps` (``ClippedBeta`` seed 003's
:class:`~toys.algorithms.client.BetaPerturbed`) whose oracle returns clipped
gradients g <- g min(1, G / ||g||) (row-wise, per client and per local step; the proximal term
is added after clipping). ``clip = inf`` is plain ``LocalSteps`` bit for bit. The fused
deterministic kernel of logistic problems is bypassed (it would skip the clipping). Both
run on a population's leading axis (:func:`toys.run_many`; ``batched`` as their parents).

Example
-------
>>> import dataclasses, math, toys
>>> algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="fedavg-clip",
...                            client=ClippedSteps())
>>> prob = toys.quadratic(n_clients=3, dim=2, seed=0)
>>> tr = toys.run(prob, algo, rounds=2, seed=0, lr=0.05, local_steps=2, clip=0.5)
>>> bool(tr.g2_max[0] <= 0.25 + 1e-12)   # the gradients used have norm <= 0.5
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from boundlab.errors import DomainError

from .._array import array_namespace, sqnorm_rows
from .client import BetaPerturbed, LocalSteps

__all__ = ["ClippedBeta", "ClippedSteps", "clip_rows"]


def clip_rows(G, clip: float):
    """Each row of ``G`` (N, d) scaled to norm at most ``clip`` (rows already within are
    unchanged, bit for bit); a population's (B, N, d) row by row.

    >>> import numpy as np
    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4]]
    """
    if math.isinf(clip):
        return G
    xp = array_namespace(G)
    norm = xp.sqrt(sqnorm_rows(G))
    over = norm > clip
    scale = xp.where(over, clip / xp.where(over, norm, 1.0), 1.0)
    return xp.where(over[..., None], G * scale[..., None], G)


class _ClippedOracle:
    """The oracle of a problem with clipped gradients (losses unchanged)."""

    def __init__(self, inner, clip):
        self.inner, self.clip = inner, clip
        self.n_clients = inner.n_clients

    def losses(self, W):
        return self.inner.losses(W)

    def grads(self, W):
        return clip_rows(self.inner.grads(W), self.clip)

    def minibatch_grads(self, W, rng, batch_size):
        return clip_rows(self.inner.minibatch_grads(W, rng, batch_size), self.clip)

    def subset(self, clients):
        sub = getattr(self.inner, "subset", None)
        s = sub(clients) if callable(sub) else None
        return None if s is None else _ClippedOracle(s, self.clip)


@dataclass(frozen=True)
class ClippedSteps(LocalSteps):
    """``LocalSteps`` with per-client gradient clipping at norm ``clip`` (hyper-parameter
    ``clip`` > 0, ``math.inf`` = no clipping, the default)."""

    clip: float = math.inf
    hyper_names = LocalSteps.hyper_names + ("clip",)

    def bind(self, hyper, setup):
        """LocalSteps' parameters and ``clip`` (a number > 0 or inf)."""
        return _bind_clip(LocalSteps.bind(self, hyper, setup), hyper, self.clip)

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        if math.isinf(self.clip):
            return LocalSteps.update(self, state, x=x, oracle=oracle, round=round, rng=rng,
                                     mask=mask, start=start, grads=grads, observer=observer)
        return LocalSteps.update(self, state, x=x, oracle=_ClippedOracle(oracle, self.clip),
                                 round=round, rng=rng, mask=mask, start=start,
                                 grads=None if grads is None else clip_rows(grads, self.clip),
                                 observer=observer)


def _bind_clip(piece, hyper, default):
    clip = hyper.get("clip", default)
    try:
        ok = not isinstance(clip, bool) and float(clip) > 0 and not math.isnan(float(clip))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DomainError("clip", clip, "a number > 0 or inf (no clipping)")
    return replace(piece, clip=float(clip))


@dataclass(frozen=True)
class ClippedBeta(BetaPerturbed):
    """Seed 003's beta-perturbed local SGD with per-client gradient clipping at ``clip``
    (App. C.7: the gradient at beta w + (1 - beta) u_i is clipped, then applied to w)."""

    clip: float = math.inf
    hyper_names = BetaPerturbed.hyper_names + ("clip",)

    def bind(self, hyper, setup):
        """BetaPerturbed's parameters and ``clip`` (a number > 0 or inf)."""
        return _bind_clip(BetaPerturbed.bind(self, hyper, setup), hyper, self.clip)

    def update(self, state, *, x, oracle, round, rng, mask, start=None, grads=None,
               observer=None, **_):
        orc = oracle if math.isinf(self.clip) else _ClippedOracle(oracle, self.clip)
        return BetaPerturbed.update(self, state, x=x, oracle=orc, round=round, rng=rng,
                                    mask=mask, start=start, grads=None, observer=observer)
