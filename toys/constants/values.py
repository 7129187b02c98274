"""The records of :func:`toys.constants`: :class:`Value` (a constant and how it was got) and
:class:`Constants` (all of them for one problem).

Example
-------
>>> Value(2.0, "exact").kind
'exact'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Constants", "Value"]

_PARAM_NAMES = ("L", "mu", "Gamma", "zeta", "sigma", "G", "D")


@dataclass(frozen=True)
class Value:
    """A measured constant: ``value``, ``how`` (exact / bound / estimate(...)) and a ``note``.

    >>> v = Value(0.19, "bound", "Boehning bound")
    >>> v.kind, float(v)
    ('bound', 0.19)
    """

    value: float
    how: str
    note: str = ""

    @property
    def kind(self) -> str:
        """``exact``, ``bound`` or ``estimate``."""
        return self.how.split("(", 1)[0]

    def __float__(self) -> float:
        return float(self.value)

    def to_dict(self) -> dict:
        """JSON-ready dict.

        >>> Value(1.0, "exact").to_dict()
        {'value': 1.0, 'how': 'exact', 'note': ''}
        """
        return {"value": _jsonable(self.value), "how": self.how, "note": self.note}


@dataclass(frozen=True)
class Constants:
    """The constants of one problem (see the module docstring for the definitions).

    Fields: ``L`` (max_i L_i), ``L_F`` (smoothness of F), ``mu`` (min_i mu_i), ``mu_F``,
    ``Gamma``, ``zeta``, ``sigma2``, ``G2``, ``D``, ``F_star``; ``extra`` holds the secondary
    figures (empirical L estimates, zeta along the trajectory, ...); ``region`` describes where
    the suprema were taken.

    >>> import toys
    >>> c = toys.constants(toys.quadratic(2, 2, L=3.0, mu=1.0, heterogeneity=0.0, seed=0))
    >>> c.as_params()["Gamma"], c["L"].how
    (0.0, 'exact')
    """

    problem: str
    L: Value
    L_F: Value
    mu: Value
    mu_F: Value
    Gamma: Value
    zeta: Value
    sigma2: Value
    G2: Value
    D: Value
    F_star: Value
    extra: dict = field(default_factory=dict)
    region: dict = field(default_factory=dict)
    batch_size: int | None = None

    _MAIN = ("L", "L_F", "mu", "mu_F", "Gamma", "zeta", "sigma2", "G2", "D", "F_star")

    def __getitem__(self, name: str) -> Value:
        if name in self._MAIN:
            return getattr(self, name)
        if name in self.extra:
            return self.extra[name]
        from boundlab.errors import UnknownNameError

        raise UnknownNameError("constant", name, list(self._MAIN) + list(self.extra))

    def values(self) -> dict:
        """Every constant (main ones first, then ``extra``) as name -> :class:`Value`.

        >>> import toys
        >>> list(toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)).values())[:3]
        ['L', 'L_F', 'mu']
        """
        out = {k: getattr(self, k) for k in self._MAIN}
        out.update(self.extra)
        return out

    def as_params(self) -> dict:
        """Plain floats under the catalogue's parameter names: ``L, mu, Gamma, zeta, sigma, G, D``
        (``sigma`` and ``G`` are the square roots of sigma^2 and G^2). A constant whose ``how``
        is ``"unavailable"`` (e.g. Gamma without client optima) is left out, so a bound that
        needs it reports the missing parameter instead of computing with NaN.

        >>> import toys
        >>> p = toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 0.0, seed=0)).as_params()
        >>> p["L"], p["mu"]
        (3.0, 1.0)
        """
        out = {
            "L": float(self.L.value), "mu": float(self.mu.value),
            "Gamma": float(self.Gamma.value), "zeta": float(self.zeta.value),
            "sigma": math.sqrt(max(float(self.sigma2.value), 0.0)),
            "G": math.sqrt(max(float(self.G2.value), 0.0)), "D": float(self.D.value),
        }
        src = {"sigma": "sigma2", "G": "G2"}
        return {k: v for k, v in out.items() if getattr(self, src.get(k, k)).how != "unavailable"}

    def to_dict(self) -> dict:
        """JSON-ready dict: every constant with value, how and note, plus region and batch size.

        >>> import json, toys
        >>> d = toys.constants(toys.quadratic(2, 2, 3.0, 1.0, 1.0, seed=0)).to_dict()
        >>> json.loads(json.dumps(d))["constants"]["L"]["how"]
        'exact'
        """
        return {
            "problem": self.problem,
            "constants": {k: v.to_dict() for k, v in self.values().items()},
            "params": self.as_params(),
            "region": {k: _jsonable(v) for k, v in self.region.items()},
            "batch_size": self.batch_size,
        }



def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v
