"""The algorithms :func:`verify.falsify` runs, as local-step rules of the batched engine.

Each algorithm is one ``toys.run`` algorithm, with full participation and exact gradients:

* ``gd`` and ``fedavg``: ``W <- W - eta grad F_i(W)`` (gd: one client, one step per round);
* ``fedprox``: the proximal local step of ``toys.run``'s ``fedprox`` (seed 003 §5.2.3, DKR
  eq. (4)), ``W <- W - eta (grad F_i(W) + alpha (W - x))``, ``alpha`` = the bound's prox
  coefficient (``toys.run``'s ``prox``, > 0);
* ``beta``: seed 003's beta-perturbed local steps (``toys.run``'s ``beta``): the gradient of
  every step is taken at ``beta W + (1 - beta) u_i`` and applied to W; after the round
  ``u_i = p_i^{-1} sum_n p_in W_n`` (the clients' last models, ``u_i = x0`` before round 1);
  the server aggregates with the graph weights ``p_i``.

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
{0.25, 0.5, 0.9} (inside (0, 1), the theorems' range). The setting may fix it (``alpha=`` or
``prox=``, ``beta=``).

>>> import numpy as np
>>> r = rule("beta", {"beta": 0.5}, n_clients=3)
>>> np.round(r.weights(np.full(3, 1 / 3)), 15).tolist()
[0.333333333333333, 0.333333333333333, 0.333333333333333]
>>> toys_call("fedprox", {"alpha": 0.2}, 3)
('fedprox', {'prox': 0.2})
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ALGORITHMS", "HYPER", "LocalRule", "rule", "toys_call", "beta_messages",
           "hyper_grid", "notes"]

ALGORITHMS = ("gd", "fedavg", "fedprox", "beta")


@dataclass(frozen=True)
class Hyper:
    """The free hyper-parameter of an algorithm: the bound's ``name`` for it (and ``aliases``
    a setting may use), ``toys.run``'s name, the search ``grid`` and whether it is in units of
    L (``per_L``)."""

    name: str
    aliases: tuple
    toys_name: str
    grid: tuple
    per_L: bool


HYPER = {"fedprox": Hyper("alpha", ("alpha", "prox"), "prox", (0.1, 1.0, 10.0), True),
         "beta": Hyper("beta", ("beta",), "beta", (0.25, 0.5, 0.9), False)}


def hyper_grid(algorithm: str, setting: dict, L: float) -> tuple:
    """``(grid, scaled)``: the hyper-parameter points of ``algorithm`` (dicts {name: value}),
    popped from ``setting`` when it gives one, and the names that scale with L (searched
    alpha). Raises ValueError naming a value outside its domain."""
    h = HYPER.get(algorithm)
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
    scale = L if h.per_L else 1.0
    return tuple({h.name: g * scale} for g in h.grid), ((h.name,) if h.per_L else ())


def notes(algorithm: str, grid: tuple, scaled: tuple) -> list:
    """What a search of ``algorithm`` at the hyper-parameter ``grid`` states in its result."""
    out = []
    h = HYPER.get(algorithm)
    if h is not None and len(grid) > 1:
        vals = ", ".join(f"{g:g}" for g in h.grid)
        out.append(f"{h.name} searched over {{{vals}}}{' L' if scaled else ''} (pass "
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
    raise KeyError(algorithm)


@dataclass(frozen=True)
class LocalRule:
    """The local steps and aggregation of one algorithm for a stacked population (P, N, d).

    ``prox`` (FedProx's alpha; 0: none), ``beta`` (None: no perturbation) and the graph of
    beta (``P`` (N, N), ``degree`` (N,), ``p`` (N,)), as :func:`toys.algorithms.beta.graph`.
    """

    name: str = "fedavg"
    prox: float = 0.0
    beta: float | None = None
    P: np.ndarray | None = None
    degree: np.ndarray | None = None
    p: np.ndarray | None = None

    @property
    def perturbed(self) -> bool:
        """Whether the gradients are taken away from the iterates (the first one too)."""
        return self.beta is not None

    def weights(self, p):
        """The aggregation weights (``toys.run``'s FedAvgWeights: normalised)."""
        a = np.asarray(p if self.p is None else self.p, dtype=float)
        return a / a.sum()

    def init(self, x):
        """The state before round 0: beta's u_i = x0 (P, N, d); None otherwise."""
        if self.beta is None:
            return None
        return np.repeat(np.asarray(x, dtype=float)[:, None, :], self.degree.shape[0], axis=1)

    def query(self, W, U):
        """Where the gradients of step W are taken."""
        return W if self.beta is None else self.beta * W + (1.0 - self.beta) * U

    def step(self, W, G, X, eta):
        """One local step from W with the gradients G; X the round's start (copies of x)."""
        s = G if self.prox == 0.0 else G + self.prox * (W - X)
        return W - eta * s

    def end_round(self, U, W, x):
        """beta's neighbour averages of the clients' last models W; x the round's model."""
        if self.beta is None:
            return U
        ok = self.degree > 0
        V = np.einsum("in,pnd->pid", self.P, W) / np.where(ok, self.degree, 1.0)[None, :, None]
        return np.where(ok[None, :, None], V, x[:, None, :])


def rule(algorithm: str, hyper: dict, n_clients: int) -> LocalRule:
    """The :class:`LocalRule` of ``algorithm`` with its hyper-parameters ``hyper``."""
    if algorithm in ("gd", "fedavg"):
        return LocalRule(algorithm)
    if algorithm == "fedprox":
        return LocalRule("fedprox", prox=float(hyper["alpha"]))
    if algorithm == "beta":
        from toys.algorithms.beta import graph

        g = graph(beta_messages(n_clients))
        return LocalRule("beta", beta=float(hyper["beta"]), P=g["P"], degree=g["degree"],
                         p=g["p"])
    raise KeyError(algorithm)
