"""Try to break a bound: :func:`falsify` searches every family of the bound's function class
(batched runs), adds the exact worst case (PEP) where a model exists and turns it into a
concrete instance, and returns a :class:`Falsification` whose ``VIOLATED`` verdict always comes
with an instance that :meth:`Instance.replay` re-runs on the real engine (``toys.run``).

Layout: ``families/`` (one module per search family, a registry and its protocol), ``plan.py``,
``_plan_setting.py`` and ``_plan_parts.py`` (what runs, from the bound's registration),
``population.py`` (a family's instances run on ``toys.run_many``, toys' own algorithms) with
``toys_map.py`` (how each algorithm maps onto toys, its hyper-parameter grids and step
schedules) and ``fedau_paths.py`` (FedAU in expectation over its Bernoulli paths),
``search.py`` (the population search, local or on Dask; what a left-hand side measures is
:mod:`verify.measures`), ``pep.py``, ``exact.py`` and
``interpolate.py`` (the exact worst case and the function interpolating it), ``judge.py``,
``certify.py`` with ``_mpreplay.py`` (the certified verdict: the worst instance replayed in
mpmath), ``api.py`` and ``result.py`` (the entry point and its results), ``_file.py`` (a saved
falsification, sealed, and :meth:`Falsification.load`), ``mutants.py``, ``power.py`` and
``_power_*.py`` (the power benchmark).

The left-hand sides that are not a value of one run have their own searches, the **routes**
registered in ``routes.py`` (its ``MODULES``; each module declares ``FAMILY``, ``LHS``,
``KINDS`` and gives ``falsify_route``, ``measure_instance`` and ``certify``):
``weight_error_search.py`` (FedAU's weight error), ``points_route.py`` with ``_points.py``,
``interval_route.py``, ``argmin_route.py``, ``complexity_route.py``, ``plateau_route.py``,
``reweighted_route.py``, ``kappa_route.py`` with ``_kappa_measure.py``, ``softmax_route.py``
and ``constants_route.py``; the point routes share ``_param_search.py`` (the seeded parameter
search and the identity certificate).
"""

__all__ = ["falsify", "Falsification", "Instance"]


def __getattr__(name):
    if name in __all__:  # lazy: scipy, toys and PEPit load on first use
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'verify.falsify' has no attribute {name!r}")
