"""What :func:`toys.run` accepts as ``participation``: a name with options (:func:`parse`), a
process, or an explicit matrix (:class:`Fixed`), resolved by :func:`resolve`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

from .processes import Full, make

__all__ = ["Fixed", "describe", "parse", "resolve"]


@dataclass(frozen=True)
class Fixed:
    """An explicit (rounds, N) boolean participation matrix; ``probs`` = empirical frequencies.

    >>> import numpy as np
    >>> Fixed(np.array([[True, False], [True, True]])).probs.tolist()
    [1.0, 0.5]
    """

    matrix: np.ndarray

    @property
    def probs(self) -> np.ndarray:
        return self.matrix.mean(axis=0)

    def init(self, rng):
        return 0

    def step(self, state, rng):
        return state + 1, self.matrix[state]


def parse(text: str) -> tuple[str, dict]:
    """``"name"`` or ``"name:key=value,..."`` -> (name, options); every value must be a number.

    >>> parse("bernoulli:p=0.2")
    ('bernoulli', {'p': 0.2})
    >>> parse("bernoulli:p=abc")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: participation option p = 'abc' is outside its domain: a number
    """
    name, _, rest = str(text).partition(":")
    opts: dict = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, v = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise DomainError("participation", text, "'name' or 'name:key=value,...'")
        if key in opts:
            raise DomainError("participation", text, "each option at most once",
                              f"{key!r} is given twice")
        try:
            opts[key] = int(v)
        except ValueError:
            try:
                opts[key] = float(v)
            except ValueError:
                raise DomainError(f"participation option {key}", v.strip(), "a number") from None
    return name.strip(), opts


def resolve(spec, n_clients: int, rounds: int):
    """A participation process from what :func:`toys.run` accepts: ``"full"`` (default), a
    process name with optional ``"name:key=value,..."`` options, ``(name, options)``, a
    process object (``init(rng)``, ``step(state, rng) -> (state, mask)``, ``probs``), or an
    explicit (rounds, N) boolean matrix.

    >>> resolve("uniform:m=2", 4, 3).m
    2
    """
    if spec is None or (isinstance(spec, str) and spec == "full"):
        return Full(n_clients)
    if isinstance(spec, str) or (isinstance(spec, tuple) and len(spec) == 2
                                 and isinstance(spec[0], str)):
        name, opts = parse(spec) if isinstance(spec, str) else (spec[0], dict(spec[1]))
        return Full(n_clients) if name == "full" and not opts else make(name, n_clients, **opts)
    if hasattr(spec, "init") and hasattr(spec, "step"):
        probs = getattr(spec, "probs", None)
        if probs is not None and np.shape(probs) != (n_clients,):
            raise DomainError("participation", spec, f"a process for N = {n_clients} clients")
        return spec
    M = np.asarray(spec)
    if M.shape != (rounds, n_clients) or M.dtype != bool:
        raise DomainError("participation", spec, f"'full', a process name, a process object, or "
                                                 f"a bool matrix of shape ({rounds}, {n_clients})")
    return Fixed(M)


def describe(spec) -> str:
    """A short text for ``Trace.info["participation"]``.

    >>> describe("full"), describe(("bernoulli", {"p": 0.5}))
    ('full', "bernoulli:{'p': 0.5}")
    """
    if isinstance(spec, str):
        return spec
    if isinstance(spec, tuple):
        return f"{spec[0]}:{spec[1]}"
    if isinstance(spec, np.ndarray):
        return f"matrix{spec.shape}"
    return type(spec).__name__
