"""Size-bucketed logistic problems: bounded padding for skewed client sizes.

A :class:`~toys.problems.logistic.Logistic` problem stores every client padded to the largest
client, ``X`` (N, n_max, f). With skewed (Dirichlet, log-normal) client sizes that block is many
times the real data (log-normal sizes of spread 1.5: n_max / mean n ~ 35 at N = 2000).
:class:`Bucketed` groups the clients by size into buckets, each a ``Logistic`` padded to its own
largest client, so that every client's padded length is at most ``max_padding`` x its size:

    stored rows = sum_b N_b max_{i in b} n_i  <=  max_padding x sum_i n_i  (the real rows).

The buckets are geometric (:func:`bucket_plan`): the largest remaining client m opens a bucket
holding every remaining client with n_i >= m / max_padding; there are at most
1 + log(n_max / n_min) / log(max_padding) of them (the distinct sizes when max_padding = 1).
Client i stays client i: the buckets hold index arrays, every method loops over the buckets
(never over clients) and scatters the results back into (N, ...) arrays. The problem is the
padded problem's (same ``p``, names, ``kind``, ``dim``, ``l2``, ``counts``, ``x0``, ``test``,
optima); the values agree with it to round-off (a bucket sums its rows over a shorter padded
length), and minibatch draws are deterministic given the generator (one draw per bucket, in
bucket order; not the padded problem's draws).

Built by ``toys.logistic(..., max_padding=...)`` or ``toys.from_dataset(..., max_padding=...)``.

Example
-------
>>> import numpy as np, toys
>>> rng = np.random.default_rng(0)
>>> n = [200, 150, 20, 12, 3, 2]
>>> Xs = [rng.normal(size=(k, 2)) for k in n]
>>> ys = [(rng.random(k) < 0.5).astype(float) for k in n]
>>> prob = toys.logistic(Xs, ys, l2=0.1, max_padding=2.0)
>>> type(prob).__name__, prob.stored_rows, sum(n), 6 * max(n)   # 2*200 + 2*20 + 2*3 rows
('Bucketed', 446, 387, 1200)
>>> pad = toys.logistic(Xs, ys, l2=0.1)
>>> bool(np.allclose(prob.losses(pad.x_star), pad.losses(pad.x_star), rtol=1e-13))
True
"""

from __future__ import annotations

import copy
import math
import numbers

import numpy as np

from boundlab.errors import DomainError

from ._bucketed_optima import BucketedOptima
from ._logistic_eval import PooledEvaluation
from .base import FederatedProblem

__all__ = ["Bucketed", "bucket_arrays", "bucket_plan", "check_max_padding"]

MAX_PADDING_DOMAIN = "None or a real number >= 1"


def check_max_padding(value):
    """``max_padding`` as a float >= 1, or None.

    >>> check_max_padding(2), check_max_padding(None)
    (2.0, None)
    >>> check_max_padding(0.5)
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: max_padding = 0.5 is outside its domain: None or a real number >= 1
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise DomainError("max_padding", value, MAX_PADDING_DOMAIN)
    v = float(value)
    if not math.isfinite(v) or v < 1.0:
        raise DomainError("max_padding", value, MAX_PADDING_DOMAIN)
    return v


def bucket_plan(sizes, max_padding: float) -> list:
    """Client index arrays (each sorted) of the size buckets, largest clients first: the
    largest remaining client m opens a bucket of every remaining client with
    n_i >= m / max_padding.

    >>> [b.tolist() for b in bucket_plan([5, 100, 60, 7, 40], 2.0)]
    [[1, 2], [4], [0, 3]]
    """
    n = np.asarray(sizes)
    order = np.argsort(-n, kind="stable")
    s = -n[order].astype(float)  # ascending
    out, lo = [], 0
    while lo < len(s):  # one iteration per bucket
        hi = int(np.searchsorted(s, s[lo] / max_padding, side="right"))
        out.append(np.sort(order[lo:hi]))
        lo = hi
    return out


def bucket_arrays(Xs, ys, sizes, *, max_padding, offsets=None):
    """The padded arrays of the size buckets of per-client arrays (as :func:`toys.logistic`
    checked them): a generator of ``(idx, X, y, mask, offset)`` per bucket of
    :func:`bucket_plan` (one concatenation per bucket), or None when the buckets would store as
    many rows as one padded block. :func:`toys.logistic` makes each bucket a ``Logistic`` and
    the whole a :class:`Bucketed` problem.

    >>> import numpy as np
    >>> Xs, ys = [np.ones((k, 1)) for k in (8, 1)], [np.arange(k) % 2 for k in (8, 1)]
    >>> [(idx.tolist(), X.shape) for idx, X, *_ in bucket_arrays(Xs, ys, np.array([8, 1]),
    ...                                                           max_padding=2.0)]
    [([0], (1, 8, 1)), ([1], (1, 1, 1))]
    >>> bucket_arrays(Xs, ys, np.array([8, 1]), max_padding=8.0) is None   # one bucket
    True
    """
    sizes = np.asarray(sizes)
    N = len(sizes)
    plan = bucket_plan(sizes, max_padding)
    if sum(len(b) * int(sizes[b].max()) for b in plan) >= N * int(sizes.max()):
        return None
    if offsets is not None and len(offsets) != N:
        raise DomainError("offsets", len(offsets), f"{N} arrays (one per client)")
    return _packed(Xs, ys, sizes, plan, offsets)


def _packed(Xs, ys, sizes, plan, offsets):
    for idx in plan:  # buckets (construction: one concatenation per bucket)
        m = int(sizes[idx].max())
        mask = np.arange(m)[None, :] < sizes[idx][:, None]
        X = np.zeros((len(idx), m, Xs[0].shape[1]))
        X[mask] = np.concatenate([Xs[i] for i in idx])
        y = np.zeros((len(idx), m))
        y[mask] = np.concatenate([ys[i] for i in idx])
        off = None
        if offsets is not None:
            off = np.zeros((len(idx), m))
            off[mask] = np.concatenate([np.asarray(offsets[i], dtype=float).reshape(-1)
                                        for i in idx])
        yield idx, X, y, mask, off
        del X, y, off


class Bucketed(BucketedOptima, PooledEvaluation, FederatedProblem):
    """A logistic problem stored as size buckets ``parts`` = [(client indices, Logistic), ...]
    (see the module docstring); ``p`` (N,) the client weights.

    Attributes as :class:`~toys.problems.logistic.Logistic` (``kind``, ``classes``, ``dim``,
    ``n_features``, ``l2``, ``counts``, ``p``, ``x0``, ``test``, the lazily solved optima), plus
    ``parts``, ``max_padding`` and ``stored_rows`` (the padded rows kept, <= max_padding x
    ``counts.sum()``). Each bucket's own ``p`` is set to its clients' weights over their sum.
    """

    def __init__(self, parts, p, name: str = "logistic", max_padding: float | None = None):
        self.parts = [(np.asarray(idx, dtype=np.intp), sub) for idx, sub in parts]
        first = self.parts[0][1]
        N = sum(len(idx) for idx, _ in self.parts)
        self.n_clients, self.name, self.max_padding = N, name, max_padding
        self.kind, self.classes, self.dim = first.kind, first.classes, first.dim
        self.n_features, self.l2 = first.n_features, first.l2
        self.counts = np.zeros(N, dtype=int)
        self._bucket_of = np.full(N, -1, dtype=np.intp)
        self._local_of = np.zeros(N, dtype=np.intp)
        for b, (idx, sub) in enumerate(self.parts):
            self.counts[idx] = sub.counts
            self._bucket_of[idx] = b
            self._local_of[idx] = np.arange(len(idx))
        if np.any(self._bucket_of < 0):
            raise DomainError("parts", [idx.tolist() for idx, _ in self.parts],
                              f"index arrays that together hold every client 0..{N - 1} once")
        self.p = np.asarray(p, dtype=float)
        self._mass = []  # q_b = sum_{i in b} p_i; a bucket's own p is p_b / q_b
        for idx, sub in self.parts:
            q = float(self.p[idx].sum())
            sub.p = self.p[idx] / q
            self._mass.append(q)
        self.noise_std = 0.0
        self.x0 = np.zeros(self.dim)
        self.test = None
        self._optima: dict | None = {}

    @property
    def stored_rows(self) -> int:
        """Padded rows kept over all buckets (<= max_padding x the real rows)."""
        return int(sum(sub.mask.size for _, sub in self.parts))

    # ----------------------------------------------------------------- scatter helpers
    @staticmethod
    def _rows(A, pos):
        """The rows ``pos`` of a per-client stack, or a shared point (d,) as it is."""
        A = np.asarray(A, dtype=float)
        return A if A.ndim == 1 else A[pos]

    def _scatter(self, fn, tail, *stacks):
        """(N, *tail) with rows ``pos`` = ``fn(bucket, *(rows pos of the stacks))``."""
        out = np.empty((self.n_clients, *tail))
        for pos, sub in self.parts:  # buckets
            if len(pos):
                out[pos] = fn(sub, *(self._rows(a, pos) for a in stacks))
        return out

    # ----------------------------------------------------------------- batched pieces
    def losses(self, W):
        return self._scatter(lambda s, w: s.losses(w), (), W)

    def grads(self, W):
        return self._scatter(lambda s, w: s.grads(w), (self.dim,), W)

    def hvps(self, W, V):
        return self._scatter(lambda s, w, v: s.hvps(w, v), (self.dim,), W, V)

    def hessians(self, W):
        """Per-client Hessians (N, d, d) at ``W`` (see :meth:`Logistic.hessians`)."""
        return self._scatter(lambda s, w: s.hessians(w), (self.dim, self.dim), W)

    def sample_grad_variance(self, W):
        """Per-client population variance of the row gradients (N,)."""
        return self._scatter(lambda s, w: s.sample_grad_variance(w), (), W)

    def minibatch_variance(self, W, batch_size):
        """Exact E||g_i - grad F_i||^2 of a size-b minibatch without replacement (N,)."""
        return self._scatter(lambda s, w: s.minibatch_variance(w, batch_size), (), W)

    def minibatch_grads(self, W, rng, batch_size):
        """One draw per bucket, in bucket order (buckets without selected clients of a
        :meth:`subset` still draw: the stream advances as for the full problem)."""
        out = np.empty((self.n_clients, self.dim))
        for pos, sub in self.parts:
            if len(pos) or batch_size is not None:
                out[pos] = sub.minibatch_grads(self._rows(W, pos), rng, batch_size)
        return out

    def losses_at(self, P):
        """Every client's loss at each of the points ``P`` (m, d): (m, N); None for
        multinomial problems (see :meth:`Logistic.losses_at`)."""
        if self.kind != "logistic":
            return None
        P = np.asarray(P, dtype=float)
        out = np.empty((P.shape[0], self.n_clients))
        for pos, sub in self.parts:
            if len(pos):
                out[:, pos] = sub.losses_at(P)
        return out

    def Fs(self, Ws):
        """F at many points: (R, d) -> (R,) (sum over buckets of q_b F_b, q_b = sum_b p_i)."""
        Ws = np.atleast_2d(np.asarray(Ws, dtype=float))
        out = np.zeros(Ws.shape[0])
        for q, (_, sub) in zip(self._mass, self.parts):
            out += q * sub.Fs(Ws)
        return out

    def local_gd(self, W, x, lrs, prox=0.0, G0=None, Ws=None, Gs=None, **kw):
        """:meth:`Logistic.local_gd` bucket by bucket, in place on ``W`` (N, d); the rows of
        ``G0``, ``Ws``, ``Gs`` (tau, N, d, client axis 1) are sliced per bucket and the results
        written back. Other keywords pass through unchanged if they have no client axis (an
        array with an axis of length N is refused: DomainError). Returns ``W``, or None for a
        multinomial problem.

        >>> import numpy as np, toys
        >>> Xs = [np.ones((k, 1)) for k in (8, 1)]; ys = [np.arange(k) % 2 for k in (8, 1)]
        >>> prob = toys.logistic(Xs, ys, l2=0.1, max_padding=2.0)
        >>> W = prob.local_gd(np.zeros((2, 1)), np.zeros(1), [0.1])
        >>> bool(np.array_equal(W, -0.1 * prob.grads(np.zeros(1))))
        True
        """
        if self.kind != "logistic":
            return None
        for k, v in kw.items():
            if _has_client_axis(v, self.n_clients):
                raise DomainError(k, type(v).__name__, "a keyword without a client axis "
                                  "(Bucketed.local_gd splits only W, G0, Ws, Gs)")
        for pos, sub in self.parts:
            if not len(pos):
                continue
            extra = dict(kw)
            Wsb = None if Ws is None else np.empty((Ws.shape[0], len(pos), Ws.shape[2]))
            Gsb = None if Gs is None else np.empty((Gs.shape[0], len(pos), Gs.shape[2]))
            Wb = sub.local_gd(W[pos], x, lrs, prox, None if G0 is None else G0[pos], Wsb, Gsb,
                              **extra)
            if Wb is None:
                return None
            W[pos] = Wb
            if Ws is not None:
                Ws[:, pos] = Wsb
            if Gs is not None:
                Gs[:, pos] = Gsb
        return W

    def subset(self, clients):
        """The clients ``clients`` only, in that order (see :meth:`FederatedProblem.subset`):
        each bucket's :meth:`Logistic.subset` of its selected clients (nothing copied up
        front); random draws advance as for the full problem. No optima of its own."""
        clients = np.asarray(clients, dtype=np.intp)
        bo, lo = self._bucket_of[clients], self._local_of[clients]
        sub = copy.copy(self)
        sub.parts, sub._local_of = [], np.zeros(len(clients), dtype=np.intp)
        for b, (_, part) in enumerate(self.parts):  # buckets
            sel = np.flatnonzero(bo == b)
            sub._local_of[sel] = np.arange(len(sel))
            sub.parts.append((sel, part.subset(lo[sel])))
        sub._bucket_of, sub.n_clients = bo, len(clients)
        sub.counts, sub.p = self.counts[clients], self.p[clients]
        sub._mass, sub._optima = None, None
        return sub

    def arrays(self):
        """The padded arrays of the equivalent :class:`Logistic` (``X`` (N, n_max, f), ``y``,
        ``mask``, ``offset``, ``l2``, ``p``, ``kind``, ``classes``): this builds the full padded
        block (memory N n_max f) for code that needs that layout (seed 003's messages, the
        CNN / MLP converters); the torch backend uses :meth:`torch_oracle` instead."""
        N, m = self.n_clients, int(self.counts.max())
        first = self.parts[0][1]
        X = np.zeros((N, m, self.n_features))
        y = np.zeros((N, m), dtype=first.y.dtype)
        mask = np.zeros((N, m), dtype=bool)
        off = None if first.offset is None else np.zeros((N, m))
        for pos, sub in self.parts:
            k = sub.mask.shape[1]
            X[pos, :k], y[pos, :k], mask[pos, :k] = sub.X, sub.y, sub.mask
            if off is not None:
                off[pos, :k] = sub.offset
        out = {"X": X, "y": y, "mask": mask, "l2": self.l2, "p": self.p, "kind": self.kind,
               "classes": self.classes}
        if off is not None:
            out["offset"] = off
        return out

    def torch_oracle(self, ops):
        """The oracle of the torch backend: one
        :class:`~toys.engine.backends.torch.LogisticOracle` per bucket, results scattered on
        the device (:class:`toys.problems.torch_bucketed.BucketedOracle`)."""
        from .torch_bucketed import BucketedOracle

        return BucketedOracle(ops, self)

    def __repr__(self) -> str:
        return (f"<Bucketed {self.name!r}: N={self.n_clients}, d={self.dim}, "
                f"{len(self.parts)} buckets>")


def _has_client_axis(v, n: int) -> bool:
    """Whether ``v`` (an array, or a tuple / list holding arrays) has an axis of length n."""
    if isinstance(v, (tuple, list)):
        return any(_has_client_axis(u, n) for u in v)
    shape = getattr(v, "shape", None)
    return shape is not None and n in tuple(shape)
