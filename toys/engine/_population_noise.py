"""The minibatch streams of a population (:func:`toys.run_many`): instance b draws from the
numpy ``Generator`` its own :func:`toys.run` would use (``SeedSequence(seed_b).spawn(2)[1]``,
the numpy backend's sampling stream), and only in the rounds where its own run draws.

A population's oracle receives an :class:`InstanceRngs` as ``rng``; its ``minibatch_grads``
calls :meth:`InstanceRngs.random` with the per-instance shape of its draw and which instances
need one (a client whose data fit in the batch takes the full gradient and draws nothing, as in
toys.run). An instance without participants in a round draws nothing (its own run skips the
clients' round); the population's round marks them with :meth:`InstanceRngs.for_round`.
The draws are a loop over the instances (one ``Generator.random`` call each, as participation
draws); the arithmetic on them is batched.

Example
-------
>>> import numpy as np
>>> rngs = InstanceRngs([0, 1]).for_round(np.array([[True, False], [False, False]]))
>>> keys = rngs.random((2, 3))
>>> keys.shape, bool(np.isinf(keys[1]).all())  # instance 1 has no participant: no draw
((2, 2, 3), True)
>>> ref = np.random.default_rng(np.random.SeedSequence(0).spawn(2)[1]).random((2, 3))
>>> bool((keys[0] == ref).all())
True
"""

from __future__ import annotations

import numpy as np

__all__ = ["InstanceRngs", "sample_rngs"]


class InstanceRngs:
    """The B sampling streams of a population (see the module docstring): ``gens`` (B numpy
    Generators), ``active`` (B,) bool (the instances that draw in the current round) and
    ``mask`` (B, N) the round's participants (an oracle may compute their rows only, as
    toys.run's participants-only rounds do)."""

    def __init__(self, seeds):
        self.seeds, self._gens = [int(s) for s in seeds], None
        self.active = np.ones(len(self.seeds), dtype=bool)
        self.mask = None  # the round's participants (B, N), once known

    @property
    def gens(self):
        """The B Generators, made on the first draw (a run that draws nothing makes none)."""
        if self._gens is None:
            self._gens = [np.random.default_rng(np.random.SeedSequence(s).spawn(2)[1])
                          for s in self.seeds]
        return self._gens

    def __len__(self):
        return len(self.seeds)

    def for_round(self, mask_np) -> InstanceRngs:
        """Mark the round's drawing instances: those with a participant in ``mask_np`` (B, N)."""
        self.mask = np.asarray(mask_np, dtype=bool)
        self.active = self.mask.any(axis=-1)
        return self

    def random(self, shape, need=None, last=None) -> np.ndarray:
        """(B, *shape) uniform keys in [0, 1): instance b's row is ``gens[b].random(shape)``
        when it draws (active and ``need[b]``, default all), else +inf (no draw: its stream
        does not move). ``last`` (B,) ints, if given: instance b draws ``(*shape[:-1],
        last[b])`` (its own problem's shape), the rest of its row is +inf."""
        need = self.active if need is None else self.active & np.asarray(need, dtype=bool)
        out = np.full((len(self.gens), *shape), np.inf)
        for b in np.flatnonzero(need):  # the draws only: one call per instance
            k = shape[-1] if last is None else int(last[b])
            out[b, ..., :k] = self.gens[b].random((*shape[:-1], k))
        return out


def sample_rngs(seeds, backend: str):
    """The population's ``rng`` for the clients' update: :class:`InstanceRngs` of ``seeds``
    (on torch an oracle draws from its own ``torch.Generator`` per instance, seeded from
    ``seeds`` as toys.run's torch backend seeds its own, with ``active`` / ``mask``)."""
    return InstanceRngs(seeds)
