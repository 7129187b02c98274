"""The algorithms :func:`verify.falsify` runs: how each maps onto :mod:`toys.algorithms`
(:func:`toys_call`), the hyper-parameter grids it searches and the step schedules. Nothing here
runs an algorithm: the search runs toys' own pieces (``toys.run_many``, ``toys.run``).

Each algorithm is one ``toys.run`` algorithm, with exact gradients:

* ``gd`` and ``fedavg``: ``W <- W - eta grad F_i(W)`` (gd: one client, one step per round);
* ``fedprox``: the proximal local step of ``toys.run``'s ``fedprox`` (seed 003 §5.2.3, DKR
  eq. (4)), ``W <- W - eta (grad F_i(W) + alpha (W - x))``, ``alpha`` = the bound's prox
  coefficient (``toys.run``'s ``prox``, > 0);
* ``beta``: seed 003's beta-perturbed local steps (``toys.run``'s ``beta``): the gradient of
  every step is taken at ``beta W + (1 - beta) u_i`` and applied to W; after the round
  ``u_i = p_i^{-1} sum_n p_in W_n`` (the clients' last models, ``u_i = x0`` before round 1);
  the server aggregates with the graph weights ``p_i``;
* ``fedsoftmax``: seeds 000/001's loss-weighted aggregation (``toys.run``'s ``fedsoftmax``,
  spec §5.3): FedAvg's local steps, and the weights of round r chosen at its start,
  ``alpha_i ∝ p_i exp(x_i / temperature)`` over the participants, ``x_i = F_i(x_r) - F_i*``
  (the clients' exact minima: ``loss_offset="exact"``; a strongly convex class). The engine
  records ``kappa_i = alpha_i / p_i`` per round (BM's pi = min, Pi = max over the run).

Step schedules (:data:`SCHEDULES`). A bound about ``fedsoftmax`` that names no step size is
judged at the step of BM's corollaries, ``eta_t = 1/(mu (t + gamma))`` over the SGD iterations
t = r E + k, with ``gamma = max(4L/mu, 1 + 3/(8 p_min), E - 1)`` (spec §3.5 corrected, §5.2:
it dominates 1 + 3 rho_bar/8 for every feasible weighting, rho_bar <= Pi <= 1/p_min);
:func:`bm_gamma` and :func:`schedule`.

Beta's graph. ``toys.run`` builds it from *messages* (the clients' principal directions). A
search family's objective weighs its clients uniformly (p = 1/N) and the theorems of seed 003
need the aggregation weights to be the objective's, so falsify passes explicit messages: the
orthonormal basis (:func:`beta_messages`), every pair equally misaligned (mis = 1/2), hence the
uniform graph p_in = 1/(N(N - 1)), p_i = 1/N (to rounding: the engine uses the very weights
``toys.run`` computes). u_i is then the average of the *other* clients' last models. This holds
for every family (including those without a batched form, run by ``toys.run``); graphs with
unequal weights are not searched (they change the objective's weights).

The hyper-parameter a bound leaves free is searched over a small grid (:data:`HYPER`): alpha
in {0.1, 1, 10} L (it scales with L; alpha > 0, as ``toys.run``'s fedprox requires), beta in
{0.25, 0.5, 0.9} (inside (0, 1), the theorems' range), fedsoftmax's temperature in
{0.1, 1, 10} L D^2 (the units of the excess losses it divides). The setting may fix it
(``alpha=`` or ``prox=``, ``beta=``, ``temperature=``).

>>> toys_call("fedprox", {"alpha": 0.2}, 3)
('fedprox', {'prox': 0.2})
>>> (1 / schedule(0.1, 10.0, 2, 2)).round(12).tolist()   # mu (t + gamma), t = 0..3
[1.0, 1.1, 1.2, 1.3]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ALGORITHMS", "HYPER", "SCHEDULES", "toys_call",
           "beta_messages", "hyper_grid", "notes", "bm_gamma", "schedule", "unit_factor"]

ALGORITHMS = ("gd", "fedavg", "fedprox", "beta", "fedsoftmax", "fedau")  # fedau: in
# expectation over its Bernoulli paths (verify.falsify.fedau_paths)
#: the step an algorithm's bounds are judged at when they name none (default: constant 1/L)
SCHEDULES = {"fedsoftmax": "bm"}


@dataclass(frozen=True)
class Hyper:
    """The free hyper-parameter of an algorithm: the bound's ``name`` for it (and ``aliases``
    a setting may use), ``toys.run``'s name, the search ``grid`` and its units
    ``L^units[0] D^units[1]`` (``(0, 0)``: none)."""

    name: str
    aliases: tuple
    toys_name: str
    grid: tuple
    units: tuple = (0, 0)

    @property
    def unit_text(self) -> str:
        return {(0, 0): "", (1, 0): " L", (1, 2): " L D^2"}[self.units]


HYPER = {"fedprox": Hyper("alpha", ("alpha", "prox"), "prox", (0.1, 1.0, 10.0), (1, 0)),
         "beta": Hyper("beta", ("beta",), "beta", (0.25, 0.5, 0.9)),
         "fedsoftmax": Hyper("temperature", ("temperature",), "temperature", (0.1, 1.0, 10.0),
                             (1, 2))}


def unit_factor(algorithm: str, l_factor: float, d_factor: float) -> float:
    """How much ``algorithm``'s hyper-parameter grows when L grows by ``l_factor`` and D by
    ``d_factor`` (1 for a dimensionless one)."""
    h = HYPER.get(algorithm)
    if h is None:
        return 1.0
    return l_factor ** h.units[0] * d_factor ** h.units[1]


def hyper_grid(algorithm: str, setting: dict, L: float, D: float = 1.0) -> tuple:
    """``(grid, scaled)``: the hyper-parameter points of ``algorithm`` (dicts {name: value}),
    popped from ``setting`` when it gives one, and the names that scale with L and D (a
    searched alpha, temperature). Raises ValueError naming a value outside its domain."""
    h = HYPER.get(algorithm)
    if h is None and algorithm not in ALGORITHMS:  # any algorithm of toys.algorithms: its
        return (_toys_hyper(algorithm, setting),), ()  # hyper-parameters from the setting
    if h is None:
        return ({},), ()
    given = [k for k in h.aliases if k in setting]
    if len(given) > 1:
        raise ValueError(f"{' and '.join(given)} both give {algorithm}'s {h.name}: give one")
    if given:
        v = float(setting.pop(given[0]))
        ok = 0 < v <= 1 if algorithm == "beta" else v > 0
        if not ok:
            dom = "(0, 1]" if algorithm == "beta" else "(0, inf)"
            raise ValueError(f"{given[0]} = {v:g} is outside its domain {dom}")
        return ({h.name: v},), ()
    scale = L ** h.units[0] * D ** h.units[1]
    return tuple({h.name: g * scale} for g in h.grid), ((h.name,) if h.units != (0, 0) else ())


#: the run settings falsify searches itself (the step, the local steps) or does not batch
_SEARCHED = ("lr", "local_steps", "batch_size")


def _toys_hyper(algorithm: str, setting: dict) -> dict:
    """The hyper-parameters of a toys algorithm that the setting gives (popped; numbers or
    tuples of numbers), validated when the run binds them (``toys.run``'s domains)."""
    import toys

    names = toys.algorithms.hyper_names(toys.algorithms.get(algorithm))
    return {k: setting.pop(k) for k in names if k in setting and k not in _SEARCHED}


def notes(algorithm: str, grid: tuple, scaled: tuple) -> list:
    """What a search of ``algorithm`` at the hyper-parameter ``grid`` states in its result."""
    out = []
    h = HYPER.get(algorithm)
    if h is not None and len(grid) > 1:
        vals = ", ".join(f"{g:g}" for g in h.grid)
        out.append(f"{h.name} searched over {{{vals}}}{h.unit_text if scaled else ''} (pass "
                   f"{h.name}=)")
    if algorithm == "beta":
        out.append("beta: messages = the orthonormal basis (uniform graph p_in = 1/(N(N-1)), "
                   "p_i = 1/N, the objective's weights); other graphs are not searched")
    return out


def beta_messages(n_clients: int) -> np.ndarray:
    """The messages of beta's runs: the orthonormal basis (the uniform graph, module doc)."""
    return np.eye(int(n_clients))


def toys_call(algorithm: str, hyper: dict, n_clients: int) -> tuple:
    """``(name, keyword arguments)`` of the ``toys.run`` call that runs ``algorithm``."""
    if algorithm in ("gd", "fedavg"):
        return "fedavg", {}
    if algorithm == "fedprox":
        return "fedprox", {"prox": float(hyper["alpha"])}
    if algorithm == "beta":
        return "beta", {"beta": float(hyper["beta"]), "messages": beta_messages(n_clients)}
    if algorithm == "fedsoftmax":
        return "fedsoftmax", {"temperature": float(hyper["temperature"]),
                              "loss_offset": "exact"}
    if algorithm == "fedau":  # lr = gamma, server_lr = eta: per instance (fedau_paths)
        K = float(hyper["K"])
        return "fedau", {"K": None if np.isinf(K) else int(K)}
    return algorithm, dict(hyper)  # any other algorithm of toys.algorithms, as it is


def bm_gamma(L: float, mu: float, p_min: float, E: int) -> float:
    """gamma = max(4L/mu, 1 + 3/(8 p_min), E - 1) of BM's step (module docstring).

    >>> bm_gamma(1.0, 0.1, 1 / 3, 5)
    40.0
    """
    return max(4.0 * L / mu, 1.0 + 3.0 / (8.0 * p_min), float(E) - 1.0)


def schedule(mu: float, gamma: float, rounds: int, tau: int) -> np.ndarray:
    """BM's step eta_t = 1/(mu (t + gamma)) of every SGD iteration t = 0..rounds tau - 1 (what
    ``toys.run`` takes as ``lr``, one value per iteration)."""
    t = np.arange(int(rounds) * int(tau), dtype=float)
    return 1.0 / (mu * (t + gamma))
