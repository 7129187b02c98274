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

from toys.engine.measure import EXTRA_STEPS
from toys.problems.stacked import Stacked

from ._keys import ROUND_KEYS, STATE_KEYS

__all__ = ["FamilyPopulation", "batched", "extra_steps", "quantities", "run", "STATE_KEYS",
           "ROUND_KEYS"]


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

    def torch_oracle(self, ops):
        """The population on torch (``backend="torch"``): its arrays moved to ``ops``' device
        once (:mod:`verify.falsify._population_torch`)."""
        from ._population_torch import oracle

        return oracle(self._st, ops)


def batched(plan) -> bool:
    """Whether the plan's algorithm runs on the population axis (every piece batched)."""
    import toys

    name, _ = plan.toys_call()
    algo = toys.algorithms.get(name)
    return all(getattr(piece, "batched", False) for piece in algo.pieces)


def run(plan, st, eta, T: int, tau: int, masks=None, virtual: bool = False,
        device=None) -> dict:
    """The run quantities of every instance of the stacked population ``st`` with the plan's
    algorithm, steps ``eta`` (P,) (or the plan's schedule) and participation ``masks``
    (P, T, N) (None: every client every round); ``virtual``: a ``record="step"`` run (||grad
    F||^2 at the virtual averages for BC's non-convex theorems, the per-step arrays). Only
    what the plan's judge reads is measured (:func:`needed`; the other quantities are NaN).
    ``device``: None runs on numpy; a torch device ("cpu", "cuda", "cuda:0") runs the
    population on torch there (its arrays moved once, :meth:`FamilyPopulation.torch_oracle`);
    the quantities come back as numpy float64 either way."""
    import toys

    pop = FamilyPopulation(st)
    name, hyper = plan.toys_call()
    lrs = np.asarray(plan.steps(np.asarray(eta, dtype=float), T, tau), dtype=float)
    where = {} if device is None else {"backend": "torch", "device": device}
    res = toys.run_many(pop, name, rounds=int(T), seeds=0, local_steps=int(tau),
                        participation="full" if masks is None else np.asarray(masks, bool),
                        vary={"lr": lrs}, record="step" if virtual else "round",
                        measure=needed(plan, virtual), **where, **hyper)
    return quantities(res, pop.p)


def extra_steps(lhs: str) -> dict:
    """``{"extra_steps": names}``: the per-step quantities (:data:`EXTRA_STEPS`) a ``toys.run``
    must record for the measure of ``lhs`` (empty when it needs none).

    >>> extra_steps("pairwise_drift"), extra_steps("final_gap")
    ({'extra_steps': ('pairwise_drift',)}, {})
    """
    from ..measures import get

    names = tuple(n for n in EXTRA_STEPS if f"step_{n}" in get(lhs).needs)
    return {"extra_steps": names} if names else {}


def needed(plan, virtual: bool = False) -> tuple | None:
    """The quantities (names of :data:`toys.engine.population.MEASURABLE`) the search's judge
    reads for ``plan``: the run arrays its measured left-hand side needs
    (:attr:`verify.measures.Measure.needs`), ``gap``, ``dist2`` and ``loss`` (the judge's
    divergence rule and scale, ``Delta`` / ``F0``), ``g2_max`` when the bound names ``G``;
    None (everything) for a left-hand side the registry does not know."""
    from toys.engine.population import MEASURABLE

    from ..measures import get, paper_name

    try:  # BC's avg_grad_norm2 is the virtual averages' (record="step": ``virtual``)
        needs = get(paper_name(plan.lhs, plan.algorithm)).needs
    except LookupError:  # UnknownNameError: measure everything, the judge will say why
        return None
    keys = {k.removeprefix("step_") for k in needs} | {"gap", "dist2", "loss"}
    bound = plan.bound
    if "G" in bound.params or "G" in bound.extra_params:
        keys.add("g2_max")
    return tuple(k for k in MEASURABLE if k in keys)


def quantities(source, p=None) -> dict:
    """The run quantities judge reads ({name: (P, ...)}) of a :class:`toys.engine.population.
    Population` or of one ``toys.Trace`` (P = 1): the state arrays :data:`STATE_KEYS`
    (P, T + 1), the round arrays :data:`ROUND_KEYS` (P, T), with the weights ``p`` (N,) or
    (P, N) also kappa = alpha / p's extremes per round (``kappa_min``, ``kappa_max``), and from
    a ``record="step"`` trace or population ``grad_norm2_virtual``, ``rho_max`` (the round's
    largest skew rho(t, w_t), NaN where none is defined or measured) and the step
    arrays ``step_dist2``, ``step_lr`` (P, T * tau) (:data:`verify.measures.STEP_ARRAYS`)."""
    if np.ndim(source.state["gap"]) == 1:  # one trace
        q = {k: np.asarray(getattr(source, k), dtype=float)[None, :]
             for k in (*STATE_KEYS, *ROUND_KEYS)}
        alpha = np.asarray(source.alpha, dtype=float)[None]
        if source.steps is not None and "grad_norm2" in source.steps:
            q["grad_norm2_virtual"] = np.asarray(source.grad_norm2_virtual, dtype=float)[None]
        if source.steps is not None and "rho" in source.steps:
            q["rho_max"] = np.asarray(source.rho_max, dtype=float)[None]
        q.update(_step_arrays(source.steps, 1))
    else:
        q = {k: np.asarray(source.state[k], dtype=float) for k in STATE_KEYS}
        q.update({k: np.asarray(source.per_round[k], dtype=float) for k in ROUND_KEYS})
        alpha = np.asarray(source.alpha, dtype=float)
        if source.steps is not None:
            q["grad_norm2_virtual"] = np.asarray(source.grad_norm2_virtual, dtype=float)
            q["rho_max"] = np.asarray(source.rho_max, dtype=float)
        q.update(_step_arrays(source.steps, q["gap"].shape[0]))
    if p is not None:
        p = np.asarray(p, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = alpha / (p[:, None, :] if p.ndim == 2 else p)
        q["kappa_min"], q["kappa_max"] = np.min(kappa, axis=-1), np.max(kappa, axis=-1)
    return q


def _step_arrays(steps, P) -> dict:
    """``step_dist2`` and ``step_lr`` (P, T * tau) of a record="step" run's per-step arrays
    (T, tau) or (P, T, tau) (none without them), and ``step_<name>`` of the per-step
    quantities recorded when asked (:data:`EXTRA_STEPS`)."""
    if steps is None or "dist2" not in steps:
        return {}
    return {f"step_{k}": np.reshape(np.asarray(steps[k], dtype=float), (P, -1))
            for k in ("dist2", "lr", *EXTRA_STEPS) if k in steps}
