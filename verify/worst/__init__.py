"""Saved worst instances and their replay: :func:`worst_instance` (also
``verify.worst_instance``) searches a family of quadratic federated problems for the instance
where a bound is tightest; :func:`replay` re-runs a saved one.

Layout: ``api.py`` (the search, :class:`WorstInstance`, :func:`load`, :func:`replay`),
``family.py`` (the search space, :class:`Family`), ``measures.py`` (what the search measures for
each kind of left-hand side) and ``file.py`` (the sealed file of a saved instance).

Example
-------
>>> from verify.worst import supported
>>> "avg_shadow_gap" in supported()
True
"""

from .api import DEFAULT_BUDGET, Family, WorstInstance, load, replay, supported, worst_instance

__all__ = ["Family", "WorstInstance", "worst_instance", "replay", "load", "supported",
           "DEFAULT_BUDGET"]
