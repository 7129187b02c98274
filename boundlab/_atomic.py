"""Atomic writes of single files: a temporary file beside the target (named with
:data:`TMP_MARK` and the writer's pid, so the leftovers of a killed writer can be told apart and
removed), then one rename. Re-exported by :mod:`boundlab.io`.

Example
-------
>>> import pathlib, tempfile
>>> atomic_write_text(pathlib.Path(tempfile.mkdtemp()) / "a.txt", "hello").read_text()
'hello'
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import tempfile

__all__ = ["TMP_MARK", "atomic_path", "atomic_write_text", "atomic_write_bytes",
           "atomic_savefig"]

#: the mark in the name of every temporary file or folder boundlab makes (with the writer's pid)
TMP_MARK = ".boundlab-tmp-"


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
