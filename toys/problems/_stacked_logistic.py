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

import math

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int
from ._logistic_math import sigmoid, softmax
from .logistic import Logistic

__all__ = ["StackedLogistic", "pad_rows"]

_COPIED = ("test", "x0", "parts", "train_labels", "model_used", "process")


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
    N, n, f = problem.X.shape
    n_max = check_int("n_max", n_max, lo=n)
    if n_max == n:
        return problem
    extra = n_max - n
    X = np.concatenate([problem.X, np.zeros((N, extra, f))], axis=1)
    mask = np.concatenate([problem.mask, np.zeros((N, extra), dtype=bool)], axis=1)
    y = np.concatenate([problem.y, np.zeros((N, extra), dtype=problem.y.dtype)], axis=1)
    binary = problem.kind == "logistic"
    off = None if not binary or problem.__dict__.get("_off") is None else np.concatenate(
        [problem.offset, np.zeros((N, extra))], axis=1)
    out = Logistic(X, y, mask, l2=problem.l2, offset=off,
                   classes=None if binary else problem.classes, name=problem.name)
    out.p = np.array(problem.p, dtype=float)  # the same bits (not renormalised)
    out.draw_len = problem.__dict__.get("draw_len", n)  # a population draws the unpadded keys
    for name in _COPIED:
        if name in problem.__dict__:
            setattr(out, name, problem.__dict__[name])
    return out


def _check_alike(problems) -> None:
    for what, key in (("X shape (N, n_max, f)", lambda q: q.X.shape),
                      ("kind", lambda q: q.kind), ("classes", lambda q: q.classes),
                      ("l2", lambda q: q.l2), ("offset", lambda q: q.__dict__.get("_off") is None)):
        vals = {key(q) for q in problems}
        if len(vals) > 1:
            hint = " (pad them to one n_max with toys.problems.stacked.pad_rows)" \
                if what.startswith("X") else ""
            raise DomainError("problems", sorted(map(str, vals)),
                              f"logistic problems with one {what}{hint}")
    if any(q.__dict__.get("_sel") is not None for q in problems):
        raise DomainError("problems", "a subset oracle", "whole logistic problems")


class StackedLogistic:
    """B logistic problems of one shape (see the module docstring): ``losses(W) -> (B, N)``,
    ``grads(W) -> (B, N, d)``, ``minibatch_grads(W, rngs, batch_size)`` for client points W
    (B, N, d) or server points (B, d); ``p`` (B, N), ``x0`` (B, d), ``x_star`` (B, d),
    ``F_star`` (B,) (``optima=False``: NaN, nothing solved: for runs that record no gaps)."""

    family = "logistic"

    def __init__(self, problems, optima: bool = True):
        problems = list(problems)
        _check_alike(problems)
        q0 = problems[0]
        B, N = len(problems), q0.X.shape[0]
        self.n_instances, self.n_clients, self.dim = B, N, q0.dim
        binary = q0.kind == "logistic"
        off = None if q0.__dict__.get("_off") is None else np.concatenate(
            [q.offset for q in problems])
        self.flat = Logistic(np.concatenate([q.X for q in problems]),
                             np.concatenate([q.y for q in problems]),
                             np.concatenate([q.mask for q in problems]), l2=q0.l2, offset=off,
                             classes=None if binary else q0.classes, name=q0.name)
        self.counts_max = np.array([int(q.counts.max()) for q in problems])
        # each instance draws the keys of its own unpadded rows (pad_rows keeps the length)
        self.draw_len = np.array([q.__dict__.get("draw_len", q.X.shape[1]) for q in problems])
        self.p = np.stack([np.asarray(q.p, dtype=float) for q in problems])
        self.x0 = np.stack([np.asarray(getattr(q, "x0", np.zeros(q.dim)), float)
                            for q in problems])
        nan = np.full((B, self.dim), math.nan)
        self.x_star = np.stack([q.x_star for q in problems]) if optima else nan
        self.F_star = np.array([q.F_star for q in problems], float) if optima else nan[:, 0]
        self.noise_std = np.zeros(B)
        self.names = [getattr(q, "name", "logistic") for q in problems]
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
        """Each instance's minibatch gradients, as its own ``Logistic.minibatch_grads``
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
        G[sel] = _minibatch(self.flat, self._rows(W)[sel], keys[sel], b, sel)
        G = G.reshape(B, N, -1)
        if full.any():
            G = np.where(full[:, None, None], self.grads(W), G)
        return G

    def torch_oracle(self, ops):
        """The population's torch oracle (:mod:`toys.problems._stacked_logistic_torch`)."""
        from ._stacked_logistic_torch import TorchStackedLogistic

        return TorchStackedLogistic(self, ops)

    def __repr__(self):
        return f"<StackedLogistic: B={self.n_instances}, N={self.n_clients}, d={self.dim}>"


def _minibatch(P: Logistic, W, keys, b, sel):
    """:meth:`Logistic.minibatch_grads` of the clients ``sel`` of ``P`` at ``W`` (len(sel),
    d) with their drawn ``keys`` (len(sel), n_max): the b rows of smallest key per client (the
    statements of a participants-only round of toys.run)."""
    keys[~P.mask[sel]] = np.inf
    idx = np.argpartition(keys, b - 1, axis=1)[:, :b]
    rows = np.arange(len(sel))[:, None]
    valid = np.isfinite(keys[rows, idx])
    beff = np.minimum(b, P.counts[sel])
    idx = np.where(valid, idx, 0)
    at = sel[:, None]  # the rows of the selected clients in P's arrays
    Xb = P.X[at, idx]
    wb = valid / beff[:, None]
    m = len(sel)
    T = W if P.kind == "logistic" else W.reshape(m, P.n_features, P.classes)
    Xt = Xb.transpose(0, 2, 1)
    if P.kind == "logistic":
        z = np.matmul(Xb, T[..., None])[..., 0] + P.offset[at, idx]
        r = (sigmoid(z) - P.y[at, idx]) * wb
        G = np.matmul(Xt, r[..., None])[..., 0]
    else:
        R = (softmax(np.matmul(Xb, T)) - P.Y[at, idx]) * wb[..., None]
        G = np.matmul(Xt, R)
    return G.reshape(m, -1) + P.l2 * T.reshape(m, -1)
