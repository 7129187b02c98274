"""The :class:`Erratum` record (its own module so the errata data modules can import it
without importing the register that collects them).

Example
-------
>>> Erratum("X-1", "seed 004", "printed", "corrected", "CONFIRMED", (), "tests/x.py::test_x").id
'X-1'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VERDICTS", "Erratum"]

VERDICTS = ("CONFIRMED", "CONFIRMED-minor", "GAP", "REFUTED", "FINDING")


@dataclass(frozen=True)
class Erratum:
    """One erratum.

    >>> Erratum("X-1", "seed 004", "printed", "corrected", "CONFIRMED", (), "tests/x.py::test_x").id
    'X-1'
    """

    id: str
    source: str
    quote: str
    corrected: str
    verdict: str
    bounds: tuple[str, ...]
    test: str
    note: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: verdict must be one of {VERDICTS}")
