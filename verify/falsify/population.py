"""falsify's populations on the toys engine: a search family's stacked instances run by
:func:`toys.run_many` with the algorithm's own pieces (:mod:`toys.algorithms`), and the run
quantities the judge reads, taken from a population or from one replayed ``toys.run`` trace by
one function (:func:`quantities`): the search and the replay measure alike.

A family's stacked population (:mod:`verify.falsify.families.registry`: ``p`` (N,),
``x_star`` (P, d), ``F_star`` (P,), ``losses`` / ``grads`` of client points (P, N, d), ``x0``,
``F_star_i`` when the clients' minima are solved) becomes a toys population through
:class:`FamilyPopulation`.

Example
-------
>>> import numpy as np
>>> from verify.falsify.families import Spec, get_family
>>> spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=2, dim=2)
>>> st = get_family("quadratic").stack(np.zeros((3, get_family("quadratic").n_vars(spec))), spec)
>>> pop = FamilyPopulation(st)
>>> pop.n_instances, pop.p.shape, pop.losses(pop.x0).shape
(3, (3, 2), (3, 2))
"""

from __future__ import annotations

import numpy as np

from toys.problems.stacked import Stacked

from ._keys import ROUND_KEYS, STATE_KEYS

__all__ = ["FamilyPopulation", "batched", "quantities", "run", "STATE_KEYS", "ROUND_KEYS"]


class FamilyPopulation(Stacked):
    """A search family's stacked instances as a toys population (full-batch gradients)."""

    family = "falsify"

    def __init__(self, st):
        self._st = st
        x0 = np.asarray(st.x0, dtype=float)
        self.n_instances, self.dim = x0.shape
        p = np.asarray(st.p, dtype=float)
        self.n_clients = p.shape[-1]
        self.p = np.array(np.broadcast_to(p, (self.n_instances, self.n_clients)))
        self.x0, self.x_star = x0, np.asarray(st.x_star, dtype=float)
        self.F_star = np.asarray(st.F_star, dtype=float)
        try:  # a tilted population's clients have no minimiser
            F_star_i = getattr(st, "F_star_i", None)
        except (ArithmeticError, ValueError):
            F_star_i = None
        self.F_star_i = None if F_star_i is None else np.asarray(F_star_i, dtype=float)

    def losses(self, W):
        return self._st.losses(self._broadcast(np.asarray(W)))

    def grads(self, W):
        return self._st.grads(self._broadcast(np.asarray(W)))

    def minibatch_grads(self, W, rng, batch_size):
        return self.grads(W)


def batched(plan) -> bool:
    """Whether the plan's algorithm runs on the population axis (every piece batched)."""
    import toys

    name, _ = plan.toys_call()
    algo = toys.algorithms.get(name)
    return all(getattr(piece, "batched", False) for piece in algo.pieces)


def run(plan, st, eta, T: int, tau: int, masks=None, virtual: bool = False) -> dict:
    """The run quantities of every instance of the stacked population ``st`` with the plan's
    algorithm, steps ``eta`` (P,) (or the plan's schedule) and participation ``masks``
    (P, T, N) (None: every client every round); ``virtual``: also ||grad F||^2 at the virtual
    averages (``record="step"``, BC's non-convex theorems)."""
    import toys

    pop = FamilyPopulation(st)
    name, hyper = plan.toys_call()
    lrs = np.asarray(plan.steps(np.asarray(eta, dtype=float), T, tau), dtype=float)
    res = toys.run_many(pop, name, rounds=int(T), seeds=0, local_steps=int(tau),
                        participation="full" if masks is None else np.asarray(masks, bool),
                        vary={"lr": lrs}, record="step" if virtual else "round", **hyper)
    return quantities(res, pop.p)


def quantities(source, p=None) -> dict:
    """The run quantities judge reads ({name: (P, ...)}) of a :class:`toys.engine.population.
    Population` or of one ``toys.Trace`` (P = 1): the state arrays :data:`STATE_KEYS`
    (P, T + 1), the round arrays :data:`ROUND_KEYS` (P, T), with the weights ``p`` (N,) or
    (P, N) also kappa = alpha / p's extremes per round (``kappa_min``, ``kappa_max``), and from
    a ``record="step"`` trace ``grad_norm2_virtual``."""
    if np.ndim(source.state["gap"]) == 1:  # one trace
        q = {k: np.asarray(getattr(source, k), dtype=float)[None, :]
             for k in (*STATE_KEYS, *ROUND_KEYS)}
        alpha = np.asarray(source.alpha, dtype=float)[None]
        if source.steps is not None and "grad_norm2" in source.steps:
            q["grad_norm2_virtual"] = np.asarray(source.grad_norm2_virtual, dtype=float)[None]
    else:
        q = {k: np.asarray(source.state[k], dtype=float) for k in STATE_KEYS}
        q.update({k: np.asarray(source.per_round[k], dtype=float) for k in ROUND_KEYS})
        alpha = np.asarray(source.alpha, dtype=float)
        if source.steps is not None:
            q["grad_norm2_virtual"] = np.asarray(source.grad_norm2_virtual, dtype=float)
    if p is not None:
        p = np.asarray(p, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = alpha / (p[:, None, :] if p.ndim == 2 else p)
        q["kappa_min"], q["kappa_max"] = np.min(kappa, axis=-1), np.max(kappa, axis=-1)
    return q
