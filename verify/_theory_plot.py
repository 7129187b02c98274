"""Old path of :mod:`verify.figures.theory` (the figure code moved to :mod:`verify.figures`);
every public name is re-exported here."""

from __future__ import annotations

from .figures.theory import *  # noqa: F403
from .figures.theory import __all__  # noqa: F401
