"""Atomic file output: a file via a temporary file + rename, a whole output set via a staging
directory that is swapped in.

An interrupted run therefore never leaves a half-written file behind, and a reader of an output
directory sees the old set or the new one, never a mix (:func:`output_set`). Shared by toys
(traces) and verify (reports, figures, caches).

Example
-------
>>> import pathlib, tempfile
>>> from boundlab.io import atomic_write_text
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_text(d / "a.txt", "hello").read_text()
'hello'
"""


from __future__ import annotations

import contextlib
import json
import math
import os
import pathlib
import shutil
import signal
import tempfile
import threading

from ._atomic import (
    TMP_MARK,
    atomic_path,
    atomic_savefig,
    atomic_write_bytes,
    atomic_write_text,
)
from ._manifest import (
    MANIFEST,
    check_output_dir,
    check_replaceable,
    clean_temps,
    foreign_files,
    process_alive,
    read_manifest,
    write_manifest,
)

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_savefig",
           "output_set", "check_output_dir", "OUTPUT_FILES", "json_safe", "dumps_strict",
           "MANIFEST", "write_manifest", "read_manifest", "clean_temps", "TMP_MARK",
           "check_replaceable", "foreign_files", "process_alive"]

#: the files a ``boundlab verify`` output set holds (the manifest lists them all)
OUTPUT_FILES = ("report.md", "results.csv")
_STAGE = ".boundlab-staging-"
_OLD = ".boundlab-old-"
_alive = process_alive
from ._atomic import _umask  # noqa: E402,F401 - the process umask (verify.reproduce.store)


# ---------------------------------------------------------------------- output sets
@contextlib.contextmanager
def output_set(path, name: str = "out", kind: str = "output"):
    """Yield a staging directory; on success it replaces ``path`` whole, in one rename.

    Everything the job writes goes into the staging directory (a hidden sibling of ``path``,
    same file system). At the end the staging directory and ``path`` are exchanged atomically
    (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, with the old set restored on
    failure), then the old set is deleted. On an exception, Ctrl-C, SIGTERM or SIGHUP the
    staging directory is removed and ``path`` is untouched. A SIGKILL cannot be caught: it may
    leave a hidden staging directory beside ``path`` (never inside it); the next
    :func:`output_set` on the same path removes those of dead processes.

    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with output_set(out) as stage:
    ...     _ = (stage / "report.md").write_text("v1")
    >>> sorted(p.name for p in out.iterdir())  # the manifest lists every file boundlab wrote
    ['boundlab-manifest.json', 'report.md']
    """
    target = check_output_dir(path, name, kind)
    _clean_stale(target)
    # Ctrl-C / SIGTERM / SIGHUP are held back while the staging directory is created and while
    # it is removed, so a signal can never land between its creation and the cleanup's reach
    mask = _block_signals()
    stage = pathlib.Path(tempfile.mkdtemp(prefix=f".{target.name}{_STAGE}{os.getpid()}-",
                                          dir=target.resolve().parent))
    old_handlers = _trap_signals()
    try:
        _unblock_signals(mask)  # a signal that arrived meanwhile is raised here, inside the try
        yield stage
        write_manifest(stage, kind)
        check_output_dir(path, name, kind)  # again: nothing of the user's arrived meanwhile
        _swap(stage, target.resolve())
    finally:
        mask = _block_signals()
        try:
            _restore_signals(old_handlers)
            shutil.rmtree(stage, ignore_errors=True)
        finally:
            _unblock_signals(mask)


_HELD = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s)


def _block_signals():
    """Hold back the interrupting signals (main thread, POSIX); returns what to restore."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)


def _unblock_signals(mask) -> None:
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


class _Terminated(BaseException):
    """SIGTERM / SIGHUP during an output-set write (turned into an exception to clean up)."""


def _trap_signals():
    if threading.current_thread() is not threading.main_thread():
        return {}
    saved = {}

    def handler(signum, frame):
        raise _Terminated(f"signal {signum}")
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            try:
                saved[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):  # pragma: no cover - not the main interpreter
                pass
    return saved


def _restore_signals(saved) -> None:
    for sig, h in saved.items():
        signal.signal(sig, h)


def _swap(stage: pathlib.Path, target: pathlib.Path) -> None:
    if not target.exists():
        os.rename(stage, target)
        return
    if _exchange(stage, target):  # stage now holds the old set; the caller removes it
        return
    old = target.parent / f".{target.name}{_OLD}{os.getpid()}"
    shutil.rmtree(old, ignore_errors=True)
    os.rename(target, old)
    try:
        os.rename(stage, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _exchange(a: pathlib.Path, b: pathlib.Path) -> bool:
    """Atomically exchange two paths (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


def _clean_stale(target: pathlib.Path) -> None:
    """Remove staging / old directories beside ``target`` left by processes that are gone."""
    parent = target.resolve().parent
    for prefix in (f".{target.name}{_STAGE}", f".{target.name}{_OLD}"):
        for p in parent.glob(prefix + "*"):
            pid = p.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(p, ignore_errors=True)



# ---------------------------------------------------------------------- strict JSON
def json_safe(obj):
    """Strict-JSON data: a non-finite float becomes ``null`` and, inside a dict, a sibling
    ``"<key>_status"`` says which (``"inf"``, ``"-inf"`` or ``"nan"``).

    >>> json_safe({"value": float("inf"), "terms": {"a": 1.0}})
    {'value': None, 'value_status': 'inf', 'terms': {'a': 1.0}}
    """
    if type(obj).__module__ == "numpy" and hasattr(obj, "item") and getattr(obj, "ndim", 1) == 0:
        obj = obj.item()  # numpy scalar
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            out[k] = json_safe(v)
            if type(v).__module__ == "numpy" and getattr(v, "ndim", 1) == 0:
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                out[f"{k}_status"] = "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        return out
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def dumps_strict(obj, **kw) -> str:
    """``json.dumps`` of :func:`json_safe` data with ``allow_nan=False`` (strict JSON).

    >>> dumps_strict({"value": float("nan")})
    '{"value": null, "value_status": "nan"}'
    """
    return json.dumps(json_safe(obj), allow_nan=False, **kw)
