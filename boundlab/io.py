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
    check_replaceable,
    failed_writes,
    force_overwrite,
    forced,
    process_mark,
    record_path,
)
from ._lock import LOCK, dead_mark, hold_lock, release_lock, remove_marked
from ._manifest import (
    MANIFEST,
    add_to_manifest,
    check_output_dir,
    clean_temps,
    foreign_files,
    process_alive,
    read_manifest,
    write_manifest,
)

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_savefig",
           "output_set", "check_output_dir", "OUTPUT_FILES", "json_safe", "dumps_strict",
           "MANIFEST", "write_manifest", "read_manifest", "clean_temps", "TMP_MARK",
           "check_replaceable", "foreign_files", "process_alive", "force_overwrite", "forced",
           "add_to_manifest", "record_path", "process_mark", "failed_writes", "LOCK",
           "hold_lock", "release_lock", "as_option"]

#: the files a ``boundlab verify`` output set holds (the manifest lists them all)
OUTPUT_FILES = ("report.md", "results.csv")
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
    leave a hidden staging directory beside ``path`` (never inside it), and the writer's lock
    ``.NAME.boundlab-lock`` that names it; the next :func:`output_set` on the same path removes
    what that lock proves the dead writer's, nothing else. A second writer while one is alive
    is refused. A failed write inside the set, even one a caller caught, refuses the swap
    (:class:`~boundlab.errors.WriteError` naming the file and ``name``): the previous complete
    set stays.

    >>> import pathlib, tempfile
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "run"
    >>> with output_set(out) as stage:
    ...     _ = (stage / "report.md").write_text("v1")
    >>> sorted(p.name for p in out.iterdir())  # the manifest lists every file boundlab wrote
    ['boundlab-manifest.json', 'report.md']
    """
    target = check_output_dir(path, name, kind)
    lock = target.resolve().parent / f".{target.name}.boundlab-lock"
    mark = dead_mark(lock)  # a killed writer's staging folder: provably its own, removed
    if mark is not None:
        remove_marked(lock.parent, f".{target.name}{mark}", recursive=False)
    stage, old_handlers = None, _trap_signals()  # SIGTERM / SIGHUP: an exception, cleaned up
    try:
        # Ctrl-C / SIGTERM / SIGHUP (also one already pending) are deferred while the lock and
        # the staging directory are made and while they are removed: none lands in between
        with _deferred_signals():
            hold_lock(lock, name)
            stage = pathlib.Path(tempfile.mkdtemp(prefix=f".{target.name}{process_mark()}stage-",
                                                  dir=lock.parent))
        yield stage
        _check_written(stage, path, name)
        write_manifest(stage, kind)
        check_output_dir(path, name, kind)  # again: nothing of the user's arrived meanwhile
        _swap(stage, target.resolve())
    finally:
        try:
            with _deferred_signals():
                if stage is not None:
                    shutil.rmtree(stage, ignore_errors=True)
                release_lock(lock)
        finally:
            _restore_signals(old_handlers)


@contextlib.contextmanager
def as_option(option: str):
    """Inside the block, a failed write (:class:`~boundlab.errors.WriteError`) names
    ``option``, the command-line option that chose the file (``--out``, ``--save``)."""
    from .errors import WriteError

    try:
        yield
    except WriteError as exc:
        exc.option = option
        raise


def _check_written(stage: pathlib.Path, path, name: str) -> None:
    """Refuse to swap in a set one of whose writes failed, even one a caller caught (a figure
    on a full disk): the previous complete set stays."""
    failed = failed_writes(stage)
    if failed:
        from .errors import WriteError

        (first, why), more = failed[0], len(failed) - 1
        tail = f" (and {more} more file(s))" if more else ""
        raise WriteError(None, f"{why}{tail}; the previous set is kept",
                         os.path.join(str(path), os.path.relpath(first, stage)), option=name)


_HELD = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s)


@contextlib.contextmanager
def _deferred_signals():
    """Run the block with Ctrl-C / SIGTERM / SIGHUP deferred (main thread): one that arrives
    meanwhile, or was pending, is raised again after it, by the handler then in force."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got, saved = [], {}
    for sig in _HELD:
        try:
            saved[sig] = signal.signal(sig, lambda signum, frame: got.append(signum))
        except (ValueError, OSError):  # pragma: no cover - not the main interpreter
            pass
    try:
        yield
    finally:
        _restore_signals(saved)
    if got:
        signal.raise_signal(got[0])


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
    old = target.parent / f".{target.name}{process_mark()}old"
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
