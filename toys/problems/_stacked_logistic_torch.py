"""The torch oracle of a population of logistic problems (:class:`StackedLogistic` on
``toys.run_many(..., backend="torch", device=...)``, CPU or CUDA), and of MLPs and CNNs
(:class:`TorchStackedVmap`, the same around their ``torch.func`` oracle).

The B x N clients are the clients of one torch
:class:`~toys.engine.backends.torch.LogisticOracle` (the family's torch formulas, written once);
server points (B, d) and client points (B, N, d) are reshaped to its (B N, d) rows. Minibatch
keys are drawn per instance from the ``torch.Generator`` its own torch ``toys.run`` seeds (the
first word of ``SeedSequence(seed).spawn(2)[1]``), with its own unpadded shape and only in the
rounds where its own run draws, so the rows drawn are its own run's; the arithmetic is batched
(on the CPU the values agree with the separate runs to round-off: batched kernels may sum in
another order).

Example
-------
>>> import numpy as np, toys
>>> from toys.problems.stacked import StackedLogistic, pad_rows
>>> probs = [toys.logistic_synthetic(n_clients=3, dim=2, seed=s) for s in range(2)]
>>> n = max(q.X.shape[1] for q in probs)
>>> pop = StackedLogistic([pad_rows(q, n) for q in probs], optima=False)
>>> tr = toys.run_many(pop, "fedavg", rounds=2, seeds=[0, 1], backend="torch", device="cpu",
...                    lr=0.1, record="none")
>>> tr.final_model.shape
(2, 2)
"""

from __future__ import annotations

import numpy as np

from boundlab.errors import DomainError

__all__ = ["TorchStackedLogistic", "TorchStackedVmap"]


class TorchStackedLogistic:
    """See the module docstring; ``pop`` the numpy :class:`StackedLogistic`."""

    def __init__(self, pop, ops):
        self.ops, self.torch = ops, ops.torch
        self.flat = self._flat_oracle(pop, ops)
        self.B, self.n_clients, self.dim = pop.n_instances, pop.n_clients, pop.dim
        self.counts_max = pop.counts_max
        self.draw_len = pop.draw_len
        self._gens = None

    def _flat_oracle(self, pop, ops):
        """The torch oracle of the B N clients laid end to end (``pop.flat``)."""
        from toys.engine.backends.torch import LogisticOracle

        return LogisticOracle(ops, pop.flat.arrays())

    def _rows(self, W):
        if W.dim() == 2:  # server points (B, d): every client's row
            W = W[:, None, :].expand(self.B, self.n_clients, self.dim)
        return W.reshape(self.B * self.n_clients, self.dim)

    def losses(self, W):
        return self.flat.losses(self._rows(W)).reshape(self.B, self.n_clients)

    def grads(self, W):
        return self.flat.grads(self._rows(W)).reshape(self.B, self.n_clients, self.dim)

    def _generators(self, seeds):
        if self._gens is None:
            self._gens = []
            for s in seeds:
                ss = np.random.SeedSequence(int(s)).spawn(2)[1]
                g = self.torch.Generator(device=self.ops.device)
                g.manual_seed(int(ss.generate_state(1, np.uint64)[0] >> 1))
                self._gens.append(g)
        return self._gens

    def minibatch_grads(self, W, rng, batch_size):
        if batch_size is None:
            return self.grads(W)
        b = int(batch_size)
        full = b >= self.counts_max
        if full.all():
            return self.grads(W)
        seeds = getattr(rng, "seeds", None)
        if seeds is None or len(seeds) != self.B:
            raise DomainError("rng", type(rng).__name__,
                              "the population's per-instance streams (toys.run_many)")
        torch, N = self.torch, self.n_clients
        n = self.flat.mask.shape[1]
        keys = torch.full((self.B, N, n), float("inf"), dtype=torch.float64,
                          device=self.flat.mask.device)
        gens = self._generators(seeds)
        for i in np.flatnonzero(rng.active & ~full):  # the draws only: one call per instance
            k = int(self.draw_len[i])
            keys[i, :, :k] = torch.rand((N, k), generator=gens[i], dtype=torch.float64,
                                        device=keys.device)
        rows, idx, wb = self.flat._rows_of_keys(keys.reshape(self.B * N, n), b)
        Wr = self._rows(W)
        part = getattr(rng, "mask", None)  # the participants' rows only (absent: zero rows)
        if part is None or bool(np.all(part)):
            G = self._minibatch(Wr, rows, idx, wb)
        else:
            sel = torch.as_tensor(np.flatnonzero(np.asarray(part).reshape(-1)),
                                  device=Wr.device)
            G = torch.zeros_like(Wr)
            G[sel] = self._minibatch(Wr[sel], rows[sel], idx[sel], wb[sel])
        G = G.reshape(self.B, N, self.dim)
        if full.any():
            on = torch.as_tensor(full, device=G.device)[:, None, None]
            G = torch.where(on, self.grads(W), G)
        return G

    def _minibatch(self, W, rows, idx, wb):
        """The flat oracle's minibatch gradient of the drawn rows (its own statements)."""
        return self.flat.rows_grads(W, rows, idx, wb)


class TorchStackedVmap(TorchStackedLogistic):
    """The same reshaping and per-instance draws around the flat problem's ``torch.func``
    oracle (:class:`~toys.engine.backends.torch.VmapOracle`: the MLP, the CNN), whose minibatch
    rows' gradient is its own."""

    def _flat_oracle(self, pop, ops):
        return pop.flat.torch_oracle(ops)

    def _minibatch(self, W, rows, idx, wb):
        return self.flat._grads_on(W, rows, idx, wb)
