"""The catalogue registry: every bound of the five papers, by stable id.

Each family module (``drift``, ``skew``, ``weight_error``, ``contraction``) defines a list
``BOUNDS``; this module collects them once, on first use.

Example
-------
>>> import boundlab
>>> boundlab.get("drift.plateau").source
'seed 004, main text eq. (2) (limit T -> inf of Theorem 2.1 at sigma = 0)'
>>> "skew.corollary" in [b.id for b in boundlab.catalogue()]
True
"""

from __future__ import annotations

import importlib

from .errors import UnknownNameError

__all__ = ["get", "catalogue", "FAMILIES", "ids"]

FAMILIES = ("drift", "skew", "weight_error", "contraction")

_REGISTRY: dict[str, dict] = {}  # family -> {id: Bound}, filled family by family on first use


def _family(fam: str) -> dict:
    if fam not in _REGISTRY:
        mod = importlib.import_module(f"boundlab.{fam}")
        reg = {}
        for b in mod.BOUNDS:
            if b.id in reg or b.family != fam:
                raise RuntimeError(f"duplicate or misplaced bound id {b.id}")
            reg[b.id] = b
        _REGISTRY[fam] = reg
    return _REGISTRY[fam]


def _load() -> dict:
    out: dict = {}
    for fam in FAMILIES:
        out.update(_family(fam))
    return out


def get(bound_id: str):
    """The :class:`~boundlab.core.Bound` with this id (builds only its family on first use).

    >>> import boundlab
    >>> boundlab.get("contraction.fedavg_factor").kind
    'upper'
    """
    fam = bound_id.split(".", 1)[0] if isinstance(bound_id, str) else ""
    reg = _family(fam) if fam in FAMILIES else {}
    if bound_id not in reg:
        raise UnknownNameError("bound id", bound_id, list(_load()))
    return reg[bound_id]


def catalogue(family: str | None = None) -> list:
    """All bounds (optionally of one family), in catalogue order.

    >>> import boundlab
    >>> {b.family for b in boundlab.catalogue()} == set(boundlab.FAMILIES)
    True
    """
    reg = _load()
    if family is not None and family not in FAMILIES:
        raise UnknownNameError("bound family", family, FAMILIES)
    return [b for b in reg.values() if family is None or b.family == family]


def ids(family: str | None = None) -> list[str]:
    """Ids of :func:`catalogue`.

    >>> import boundlab
    >>> boundlab.ids("drift")[0]
    'drift.fedavg_convex'
    """
    return [b.id for b in catalogue(family)]
