"""Grids x seeds, resumable: :func:`sweep` (also ``verify.sweep``) runs an algorithm over a
grid of settings and seeds, locally or on Dask, one row per grid point, seed and round.

Layout: ``api.py`` (the entry point, one grid point's runs, the rows), ``executor.py`` (the
Dask executor and its checks), ``store.py`` (the sealed, resumable folder of ``out=DIR``),
``frames.py`` (a point file read back and checked) and ``measures.py`` (the ``measures=``
argument: extra columns computed from every run's trace).

Example
-------
>>> from verify.sweep import route, sweep
>>> route("quadratic", {"lr": 0.1})
({}, {'lr': 0.1})
"""

from .api import EXECUTORS, algorithm_name, route, run_point, sweep

__all__ = ["sweep", "EXECUTORS", "route", "algorithm_name", "run_point"]
