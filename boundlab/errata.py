"""The errata register: every typo or error found in the five papers.

Each :class:`Erratum` quotes the printed text, gives the corrected form and a verdict, names the
catalogue bounds that encode the correction, and points at the test that demonstrates it
(``tests/...::test_name``; a test checks that every such test exists).

Verdicts: ``CONFIRMED`` (printed text wrong, correction verified), ``CONFIRMED-minor``
(notational, no effect on a bound), ``GAP`` (missing hypothesis), ``REFUTED`` (suspected erratum
is not one), ``FINDING`` (a property test of boundlab found the stated property false).

Example
-------
>>> from boundlab import errata
>>> e = errata.get("DKR-1")
>>> e.verdict, e.bounds
('CONFIRMED', ('drift.plateau_finite',))
"""

from __future__ import annotations

from ._erratum import VERDICTS, Erratum
from .errors import UnknownNameError

__all__ = ["ERRATA", "VERDICTS", "Erratum", "for_bound", "get"]


def _collect() -> tuple[Erratum, ...]:
    from ._errata_000_001_004 import ERRATA as a
    from ._errata_002_003 import ERRATA as b

    out = tuple(a) + tuple(b)
    seen = set()
    for e in out:
        if e.id in seen:
            raise RuntimeError(f"duplicate erratum id {e.id}")
        seen.add(e.id)
    return out


ERRATA: tuple[Erratum, ...] = _collect()


def get(erratum_id: str) -> Erratum:
    """The erratum with this id.

    >>> get("BM-1").source.startswith("seed 000")
    True
    """
    for e in ERRATA:
        if e.id == erratum_id:
            return e
    raise UnknownNameError("erratum id", erratum_id, [e.id for e in ERRATA])


def for_bound(bound_id: str) -> list[Erratum]:
    """Errata whose correction a catalogue bound encodes (``.printed`` ids map to their base).

    >>> [e.id for e in for_bound("drift.round_progress")]
    ['DKR-5']
    """
    base = bound_id.removesuffix(".printed")
    return [e for e in ERRATA if base in e.bounds or bound_id in e.bounds]
