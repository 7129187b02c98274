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

import math

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._stacked_logistic_torch import TorchStackedLogistic
from .cnn import CNNProblem

__all__ = ["StackedCNN", "pad_cnn_rows"]

_COPIED = ("test", "x0", "parts", "train_labels", "model_used", "process")


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
    N, n = problem.images.shape[:2]
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    images = np.concatenate([problem.images,
                             np.zeros((N, extra, *problem.images.shape[2:]))], axis=1)
    mask = np.concatenate([problem.mask, np.zeros((N, extra), dtype=bool)], axis=1)
    labels = np.concatenate([problem.labels, np.zeros((N, extra), dtype=int)], axis=1)
    out = CNNProblem(images, labels, mask, classes=problem.classes, hidden=problem.hidden,
                     l2=problem.l2, name=problem.name, arch=problem.arch)
    out.p = np.array(problem.p, dtype=float)  # the same bits (not renormalised)
    out.x0 = np.array(problem.x0, dtype=float)
    out.draw_len = problem.__dict__.get("draw_len", n)  # a population draws the unpadded keys
    for name in _COPIED:
        if name in problem.__dict__:
            setattr(out, name, problem.__dict__[name])
    return out


def _check_alike(problems) -> None:
    if not all(isinstance(q, CNNProblem) for q in problems):
        raise DomainError("problems", sorted({type(q).__name__ for q in problems}),
                          "CNNProblem instances only")
    for what, key in (("images shape", lambda q: q.images.shape),
                      ("classes", lambda q: q.classes), ("arch", lambda q: q.arch),
                      ("hidden", lambda q: q.hidden), ("l2", lambda q: q.l2)):
        vals = {key(q) for q in problems}
        if len(vals) > 1:
            hint = " (pad them to one n_max with toys.problems.stacked.pad_rows)" \
                if what.startswith("images") else ""
            raise DomainError("problems", sorted(map(str, vals)),
                              f"CNN problems with one {what}{hint}")


class StackedCNN:
    """B CNN problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)`` for client points W (B, N, d) or server points (B, d) (torch on
    the CPU, float64), ``torch_oracle(ops)`` for ``backend="torch"``; ``p`` (B, N), ``x0``
    (B, d); ``x_star`` and ``F_star`` NaN (non-convex: no optima)."""

    family = "cnn"

    def __init__(self, problems, optima: bool = False):
        problems = list(problems)
        if not problems:
            raise DomainError("problems", "[]", "at least one CNN problem")
        _check_alike(problems)
        q0 = problems[0]
        B, N = len(problems), q0.n_clients
        self.n_instances, self.n_clients, self.dim = B, N, q0.dim
        self.flat = CNNProblem(np.concatenate([q.images for q in problems]),
                               np.concatenate([q.labels for q in problems]),
                               np.concatenate([q.mask for q in problems]), classes=q0.classes,
                               hidden=q0.hidden, l2=q0.l2, name=q0.name, arch=q0.arch)
        self.counts_max = np.array([int(q.counts.max()) for q in problems])
        self.draw_len = np.array([q.__dict__.get("draw_len", q.images.shape[1])
                                  for q in problems])
        self.p = np.stack([np.asarray(q.p, dtype=float) for q in problems])
        self.x0 = np.stack([np.asarray(q.x0, dtype=float) for q in problems])
        self.x_star = np.full((B, self.dim), math.nan)
        self.F_star = np.full(B, math.nan)
        self.noise_std = np.zeros(B)
        self.names = [getattr(q, "name", "cnn") for q in problems]
        self.problems = tuple(problems)

    def _rows(self, W):
        W = np.asarray(W, dtype=float)
        if W.ndim == 2:  # server points (B, d): every client's row
            W = np.broadcast_to(W[:, None, :], (W.shape[0], self.n_clients, W.shape[1]))
        return W.reshape(-1, self.dim)

    def losses(self, W):
        return self.flat.losses(self._rows(W)).reshape(self.n_instances, self.n_clients)

    def grads(self, W):
        return self.flat.grads(self._rows(W)).reshape(self.n_instances, self.n_clients, -1)

    def minibatch_grads(self, W, rng, batch_size):
        """Minibatches on the numpy backend are refused by name: the CNN's population runs on
        torch (``backend="torch"``), where each instance draws from its own generator."""
        if batch_size is None or bool(np.all(int(batch_size) >= self.counts_max)):
            return self.grads(W)
        raise DomainError("backend", "numpy", "'torch' for a population of CNNs with "
                                              "minibatch steps (toys.run_many)")

    def torch_oracle(self, ops):
        """The population's torch oracle: the flat problem's ``torch.func`` oracle, reshaped."""
        return _TorchStackedCNN(self, ops)

    def __repr__(self):
        return f"<StackedCNN: B={self.n_instances}, N={self.n_clients}, d={self.dim}>"


class _TorchStackedCNN(TorchStackedLogistic):
    """:class:`~toys.problems._stacked_logistic_torch.TorchStackedLogistic`'s reshaping and
    per-instance draws around the flat CNN's torch oracle (its minibatch rows' gradient)."""

    def _flat_oracle(self, pop, ops):
        return pop.flat.torch_oracle(ops)

    def _minibatch(self, W, rows, idx, wb):
        return self.flat._grads_on(W, rows, idx, wb)
