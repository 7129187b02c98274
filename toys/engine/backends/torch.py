"""The torch backend of :func:`toys.run`: array creation on one device and dtype, and the
problems' batched oracles (losses, gradients, minibatch gradients) written in torch.

The algorithms themselves are not duplicated: the round loop and the pieces are written against
the array-API namespace and run unchanged on torch tensors. Supported problems: binary and
multinomial :class:`~toys.problems.logistic.Logistic` (incl. offsets: the seed-004 toy),
quadratics, and any problem exposing ``torch_oracle(ops)`` (the CNN of
:mod:`toys.problems.cnn` and the MLP of :mod:`toys.problems.mlp`, both through ``torch.func``).
Device ``"cuda"`` when available, else ``"cpu"``; every tensor is created on the device and
stays there (no host round trip inside a round).

* dtype: float64 by default; ``dtype="float32"`` on request (GPU speed). float64 full-batch
  runs coincide with the numpy backend to 1e-10 (relative and absolute; the participation
  stream is shared); float32 runs stay within 1e-5 (relative to max(1, |value|)) of float64
  over the tests' few rounds (tests/toys/engine/test_torch_dtype.py).
* Minibatches are drawn with a ``torch.Generator`` on the device (uniformly without
  replacement per client: the b real rows of smallest i.i.d. uniform float64 key, so float32
  and float64 runs train on the same rows); they differ from the numpy backend's draws.
* Participants only: every oracle has ``subset(clients)`` (:class:`ClientSubset`), gathered
  with ``index_select`` on the device, so partial participation costs in proportion to the
  participants; results are bit-identical to computing every client on the CPU
  (tests/toys/engine/test_torch_participants.py; on CUDA equal to round-off, as batched kernels
  may depend on the batch size).

Example
-------
>>> import numpy as np, toys
>>> prob = toys.logistic_synthetic(n_clients=3, dim=2, seed=0)
>>> ops, orc, gen = setup(prob, "cpu", None, 0)
>>> W = np.zeros((3, 2))
>>> bool(np.allclose(ops.to_numpy(orc.grads(ops.asarray(W))), prob.grads(W), atol=1e-14))
True
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

__all__ = ["VMAP_CHUNK_BYTES", "ClientSubset", "LogisticOracle", "QuadraticOracle", "TorchOps",
           "VmapOracle", "setup"]


def _torch():
    import torch

    return torch


class TorchOps:
    """Array creation and conversion on torch tensors of one device and dtype (the math is the
    array-API namespace's).

    >>> ops = TorchOps("cpu", "float64")
    >>> ops.to_numpy(ops.full((2,), 3.0)).tolist()
    [3.0, 3.0]
    """

    name = "torch"

    def __init__(self, device=None, dtype=None):
        torch = _torch()
        self.torch = torch
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError):
            raise DomainError("device", device, "a torch device such as 'cpu' or 'cuda'") from None
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise DomainError("device", device, "'cpu' (CUDA is not available here)")
        dt = {None: torch.float64, "float64": torch.float64, "float32": torch.float32,
              torch.float64: torch.float64, torch.float32: torch.float32}
        if dtype not in dt:
            raise DomainError("dtype", dtype, "'float64' (default) or 'float32'")
        self.dtype = dt[dtype]

    # creation / conversion
    def asarray(self, x, dtype=None):
        t = self.torch
        if isinstance(x, t.Tensor):
            return x.to(device=self.device, dtype=self.dtype if dtype is None else dtype)
        return t.as_tensor(np.asarray(x), dtype=self.dtype if dtype is None else dtype,
                           device=self.device)

    def asbool(self, x):
        if isinstance(x, self.torch.Tensor):
            return x.to(device=self.device, dtype=self.torch.bool)
        return self.torch.as_tensor(np.asarray(x, dtype=bool), device=self.device)

    def aslong(self, x):
        """Integer labels / indices as an int64 tensor on the device (tensors stay there)."""
        if isinstance(x, self.torch.Tensor):
            return x.to(device=self.device, dtype=self.torch.long)
        return self.torch.as_tensor(np.asarray(x, dtype=np.int64), device=self.device)

    def zeros(self, shape, dtype=None):
        return self.torch.zeros(shape, dtype=self.dtype if dtype is None else dtype,
                                device=self.device)

    def full(self, shape, value, dtype=None):
        return self.torch.full(shape, value, dtype=self.dtype if dtype is None else dtype,
                               device=self.device)

    def zeros_like(self, x):
        return self.torch.zeros_like(x, dtype=self.dtype)

    def as_float(self, b):
        return b.to(self.dtype)

    def count(self, mask) -> int:
        return int(mask.sum().item())

    def to_numpy(self, x):
        if isinstance(x, self.torch.Tensor):
            return x.detach().cpu().numpy()
        return np.asarray(x)


def setup(problem, device, dtype, sample_seed):
    """``(ops, oracle, generator)`` for running ``problem`` on torch; the ``torch.Generator``
    is seeded with the first word of the sampling ``SeedSequence`` ``sample_seed`` (an int is
    used as it is).

    >>> import toys
    >>> ops, orc, gen = setup(toys.quadratic(2, 2, seed=0), "cpu", "float32", 0)
    >>> str(ops.dtype), orc.n_clients
    ('torch.float32', 2)
    """
    ops = TorchOps(device, dtype)
    torch = ops.torch
    if hasattr(problem, "torch_oracle"):
        oracle = problem.torch_oracle(ops)
    else:
        arr = problem.arrays()
        if "A" in arr:
            oracle = QuadraticOracle(ops, arr)
        elif arr.get("kind") in ("logistic", "multinomial"):
            oracle = LogisticOracle(ops, arr)
        else:
            raise DomainError("problem", getattr(problem, "name", problem),
                              "a logistic, multinomial or quadratic problem (or one with "
                              "torch_oracle) for backend='torch'")
    if isinstance(sample_seed, np.random.SeedSequence):
        sample_seed = int(sample_seed.generate_state(1, np.uint64)[0] >> 1)
    gen = torch.Generator(device=ops.device)
    gen.manual_seed(int(sample_seed))
    return ops, oracle, gen


class ClientSubset:
    """Participants-only compute for the torch oracles: ``subset(clients)`` is the oracle
    restricted to ``clients`` (a tensor of indices on the oracle's device, as the round loop
    passes it, or a sequence): the per-client tensors named in ``_client_arrays`` are gathered
    with ``index_select`` on the device (no host round trip, no synchronisation). Random draws
    keep the full problem's shape and the selected rows are kept afterwards, so the generator
    advances exactly as in the full computation and every selected row equals the full
    oracle's row (bit for bit on the CPU). ``counts_max`` stays the full problem's (the
    full-batch shortcut is taken for the same calls). Needs ``ops``, ``n_clients`` and the
    arrays.

    Also the shared minibatch draw :meth:`_draw_rows` (the b real rows of smallest uniform key
    per client: uniformly without replacement, float64 keys whatever the dtype, so float32 and
    float64 runs train on the same rows).

    >>> import toys
    >>> ops, orc, _ = setup(toys.quadratic(3, 2, seed=0), "cpu", None, 0)
    >>> sub = orc.subset(ops.torch.tensor([0, 2]))
    >>> W = ops.full((3, 2), 0.5)
    >>> sub.n_clients, bool(ops.torch.equal(sub.grads(W[[0, 2]]), orc.grads(W)[[0, 2]]))
    (2, True)
    """

    _client_arrays: tuple = ()
    _rows = None  # rows of the full draw to keep (None: the full oracle)
    _full_n = None

    def subset(self, clients):
        import copy

        torch = self.ops.torch
        if not isinstance(clients, torch.Tensor):
            clients = torch.as_tensor(np.asarray(clients, dtype=np.int64))
        idx = clients.to(device=self.ops.device, dtype=torch.long)
        sub = copy.copy(self)
        for name in self._client_arrays:
            v = getattr(self, name, None)
            if v is not None:
                setattr(sub, name, v.index_select(0, idx))
        sub._full_n = self.n_clients if self._full_n is None else self._full_n
        sub._rows = idx if self._rows is None else self._rows.index_select(0, idx)
        sub.n_clients = int(idx.shape[0])
        return sub

    def _keep(self, draw):
        return draw if self._rows is None else draw.index_select(0, self._rows)

    def _full_shape(self, rest):
        return (self.n_clients if self._full_n is None else self._full_n, *rest)

    def _draw_rows(self, gen, b):
        """``(rows, idx, wb)`` of a minibatch of ``b`` rows per client: ``X[rows, idx]`` are
        the drawn rows (N, b, ...) (padding slots point at row 0 with weight 0) and ``wb``
        (N, b) the weights 1/min(b, n_i) of the real ones."""
        torch = self.ops.torch
        keys = self._keep(torch.rand(self._full_shape(self.mask.shape[1:]), generator=gen,
                                     dtype=torch.float64, device=self.mask.device))
        return self._rows_of_keys(keys, b)

    def _rows_of_keys(self, keys, b):
        """:meth:`_draw_rows` with given float64 ``keys`` (N, n_max)."""
        torch = self.ops.torch
        keys = keys.masked_fill(~self.mask, math.inf)
        idx = torch.topk(keys, b, dim=1, largest=False, sorted=True).indices  # real rows first
        beff = torch.clamp(self.counts, max=b)
        valid = torch.arange(b, device=idx.device)[None, :] < beff[:, None]
        idx = torch.where(valid, idx, torch.zeros_like(idx))
        wb = valid.to(self.ops.dtype) / beff.to(self.ops.dtype)[:, None]
        rows = torch.arange(self.n_clients, device=idx.device)[:, None]
        return rows, idx, wb


VMAP_CHUNK_BYTES = 1 << 30
"""Memory budget of one ``vmap`` call of a :class:`VmapOracle` (the MLP and the CNN): the
clients are processed in chunks whose estimated working set (3 x the activations of their
rows, ``row_floats`` per row, plus 3 parameter rows) stays below it; one call when all fit.
Lower it (``toys.engine.backends.torch.VMAP_CHUNK_BYTES = ...``) to fit more clients or a
larger model on a device. Every client's computation is its own, so the values do not depend
on the chunks (bit for bit on the CPU, tested)."""


class VmapOracle(ClientSubset):
    """A :class:`ClientSubset` whose losses and gradients come from ``torch.func``: a
    subclass sets ``self._losses = vmap(loss_one)`` and ``self._grads = vmap(grad(loss_one))``
    for a per-client ``loss_one(theta, X, y, w)``, plus ``X``, ``y``, ``row_w``, ``counts_max``
    and ``row_floats`` (activations per data row) (the MLP of :mod:`toys.problems.mlp`, the
    CNN of :mod:`toys.problems.cnn`). One batched call for all clients, or for chunks of
    them under :data:`VMAP_CHUNK_BYTES`; minibatches are the rows of
    :meth:`ClientSubset._draw_rows`."""

    row_floats = 1
    _client_arrays = ("X", "y", "mask", "counts", "row_w")

    def _bind(self, ops, prob, X, y, loss_one, row_w=None):
        """The common state: the client arrays on the device (``row_w`` default 1/n_i on
        the real rows) and the vmaps of ``loss_one`` and of its gradient."""
        from torch.func import grad, vmap

        self.ops, self.torch = ops, ops.torch
        self.n_clients, self.dim = prob.n_clients, prob.dim
        self.X, self.y, self.mask = X, y, ops.asbool(prob.mask)
        self.counts = self.mask.sum(dim=1)
        self.counts_max = int(prob.counts.max())
        self.row_w = (self.mask.to(ops.dtype) / self.counts.to(ops.dtype)[:, None]
                      if row_w is None else ops.asarray(row_w))
        self._losses = vmap(loss_one)
        self._grads = vmap(grad(loss_one))

    def _bc(self, W):
        return W.unsqueeze(0).expand(self.n_clients, -1) if W.dim() == 1 else W

    def _map(self, fn, W, X, y, w):
        """``fn`` over the clients, in chunks under :data:`VMAP_CHUNK_BYTES`."""
        N, item = W.shape[0], W.element_size()
        per = item * 3 * (X[0].shape[0] * self.row_floats + W.shape[1])
        k = max(1, VMAP_CHUNK_BYTES // max(1, per))
        if k >= N:
            return fn(W, X, y, w)
        return self.torch.cat([fn(W[i:i + k], X[i:i + k], y[i:i + k], w[i:i + k])
                               for i in range(0, N, k)])  # chunks of clients

    def losses(self, W):
        with self.torch.no_grad():
            return self._map(self._losses, self._bc(W), self.X, self.y, self.row_w)

    def grads(self, W):
        return self._map(self._grads, self._bc(W), self.X, self.y, self.row_w).detach()

    def _grads_on(self, W, rows, idx, wb):
        return self._map(self._grads, self._bc(W), self.X[rows, idx], self.y[rows, idx],
                         wb).detach()

    def minibatch_grads(self, W, gen, batch_size):
        """Gradients on ``batch_size`` rows per client drawn without replacement (all rows
        when the client has fewer)."""
        if batch_size is None or batch_size >= self.counts_max:
            return self.grads(W)
        return self._grads_on(W, *self._draw_rows(gen, int(batch_size)))


class QuadraticOracle(ClientSubset):
    """F_i(x) = 1/2 (x - c_i)^T A_i (x - c_i) + b_i on torch (noise as in the numpy problem,
    drawn from the torch generator).

    >>> import toys
    >>> q = toys.quadratic(2, 2, seed=0)
    >>> orc = QuadraticOracle(TorchOps("cpu"), q.arrays())
    >>> bool(abs(float(orc.losses(orc.ops.asarray(q.x_star_i))[0]) - q.F_star_i[0]) < 1e-12)
    True
    """

    def __init__(self, ops, arr):
        self.ops = ops
        self.A, self.c, self.b = (ops.asarray(arr[k]) for k in ("A", "c", "b"))
        self.noise_std = float(arr.get("noise_std", 0.0))
        self.n_clients, self.dim = self.c.shape[-2:]

    _client_arrays = ("A", "c", "b")

    def _bc(self, W):
        """A server point (..., d) as every client's row (..., N, d); client rows as they
        are (a population's arrays carry a leading instance axis)."""
        if W.dim() == self.c.dim() - 1:
            return W.unsqueeze(-2).expand(*W.shape[:-1], self.n_clients, W.shape[-1])
        return W

    def losses(self, W):
        from toys.problems.quadratic import quad_losses

        return quad_losses(self.A, self.c, self.b, self._bc(W))

    def grads(self, W):
        from toys.problems.quadratic import quad_grads

        return quad_grads(self.A, self.c, self._bc(W))

    def minibatch_grads(self, W, gen, batch_size):
        G = self.grads(W)
        if batch_size is None or self.noise_std == 0.0:
            return G
        noise = self._keep(self.ops.torch.randn(self._full_shape(G.shape[1:]), generator=gen,
                                                dtype=G.dtype, device=G.device))
        return G + noise * (self.noise_std / math.sqrt(batch_size))


class LogisticOracle(ClientSubset):
    """Binary / multinomial L2-regularised logistic regression on torch (same formulas as
    :class:`~toys.problems.logistic.Logistic`).

    >>> import numpy as np, toys
    >>> prob = toys.logistic_synthetic(n_clients=2, dim=2, seed=0)
    >>> orc = LogisticOracle(TorchOps("cpu"), prob.arrays())
    >>> L = orc.ops.to_numpy(orc.losses(orc.ops.asarray(np.zeros(2))))
    >>> bool(np.allclose(L, prob.losses(np.zeros(2)), atol=1e-14))
    True
    """

    _client_arrays = ("X", "mask", "counts", "row_w", "y", "offset", "ylab", "Y")

    def __init__(self, ops, arr):
        torch = ops.torch
        self.ops, self.torch = ops, torch
        self.kind, self.C = arr["kind"], int(arr.get("classes", 2))
        self.X = ops.asarray(arr["X"])
        self.mask = ops.asbool(arr["mask"])
        counts = self.mask.sum(dim=1)
        self.counts_max = int(counts.max())
        self.counts = counts
        self.row_w = self.mask.to(ops.dtype) / counts.to(ops.dtype)[:, None]
        self.l2 = float(arr["l2"])
        self.n_clients, _, self.f = self.X.shape
        if self.kind == "logistic":
            self.y = ops.asarray(arr["y"])
            off = arr.get("offset")
            self.offset = ops.asarray(off) if off is not None else None
            self.dim = self.f
        else:
            y = ops.aslong(arr["y"])
            self.ylab = y
            self.Y = torch.nn.functional.one_hot(y, self.C).to(ops.dtype) \
                * self.mask.to(ops.dtype)[..., None]
            self.dim = self.f * self.C

    def _theta(self, W):
        if W.dim() == 1:
            W = W.unsqueeze(0).expand(self.n_clients, -1)
        return W if self.kind == "logistic" else W.reshape(W.shape[0], self.f, self.C)

    def losses(self, W):
        torch = self.torch
        T = self._theta(W)
        if self.kind == "logistic":
            Z = self._z(self.X, T, self.offset)
            ell = torch.logaddexp(torch.zeros_like(Z), Z) - self.y * Z
        else:
            Z = torch.matmul(self.X, T)
            ell = torch.logsumexp(Z, dim=2) - (self.Y * Z).sum(dim=2)
        Tf = T.reshape(self.n_clients, self.dim)
        return (self.row_w * ell).sum(dim=1) + 0.5 * self.l2 * (Tf * Tf).sum(dim=1)

    def _z(self, X, T, offset):
        Z = self.torch.matmul(X, T.unsqueeze(-1))[..., 0]
        return Z if offset is None else Z + offset

    def _grad(self, T, X, R):
        G = (X.transpose(1, 2) @ R.unsqueeze(-1))[..., 0] if self.kind == "logistic" \
            else X.transpose(1, 2) @ R
        shape = (T.shape[0], self.dim)  # not -1: ambiguous for 0 clients (an empty subset)
        return G.reshape(shape) + self.l2 * T.reshape(shape)

    def grads(self, W):
        torch = self.torch
        T = self._theta(W)
        if self.kind == "logistic":
            Z = self._z(self.X, T, self.offset)
            R = (torch.sigmoid(Z) - self.y) * self.row_w
        else:
            Z = torch.matmul(self.X, T)
            R = (torch.softmax(Z, dim=2) - self.Y) * self.row_w[..., None]
        return self._grad(T, self.X, R)

    def minibatch_grads(self, W, gen, batch_size):
        if batch_size is None or batch_size >= self.counts_max:
            return self.grads(W)
        rows, idx, wb = self._draw_rows(gen, int(batch_size))
        return self.rows_grads(W, rows, idx, wb)

    def rows_grads(self, W, rows, idx, wb):
        """The gradient at ``W`` of the drawn rows ``X[rows, idx]`` weighted by ``wb`` (the
        minibatch gradient's formula, shared with the stacked logistic populations)."""
        torch = self.torch
        Xb = self.X[rows, idx]
        T = self._theta(W)
        if self.kind == "logistic":
            z = self._z(Xb, T, None if self.offset is None else self.offset[rows, idx])
            R = (torch.sigmoid(z) - self.y[rows, idx]) * wb
        else:
            R = (torch.softmax(Xb @ T, dim=2) - self.Y[rows, idx]) * wb[..., None]
        return self._grad(T, Xb, R)
