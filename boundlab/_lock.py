"""The lock of one boundlab writer on one place: how a temporary file is *proved* boundlab's.

A writer that may leave temporary files in a folder (a sweep folder, the staging folder of an
output set beside ``--out``, a reproduce folder) first writes a lock there (:func:`hold_lock`):
``{"format": "boundlab-lock/1", "pid": ..., "mark": ...}`` where ``mark`` is its
:func:`~boundlab._atomic.process_mark` (pid and a random token), part of the name of every
temporary file it makes. Only a file carrying the mark of a lock whose writer is gone is a
leftover boundlab may delete (:func:`dead_mark`, :func:`remove_marked`); a name that merely
looks temporary (``.x.boundlab-tmp-999999-keep.txt``, ``.sweep.json.swp``) is never deleted.
The lock goes when its writer finishes (:func:`release_lock`, also at exit); a second writer
while the first is alive is refused.

Example
-------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> lock = hold_lock(d / LOCK)
>>> dead_mark(lock) is None  # this process is alive: nothing of it is a leftover
True
>>> release_lock(lock); lock.exists()
False
"""

from __future__ import annotations

import atexit
import json
import os
import pathlib
import shutil

from ._atomic import TMP_MARK, atomic_write_text, process_mark

__all__ = ["LOCK", "hold_lock", "release_lock", "read_lock", "dead_mark", "remove_marked",
           "process_alive"]

#: the lock file of a writer inside the folder it writes (a sweep, a reproduce folder)
LOCK = ".boundlab-lock"
_FORMAT = "boundlab-lock/1"
_HELD: set[str] = set()


def read_lock(lock, name: str = "out") -> dict | None:
    """The lock at ``lock`` (``{"pid", "mark"}``), None when there is none; a file there that
    is not a lock boundlab wrote is refused (:class:`~boundlab.errors.OverwriteError`)."""
    from .errors import BoundlabError, OverwriteError
    from .integrity import loads_plain, read_bounded

    p = pathlib.Path(lock)
    if not os.path.lexists(p):
        return None
    try:
        doc = loads_plain(read_bounded(p, 1 << 12, "lock"), p, "lock")
    except BoundlabError:
        doc = None
    pid, mark = (doc.get("pid"), doc.get("mark")) if isinstance(doc, dict) else (None, None)
    if p.is_symlink() or not isinstance(doc, dict) or doc.get("format") != _FORMAT or \
            not isinstance(pid, int) or isinstance(pid, bool) or not isinstance(mark, str) or \
            not mark.startswith(f"{TMP_MARK}{pid}-") or len(mark) < len(TMP_MARK) + 10:
        raise OverwriteError(name, p, "it is not a lock boundlab wrote")
    return {"pid": pid, "mark": mark}


def dead_mark(lock) -> str | None:
    """The mark of the writer that left ``lock`` if that writer is gone (its temporary files
    are then provably leftovers), else None (no lock, a foreign file, a live writer, us)."""
    from .errors import BoundlabError

    try:
        doc = read_lock(lock)
    except BoundlabError:
        return None
    if doc is None or doc["mark"] == process_mark() or process_alive(doc["pid"]):
        return None
    return doc["mark"]


def remove_marked(directory, mark: str, recursive: bool = True) -> list[str]:
    """Remove the entries of ``directory`` whose name carries ``mark`` (folders whole, links
    never followed); returns them, relative to ``directory``."""
    root, removed = pathlib.Path(directory), []
    if not mark or not root.is_dir():
        return removed
    for base, dirs, files in os.walk(root, followlinks=False):
        for n in list(dirs) + files:
            if mark not in n:
                continue
            p = pathlib.Path(base) / n
            if n in dirs:
                dirs.remove(n)
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            removed.append(p.relative_to(root).as_posix())
        if not recursive:
            break
    return removed


def hold_lock(lock, name: str = "out") -> pathlib.Path:
    """Take the lock ``lock`` for this process (a no-op when it holds it already); a live other
    writer is refused (:class:`~boundlab.errors.DomainError` naming ``name``), a dead one's
    lock replaced (clean its leftovers first: :func:`dead_mark`). Released at exit at the
    latest."""
    from .errors import DomainError

    p = pathlib.Path(lock)
    doc = read_lock(p, name)
    if doc is not None and doc["mark"] == process_mark():
        return p
    if doc is not None and process_alive(doc["pid"]):
        raise DomainError(name, str(p.parent), "a folder no other boundlab process is writing",
                          f"process {doc['pid']} holds its lock {p.name}; wait for it to end, "
                          "or delete the lock if no boundlab runs")
    _drop_dead_lock_temps(p)
    atomic_write_text(p, json.dumps({"format": _FORMAT, "pid": os.getpid(),
                                     "mark": process_mark()}), name=name)
    key = os.path.abspath(p)
    if key not in _HELD:
        _HELD.add(key)
        atexit.register(release_lock, key)
    return p


def _drop_dead_lock_temps(lock: pathlib.Path) -> None:
    """Remove the temporary copies of ``lock`` a writer killed between writing and renaming
    its lock left: a file ``.<lock name><mark>...`` is removed only when it *is* a whole lock
    document whose own mark is in its name and whose writer is gone (proved boundlab's; a
    file killed before its content was written is not provable and stays)."""
    from .errors import BoundlabError

    prefix = f".{lock.name}{TMP_MARK}"
    try:
        names = [n for n in os.listdir(lock.parent) if n.startswith(prefix)]
    except OSError:
        return
    for n in names:
        q = lock.parent / n
        try:
            doc = read_lock(q)
        except BoundlabError:
            continue
        if doc is not None and n.startswith(f".{lock.name}{doc['mark']}") and \
                doc["mark"] != process_mark() and not process_alive(doc["pid"]):
            q.unlink(missing_ok=True)


def release_lock(lock) -> None:
    """Remove ``lock`` if this process holds it (a lock of another writer stays)."""
    from .errors import BoundlabError

    try:
        doc = read_lock(lock)
    except BoundlabError:
        return
    if doc is not None and doc["mark"] == process_mark():
        pathlib.Path(lock).unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` may still be running (this one, another user's, or any pid the
    system will not judge): only a pid that is certainly gone gives False.

    >>> process_alive(os.getpid())
    True
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True
