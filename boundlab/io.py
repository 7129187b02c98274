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

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_savefig",
           "output_set", "check_output_dir", "OUTPUT_FILES", "json_safe", "dumps_strict",
           "MANIFEST", "write_manifest", "read_manifest", "clean_temps", "TMP_MARK",
           "check_replaceable", "foreign_files", "process_alive"]

#: the files a ``boundlab verify`` output set holds (the manifest lists them all)
OUTPUT_FILES = ("report.md", "results.csv")
#: the file, written by boundlab last, that lists every file of an output folder with its hash:
#: only a folder holding a valid manifest that lists all of its files may be replaced or updated
MANIFEST = "boundlab-manifest.json"
_MANIFEST_FORMAT = "boundlab-manifest/1"
_MANIFEST_MAX = 16 << 20
#: the mark in the name of every temporary file or folder boundlab makes (with the writer's pid)
TMP_MARK = ".boundlab-tmp-"
_STAGE = ".boundlab-staging-"
_OLD = ".boundlab-old-"


@contextlib.contextmanager
def atomic_path(path, suffix: str | None = None):
    """Yield a temporary path next to ``path``; on success rename it onto ``path``.

    On error the temporary file is removed and ``path`` is left untouched.

    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "x.csv"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("a,b")
    >>> target.read_text()
    'a,b'
    """
    path = pathlib.Path(path)
    if not str(path).strip() or path.name in ("", ".", ".."):
        from .errors import DomainError

        raise DomainError("path", str(path), "a file path", "empty or a directory name")
    if path.is_dir():
        from .errors import DomainError

        raise DomainError("path", str(path), "a file path", "is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}{TMP_MARK}{os.getpid()}-",
                               suffix=suffix or path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp = pathlib.Path(tmp)
    try:
        yield tmp
        if tmp.exists():  # mkstemp's 0600 -> the mode an ordinary open() would give
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _umask() -> int:
    """The process umask, read without changing it where the system tells (Linux), since
    ``os.umask`` sets it for a moment (a race with other threads creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path, text: str) -> pathlib.Path:
    """Write ``text`` to ``path`` atomically, UTF-8 encoded; returns the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return pathlib.Path(path)


def atomic_write_bytes(path, data: bytes) -> pathlib.Path:
    """Write ``data`` to ``path`` atomically; returns the path.

    >>> import pathlib, tempfile
    >>> atomic_write_bytes(pathlib.Path(tempfile.mkdtemp()) / "b.bin", b"\\x00").read_bytes()
    b'\\x00'
    """
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return pathlib.Path(path)


def atomic_savefig(fig, path, **kwargs) -> pathlib.Path:
    """``fig.savefig`` to ``path`` atomically (format from the suffix).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, pathlib, tempfile
    >>> fig, ax = plt.subplots(); _ = ax.plot([0, 1])
    >>> atomic_savefig(fig, pathlib.Path(tempfile.mkdtemp()) / "f.png").suffix
    '.png'
    >>> plt.close(fig)
    """
    path = pathlib.Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **kwargs)
    return path


def check_replaceable(path, name: str, looks_ours, what: str = "a file boundlab wrote"):
    """Refuse (DomainError naming ``name``) to overwrite an existing ``path`` unless
    ``looks_ours(path, first_bytes)`` recognises it as a file boundlab wrote of this kind (its
    header, format tag or schema): a single-file output never replaces a user's own file. A
    missing path is fine. ``first_bytes`` are at most the first 64 KiB.

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "thesis.csv"; _ = f.write_text("my,data")
    >>> check_replaceable(f, "--out", lambda path, head: head.startswith(b"round,"))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: --out = '...thesis.csv' is outside its domain: ...another path)
    """
    from .errors import DomainError

    p = pathlib.Path(path)
    if not os.path.lexists(p):
        return
    head = b""
    if p.is_file() and not p.is_symlink():
        try:
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
        except OSError:
            head = b""
    if not head or not looks_ours(p, head):
        raise DomainError(name, str(path), f"a new file or {what}", "it exists and boundlab "
                          "did not write it: delete it or choose another path")


# ---------------------------------------------------------------------- output sets
def check_output_dir(path, name: str = "out", kind: str | None = None) -> pathlib.Path:
    """Validate an output directory before any work; returns it as a path.

    Accepted: a directory that does not exist yet in an existing, writable directory; an empty
    directory; a folder boundlab wrote, i.e. one holding a valid :data:`MANIFEST` (of ``kind``
    when given) that lists every file in it, each unchanged since boundlab wrote it. Refused
    (:class:`~boundlab.errors.DomainError` naming ``name``): an empty path, a file, a missing or
    unwritable parent, the current or home directory, and a folder with anything else in it
    -- the message names the unknown or changed files. Nothing is ever deleted or overwritten
    that boundlab did not write. Temporary files of dead boundlab processes are removed first.

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_dir(d / "new") == d / "new"
    True
    >>> _ = (d / "thesis.tex").write_text("mine")
    >>> check_output_dir(d, "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: --out = '...' is outside its domain: ...thesis.tex)
    """
    from .errors import DomainError

    dom = "an output directory"
    if path is None or not str(path).strip():
        raise DomainError(name, "" if path is None else str(path), dom, "empty path")
    p = pathlib.Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise DomainError(name, str(path), dom, "a file is there")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise DomainError(name, str(path), dom, f"directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DomainError(name, str(path), dom, f"directory {str(parent)!r} is not writable")
    if p.is_dir():
        if p.resolve() == pathlib.Path.cwd().resolve() or p.resolve() == pathlib.Path.home():
            raise DomainError(name, str(path), dom, "the current or home directory cannot be "
                              "replaced")
        clean_temps(p)
        unknown = foreign_files(p, kind)
        if unknown:
            shown = ", ".join(_printable(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise DomainError(name, str(path), f"a new or empty directory, or one boundlab "
                              f"wrote (with its {MANIFEST})", f"it holds files boundlab did not "
                              f"write: {shown}{more}")
    return p


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


def _walk_files(root: pathlib.Path) -> list[str]:
    """Relative paths of every entry under ``root`` that is not a directory (links included,
    never followed), and of empty directories (with a trailing ``/``), sorted."""
    out = []
    for base, dirs, files in os.walk(root, followlinks=False):
        rel = pathlib.Path(base).relative_to(root)
        for d in list(dirs):
            if os.path.islink(os.path.join(base, d)):
                dirs.remove(d)
                files.append(d)
        if not dirs and not files and base != str(root):
            out.append(rel.as_posix() + "/")
        out += [(rel / f).as_posix() for f in files]
    return sorted(out)


def _file_hash(path: pathlib.Path) -> str | None:
    import hashlib

    if path.is_symlink() or not path.is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_manifest(directory, kind: str | None = None) -> dict | None:
    """The ``{relative path: sha256}`` a valid manifest of ``directory`` lists, or None (no
    manifest, damaged, too large, another kind)."""
    from .errors import BoundlabError
    from .integrity import loads_plain, read_bounded

    f = pathlib.Path(directory) / MANIFEST
    if f.is_symlink() or not f.is_file():
        return None
    try:
        data = loads_plain(read_bounded(f, _MANIFEST_MAX, "manifest"), f, "manifest")
    except BoundlabError:
        return None
    if not isinstance(data, dict) or data.get("format") != _MANIFEST_FORMAT:
        return None
    if kind is not None and data.get("kind") != kind:
        return None
    files = data.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in files.items()):
        return None
    return files


def foreign_files(directory, kind: str | None = None) -> list[str]:
    """The files of ``directory`` that its manifest does not list as written by boundlab with
    their current content (all of them when there is no valid manifest)."""
    root = pathlib.Path(directory)
    present = [f for f in _walk_files(root) if f != MANIFEST]
    if not present:
        return []
    listed = read_manifest(root, kind) or {}
    return [f for f in present if listed.get(f) is None or listed[f] != _file_hash(root / f)]


def write_manifest(directory, kind: str) -> pathlib.Path:
    """List every file under ``directory`` with its SHA-256 in :data:`MANIFEST` (atomically);
    call it last, after the folder's files are written."""
    root = pathlib.Path(directory)
    files = {f: _file_hash(root / f) for f in _walk_files(root)
             if f != MANIFEST and TMP_MARK not in f}
    doc = {"format": _MANIFEST_FORMAT, "kind": kind,
           "files": {k: v for k, v in files.items() if v is not None}}
    return atomic_write_text(root / MANIFEST, json.dumps(doc, indent=1, sort_keys=True))


def clean_temps(directory) -> list[str]:
    """Remove, anywhere under ``directory``, the temporary files and folders (named with
    :data:`TMP_MARK` and a pid) of boundlab processes that are gone; returns what was removed.
    Such leftovers of a killed run are never read as results."""
    removed = []
    root = pathlib.Path(directory)
    if not root.is_dir():
        return removed
    for base, dirs, files in os.walk(root, followlinks=False):
        for n in list(dirs) + files:
            i = n.find(TMP_MARK)
            if not n.startswith(".") or i < 0:
                continue
            pid = n[i + len(TMP_MARK):].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                p = pathlib.Path(base) / n
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                    dirs.remove(n)
                else:
                    p.unlink(missing_ok=True)
                removed.append(p.relative_to(root).as_posix())
    return removed


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


_alive = process_alive


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
