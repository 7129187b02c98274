"""Atomic writes of single files: a temporary file beside the target, then one rename.

Every temporary file or folder boundlab makes carries :func:`process_mark` in its name: the
writer's pid and a random token of this process, so leftovers are removed only when they are
provably boundlab's (this process's, or recorded in the lock of a dead writer:
:mod:`boundlab._manifest`), never by a name pattern. A write that fails raises
:class:`~boundlab.errors.WriteError` naming the file (and the option, when given) and is
remembered (:func:`failed_writes`), so an output set never replaces a complete one after a
failed write that some caller swallowed. ``owned=True`` applies the rule of single-file outputs
(:func:`check_replaceable`). Re-exported by :mod:`boundlab.io`.

Example
-------
>>> import pathlib, tempfile
>>> atomic_write_text(pathlib.Path(tempfile.mkdtemp()) / "a.txt", "hello").read_text()
'hello'
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import pathlib
import secrets
import tempfile

__all__ = ["TMP_MARK", "atomic_path", "atomic_write_text", "atomic_write_bytes",
           "atomic_savefig", "process_mark", "force_overwrite", "forced", "failed_writes",
           "check_replaceable", "record_path", "record_written"]

#: the mark in the name of every temporary file or folder boundlab makes (with the writer's pid)
TMP_MARK = ".boundlab-tmp-"

_TOKENS: dict[int, str] = {}
_FORCE = contextvars.ContextVar("boundlab_force_overwrite", default=False)
_RECORD_FORMAT = "boundlab-written/1"
_FAILED: list[tuple[str, str]] = []  # (absolute path, why) of the writes that failed here


def process_mark() -> str:
    """``TMP_MARK`` + this process's pid + a random token (new in a forked child): part of the
    name of every temporary file this process makes, and recorded in its locks.

    >>> process_mark() == process_mark() and str(os.getpid()) in process_mark()
    True
    """
    pid = os.getpid()
    if pid not in _TOKENS:
        _TOKENS[pid] = secrets.token_hex(8)
    return f"{TMP_MARK}{pid}-{_TOKENS[pid]}-"


@contextlib.contextmanager
def force_overwrite(on: bool = True):
    """Within the block, outputs may replace files boundlab did not write (``--force``).

    >>> with force_overwrite():
    ...     forced()
    True
    >>> forced()
    False
    """
    token = _FORCE.set(bool(on))
    try:
        yield
    finally:
        _FORCE.reset(token)


def forced() -> bool:
    """Whether :func:`force_overwrite` is in effect."""
    return _FORCE.get()


def failed_writes(under) -> list[tuple[str, str]]:
    """``(absolute path, why)`` of the atomic writes under the folder ``under`` that failed in
    this process (also those a caller caught and carried on after)."""
    root = os.path.join(os.path.abspath(under), "")
    return [f for f in _FAILED if f[0].startswith(root)]


def _failed(exc: OSError, path, name):
    from .errors import WriteError

    if isinstance(exc, WriteError):  # a nested write (a sidecar) already named its file
        return exc
    why = exc.strerror or str(exc)
    _FAILED.append((os.path.abspath(path), why))
    return WriteError(exc.errno, why, str(path), option=name)


@contextlib.contextmanager
def atomic_path(path, suffix: str | None = None, *, name: str | None = None,
                owned: bool = False):
    """Yield a temporary path next to ``path``; on success rename it onto ``path``.

    On error the temporary file is removed and ``path`` is left untouched; an ``OSError`` is
    raised as :class:`~boundlab.errors.WriteError` naming ``path`` and ``name`` (the option
    or parameter that chose it). With ``owned``, ``path`` is a single-file output: an existing
    file is replaced only when boundlab wrote it and it is unchanged since, and the new file's
    hash is recorded (:func:`check_replaceable`).

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

        raise DomainError(name or "path", str(path), "a file path", "empty or a directory name")
    if path.is_dir():
        from .errors import DomainError

        raise DomainError(name or "path", str(path), "a file path", "is a directory")
    prefix = f".{path.name}{process_mark()}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix or path.suffix or ".tmp",
                                   dir=path.parent)
        os.close(fd)
    except OSError as exc:
        raise _failed(exc, path, name) from None
    except BaseException:  # Ctrl-C inside mkstemp: its file carries this process's mark
        with contextlib.suppress(OSError):
            for n in os.listdir(path.parent):
                if n.startswith(prefix):
                    (path.parent / n).unlink()
        raise
    tmp = pathlib.Path(tmp)
    try:
        yield tmp
        if tmp.exists():  # mkstemp's 0600 -> the mode an ordinary open() would give
            os.chmod(tmp, 0o666 & ~_umask())
        if owned:
            record_written(path, tmp, name or "path")
        os.replace(tmp, path)
    except OSError as exc:
        err = _failed(exc, path, name)
        if err is exc:
            raise
        raise err from None
    finally:
        with contextlib.suppress(OSError):
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


def atomic_write_text(path, text: str, *, name: str | None = None,
                      owned: bool = False) -> pathlib.Path:
    """Write ``text`` to ``path`` atomically, UTF-8 encoded; returns the path
    (``name``, ``owned``: as :func:`atomic_path`)."""
    with atomic_path(path, name=name, owned=owned) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return pathlib.Path(path)


def atomic_write_bytes(path, data: bytes, *, name: str | None = None,
                       owned: bool = False) -> pathlib.Path:
    """Write ``data`` to ``path`` atomically; returns the path (``name``, ``owned``: as
    :func:`atomic_path`).

    >>> import pathlib, tempfile
    >>> atomic_write_bytes(pathlib.Path(tempfile.mkdtemp()) / "b.bin", b"\\x00").read_bytes()
    b'\\x00'
    """
    with atomic_path(path, name=name, owned=owned) as tmp:
        tmp.write_bytes(data)
    return pathlib.Path(path)


def atomic_savefig(fig, path, *, name: str | None = None, owned: bool = False,
                   **kwargs) -> pathlib.Path:
    """``fig.savefig`` to ``path`` atomically (format from the suffix).

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, pathlib, tempfile
    >>> fig, ax = plt.subplots(); _ = ax.plot([0, 1])
    >>> atomic_savefig(fig, pathlib.Path(tempfile.mkdtemp()) / "f.png").suffix
    '.png'
    >>> plt.close(fig)
    """
    path = pathlib.Path(path)
    with atomic_path(path, name=name, owned=owned) as tmp:  # owned: a single-file output
        fig.savefig(tmp, format=path.suffix.lstrip(".") or "png", **kwargs)
    return path


# ------------------------------------------------------------------ single-file outputs
def record_path(path) -> pathlib.Path:
    """Where the record of the single-file output ``path`` lives: ``.NAME.boundlab.json``
    beside it (hidden), holding the SHA-256 of what boundlab wrote."""
    p = pathlib.Path(path)
    return p.parent / f".{p.name}.boundlab.json"


def _recorded(path: pathlib.Path, name: str) -> set | None:
    """The hashes the record of ``path`` accepts; None without a record; a file in the
    record's place that is not one is refused."""
    from .errors import BoundlabError, OverwriteError
    from .integrity import loads_plain, read_bounded

    rec = record_path(path)
    if not os.path.lexists(rec):
        return None
    try:
        doc = loads_plain(read_bounded(rec, 1 << 16, "record"), rec, "record")
    except BoundlabError:
        doc = None
    if rec.is_symlink() or not isinstance(doc, dict) or doc.get("format") != _RECORD_FORMAT \
            or doc.get("file") != path.name or not isinstance(doc.get("sha256"), str):
        raise OverwriteError(name, rec, "it is not the record boundlab keeps of " + path.name)
    return {h for h in (doc["sha256"], doc.get("previous")) if isinstance(h, str)}


def check_replaceable(path, name: str, what: str = "a file") -> str | None:
    """Refuse (:class:`~boundlab.errors.OverwriteError` naming ``name`` and the file) to replace
    an existing ``path`` unless boundlab wrote it and it is unchanged since: its record
    (:func:`record_path`) holds its current SHA-256. A missing path is fine; so is anything
    under :func:`~boundlab.io.force_overwrite`. Returns the current hash (None: no file).

    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "thesis.csv"; _ = f.write_text("round,my data")
    >>> check_replaceable(f, "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.OverwriteError: --out = '...thesis.csv' is outside its domain: ...
    """
    from .errors import OverwriteError

    p = pathlib.Path(path)
    if forced():
        return None
    if not os.path.lexists(p):
        _recorded(p, name)  # a foreign file where the record goes is refused too
        return None
    if p.is_symlink() or not p.is_file():
        raise OverwriteError(name, p, "it is not a regular file", what)
    hashes, now = _recorded(p, name), _file_hash(p)
    if hashes is None:
        raise OverwriteError(name, p, "boundlab did not write it (no record of it)", what)
    if now not in hashes:
        raise OverwriteError(name, p, "it changed since boundlab wrote it", what)
    return now


def record_written(path, new, name: str = "path") -> pathlib.Path:
    """Check ``path`` may be replaced (:func:`check_replaceable`), then record the hash of
    ``new`` (the file about to be renamed onto it) beside it; the hash of the file it replaces
    stays accepted until the rename is done, so a kill in between refuses nothing."""
    old = check_replaceable(path, name)
    doc = {"format": _RECORD_FORMAT, "file": pathlib.Path(path).name,
           "sha256": _file_hash(pathlib.Path(new)), "previous": old}
    return atomic_write_text(record_path(path), json.dumps(doc, sort_keys=True), name=name)


def _file_hash(path: pathlib.Path) -> str | None:
    import hashlib

    if path.is_symlink() or not path.is_file():
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
