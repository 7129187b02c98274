"""toys -- the experiments: federated problems with exact optima, their constants (L, mu, Gamma,
zeta, sigma, G, D), participation processes, and (``toys.engine``) the simulation engine.

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

__all__ = [  # sorted; run, Trace and ALGORITHMS come from toys.engine / toys.trace
    "ALGORITHMS",
    "Constants",
    "FederatedProblem",
    "Logistic",
    "Quadratic",
    "Trace",
    "Value",
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
    "seed004_toy",
]

_LAZY = {
    "FederatedProblem": "toys.base",
    "Quadratic": "toys.problems_quadratic",
    "quadratic": "toys.problems_quadratic",
    "Logistic": "toys.problems_logistic",
    "logistic": "toys.problems_logistic",
    "seed004_toy": "toys.problems_synthetic",
    "leaf_synthetic": "toys.problems_synthetic",
    "logistic_synthetic": "toys.problems_synthetic",
    "from_dataset": "toys.datasets",
    "load_idx": "toys.datasets",
    "load_leaf": "toys.datasets",
    "load_bundled": "toys.datasets",
    "make": "toys.registry",
    "names": "toys.registry",
    # ---- engine exports: owned by the engine engineer (toys/engine.py, toys/trace.py) ----
    "run": "toys.engine",
    "ALGORITHMS": "toys.engine",
    "Trace": "toys.trace",
}

_SUBMODULES = ("participation", "datasets", "problems", "registry", "base", "engine", "trace",
               "algorithms", "torch_backend", "torch_models", "local", "aggregation", "fedau",
               "beta", "partitions")


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
