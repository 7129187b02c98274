"""Fixtures of the falsify tests: a search family's stacked population run on the toys engine
(``toys.run_many`` with the family adapter the search uses), to compare with ``toys.run`` on
each instance built on its own (``fam.build``) or with closed forms."""

from __future__ import annotations

import numpy as np
import pytest


def _run_population(st, eta, *, rounds, tau, algo="fedavg", hyper=None, masks=None,
                    virtual=False):
    import toys
    from verify.falsify.population import FamilyPopulation, quantities
    from verify.falsify.toys_map import toys_call

    pop = FamilyPopulation(st)
    name, kw = toys_call(algo, hyper or {}, pop.n_clients)
    res = toys.run_many(pop, name, rounds=rounds, seeds=0, local_steps=tau,
                        participation="full" if masks is None else np.asarray(masks, bool),
                        vary={"lr": list(np.asarray(eta, dtype=float))},
                        record="step" if virtual else "round", **kw)
    return quantities(res, pop.p)


@pytest.fixture
def run_population():
    """``run(st, eta, *, rounds, tau, algo="fedavg", hyper=None, masks=None, virtual=False)``:
    the run quantities (:func:`verify.falsify.population.quantities`) of every instance of
    ``st`` with steps ``eta`` ((P,) or (P, rounds tau) schedules)."""
    return _run_population
