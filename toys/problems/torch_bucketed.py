"""The torch oracle of a :class:`~toys.problems.bucketed.Bucketed` problem: one
:class:`~toys.engine.backends.torch.LogisticOracle` per bucket, the per-client results
scattered into (N, ...) tensors on the device (``index_copy_``), participants-only compute by
each bucket's ``subset``. Imported lazily (torch is an optional extra).

Example
-------
>>> import numpy as np, toys
>>> from toys.engine.backends.torch import TorchOps
>>> Xs = [np.ones((k, 1)) for k in (8, 1)]; ys = [np.arange(k) % 2 for k in (8, 1)]
>>> prob = toys.logistic(Xs, ys, l2=0.1, max_padding=2.0)
>>> ops = TorchOps("cpu")
>>> orc = prob.torch_oracle(ops)
>>> L = ops.to_numpy(orc.losses(ops.asarray(np.ones(1))))
>>> bool(np.allclose(L, prob.losses(np.ones(1)), rtol=1e-14))
True
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["BucketedOracle"]


class BucketedOracle:
    """``losses``, ``grads``, ``minibatch_grads`` and ``subset`` of a bucketed problem on torch
    (the interface of :class:`~toys.engine.backends.torch.ClientSubset`). Minibatches draw
    once per bucket, in bucket order, from the run's ``torch.Generator`` (a subset's buckets
    without selected clients still draw, so the generator advances as for all clients)."""

    def __init__(self, ops, problem):
        from ..engine.backends.torch import LogisticOracle

        self.ops, self.torch = ops, ops.torch
        self.n_clients, self.dim = problem.n_clients, problem.dim
        self.parts = [(ops.aslong(pos), LogisticOracle(ops, sub.arrays()))
                      for pos, sub in problem.parts]
        self._bucket_of = ops.aslong(problem._bucket_of)
        self._local_of = ops.aslong(problem._local_of)

    def _rows(self, W, pos):
        return W if W.dim() == 1 else W.index_select(0, pos)

    def _scatter(self, fn, W):
        out = None
        for pos, orc in self.parts:  # buckets
            if pos.numel():
                v = fn(orc, self._rows(W, pos))
                if out is None:
                    out = self.torch.empty((self.n_clients, *v.shape[1:]), dtype=v.dtype,
                                           device=v.device)
                out.index_copy_(0, pos, v)
        if out is None:  # no clients (an empty subset)
            out = self.ops.zeros((0,) if fn is _losses else (0, self.dim))
        return out

    def losses(self, W):
        return self._scatter(_losses, W)

    def grads(self, W):
        return self._scatter(lambda orc, w: orc.grads(w), W)

    def minibatch_grads(self, W, gen, batch_size):
        if batch_size is None:
            return self.grads(W)
        out = self.ops.zeros((self.n_clients, self.dim))
        for pos, orc in self.parts:  # buckets (one without selected clients still draws)
            out.index_copy_(0, pos, orc.minibatch_grads(self._rows(W, pos), gen, batch_size))
        return out

    def subset(self, clients):
        """The oracle of ``clients`` (a tensor of indices on the device, or a sequence), in
        that order: each bucket's ``subset`` of its selected clients."""
        torch = self.torch
        if not isinstance(clients, torch.Tensor):
            clients = torch.as_tensor(np.asarray(clients, dtype=np.int64))
        idx = clients.to(device=self.ops.device, dtype=torch.long)
        bo = self._bucket_of.index_select(0, idx)
        lo = self._local_of.index_select(0, idx)
        sub = copy.copy(self)
        sub.parts, sub._local_of = [], torch.zeros_like(idx)
        for b, (_, orc) in enumerate(self.parts):  # buckets
            sel = (bo == b).nonzero()[:, 0]
            sub._local_of[sel] = torch.arange(sel.shape[0], device=idx.device)
            sub.parts.append((sel, orc.subset(lo.index_select(0, sel))))
        sub._bucket_of, sub.n_clients = bo, int(idx.shape[0])
        return sub


def _losses(orc, w):
    return orc.losses(w)
