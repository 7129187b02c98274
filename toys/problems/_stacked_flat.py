"""What the populations of data-holding problems share (logistic regression, the MLP, the CNN:
:mod:`toys.problems._stacked_logistic`, :mod:`~toys.problems._stacked_mlp`,
:mod:`~toys.problems._stacked_cnn`): B problems of one shape laid end to end as the N B clients
of one problem of the family (``flat``), so that each client's arithmetic is its own problem's,
written once by the family.

:class:`FlatStack` holds the members a population has (``n_instances``, ``n_clients``,
``dim``, ``p``, ``x0``, ``counts_max``, ``draw_len``, ``names``, ``problems``), reshapes client
points (B, N, d) or server points (B, d) to the flat problem's (B N, d) rows, and draws each
instance's minibatch keys from its own stream (:meth:`FlatStack.minibatch_grads`; the family
computes the gradient of the drawn rows of the participants only). :func:`check_alike` refuses
problems that do not stack, by name; :func:`padded` is the common end of a family's
``pad_rows`` (more zero rows: the same problem, drawing the keys of its unpadded rows).

Example
-------
>>> import numpy as np
>>> zero_rows(np.ones((2, 3, 4)), 2).shape
(2, 5, 4)
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

from ..validation import check_int

__all__ = ["FlatStack", "check_alike", "padded", "zero_rows"]

#: attributes a padded problem carries over (the held-out split, the initial model and what the
#: reproductions attach)
COPIED = ("test", "x0", "parts", "train_labels", "model_used", "process")


def zero_rows(a, extra: int):
    """``a`` (N, n, ...) with ``extra`` zero rows appended along axis 1 (its dtype kept)."""
    return np.concatenate([a, np.zeros((a.shape[0], extra, *a.shape[2:]), dtype=a.dtype)],
                          axis=1)


def padded(out, problem, n: int):
    """``out`` (``problem`` rebuilt with padded rows) with ``problem``'s weights p (the same
    bits, not renormalised), the key length of its unpadded draw and the attributes of
    :data:`COPIED`."""
    out.p = np.array(problem.p, dtype=float)
    out.draw_len = problem.__dict__.get("draw_len", n)  # a population draws the unpadded keys
    for name in COPIED:
        if name in problem.__dict__:
            setattr(out, name, problem.__dict__[name])
    return out


def check_alike(problems, family: str, checks, cls=None) -> None:
    """Refuse ``problems`` unless there is one at least, each an instance of ``cls`` (if
    given), and each ``(what, key)`` of ``checks`` takes one value over them (the first check,
    the padded shape, hints at ``pad_rows``)."""
    if not problems or (cls is not None and not all(isinstance(q, cls) for q in problems)):
        raise DomainError("problems", sorted({type(q).__name__ for q in problems}),
                          f"one or more {cls.__name__ if cls else family} problems")
    for k, (what, key) in enumerate(checks):
        vals = {key(q) for q in problems}
        if len(vals) > 1:
            hint = " (pad them to one n_max with toys.problems.stacked.pad_rows)" if k == 0 \
                else ""
            raise DomainError("problems", sorted(map(str, vals)),
                              f"{family} problems with one {what}{hint}")


class FlatStack:
    """The population members and the reshaping around ``flat`` (see the module docstring); a
    family sets ``flat`` and calls :meth:`_members`, and gives :meth:`_keyed` (the minibatch
    gradient of given keys) where it draws on numpy."""

    family = ""

    def _members(self, problems, flat, row_len) -> None:
        q0 = problems[0]
        B = len(problems)
        self.n_instances, self.n_clients, self.dim = B, q0.n_clients, q0.dim
        self.flat = flat
        self.counts_max = np.array([int(q.counts.max()) for q in problems])
        # each instance draws the keys of its own unpadded rows (pad_rows keeps the length)
        self.draw_len = np.array([q.__dict__.get("draw_len", row_len(q)) for q in problems])
        self.p = np.stack([np.asarray(q.p, dtype=float) for q in problems])
        self.x0 = np.stack([np.asarray(getattr(q, "x0", np.zeros(q.dim)), float)
                            for q in problems])
        self.x_star = np.full((B, self.dim), math.nan)  # a family with optima sets them
        self.F_star = np.full(B, math.nan)
        self.noise_std = np.zeros(B)
        self.names = [getattr(q, "name", self.family) for q in problems]
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
        """Each instance's minibatch gradients, as its own problem's ``minibatch_grads``
        (``rng``: the population's :class:`~toys.engine._population_noise.InstanceRngs`):
        the participants' rows only, the others zero."""
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
        G[sel] = self._keyed(self._rows(W)[sel], keys[sel], b, sel)
        G = G.reshape(B, N, -1)
        if full.any():
            G = np.where(full[:, None, None], self.grads(W), G)
        return G

    def _keyed(self, W, keys, b, sel):  # pragma: no cover - every family gives its own
        raise NotImplementedError

    def __repr__(self):
        return (f"<{type(self).__name__}: B={self.n_instances}, N={self.n_clients}, "
                f"d={self.dim}>")
