"""The round callbacks and the participation stand-in of the reproductions' runs (their own
module: the batched seeds (:mod:`.batch`) and the sweep layer (:mod:`.common`) both use them).

* :class:`LastProcess`: the participation process of a problem factory's last build;
* :class:`HeldOut`: test accuracy and loss on the held-out split, per round;
* :class:`Alphas`: the round's aggregation coefficients as metrics.

Example
-------
>>> HeldOut("problem").source
'problem'
"""

from __future__ import annotations

import numpy as np

__all__ = ["Alphas", "HeldOut", "LastProcess"]


class LastProcess:
    """A participation process that is the ``process`` attribute of the problem factory's
    last build (``init`` / ``step`` / ``probs`` delegated): a process that depends on the data
    (FedAU's p_n come from the clients' label histograms) while the sweep's grid holds only
    scalars, which its Parquet store can write."""

    def __init__(self, factory):
        self.factory = factory

    @property
    def probs(self):
        return getattr(self.factory.process, "probs", None)

    def init(self, rng):
        return self.factory.process.init(rng)

    def step(self, state, rng):
        return self.factory.process.step(state, rng)


class HeldOut:
    """Round callback: test accuracy and loss on the held-out split of ``source`` (a problem,
    or a :class:`Factory` whose last problem is used), as :class:`toys.engine.TestMetrics`."""

    def __init__(self, source):
        self.source = source

    def __call__(self, info):
        from toys.engine import TestMetrics

        prob = getattr(self.source, "last", self.source) if callable(self.source) and not \
            hasattr(self.source, "n_clients") else self.source
        TestMetrics(prob)(info)


class Alphas:
    """Round callback: the round's aggregation coefficients alpha_i as metrics ``alpha_<i>``
    (BM Figs 6-7 need them; a sweep's table carries only callback metrics)."""

    def __call__(self, info):
        from toys._array import to_numpy

        a = np.asarray(to_numpy(info.state.buffers["ALPHA"][info.round]), dtype=float)
        for i, v in enumerate(a):  # N scalars per round, outside the engine's hot path
            info.record(f"alpha_{i}", v)
