"""Loading a plug-in safely: in a worker thread, with a time limit, every failure named.

A plug-in is code the user installed, so it runs; but it must not fake success: what it raises
(``SystemExit`` included) is handed back to :mod:`boundlab.registry`, which reports it naming
the entry point and its distribution, and a plug-in that does not finish loading within
:func:`plugin_timeout` seconds is reported as hanging (its thread is left behind: a Python
thread cannot be stopped; it is a daemon thread and ends with the process).

Example
-------
>>> in_worker(lambda: 1 + 1, 5.0)
2
>>> in_worker(lambda: exit(3), 5.0)
Traceback (most recent call last):
...
SystemExit: 3
"""

from __future__ import annotations

import math
import os
import threading

__all__ = ["PLUGIN_TIMEOUT", "plugin_timeout", "Hung", "in_worker", "describe", "why"]

#: seconds a plug-in may take to load (``$BOUNDLAB_PLUGIN_TIMEOUT`` overrides it)
PLUGIN_TIMEOUT = 60.0


def plugin_timeout() -> float:
    """Seconds a plug-in may take to load: ``$BOUNDLAB_PLUGIN_TIMEOUT`` (a positive number),
    else :data:`PLUGIN_TIMEOUT`.

    >>> plugin_timeout() > 0
    True
    """
    raw = os.environ.get("BOUNDLAB_PLUGIN_TIMEOUT", "")
    try:
        value = float(raw)
    except ValueError:
        return PLUGIN_TIMEOUT
    return value if math.isfinite(value) and value > 0 else PLUGIN_TIMEOUT


class Hung(Exception):  # noqa: N818 - a signal
    """A plug-in did not finish loading in time."""


def in_worker(fn, seconds: float):
    """``fn()`` run in a daemon thread: its result, or what it raised (``SystemExit``
    included: a plug-in cannot end the process), or :class:`Hung` after ``seconds`` (the
    thread is left behind, as a Python thread cannot be killed)."""
    box: dict = {}

    def work():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=work, name="boundlab-plugin-loader", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise Hung()
    if "error" in box:
        raise box["error"]
    return box["value"]


def describe(ep, group: str) -> str:
    """``plug-in NAME (VALUE) of entry-point group GROUP, distribution DIST VERSION``."""
    from .integrity import escape

    text = f"plug-in {escape(ep.name)!r} ({escape(ep.value)}) of entry-point group " \
        f"{group}"
    dist = getattr(ep, "dist", None)
    if dist is not None:
        text += f", distribution {escape(dist.name)} {escape(dist.version)}"
    return text


def why(exc: BaseException) -> str:
    """What went wrong, in one line (text of the plug-in escaped)."""
    from .integrity import escape

    if isinstance(exc, SystemExit):
        return f"it called sys.exit({escape(exc.code)!s:.40}) while loading"
    from .errors import BoundlabError

    text = str(exc) if isinstance(exc, BoundlabError) else f"{type(exc).__name__}: {exc}"
    return escape(text)[:500]
