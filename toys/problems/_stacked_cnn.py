"""The population form of the CNN (:class:`~toys.problems.cnn.CNNProblem`): B problems of one
architecture and shape as one batched oracle, for torch (CPU or CUDA).

As for the MLP (:mod:`toys.problems._stacked_mlp`), the B x N clients are laid end to end as
the N B clients of one ``CNNProblem`` (``flat``), whose ``torch.func`` oracle (one ``vmap``
over every client, in chunks under the torch backend's memory budget) is the family's own,
written once. Minibatches draw each instance's keys from the stream its own torch ``toys.run``
uses, with the shape of its own draw, so the rows drawn are the same; the values agree with
the separate runs to round-off (batched kernels may sum in another order). The numpy-side
methods run the same torch code on the CPU in float64, as :class:`CNNProblem`'s do.

Shapes. The instances must share N, n_max (:func:`pad_cnn_rows` makes it equal), the image
shape, the classes, the architecture, the hidden width and l2; anything else is refused by
name. The CNN is non-convex: x*, F* are NaN.

Example
-------
>>> import numpy as np
>>> from toys.problems.cnn import CNNProblem
>>> def prob(s):
...     r = np.random.default_rng(s)
...     return CNNProblem(r.normal(size=(2, 3, 4, 4)), r.integers(0, 3, (2, 3)),
...                       np.ones((2, 3), bool), classes=3, seed=s)
>>> pop = StackedCNN([prob(0), prob(1)])
>>> W = np.stack([np.stack([prob(b).x0] * 2) for b in range(2)])
>>> bool(np.allclose(pop.grads(W)[1], prob(1).grads(W[1]), rtol=1e-12, atol=1e-15))
True
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._stacked_flat import FlatStack, check_alike, padded, zero_rows
from ._stacked_logistic_torch import TorchStackedVmap
from .cnn import CNNProblem

__all__ = ["StackedCNN", "pad_cnn_rows"]


def pad_cnn_rows(problem: CNNProblem, n_max: int) -> CNNProblem:
    """``problem`` with its clients' rows padded to ``n_max`` (>= its own n_max) with zero
    images: the same losses, gradients, weights p, initial model and held-out split; returned
    as it is when already that long.

    >>> import numpy as np
    >>> q = CNNProblem(np.ones((2, 3, 4, 4)), np.zeros((2, 3), int), np.ones((2, 3), bool))
    >>> big = pad_cnn_rows(q, 5)
    >>> big.images.shape, bool((big.x0 == q.x0).all())
    ((2, 5, 4, 4), True)
    """
    if not isinstance(problem, CNNProblem):
        raise DomainError("problem", type(problem).__name__, "a toys CNNProblem")
    n = problem.images.shape[1]
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    out = CNNProblem(zero_rows(problem.images, extra), zero_rows(problem.labels, extra),
                     zero_rows(problem.mask, extra), classes=problem.classes,
                     hidden=problem.hidden, l2=problem.l2, name=problem.name, arch=problem.arch)
    return padded(out, problem, n)


_ALIKE = (("images shape", lambda q: q.images.shape), ("classes", lambda q: q.classes),
          ("arch", lambda q: q.arch), ("hidden", lambda q: q.hidden), ("l2", lambda q: q.l2))


class StackedCNN(FlatStack):
    """B CNN problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)`` for client points W (B, N, d) or server points (B, d) (torch on
    the CPU, float64), ``torch_oracle(ops)`` for ``backend="torch"``; ``p`` (B, N), ``x0``
    (B, d); ``x_star`` and ``F_star`` NaN (non-convex: no optima)."""

    family = "cnn"

    def __init__(self, problems):
        problems = list(problems)
        check_alike(problems, "CNN", _ALIKE, CNNProblem)
        q0 = problems[0]
        flat = CNNProblem(np.concatenate([q.images for q in problems]),
                          np.concatenate([q.labels for q in problems]),
                          np.concatenate([q.mask for q in problems]), classes=q0.classes,
                          hidden=q0.hidden, l2=q0.l2, name=q0.name, arch=q0.arch)
        self._members(problems, flat, lambda q: q.images.shape[1])

    def minibatch_grads(self, W, rng, batch_size):
        """Minibatches on the numpy backend are refused by name: the CNN's population runs on
        torch (``backend="torch"``), where each instance draws from its own generator."""
        if batch_size is None or bool(np.all(int(batch_size) >= self.counts_max)):
            return self.grads(W)
        raise DomainError("backend", "numpy", "'torch' for a population of CNNs with "
                                              "minibatch steps (toys.run_many)")

    def torch_oracle(self, ops):
        """The population's torch oracle: the flat problem's ``torch.func`` oracle, reshaped."""
        return TorchStackedVmap(self, ops)
