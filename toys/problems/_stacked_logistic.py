"""The population form of logistic regression (binary and multinomial): B
:class:`~toys.problems.logistic.Logistic` problems with one shape, as one batched oracle.

The B x N clients are laid end to end as the N B clients of one ``Logistic`` (``flat``), so
every formula is the family's own, written once (:meth:`Logistic.losses`, :meth:`Logistic.grads`,
the minibatch gradient of :meth:`Logistic.minibatch_grads`): each client's arithmetic is that of
its own problem, bit for bit. Minibatches draw each instance's keys from the stream its own
``toys.run`` uses (:class:`toys.engine._population_noise.InstanceRngs`), with the shape of its
own draw (N, n_max), so the rows drawn are the same.

One exception: toys.run evaluates a binary problem's F at the server model with the
one-pass kernel :meth:`Logistic.losses_at` where it batches points (full participation and
full-batch steps), which agrees with :meth:`Logistic.losses` to about eps; a population's
state metrics (``loss``, ``gap``) of binary problems then agree to 1e-15, not bit for bit
(the models, gradients and everything a run draws are bit for bit).

Shapes. The instances must share N, n_max (the padded length of the clients' rows), the
features, the kind, the classes and l2; anything else is refused by name. Data whose n_max
differs across instances (a random partition per seed) are made equal with :func:`pad_rows`
(more zero rows of padding: the same problem, whose own ``toys.run`` is the reference).

Example
-------
>>> import numpy as np, toys
>>> rng = np.random.default_rng(0)
>>> def prob(s):
...     r = np.random.default_rng(s)
...     return toys.logistic([r.normal(size=(6, 2)) for _ in range(3)],
...                          [r.integers(0, 3, 6) for _ in range(3)], l2=0.1, classes=3)
>>> pop = StackedLogistic([prob(0), prob(1)], optima=False)
>>> W = rng.normal(size=(2, 3, 6))
>>> bool((pop.grads(W)[1] == prob(1).grads(W[1])).all())
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._logistic_noise import keyed_minibatch_grads
from ._stacked_flat import FlatStack, check_alike, padded, zero_rows
from .logistic import Logistic

__all__ = ["StackedLogistic", "pad_rows"]


def pad_rows(problem: Logistic, n_max: int) -> Logistic:
    """``problem`` with its clients' rows padded to ``n_max`` (>= its own n_max) with zero rows:
    the same losses, gradients, weights p and held-out split (``test``, ``x0`` and the
    reproductions' attributes are carried over); returned as it is when already that long.

    >>> import numpy as np, toys
    >>> q = toys.logistic([np.ones((2, 1)), np.ones((3, 1))], [[0, 1], [1, 1, 0]], l2=0.1)
    >>> big = pad_rows(q, 5)
    >>> big.X.shape, bool(big.losses(np.ones(1)).tolist() == q.losses(np.ones(1)).tolist())
    ((2, 5, 1), True)
    """
    if not isinstance(problem, Logistic) or problem.__dict__.get("_sel") is not None:
        raise DomainError("problem", type(problem).__name__, "a toys Logistic problem")
    n = problem.X.shape[1]
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    binary = problem.kind == "logistic"
    off = None if not binary or problem.__dict__.get("_off") is None else zero_rows(
        problem.offset, extra)
    out = Logistic(zero_rows(problem.X, extra), zero_rows(problem.y, extra),
                   zero_rows(problem.mask, extra), l2=problem.l2, offset=off,
                   classes=None if binary else problem.classes, name=problem.name)
    return padded(out, problem, n)


_ALIKE = (("X shape (N, n_max, f)", lambda q: q.X.shape), ("kind", lambda q: q.kind),
          ("classes", lambda q: q.classes), ("l2", lambda q: q.l2),
          ("offset", lambda q: q.__dict__.get("_off") is None))


class StackedLogistic(FlatStack):
    """B logistic problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)``, ``minibatch_grads(W, rngs, batch_size)`` for client points W
    (B, N, d) or server points (B, d); ``p`` (B, N), ``x0`` (B, d), ``x_star`` (B, d),
    ``F_star`` (B,) (``optima=False``: NaN, nothing solved: for runs that record no gaps)."""

    family = "logistic"

    def __init__(self, problems, optima: bool = True):
        problems = list(problems)
        check_alike(problems, "logistic", _ALIKE)
        if any(q.__dict__.get("_sel") is not None for q in problems):
            raise DomainError("problems", "a subset oracle", "whole logistic problems")
        q0 = problems[0]
        binary = q0.kind == "logistic"
        off = None if q0.__dict__.get("_off") is None else np.concatenate(
            [q.offset for q in problems])
        flat = Logistic(np.concatenate([q.X for q in problems]),
                        np.concatenate([q.y for q in problems]),
                        np.concatenate([q.mask for q in problems]), l2=q0.l2, offset=off,
                        classes=None if binary else q0.classes, name=q0.name)
        self._members(problems, flat, lambda q: q.X.shape[1])
        if optima:
            self.x_star = np.stack([q.x_star for q in problems])
            self.F_star = np.array([q.F_star for q in problems], float)

    def _keyed(self, W, keys, b, sel):
        return keyed_minibatch_grads(self.flat, W, keys, b, sel)

    def torch_oracle(self, ops):
        """The population's torch oracle (:mod:`toys.problems._stacked_logistic_torch`)."""
        from ._stacked_logistic_torch import TorchStackedLogistic

        return TorchStackedLogistic(self, ops)
