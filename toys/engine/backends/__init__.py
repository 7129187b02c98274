"""The backends of :func:`toys.run` — the one place that knows which backends exist.

A backend is a module with ``setup(problem, device, dtype, sample_seed) -> (ops, oracle,
rng)``: ``ops`` creates and converts arrays on the backend (``asarray``, ``full``, ``zeros``,
``asbool``, ``to_numpy``, ``name``, ``device``, ``dtype``); ``oracle`` is the problem's batched
``losses`` / ``grads`` / ``minibatch_grads`` on the backend's arrays; ``rng`` the sampling
stream. ``sample_seed`` is the sampling ``numpy.random.SeedSequence``. The math of the round
loop and of the pieces is the array-API namespace of the arrays (``array_api_compat``).

Example
-------
>>> names()
('numpy', 'torch')
>>> get("jax")
Traceback (most recent call last):
...
boundlab.errors.UnknownNameError: unknown backend 'jax'; valid: numpy, torch
"""

from __future__ import annotations

import importlib

from boundlab.errors import UnknownNameError

__all__ = ["BACKENDS", "get", "names"]

BACKENDS = {"numpy": "toys.engine.backends.numpy", "torch": "toys.engine.backends.torch"}
"""name -> module implementing ``setup`` (torch is imported only when asked for)."""


def names() -> tuple[str, ...]:
    """The backend names, in order."""
    return tuple(BACKENDS)


def get(name: str):
    """The backend module ``name`` (imported on first use)."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise UnknownNameError("backend", name, names())
    return importlib.import_module(BACKENDS[name])
