"""Weight rules: the aggregation coefficients of a round, as ``init`` / ``update`` pieces.

The protocol (optax's ``GradientTransformation`` shape; any object with these two methods is a
weight rule, see ``toys.algorithms`` for the whole contract)::

    init(n_clients) -> state
    update(state, *, losses, p, mask, round) -> (weights, state)

``losses`` (N,) are the client losses at the broadcast model, ``p`` (N,) the client weights,
``mask`` (N,) the participation of the round, ``round`` its index; ``weights`` (N,) are the
coefficients of the clients' updates in the server step (zero for absent clients). Arrays are
of the run's backend; the rules below use ``array_namespace`` and run on numpy and torch.

Built-in rules: :class:`FedAvgWeights` (p renormalised over the participants; also seed 002's
average-participating, and seed 003's graph weights with ``p`` replaced),
:class:`LossWeighted` (the loss-weighted rules of seeds 000/001, spec §5.3: fedmax, fedmax-k,
fedsoftmax, fedbetter, fedbetter-k, fedsoftbetter), :class:`Hybrid` and :class:`Anneal`
(spec §5.4), :class:`MaskedP` (MIFA's p chi) and :class:`ScaledParticipating` (FedVarp's fresh
coefficients). FedAU's rules live in :mod:`toys.algorithms.fedau`. :func:`rho` is the weighting
skew of spec §3.1 (a measurement, used by the engine).

Example
-------
>>> import numpy as np
>>> rule = LossWeighted("fedmax")
>>> state = rule.init(3)
>>> w, state = rule.update(state, losses=np.array([0.5, 2.0, 1.0]), p=np.full(3, 1 / 3),
...                        mask=np.ones(3, bool), round=0)
>>> w.tolist()
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, replace

from boundlab.errors import DomainError

from .._array import argsort_desc, array_namespace, count, normalise
from ._hyper import (
    ALIASES,
    RULES,
    SOFT_RULES,
    inv_temperature,
    k_of,
    loss_offset,
    rule_name,
    rule_names,
    value,
)

__all__ = ["ALIASES", "Anneal", "FedAvgWeights", "Hybrid", "LossWeighted", "MaskedP", "RULES",
           "ScaledParticipating", "resolve_k", "rho", "rule_name"]

_NEG_INF = -math.inf


@dataclass(frozen=True)
class FedAvgWeights:
    """alpha = p renormalised over the participants (BM-B "FedAvg-generalized"; seed 002's
    average-participating). With ``p`` given, that vector replaces the problem's weights
    (seed 003's graph weights).

    >>> import numpy as np
    >>> w, _ = FedAvgWeights().update((), losses=None, p=np.array([0.5, 0.25, 0.25]),
    ...                               mask=np.array([True, False, True]), round=0)
    >>> w.tolist()
    [0.6666666666666666, 0.0, 0.3333333333333333]
    """

    p: object = None
    graph: bool = False
    needs_losses = False
    batched = True

    def bind(self, hyper, setup):
        """``graph=True``: p = the degrees of seed 003's graph (:mod:`toys.algorithms.beta`)."""
        if not self.graph:
            return self
        from .beta import graph_for

        return replace(self, p=setup.asarray(graph_for(setup, hyper.get("messages"))["p"]))

    @property
    def hyper_names(self):
        return ("messages",) if self.graph else ()

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        q = p if self.p is None else self.p
        xp = array_namespace(q)
        return normalise(xp.where(mask, q, 0.0)), state


@dataclass(frozen=True)
class MaskedP:
    """alpha = p chi (MIFA's coefficients of the fresh updates).

    >>> import numpy as np
    >>> MaskedP().update((), losses=None, p=np.full(2, 0.5), mask=np.array([True, False]),
    ...                  round=0)[0].tolist()
    [0.5, 0.0]
    """

    needs_losses = False
    batched = True

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        return array_namespace(p).where(mask, p, 0.0), state


@dataclass(frozen=True)
class ScaledParticipating:
    """alpha = p chi N / |S| (FedVarp's coefficients of the fresh updates).

    >>> import numpy as np
    >>> ScaledParticipating().update((), losses=None, p=np.full(2, 0.5),
    ...                              mask=np.array([True, False]), round=0)[0].tolist()
    [1.0, 0.0]
    """

    needs_losses = False
    batched = True

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        xp = array_namespace(p)
        if mask.ndim == 1:
            return xp.where(mask, p, 0.0) * (mask.shape[0] / max(count(mask), 1)), state
        n = xp.sum(xp.astype(mask, p.dtype), axis=-1, keepdims=True)  # per instance
        return xp.where(mask, p, 0.0) * (mask.shape[-1] / xp.maximum(n, 1.0)), state


def resolve_k(k, n_clients: int) -> int:
    """The number of kept clients: an integer k, or a fraction in (0, 1) read as
    max(1, int(k * N)) (BM-B's 10 %, 20 %; [repo] logic).

    >>> resolve_k(0.1, 50), resolve_k(3, 50)
    (5, 3)
    """
    if float(k) == int(k):
        return int(k)
    return max(1, int(float(k) * n_clients))


# ------------------------------------------------------------------ the loss-weighted rules
def _argmax_split(xp, s, mask):
    s = xp.where(mask, s, _NEG_INF)
    J = (s == xp.max(s, axis=-1, keepdims=True)) & mask
    return normalise(xp.astype(J, s.dtype))


def _top_k(xp, s, mask, k):
    if mask.ndim > 1:
        return _top_k_rows(xp, s, mask, k)
    k_eff = min(int(k), count(mask))
    out = xp.zeros_like(s)
    if k_eff == 0:
        return out
    order = argsort_desc(xp.where(mask, s, _NEG_INF))
    out[order[:k_eff]] = 1.0 / k_eff
    return out


def _top_k_rows(xp, s, mask, k):
    """:func:`_top_k` of every instance of a population: 1/k_eff on the k_eff = min(k, |S|)
    first clients of the stable decreasing order."""
    order = argsort_desc(xp.where(mask, s, _NEG_INF))
    rank = argsort_desc(-xp.astype(order, s.dtype))  # the position of each client in order
    n = xp.sum(xp.astype(mask, s.dtype), axis=-1, keepdims=True)
    k_eff = xp.minimum(n, float(int(k)))
    return xp.where(xp.astype(rank, s.dtype) < k_eff, 1.0 / xp.maximum(k_eff, 1.0), 0.0)


def _soft(xp, x, p, mask, sign, inv_t):
    if not bool(xp.any(mask)):
        return xp.zeros_like(p * x)
    z = xp.log(xp.where(mask, p, 1.0)) + (sign * inv_t) * x
    z = xp.where(mask, z, _NEG_INF)
    some = xp.any(mask, axis=-1, keepdims=True)  # per instance (all True off a population)
    zmax = xp.where(some, xp.max(z, axis=-1, keepdims=True), 0.0)
    e = xp.where(mask, xp.exp(z - zmax), 0.0)
    s = xp.sum(e, axis=-1, keepdims=True)
    return xp.where(some, e / xp.where(some, s, 1.0), 0.0)


def alpha_of(name: str, x, p, mask, inv_temperature: float = 1.0, k: int = 1):
    """The coefficients of one loss-weighted rule from the excess losses ``x`` (spec §5.3):
    fedmax / fedbetter put 1/|J| on the argmax / argmin (ties split, BM-A (21)); the ``-k``
    rules 1/k on the k largest / smallest (stable order); the soft rules
    alpha ∝ p exp(±x inv_temperature) over the participants; fedavg p renormalised.

    >>> import numpy as np
    >>> x, p, m = np.array([1.0, 3.0, 2.0]), np.full(3, 1 / 3), np.ones(3, bool)
    >>> alpha_of("fedbetter-k", x, p, m, k=2).tolist()
    [0.5, 0.0, 0.5]
    """
    xp = array_namespace(p)
    if name == "fedavg":
        return normalise(xp.where(mask, p, 0.0))
    if name in SOFT_RULES:
        return _soft(xp, x, p, mask, 1.0 if name == "fedsoftmax" else -1.0, inv_temperature)
    sign = 1.0 if name.startswith("fedmax") else -1.0
    if name.endswith("-k"):
        return _top_k(xp, sign * x, mask, k)
    if not bool(xp.any(mask)):
        return xp.zeros_like(p)
    return _argmax_split(xp, sign * x, mask)


@dataclass(frozen=True)
class LossWeighted:
    """A loss-weighted rule of seeds 000/001 on the excess losses x_i = F_i(point) - offset_i.

    ``loss_offset``: ``"exact"`` (F_i*, given as ``offsets``), ``"zero"`` or ``"running_min"``
    (the smallest F_i seen so far: the state); ``score_point`` (``loss_point``): ``"global"``
    (F_i at the broadcast model) or ``"local_end"`` (at the client's model at the end of the
    previous round, which the engine supplies as ``losses``). The weights of round r are chosen
    at its start and kept for the round (BM-12).

    >>> import numpy as np
    >>> r = LossWeighted("fedsoftmax")
    >>> w, _ = r.update(r.init(2), losses=np.array([0.0, np.log(3.0)]), p=np.full(2, 0.5),
    ...                 mask=np.ones(2, bool), round=0)
    >>> np.round(w, 12).tolist()
    [0.25, 0.75]
    """

    name: str = "fedsoftmax"
    inv_temperature: float = 1.0
    k: int = 1
    loss_offset: str = "zero"
    offsets: object = None
    loss_point: str = "global"
    needs_losses = True
    batched = True
    hyper_names = ("temperature", "inv_temperature", "k", "loss_offset", "score_point")

    def bind(self, hyper, setup):
        off, offsets = loss_offset(hyper, setup.problem)
        offsets = None if offsets is None else setup.asarray(offsets)
        setup.info["loss_offset"] = off
        return replace(self, inv_temperature=inv_temperature(hyper), loss_offset=off,
                       offsets=offsets, k=k_of(hyper, setup.n_clients, self.name.endswith("-k")),
                       loss_point=value(hyper, "score_point", "global"))

    def init(self, n_clients):
        return None  # running minimum of the losses (loss_offset="running_min")

    def excess(self, state, losses):
        """(x, state): the excess losses of the round and the new running minimum."""
        if self.loss_offset == "exact":
            return losses - self.offsets, state
        if self.loss_offset == "zero":
            return losses, state
        xp = array_namespace(losses)
        runmin = losses if state is None else xp.minimum(state, losses)
        return losses - runmin, runmin

    def update(self, state, *, losses, p, mask, round):
        x, state = self.excess(state, losses)
        return alpha_of(self.name, x, p, mask, self.inv_temperature, self.k), state


@dataclass(frozen=True)
class Hybrid:
    """Discrete switch (BM-B §3.2): ``rules[j]`` for rounds r in [switch_{j-1}, switch_j); the
    loss offset state is shared (one running minimum). FedSoftBetterAvg = hybrid of
    (fedsoftbetter, fedavg) switching at round 20.

    >>> import numpy as np
    >>> h = Hybrid((LossWeighted("fedmax"), LossWeighted("fedavg")), (2,))
    >>> x, p, m = np.array([1.0, 2.0]), np.array([0.5, 0.5]), np.ones(2, bool)
    >>> [h.update(None, losses=x, p=p, mask=m, round=r)[0].tolist() for r in (1, 2)]
    [[0.0, 1.0], [0.5, 0.5]]
    """

    rules: tuple = ()
    switch_rounds: tuple = ()
    needs_losses = True
    batched = True
    hyper_names = ("rules", "switch_round", "temperature", "inv_temperature", "k",
                   "loss_offset", "score_point")

    def bind(self, hyper, setup):
        """rules (>= 2 names, default fedsoftbetter then fedavg) and one increasing
        switch_round per switch (default 20)."""
        names = rule_names(hyper.get("rules", ("fedsoftbetter", "fedavg")), "rules")
        if len(names) < 2:
            raise DomainError("rules", names, "at least two rule names, in time order")
        sw = hyper.get("switch_round", 20)
        sw = [sw] if isinstance(sw, (int, float)) and not isinstance(sw, bool) else list(sw)
        sw = [value({"switch_round": s}, "switch_round", None) for s in sw]
        if len(sw) != len(names) - 1 or any(b <= a for a, b in zip(sw, sw[1:])):
            raise DomainError("switch_round", sw,
                              f"{len(names) - 1} increasing round indices (one per switch)")
        kk = {"k": k_of(hyper, setup.n_clients, any(s.endswith("-k") for s in names))}
        rules = tuple(LossWeighted(s).bind({**hyper, **kk}, setup) for s in names)
        return replace(self, rules=rules, switch_rounds=tuple(sw))

    @property
    def loss_point(self):
        return self.rules[0].loss_point if self.rules else "global"

    def init(self, n_clients):
        return None

    def update(self, state, *, losses, p, mask, round):
        rule = self.rules[bisect.bisect_right(self.switch_rounds, round)]
        x, state = rule.excess(state, losses)
        return alpha_of(rule.name, x, p, mask, rule.inv_temperature, rule.k), state


@dataclass(frozen=True)
class Anneal:
    """"Simulated annealing" (BM-B §3.2; no formula in the paper, both readings are assumptions
    of spec §5.4): ``schedule="temperature"``: a soft rule with inv_temperature * decay^r;
    ``schedule="mix"``: (1 - lam_r) alpha_rule + lam_r alpha_fedavg, lam_r = min(1,
    r / mix_rounds).

    >>> import numpy as np
    >>> a = Anneal(LossWeighted("fedmax"), "mix", mix_rounds=2)
    >>> a.update(None, losses=np.array([1.0, 2.0]), p=np.array([0.5, 0.5]),
    ...          mask=np.ones(2, bool), round=1)[0].tolist()
    [0.25, 0.75]
    """

    rule: LossWeighted = LossWeighted()
    schedule: str = "temperature"
    decay: float = 0.9
    mix_rounds: int = 10
    needs_losses = True
    batched = True
    hyper_names = ("rule", "schedule", "decay", "mix_rounds", "temperature",
                   "inv_temperature", "k", "loss_offset", "score_point")

    def bind(self, hyper, setup):
        """rule (default fedsoftmax; a soft rule for the temperature schedule), schedule,
        decay in (0, 1], mix_rounds >= 1."""
        base = rule_names([hyper.get("rule", "fedsoftmax")], "rule")[0]
        sched = value(hyper, "schedule", "temperature")
        if sched == "temperature" and base not in SOFT_RULES:
            raise DomainError("rule", base, "a soft rule (fedsoftmax, fedsoftbetter) for "
                                            "schedule='temperature'")
        return replace(self, rule=LossWeighted(base).bind(hyper, setup), schedule=sched,
                       decay=value(hyper, "decay", 0.9),
                       mix_rounds=value(hyper, "mix_rounds", 10))

    @property
    def loss_point(self):
        return self.rule.loss_point

    def init(self, n_clients):
        return None

    def update(self, state, *, losses, p, mask, round):
        x, state = self.rule.excess(state, losses)
        r = self.rule
        if self.schedule == "temperature":
            return alpha_of(r.name, x, p, mask, r.inv_temperature * self.decay ** round,
                            r.k), state
        lam = min(1.0, round / self.mix_rounds)
        a = alpha_of(r.name, x, p, mask, r.inv_temperature, r.k)
        return (1.0 - lam) * a + lam * alpha_of("fedavg", x, p, mask), state


def with_offsets(rule, loss_offset: str, offsets):
    """``rule`` (a loss-weighted rule, hybrid or anneal) with its loss offset bound.

    >>> with_offsets(LossWeighted("fedmax"), "zero", None).loss_offset
    'zero'
    """
    if isinstance(rule, LossWeighted):
        return replace(rule, loss_offset=loss_offset, offsets=offsets)
    if isinstance(rule, Hybrid):
        return replace(rule, rules=tuple(with_offsets(r, loss_offset, offsets)
                                         for r in rule.rules))
    if isinstance(rule, Anneal):
        return replace(rule, rule=with_offsets(rule.rule, loss_offset, offsets))
    return rule


def rho(alpha, excess, p, scale=1.0):
    """Weighting skew rho(t, w) = sum_i alpha_i x_i / sum_i p_i x_i with x_i = F_i(w) - F_i*
    (BM-A (8) / BM-B (6)); NaN where the denominator is <= 1e-12 * scale (undefined: only
    possible when Gamma = 0 and w = w*; the engine passes scale = max(1, |F(w)|)). Returns a
    backend 0-d array.

    >>> import numpy as np
    >>> float(rho(np.array([1.0, 0.0]), np.array([2.0, 1.0]), np.array([0.5, 0.5])))
    1.3333333333333333
    """
    xp = array_namespace(alpha)
    num = xp.sum(alpha * excess, axis=-1)  # excess (m, N): m values at once
    den = xp.sum(p * excess, axis=-1)
    ok = den > 1e-12 * scale
    return xp.where(ok, num / xp.where(ok, den, 1.0), math.nan)
