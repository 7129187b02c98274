"""Old path of :mod:`verify.figures.style` (the figure code moved to :mod:`verify.figures`);
every public name is re-exported here."""

from __future__ import annotations

from .figures.style import *  # noqa: F403
from .figures.style import __all__  # noqa: F401
