"""Atomic file output: write to a temporary file in the target directory, then rename.

An interrupted run therefore never leaves a half-written file behind. Shared by toys (traces)
and verify (reports, figures, caches).

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
import os
import pathlib
import tempfile

__all__ = ["atomic_path", "atomic_write_text", "atomic_write_bytes", "atomic_savefig"]


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
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or path.suffix or ".tmp",
                               dir=path.parent)
    os.close(fd)
    tmp = pathlib.Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(path, text: str) -> pathlib.Path:
    """Write ``text`` to ``path`` atomically; returns the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
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
