"""Old path of :mod:`verify.figures.ratios` (the figure code moved to :mod:`verify.figures`);
every public name is re-exported here."""

from __future__ import annotations

from .figures.ratios import *  # noqa: F403
from .figures.ratios import __all__  # noqa: F401
