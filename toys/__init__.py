"""toys -- the experiments, in subpackages by role:

=====================  =====================================================================
``toys.problems``      federated problems with exact optima (quadratic, logistic, synthetic,
                       CNN, data sets and partitions) and the ``make`` registry
``toys.constants``     L, mu, Gamma, zeta, sigma^2, G^2, D measured on a problem (+ how)
``toys.participation`` participation processes (init / step) and option strings
``toys.algorithms``    algorithms as compositions of pieces: client updates, weight rules,
                       server steps (``toys.Algorithm``, ``toys.algorithms.get``)
``toys.engine``        ``toys.run``, the round loop, Trace, callbacks, checkpoints, backends
``toys.local``         local step-size schedules; ``toys.validation`` the one validator
=====================  =====================================================================

``import toys`` stays light: only numpy and the constants module load eagerly; everything else
loads on first attribute access.

Example
-------
>>> import toys
>>> prob = toys.make("quadratic", n_clients=4, dim=2, seed=0)
>>> c = toys.constants(prob)
>>> c.L.how, round(c.L.value, 10)
('exact', 10.0)
"""

from __future__ import annotations

import importlib

# ``toys.constants`` is both a submodule and the function users call; importing the function
# here (after the submodule has loaded) makes the attribute the function for good.
from .constants import Constants, Value, constants

__all__ = [  # sorted
    "ALGORITHMS",
    "Algorithm",
    "Constants",
    "FederatedProblem",
    "Logistic",
    "Quadratic",
    "Trace",
    "Value",
    "algorithms",
    "constants",
    "from_dataset",
    "leaf_synthetic",
    "load_bundled",
    "load_idx",
    "load_leaf",
    "logistic",
    "logistic_synthetic",
    "make",
    "names",
    "participation",
    "quadratic",
    "run",
    "run_many",
    "seed004_toy",
    "stack",
]

_LAZY = {
    "FederatedProblem": "toys.problems.base",
    "Quadratic": "toys.problems.quadratic",
    "quadratic": "toys.problems.quadratic",
    "Logistic": "toys.problems.logistic",
    "logistic": "toys.problems.logistic",
    "seed004_toy": "toys.problems.synthetic",
    "leaf_synthetic": "toys.problems.synthetic",
    "logistic_synthetic": "toys.problems.synthetic",
    "from_dataset": "toys.problems.datasets",
    "load_idx": "toys.problems.readers",
    "load_leaf": "toys.problems.readers",
    "load_bundled": "toys.problems.datasets",
    "make": "toys.problems.registry",
    "names": "toys.problems.registry",
    "run": "toys.engine.run",
    "run_many": "toys.engine.population",
    "stack": "toys.problems.stacked",
    "Trace": "toys.engine.trace",
    "ALGORITHMS": "toys.algorithms.registry",
    "Algorithm": "toys.algorithms.base",
}

_SUBMODULES = ("participation", "problems", "algorithms", "engine", "local", "validation")


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        try:
            return getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {_LAZY[name]!r} has no attribute {name!r}") from None
    if name in _SUBMODULES:
        try:
            return importlib.import_module(f"toys.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"toys.{name}":
                raise
    raise AttributeError(f"module 'toys' has no attribute {name!r}")


def __dir__():
    return sorted(set(__all__) | set(globals()))
