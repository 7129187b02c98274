"""The population form of the MLP (:class:`~toys.problems.mlp.MLPProblem`): B problems of one
shape as one batched oracle, numpy and torch.

As for logistic regression (:mod:`toys.problems._stacked_logistic`), the B x N clients are laid
end to end as the N B clients of one ``MLPProblem`` (``flat``), so every formula is the
family's own, written once (:func:`~toys.problems.mlp.mlp_losses`,
:func:`~toys.problems.mlp.mlp_grads`, the minibatch rows of
:meth:`~toys.problems.mlp.MLPProblem.minibatch_grads`): each client's arithmetic is that of its
own problem. Minibatches draw each instance's keys from the stream its own ``toys.run`` uses,
with the shape of its own draw (N, its unpadded n_max), so the rows drawn are the same. On
numpy each instance's models are its own run's bit for bit (tests); on torch the values agree
to round-off (batched kernels may sum in another order).

Shapes. The instances must share N, n_max (:func:`pad_mlp_rows` makes it equal), the
features, the classes, the hidden width and l2; anything else is refused by name. The MLP is
non-convex: x*, F* are NaN.

Example
-------
>>> import numpy as np
>>> from toys.problems.mlp import MLPProblem
>>> def prob(s):
...     r = np.random.default_rng(s)
...     return MLPProblem(r.normal(size=(3, 5, 4)), r.integers(0, 3, (3, 5)),
...                       np.ones((3, 5), bool), classes=3, hidden=4, seed=s)
>>> pop = StackedMLP([prob(0), prob(1)])
>>> W = np.stack([np.stack([prob(b).x0] * 3) for b in range(2)])
>>> bool((pop.grads(W)[1] == prob(1).grads(W[1])).all())
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._stacked_flat import FlatStack, check_alike, padded, zero_rows
from ._stacked_logistic_torch import TorchStackedVmap
from .mlp import MLPProblem

__all__ = ["StackedMLP", "pad_mlp_rows"]


def pad_mlp_rows(problem: MLPProblem, n_max: int) -> MLPProblem:
    """``problem`` with its clients' rows padded to ``n_max`` (>= its own n_max) with zero
    rows: the same losses, gradients, weights p, initial model and held-out split; returned as
    it is when already that long.

    >>> import numpy as np
    >>> q = MLPProblem(np.ones((2, 3, 2)), np.zeros((2, 3), int), np.ones((2, 3), bool),
    ...                classes=2, hidden=2)
    >>> big = pad_mlp_rows(q, 5)
    >>> big.X.shape, bool((big.x0 == q.x0).all())
    ((2, 5, 2), True)
    """
    if not isinstance(problem, MLPProblem):
        raise DomainError("problem", type(problem).__name__, "a toys MLPProblem")
    n = problem.X.shape[1]
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    out = MLPProblem(zero_rows(problem.X, extra), zero_rows(problem.y, extra),
                     zero_rows(problem.mask, extra), classes=problem.classes,
                     hidden=problem.hidden, l2=problem.l2, name=problem.name)
    return padded(out, problem, n)


_ALIKE = (("X shape (N, n_max, f)", lambda q: q.X.shape), ("classes", lambda q: q.classes),
          ("hidden", lambda q: q.hidden), ("l2", lambda q: q.l2))


class StackedMLP(FlatStack):
    """B MLP problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)``, ``minibatch_grads(W, rngs, batch_size)`` for client points W
    (B, N, d) or server points (B, d); ``p`` (B, N), ``x0`` (B, d); ``x_star`` and
    ``F_star`` NaN (non-convex: no optima)."""

    family = "mlp"

    def __init__(self, problems):
        problems = list(problems)
        check_alike(problems, "MLP", _ALIKE, MLPProblem)
        q0 = problems[0]
        flat = MLPProblem(np.concatenate([q.X for q in problems]),
                          np.concatenate([q.y for q in problems]),
                          np.concatenate([q.mask for q in problems]), classes=q0.classes,
                          hidden=q0.hidden, l2=q0.l2, name=q0.name)
        self._members(problems, flat, lambda q: q.X.shape[1])

    def _keyed(self, W, keys, b, sel):
        return self.flat._np.keyed_grads(W, keys, b, sel)

    def torch_oracle(self, ops):
        """The population's torch oracle: the flat problem's ``torch.func`` oracle, reshaped."""
        return TorchStackedVmap(self, ops)
