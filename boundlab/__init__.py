"""boundlab — the theory: every convergence bound of the five papers as a checked sympy object.

Heavy pieces (sympy, the catalogue) load on first use, so ``import boundlab`` stays fast.

Your own bound: build it with :class:`Bound`, :class:`Precondition`, :func:`make_params` and
:func:`sym`, then :func:`register` it (plug-ins use the entry-point group ``boundlab.bounds``);
``boundlab.testing`` has hypothesis strategies and property helpers for any bound.

Example
-------
>>> import boundlab
>>> b = boundlab.get("drift.fedavg_convex")
>>> b.kind, b.lhs
('upper', 'avg_shadow_gap')
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["get", "catalogue", "ids", "FAMILIES", "Bound", "Param", "Precondition", "Domain",
           "make_params", "sym", "register", "unregister", "errata", "errors", "testing",
           "__version__"]

_LAZY = {
    "get": ("boundlab.registry", "get"),
    "catalogue": ("boundlab.registry", "catalogue"),
    "ids": ("boundlab.registry", "ids"),
    "FAMILIES": ("boundlab.registry", "FAMILIES"),
    "register": ("boundlab.registry", "register"),
    "unregister": ("boundlab.registry", "unregister"),
    "Bound": ("boundlab.core", "Bound"),
    "Param": ("boundlab.core", "Param"),
    "Precondition": ("boundlab.core", "Precondition"),
    "make_params": ("boundlab.core", "make_params"),
    "sym": ("boundlab.symbols", "sym"),
    "Domain": ("boundlab.symbols", "Domain"),
}


def __getattr__(name):
    import importlib

    if name in _LAZY:
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    if name in ("errata", "errors", "core", "symbols", "registry", "testing"):
        return importlib.import_module(f"boundlab.{name}")
    raise AttributeError(f"module 'boundlab' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
