"""verify — the verdict: theory vs measured runs, tightness against exact worst cases, the CLI.

Layout (by role): ``compare.py`` (what "holds" means: the verdicts), ``measures/`` (every
left-hand side and how a run measures it), ``schema.py`` and ``result_keys.py`` (the result
schema; its pandas-free half), ``suite.py`` (the main job's checks), and the subpackages
``check/`` (the generic check of any bound on a run or a recorded log: :func:`check`,
:func:`check_log`), ``sweep/`` (grids x seeds, resumable, local or on Dask: :func:`sweep`),
``worst/`` (saved worst instances and their replay: :func:`worst_instance`), ``falsify/``
(try to break a bound: :func:`falsify`), ``tightness/`` (PEP brackets), ``checks/`` (the
registered checks of the main job), ``reproduce/`` (the papers' experiments:
:func:`reproduce`), ``report/`` (the terminal tables, ``report.md``, ``results.csv``),
``figures/`` (every figure, one house style) and ``cli/`` (the ``boundlab`` command).

Example
-------
>>> import verify
>>> verify.__name__
'verify'
"""

# ``verify.check`` is both a subpackage and the function users call; importing the function
# here (after the subpackage has loaded) makes the attribute the function for good: a later
# ``import verify.check`` finds the subpackage in ``sys.modules`` and does not rebind it. Its
# modules stay importable as ``from verify.check.<module> import ...`` (not as
# ``import verify.check.<module> as m``, which reads the attribute). The subpackage imports
# toys and pandas only when a check runs.
from .check import check, check_log

# ``verify.falsify`` likewise: the subpackage ``verify/falsify/`` (its modules stay importable
# as ``verify.falsify.<module>``) and the function (toys, scipy and PEPit load on first use)
from .falsify import falsify  # noqa: E402

# ``verify.reproduce`` likewise (the subpackage's modules stay importable as
# ``verify.reproduce.<module>``; toys and matplotlib load on first use)
from .reproduce import reproduce  # noqa: E402
from .sweep import sweep  # the same: verify.sweep is the function, verify/sweep/ the subpackage

__all__ = ["worst_instance", "check", "check_log", "falsify", "Falsification", "reproduce",
           "sweep"]


def __getattr__(name):
    if name == "worst_instance":  # lazy: scipy and toys load on first use
        from .worst import worst_instance

        return worst_instance
    if name == "Falsification":  # verify.Falsification.load(path): a saved falsification
        from .falsify.api import Falsification

        return Falsification
    raise AttributeError(f"module 'verify' has no attribute {name!r}")
