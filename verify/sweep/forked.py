"""Work side by side in forked worker processes: the one pool of ``verify`` (the main job's
checks, the report's figures).

The workers start with the default SIGTERM / SIGHUP handlers: a pool forked inside an output
set (whose handlers turn SIGTERM into a clean-up exception) must not hand them to its workers,
or ``Pool.terminate`` may leave one alive and the parent waits for it forever. A pool whose
results were all read is closed and joined (its workers exit on the end-of-work sentinel, no
signal needed); terminated only when the caller stops early or an error propagates.

Example
-------
>>> sorted(imap_forked(abs, [-2, 1, -3], jobs=2))
[1, 2, 3]
"""

from __future__ import annotations

import signal

__all__ = ["imap_forked"]


def _default_signals() -> None:
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)


def imap_forked(fn, items, jobs: int):
    """``fn`` of each of ``items`` in ``jobs`` forked processes, yielded as they finish
    (``Pool.imap_unordered``, one item per task)."""
    import multiprocessing

    pool = multiprocessing.get_context("fork").Pool(jobs, initializer=_default_signals)
    done = False
    try:
        yield from pool.imap_unordered(fn, items, chunksize=1)
        done = True
    finally:
        if done:
            pool.close()
        else:
            pool.terminate()
        pool.join()
