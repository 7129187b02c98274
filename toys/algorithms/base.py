"""The algorithm record: ``Algorithm(name, client, weights, server)`` and hyper-parameter binding.

An algorithm is a composition, not a branch of the round loop: a client update
(:mod:`toys.algorithms.client`), a weight rule (:mod:`toys.algorithms.weights`,
:mod:`toys.algorithms.fedau`) and a server step (:mod:`toys.algorithms.server`). Each piece is
an object with explicit state (``init`` / ``update``, optax style); the engine calls them and
never asks which algorithm it runs.

Hyper-parameters. A built-in piece declares the names it takes (``hyper_names``) and binds
them with ``bind(hyper, setup) -> piece`` (validated against their domains through
:mod:`toys.validation`, sklearn ``_parameter_constraints`` style); ``setup`` (:class:`Setup`)
carries the problem, the participation process, N, the number of rounds and a per-run cache.
A user's piece needs neither: it is used as it is. ``toys.run(problem, algorithm, **hyper)``
checks that every name is taken by some piece (paper symbols get a hint).

Example
-------
>>> import dataclasses
>>> from toys.algorithms import get
>>> algo = get("fedavg")
>>> mine = dataclasses.replace(algo, name="fedavg-copy")
>>> mine.name, type(mine.weights).__name__
('fedavg-copy', 'FedAvgWeights')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boundlab.errors import DomainError, UnknownNameError

__all__ = ["Algorithm", "Setup", "bind", "bind_check", "hyper_names"]

# common hyper-parameters first, in this order, in every listing
_ORDER = ("lr", "local_steps", "server_lr", "batch_size", "prox")

# paper symbols that are not hyper-parameter names here -> the name to use
_SYMBOLS = {
    "tau": "local_steps (FedAdam/FedYogi's tau: eps)", "E": "local_steps", "I": "local_steps",
    "epochs": "local_steps",
    "eta": "lr (local step) or server_lr (FedAU's global step)", "gamma": "lr",
    "eta_t": "lr (callable of t)", "step_size": "lr", "mu": "prox", "mu_prox": "prox",
    "alpha": "prox (FedProx)", "T": "temperature (BM) or rounds", "b": "batch_size",
    "m": "k", "C": "participation='uniform'", "tau_switch": "switch_round",
    "d": "candidates (Power-of-Choice)", "eta_g": "server_lr", "eta_l": "lr",
    "tau_i": "client_steps", "epsilon": "eps (FedAdam/FedYogi's tau)",
}


@dataclass(frozen=True)
class Algorithm:
    """A federated algorithm as a composition of three pieces.

    ``client`` — the local training of a round (``init(x, n_clients)``, ``update(state, *, x,
    oracle, round, rng, mask, **hints) -> (W, state)``); ``weights`` — the aggregation
    coefficients (``init(n_clients)``, ``update(state, *, losses, p, mask, round) ->
    (weights, state)``); ``server`` — the global step (``init(x, n_clients)``,
    ``update(state, *, x, deltas, weights, mask, p, round) -> (x_new, state)``).
    ``description`` is one line for listings. ``dataclasses.replace(algo, name=...,
    weights=...)`` builds a variant.

    >>> from toys.algorithms import get
    >>> get("mifa").server
    MIFAStep(server_lr=1.0)
    """

    name: str
    client: object
    weights: object
    server: object
    description: str = ""

    @property
    def pieces(self) -> tuple:
        return (self.client, self.weights, self.server)


@dataclass
class Setup:
    """What a piece may read when its hyper-parameters are bound: the ``problem``, the
    participation ``process``, ``n_clients``, ``rounds``, the algorithm ``name`` (for error
    messages) and ``cache`` (shared by the pieces of one run, e.g. seed 003's graph) and
    ``info`` (entries for ``Trace.info``); ``asarray`` moves numpy data to the run's backend;
    ``seed`` is the run's seed (pieces that draw at random derive their own streams from it:
    :func:`toys.algorithms.local_work.round_rng`). For a population (:func:`toys.run_many`)
    ``problem`` is the stacked population, ``seed`` the tuple of the instances' seeds and
    ``processes``, when given, the tuple of the instances' participation processes
    (``process`` is then the first; None: ``process`` for every instance)."""

    problem: object
    process: object
    n_clients: int
    rounds: int
    name: str = ""
    cache: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    asarray: object = None
    seed: int | tuple | None = None
    processes: tuple | None = None

    def __post_init__(self):
        if self.asarray is None:
            import numpy as np

            self.asarray = lambda v: np.asarray(v, dtype=float)


def hyper_names(algorithm: Algorithm) -> tuple[str, ...]:
    """The hyper-parameter names the pieces of ``algorithm`` take (common ones first).

    >>> from toys.algorithms import get
    >>> hyper_names(get("fedau"))
    ('lr', 'local_steps', 'server_lr', 'batch_size', 'prox', 'K')
    """
    seen: list[str] = []
    for piece in algorithm.pieces:
        for n in getattr(piece, "hyper_names", ()):
            if n not in seen:
                seen.append(n)
    return tuple(sorted(seen, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER),
                                             seen.index(n))))


def bind_check(algorithm: Algorithm) -> None:
    """Every piece has ``init`` and ``update`` (the protocols of :mod:`toys.algorithms`)."""
    for role in ("client", "weights", "server"):
        piece = getattr(algorithm, role)
        for method in ("init", "update"):
            if not callable(getattr(piece, method, None)):
                raise DomainError(f"algorithm.{role}", piece,
                                  f"an object with init() and update() (the {role} protocol "
                                  "of toys.algorithms)")


def bind(algorithm: Algorithm, hyper: dict, setup: Setup) -> Algorithm:
    """``algorithm`` with every piece's hyper-parameters bound (validated before any work).

    Raises :class:`~boundlab.errors.UnknownNameError` for a name no piece takes (a paper
    symbol gets a hint), :class:`~boundlab.errors.MissingParameterError` and
    :class:`~boundlab.errors.DomainError` from the pieces.

    >>> from toys.algorithms import get
    >>> import toys
    >>> s = Setup(toys.quadratic(3, 2, seed=0), None, 3, 2, "fedau")
    >>> bind(get("fedau"), {"lr": 0.1, "tau": 5}, s)
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown hyper-parameter of fedau (paper symbol 'tau' is \
local_steps (FedAdam/FedYogi's tau: eps)) 'tau'; valid: lr, local_steps, server_lr, batch_size, \
prox, K
    """
    if not isinstance(algorithm, Algorithm):
        raise DomainError("algorithm", algorithm, "a toys.Algorithm or a built-in name")
    valid = hyper_names(algorithm)
    for key in hyper:
        if key not in valid:
            what = f"hyper-parameter of {algorithm.name}"
            if key in _SYMBOLS:
                what += f" (paper symbol {key!r} is {_SYMBOLS[key]})"
            raise UnknownNameError(what, key, valid)
    bind_check(algorithm)
    pieces = {}
    for role in ("client", "weights", "server"):
        piece = getattr(algorithm, role)
        if callable(getattr(piece, "bind", None)):
            piece = piece.bind(hyper, setup)
        pieces[role] = piece
    return Algorithm(algorithm.name, description=algorithm.description, **pieces)
