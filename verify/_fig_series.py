"""Old path of :mod:`verify.figures.series` (the figure code moved to :mod:`verify.figures`);
every public name is re-exported here."""

from __future__ import annotations

from .figures.series import *  # noqa: F403
from .figures.series import __all__  # noqa: F401
