"""The interface every federated problem implements (the contract between problems and engine).

All per-client operations are batched over clients: a stack of client points ``W`` has shape
``(N, d)`` (row i is client i's point); a single point ``w`` of shape ``(d,)`` is broadcast to all
clients. Implementations must not loop over clients or samples in Python.

Example
-------
>>> import toys
>>> prob = toys.quadratic(n_clients=3, dim=2, L=4.0, mu=1.0, heterogeneity=1.0, seed=0)
>>> prob.grads(prob.x_star_i).shape
(3, 2)
"""

from __future__ import annotations

import copy

import numpy as np

from boundlab.errors import DomainError

__all__ = ["FederatedProblem", "OptimumUnavailable"]


class OptimumUnavailable(DomainError):
    """An exact optimum that does not exist or could not be solved (e.g. the unregularised
    loss of a separable client): raised on access; running needs no optimum, and constants or
    checks that need it report it unavailable with this reason.

    >>> str(OptimumUnavailable("x_star_i", "clients [3] are separable"))
    'x_star_i = None is outside its domain: an existing finite optimum (clients [3] are separable)'
    """

    def __init__(self, name: str, reason: str):
        super().__init__(name, None, "an existing finite optimum", reason)
        self.reason = reason


class FederatedProblem:
    """Base class: a federated objective F(x) = sum_i p_i F_i(x) with exact optima.

    Subclasses set, in ``__init__``:

    * ``name`` (str), ``kind`` (``"quadratic"``, ``"logistic"``, ``"multinomial"``, ...),
      ``n_clients`` (N), ``dim`` (d, length of the flat parameter vector);
    * ``p`` — client weights, shape (N,), positive, summing to 1;
    * ``counts`` — samples per client, shape (N,) int (1 for sample-free problems);
    * ``noise_std`` — std of the additive Gaussian gradient noise of sample-free problems
      (0 if none; sample-based problems draw minibatches instead);
    * ``x_star`` (d,), ``F_star`` (float), ``x_star_i`` (N, d), ``F_star_i`` (N,): exact optima
      of F and of every F_i (gradient norm <= 1e-10); they may be solved lazily on first
      access, and raise :class:`OptimumUnavailable` where they do not exist.

    and implement ``losses``, ``grads``, ``hvps``, ``minibatch_grads`` and ``arrays``.
    """

    name: str
    kind: str
    n_clients: int
    dim: int
    p: np.ndarray
    counts: np.ndarray
    noise_std: float = 0.0
    x_star: np.ndarray
    F_star: float
    x_star_i: np.ndarray
    F_star_i: np.ndarray

    # ----------------------------------------------------------- batched per-client pieces
    def losses(self, W: np.ndarray) -> np.ndarray:
        """F_i(W[i]) for every client: ``W`` (N, d) or (d,) -> (N,)."""
        raise NotImplementedError

    def grads(self, W: np.ndarray) -> np.ndarray:
        """grad F_i(W[i]) for every client: (N, d) or (d,) -> (N, d)."""
        raise NotImplementedError

    def hvps(self, W: np.ndarray, V: np.ndarray) -> np.ndarray:
        """Hessian-vector products grad^2 F_i(W[i]) V[i]: -> (N, d)."""
        raise NotImplementedError

    def minibatch_grads(self, W: np.ndarray, rng: np.random.Generator,
                        batch_size: int | None) -> np.ndarray:
        """Unbiased stochastic gradients, one per client, (N, d).

        ``batch_size=None`` means the full gradient (no randomness, rng untouched). Sample-based
        problems draw ``min(batch_size, n_i)`` rows uniformly **without replacement** per client;
        sample-free problems add ``noise_std / sqrt(batch_size)`` Gaussian noise.
        """
        raise NotImplementedError

    def arrays(self) -> dict:
        """The problem's raw arrays (for other backends such as torch), e.g.
        ``{"X": (N, n_max, f), "y": (N, n_max), "mask": (N, n_max), "l2": float}`` for logistic
        problems or ``{"A": (N, d, d), "c": (N, d), "b": (N,)}`` for quadratics."""
        raise NotImplementedError

    # ----------------------------------------------------------- global objective
    def F(self, w: np.ndarray) -> float:
        """Global objective sum_i p_i F_i(w) at one point ``w`` (d,)."""
        return float(self.p @ self.losses(np.asarray(w, dtype=float)))

    def grad_F(self, w: np.ndarray) -> np.ndarray:
        """Gradient of F at one point ``w`` (d,)."""
        return self.p @ self.grads(np.asarray(w, dtype=float))

    def Fs(self, Ws: np.ndarray) -> np.ndarray:
        """F at many points: ``Ws`` (R, d) -> (R,). Default: one batched call per point row."""
        Ws = np.atleast_2d(np.asarray(Ws, dtype=float))
        return np.array([self.F(w) for w in Ws])

    @property
    def Gamma(self) -> float:
        """Heterogeneity Gamma = F* - sum_i p_i F_i* (>= 0)."""
        return float(self.F_star - self.p @ self.F_star_i)

    # per-client arrays (leading axis N) that ``subset`` slices; empty: no subset oracle
    _client_arrays: tuple = ()
    # (N of the full problem, selected rows, largest client size of the full problem) when this
    # is a subset oracle: random draws keep the full problem's shapes (same bits per client)
    _draw = None

    def subset(self, clients):
        """The batched pieces restricted to ``clients`` (indices into 0..N-1), for local training
        of the participants only: ``grads``, ``minibatch_grads`` and (logistic) ``local_gd`` of
        the selected clients, bit-identical to the full problem's rows; ``minibatch_grads`` draws
        the random numbers of all N clients and keeps the selected ones, so the random streams
        advance exactly as in the full computation. Not a problem of its own (no optima, p).

        >>> import numpy as np, toys
        >>> prob = toys.quadratic(n_clients=4, dim=2, seed=0)
        >>> sub = prob.subset(np.array([1, 3]))
        >>> bool(np.array_equal(sub.grads(np.ones(2)), prob.grads(np.ones(2))[[1, 3]]))
        True
        """
        if not self._client_arrays:
            return None
        clients = np.asarray(clients)
        sub = copy.copy(self)
        for name in self._client_arrays:
            v = getattr(self, name, None)
            if v is not None:
                setattr(sub, name, v[clients])
        full_n, rows, cmax = self._draw or (self.n_clients, np.arange(self.n_clients),
                                            int(np.max(self.counts)))
        sub._draw = (full_n, rows[clients], cmax)
        sub.n_clients = len(clients)
        return sub

    def _draw_shape(self, shape_rest):
        """(shape of the full problem's draw, rows to keep or None)."""
        if self._draw is None:
            return (self.n_clients, *shape_rest), None
        return (self._draw[0], *shape_rest), self._draw[1]

    def _broadcast(self, W: np.ndarray) -> np.ndarray:
        W = np.asarray(W, dtype=float)
        if W.ndim == 1:
            W = np.broadcast_to(W, (self.n_clients, W.shape[0]))
        return W

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: N={self.n_clients}, d={self.dim}>"
