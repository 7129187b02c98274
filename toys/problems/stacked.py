"""A population of problems of one family as one batched oracle: the instance axis of
:func:`toys.run_many`.

``stack(problems)`` takes B problems of one family with the same number of clients N and
dimension d and returns a :class:`Stacked` population whose arrays carry a leading instance
axis: ``losses(W) -> (B, N)`` and ``grads(W) -> (B, N, d)`` for client points ``W`` (B, N, d)
(or server points (B, d), every client's row), ``p`` (B, N), ``x_star`` (B, d), ``F_star``
(B,), ``F_star_i`` (B, N), ``x0`` (B, d), ``problems`` (the B problems themselves, for what
a piece derives per instance when it is bound, e.g. seed 003's graph). Row b is problem b:
the family's formula is written once (:func:`toys.problems.quadratic.quad_losses`) with
leading axes, so that each instance gets the bits of its own problem (tested instance by
instance against ``toys.run``). On the torch backend the population's ``arrays()`` build the
family's torch oracle, whose formula is the same function.

Families with a population form: quadratics (:class:`~toys.problems.quadratic.Quadratic`)
logistic regression (:class:`~toys.problems.logistic.Logistic`, binary and multinomial, with
each instance's own minibatch stream: :mod:`toys.problems._stacked_logistic`; instances of one
shape, :func:`pad_rows` makes the clients' padded lengths equal) and the MLP
(:class:`~toys.problems.mlp.MLPProblem`, the same way: :mod:`toys.problems._stacked_mlp`), and
the CNN (:class:`~toys.problems.cnn.CNNProblem`, minibatches on torch:
:mod:`toys.problems._stacked_cnn`). Others are refused by name; a population may also be any
object with the members above (``n_clients``, ``dim``, ``n_instances``, ``p``, ``losses``,
``grads``, ``minibatch_grads``).

Example
-------
>>> import toys
>>> pop = stack([toys.quadratic(3, 2, seed=s) for s in range(4)])
>>> pop.n_instances, pop.losses(pop.x0).shape, pop.grads(pop.x0).shape
(4, (4, 3), (4, 3, 2))
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ._stacked_cnn import StackedCNN, pad_cnn_rows
from ._stacked_logistic import StackedLogistic
from ._stacked_logistic import pad_rows as _pad_logistic
from ._stacked_mlp import StackedMLP, pad_mlp_rows
from .cnn import CNNProblem
from .logistic import Logistic
from .mlp import MLPProblem
from .quadratic import Quadratic, quad_grads, quad_losses

__all__ = ["Stacked", "StackedCNN", "StackedLogistic", "StackedMLP", "StackedQuadratic",
           "pad_rows", "stack"]


MAX_INSTANCES = 10_000_000
"""Largest population :func:`stack` builds (its arrays are checked against the memory limit of
the run, :func:`toys.run_many`, before any work)."""


class Stacked:
    """The members every population has (see the module docstring)."""

    family = ""
    n_instances = n_clients = dim = 0

    def _broadcast(self, W):
        if W.ndim == 2:  # server points (B, d): every client's row
            return np.broadcast_to(W[:, None, :], (W.shape[0], self.n_clients, W.shape[1]))
        return W

    def __repr__(self):
        return (f"<{type(self).__name__}: B={self.n_instances}, N={self.n_clients}, "
                f"d={self.dim}>")


class StackedQuadratic(Stacked):
    """B quadratics F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i) + b_i stacked (``A`` (B, N, d, d),
    ``c`` (B, N, d), ``b`` (B, N)); full-batch gradients only (a noisy problem's minibatches
    draw from each instance's own stream, which a population does not have yet)."""

    family = "quadratic"

    def __init__(self, problems):
        self.A = np.stack([q.A for q in problems])
        self.c = np.stack([q.c for q in problems])
        self.b = np.stack([q.b for q in problems])
        self.p = np.stack([np.asarray(q.p, dtype=float) for q in problems])
        self.x_star = np.stack([q.x_star for q in problems])
        self.F_star = np.array([q.F_star for q in problems], dtype=float)
        self.F_star_i = np.stack([q.F_star_i for q in problems])
        self.x0 = np.stack([getattr(q, "x0", np.zeros(q.dim)) for q in problems])
        self.noise_std = np.array([q.noise_std for q in problems], dtype=float)
        self.n_instances, self.n_clients, self.dim = self.c.shape
        self.names = [getattr(q, "name", "quadratic") for q in problems]
        self.problems = tuple(problems)  # per-instance setup (e.g. seed 003's graph)

    def losses(self, W):
        return quad_losses(self.A, self.c, self.b, self._broadcast(np.asarray(W)))

    def grads(self, W):
        return quad_grads(self.A, self.c, self._broadcast(np.asarray(W)))

    def minibatch_grads(self, W, rng, batch_size):
        if batch_size is not None and np.any(self.noise_std > 0.0):
            raise DomainError("batch_size", batch_size,
                              "None (full batch) for a population of noisy quadratics "
                              "(minibatch noise per instance is not batched yet: toys.run)")
        return self.grads(W)

    def arrays(self):
        if np.any(self.noise_std > 0.0):
            raise DomainError("noise_std", self.noise_std.max(),
                              "0 for a population on the torch backend")
        return {"A": self.A, "c": self.c, "b": self.b, "p": self.p, "noise_std": 0.0}


_FAMILIES = {Quadratic: StackedQuadratic, Logistic: StackedLogistic, MLPProblem: StackedMLP,
             CNNProblem: StackedCNN}


def pad_rows(problem, n_max: int):
    """A logistic, MLP or CNN ``problem`` with its clients' rows padded to ``n_max`` with zero rows
    (the same problem; see :func:`toys.problems._stacked_logistic.pad_rows` and
    :func:`toys.problems._stacked_mlp.pad_mlp_rows`), so that problems whose clients hold
    different numbers of rows stack into one population.

    >>> import numpy as np, toys
    >>> q = toys.logistic([np.ones((2, 1)), np.ones((3, 1))], [[0, 1], [1, 1, 0]], l2=0.1)
    >>> pad_rows(q, 5).X.shape
    (2, 5, 1)
    """
    if isinstance(problem, MLPProblem):
        return pad_mlp_rows(problem, n_max)
    if isinstance(problem, CNNProblem):
        return pad_cnn_rows(problem, n_max)
    return _pad_logistic(problem, n_max)


def stack(problems) -> Stacked:
    """The population of ``problems`` (a non-empty sequence of problems of one family with
    equal ``n_clients`` and ``dim``; a :class:`Stacked` population is returned as it is).

    >>> import toys
    >>> stack([toys.quadratic(2, 2, seed=0), toys.quadratic(3, 2, seed=0)])
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: problems = '[N=2, N=3]' is outside its domain: problems with \
one n_clients and one dim
    """
    if hasattr(problems, "n_instances"):
        return problems
    try:
        problems = list(problems)
    except TypeError:
        raise DomainError("problems", problems, "a sequence of toys problems of one family "
                                                "or a stacked population") from None
    if not problems or len(problems) > MAX_INSTANCES:
        raise DomainError("problems", f"{len(problems)} problems",
                          f"1 to {MAX_INSTANCES} problems")
    kinds = {type(q) for q in problems}
    cls = next(iter(kinds))
    if len(kinds) > 1 or cls not in _FAMILIES:
        names = sorted(k.__name__ for k in kinds)
        raise DomainError("problems", names, "problems of one family with a population form: "
                          + ", ".join(k.__name__ for k in _FAMILIES))
    sizes = {(int(q.n_clients), int(q.dim)) for q in problems}
    if len(sizes) > 1:
        shown = sorted({f"N={n}" for n, _ in sizes} | {f"d={d}" for _, d in sizes}
                       if len({d for _, d in sizes}) > 1 else {f"N={n}" for n, _ in sizes})
        raise DomainError("problems", "[" + ", ".join(shown) + "]",
                          "problems with one n_clients and one dim")
    return _FAMILIES[cls](problems)
