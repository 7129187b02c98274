"""Algorithms as compositions of small pieces with explicit state (optax's ``init``/``update``).

A :class:`Algorithm` is ``(name, client, weights, server)``. The three protocols (any object
with these methods is a piece; arrays are of the run's backend, so a piece written with
``array_api_compat.array_namespace`` runs unchanged on numpy and torch):

* **weight rule** — ``init(n_clients) -> state``; ``update(state, *, losses, p, mask, round)
  -> (weights, state)``. ``losses`` (N,) client losses at the broadcast model, ``p`` (N,)
  client weights, ``mask`` (N,) participation, ``weights`` (N,) the aggregation coefficients of
  the round (zero for absent clients). Optional attributes: ``needs_losses = False`` (the
  engine then may skip the loss evaluation), ``loss_point = "local_end"`` (``losses`` at the
  clients' models at the end of the previous round), ``omega(state)`` (recorded per round).
* **client update** — ``init(x, n_clients) -> state``; ``update(state, *, x, oracle, round,
  rng, mask, **hints) -> (W, state)`` with W (N, d) the clients' end-of-round models
  (:mod:`toys.algorithms.client` documents the hints).
* **server step** — ``init(x, n_clients) -> state``; ``update(state, *, x, deltas, weights,
  mask, p, round) -> (x_new, state)`` with ``deltas`` (N, d) = W - x (zero rows for absent
  clients) (:mod:`toys.algorithms.server`).

Built-in pieces also take hyper-parameters (``hyper_names``, ``bind``); see
:mod:`toys.algorithms._hyper` for every name and domain and :mod:`toys.algorithms.registry`
for the 25 named compositions (the 18 of the seed papers and 7 comparison algorithms:
Power-of-Choice, per-client local work, SCAFFOLD, FedNova, FedAdagrad, FedAdam, FedYogi).

Example: a weight rule of your own (weights ∝ p * loss over the participants)
-----------------------------------------------------------------------------
>>> import dataclasses, toys
>>> from array_api_compat import array_namespace
>>> class LossProportional:
...     def init(self, n_clients):
...         return ()
...     def update(self, state, *, losses, p, mask, round):
...         xp = array_namespace(losses)
...         w = xp.where(mask, p * losses, 0.0)
...         return w / xp.sum(w), state
>>> algo = dataclasses.replace(toys.algorithms.get("fedavg"), name="lossprop",
...                            weights=LossProportional())
>>> prob = toys.quadratic(n_clients=4, dim=2, seed=0)
>>> tr = toys.run(prob, algo, rounds=3, seed=0, lr=0.1)
>>> tr.algorithm, tr.alpha.sum(axis=1).round(12).tolist()
('lossprop', [1.0, 1.0, 1.0])
"""

from __future__ import annotations

from .base import Algorithm, Setup, bind, hyper_names
from .registry import ALGORITHMS, COMPARISONS, get, names, register, unregister

__all__ = ["ALGORITHMS", "Algorithm", "COMPARISONS", "Setup", "bind", "get", "hyper_names",
           "names", "register", "unregister"]
