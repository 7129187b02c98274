"""Power-of-Choice client selection (Cho, Wang, Joshi 2020) as a weight rule.

Power-of-Choice samples a candidate set A of d clients without replacement with probabilities
p, evaluates their local losses F_i(x) at the broadcast model, keeps the m with the largest
loss and averages their updates with equal weights 1/m.

Where the selection lives. A participation process (:mod:`toys.participation`) is drawn
before the round's losses exist and cannot see them; the weight rule sees the losses at x, p
and the availability mask. So the whole selection is the weight rule
:class:`PowerOfChoice`: the candidates are drawn among the available clients (the mask; all of
them under full participation) and the kept ones get weight 1/m, the others 0 (the engine
still trains every available client, as for FedMax(k); ``Trace.alpha`` shows the selection).
With d = N it is FedMax(k) on the raw losses (``loss_offset="zero"``), bit for bit (spec
BM-27: they coincide only for d = N, m = k and equal F_i*).

The draw is vectorized: the d available clients of largest key log p_i + g_i, g_i i.i.d.
standard Gumbel (the Gumbel-top-k trick: the same law as drawing one client at a time
proportionally to p among those not yet drawn, numpy's ``choice(replace=False, p=p)``). The
g_i of round r are ``round_rng(seed, "selection", r).gumbel(size=N)``
(:func:`toys.algorithms.local_work.round_rng`): on the host, so numpy and torch runs draw the
same candidates, and independent of the participation and sampling streams. Ties of the loss
go to the lower client index. On a population (:func:`toys.run_many`, ``seed`` the tuple of
the instances' seeds) each instance draws its own g from its own seed and keeps its own
candidates and clients, as its own run.

Example
-------
>>> import numpy as np, toys
>>> prob = toys.quadratic(n_clients=6, dim=2, seed=0)
>>> tr = toys.run(prob, "poc", rounds=3, seed=0, lr=0.1, k=2, candidates=4)
>>> (tr.alpha > 0).sum(axis=1).tolist(), np.unique(tr.alpha).tolist()
([2, 2, 2], [0.0, 0.5])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from array_api_compat import device

from .._array import argsort_desc, array_namespace, count
from ._hyper import candidates_of, k_of
from .local_work import check_seeds, instance_draws
from .weights import _top_k

__all__ = ["PowerOfChoice", "candidate_mask"]


def candidate_mask(seed: int, round: int, p, mask, d: int):
    """The candidate set of round ``round``: a boolean array (N,) with min(d, |mask|) True
    entries, the available clients of largest log p_i + g_i (see the module docstring).

    >>> import numpy as np
    >>> m = candidate_mask(0, 0, np.full(5, 0.2), np.array([1, 1, 0, 1, 1], bool), 2)
    >>> int(m.sum()), bool(m[2])
    (2, False)
    """
    xp = array_namespace(p)
    g = instance_draws(seed, "selection", round, lambda rng: rng.gumbel(size=p.shape[-1]))
    keys = xp.log(p) + xp.asarray(g, dtype=p.dtype, device=device(p))
    keys = xp.where(mask, keys, -math.inf)
    if mask.ndim > 1:
        return _first_rows(xp, keys, mask, d) & mask
    out = xp.zeros(p.shape, dtype=xp.bool, device=device(p))
    d_eff = min(int(d), count(mask))
    if d_eff:
        out[argsort_desc(keys)[:d_eff]] = True
    return out & mask


def _first_rows(xp, keys, mask, d):
    """Every instance's :func:`candidate_mask` at once: True on the min(d, |mask|) first
    clients of the stable decreasing order of its keys."""
    order = argsort_desc(keys)
    rank = argsort_desc(-xp.astype(order, keys.dtype))  # each client's position in order
    n = xp.sum(xp.astype(mask, keys.dtype), axis=-1, keepdims=True)
    return xp.astype(rank, keys.dtype) < xp.minimum(n, float(int(d)))


@dataclass(frozen=True)
class PowerOfChoice:
    """Power-of-Choice (pow-d): weight 1/m on the ``k`` (= m) clients of largest loss at the
    broadcast model among ``candidates`` (= d) drawn ∝ p without replacement from the
    available ones; the candidates of a round come from the run's seed (``seed``)."""

    k: int = 1
    candidates: int = 1
    seed: int | None = None
    needs_losses = True
    batched = True
    hyper_names = ("k", "candidates")

    def bind(self, hyper, setup):
        """k (required: the m kept, integer in [1, N] or a fraction of N) and candidates
        (required: d, integer in [k, N] or a fraction of N)."""
        k = k_of(hyper, setup.n_clients, True)
        d = candidates_of(hyper, setup.n_clients, k)
        check_seeds(setup.seed, "selection")  # a run without a seed is refused here
        return replace(self, k=k, candidates=d, seed=setup.seed)

    def init(self, n_clients):
        return ()

    def update(self, state, *, losses, p, mask, round):
        xp = array_namespace(p)
        cand = candidate_mask(self.seed, round, p, mask, self.candidates)
        return _top_k(xp, losses, cand, self.k), state
