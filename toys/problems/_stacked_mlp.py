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

import math

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._stacked_logistic_torch import TorchStackedLogistic
from .mlp import MLPProblem

__all__ = ["StackedMLP", "pad_mlp_rows"]

_COPIED = ("test", "x0", "parts", "train_labels", "model_used", "process")


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
    N, n, f = problem.X.shape
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    X = np.concatenate([problem.X, np.zeros((N, extra, f))], axis=1)
    mask = np.concatenate([problem.mask, np.zeros((N, extra), dtype=bool)], axis=1)
    y = np.concatenate([problem.y, np.zeros((N, extra), dtype=problem.y.dtype)], axis=1)
    out = MLPProblem(X, y, mask, classes=problem.classes, hidden=problem.hidden, l2=problem.l2,
                     name=problem.name)
    out.p = np.array(problem.p, dtype=float)  # the same bits (not renormalised)
    out.x0 = np.array(problem.x0, dtype=float)
    out.draw_len = problem.__dict__.get("draw_len", n)  # a population draws the unpadded keys
    for name in _COPIED:
        if name in problem.__dict__:
            setattr(out, name, problem.__dict__[name])
    return out


def _check_alike(problems) -> None:
    if not all(isinstance(q, MLPProblem) for q in problems):
        raise DomainError("problems", sorted({type(q).__name__ for q in problems}),
                          "MLPProblem instances only")
    for what, key in (("X shape (N, n_max, f)", lambda q: q.X.shape),
                      ("classes", lambda q: q.classes), ("hidden", lambda q: q.hidden),
                      ("l2", lambda q: q.l2)):
        vals = {key(q) for q in problems}
        if len(vals) > 1:
            hint = " (pad them to one n_max with toys.problems.stacked.pad_rows)" \
                if what.startswith("X") else ""
            raise DomainError("problems", sorted(map(str, vals)),
                              f"MLP problems with one {what}{hint}")


class StackedMLP:
    """B MLP problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)``, ``minibatch_grads(W, rngs, batch_size)`` for client points W
    (B, N, d) or server points (B, d); ``p`` (B, N), ``x0`` (B, d); ``x_star`` and
    ``F_star`` NaN (non-convex: no optima)."""

    family = "mlp"

    def __init__(self, problems, optima: bool = False):
        problems = list(problems)
        if not problems:
            raise DomainError("problems", "[]", "at least one MLP problem")
        _check_alike(problems)
        q0 = problems[0]
        B, N = len(problems), q0.n_clients
        self.n_instances, self.n_clients, self.dim = B, N, q0.dim
        self.flat = MLPProblem(np.concatenate([q.X for q in problems]),
                               np.concatenate([q.y for q in problems]),
                               np.concatenate([q.mask for q in problems]), classes=q0.classes,
                               hidden=q0.hidden, l2=q0.l2, name=q0.name)
        self.counts_max = np.array([int(q.counts.max()) for q in problems])
        self.draw_len = np.array([q.__dict__.get("draw_len", q.X.shape[1]) for q in problems])
        self.p = np.stack([np.asarray(q.p, dtype=float) for q in problems])
        self.x0 = np.stack([np.asarray(q.x0, dtype=float) for q in problems])
        self.x_star = np.full((B, self.dim), math.nan)
        self.F_star = np.full(B, math.nan)
        self.noise_std = np.zeros(B)
        self.names = [getattr(q, "name", "mlp") for q in problems]
        self.problems = tuple(problems)

    def _rows(self, W):
        W = np.asarray(W, dtype=float)
        if W.ndim == 2:  # server points (B, d): every client's row
            W = np.broadcast_to(W[:, None, :], (W.shape[0], self.n_clients, W.shape[1]))
        return np.ascontiguousarray(W.reshape(-1, self.dim))

    def losses(self, W):
        return self.flat.losses(self._rows(W)).reshape(self.n_instances, self.n_clients)

    def grads(self, W):
        return self.flat.grads(self._rows(W)).reshape(self.n_instances, self.n_clients, -1)

    def minibatch_grads(self, W, rng, batch_size):
        """Each instance's minibatch gradients, as its own ``MLPProblem.minibatch_grads``
        (``rng``: the population's :class:`~toys.engine._population_noise.InstanceRngs`)."""
        if batch_size is None:
            return self.grads(W)
        b = check_int("batch_size", batch_size, lo=1)
        full = b >= self.counts_max  # these instances take the full gradient: no draw
        if full.all():
            return self.grads(W)
        if not hasattr(rng, "random") or len(getattr(rng, "gens", ())) != self.n_instances:
            raise DomainError("rng", type(rng).__name__,
                              "the population's per-instance streams (toys.run_many, numpy)")
        B, N, n = self.n_instances, self.n_clients, self.flat.mask.shape[1]
        keys = rng.random((N, n), need=~full, last=self.draw_len).reshape(B * N, n)
        part = getattr(rng, "mask", None)  # the participants' rows only (absent: discarded)
        sel = np.arange(B * N) if part is None else np.flatnonzero(part.reshape(-1))
        G = np.zeros((B * N, self.dim))
        G[sel] = self.flat._np.keyed_grads(self._rows(W)[sel], keys[sel], b, sel)
        G = G.reshape(B, N, -1)
        if full.any():
            G = np.where(full[:, None, None], self.grads(W), G)
        return G

    def torch_oracle(self, ops):
        """The population's torch oracle: the flat problem's ``torch.func`` oracle, reshaped."""
        return _TorchStackedMLP(self, ops)

    def __repr__(self):
        return f"<StackedMLP: B={self.n_instances}, N={self.n_clients}, d={self.dim}>"


class _TorchStackedMLP(TorchStackedLogistic):
    """:class:`~toys.problems._stacked_logistic_torch.TorchStackedLogistic`'s reshaping and
    per-instance draws around the flat MLP's torch oracle (its minibatch rows' gradient)."""

    def _flat_oracle(self, pop, ops):
        return pop.flat.torch_oracle(ops)

    def _minibatch(self, W, rows, idx, wb):
        return self.flat._grads_on(W, rows, idx, wb)
