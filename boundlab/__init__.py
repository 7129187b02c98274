"""boundlab — the theory: every convergence bound of the five papers as a checked sympy object.

Heavy pieces (sympy, the catalogue) load on first use, so ``import boundlab`` stays fast.

Example
-------
>>> import boundlab
>>> b = boundlab.get("drift.fedavg_convex")
>>> b.kind, b.lhs
('upper', 'avg_shadow_gap')
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["get", "catalogue", "ids", "FAMILIES", "Bound", "errata", "errors", "__version__"]

_LAZY = {
    "get": ("boundlab.registry", "get"),
    "catalogue": ("boundlab.registry", "catalogue"),
    "ids": ("boundlab.registry", "ids"),
    "FAMILIES": ("boundlab.registry", "FAMILIES"),
    "Bound": ("boundlab.core", "Bound"),
}


def __getattr__(name):
    import importlib

    if name in _LAZY:
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    if name in ("errata", "errors", "core", "symbols"):
        return importlib.import_module(f"boundlab.{name}")
    raise AttributeError(f"module 'boundlab' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
