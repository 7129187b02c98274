"""Never delete or overwrite what boundlab did not write: output folders carry a manifest
(:data:`MANIFEST`, every file with its SHA-256) and are replaced or updated only when it lists
everything in them, unchanged; single-file outputs replace only a file recognisably boundlab's
(:func:`check_replaceable`); temporary files of dead writers are removed (:func:`clean_temps`).
Re-exported by :mod:`boundlab.io`.

Example
-------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "mine.txt").write_text("x")
>>> foreign_files(d)
['mine.txt']
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

from ._atomic import TMP_MARK, atomic_write_text

__all__ = ["MANIFEST", "check_output_dir", "check_replaceable", "clean_temps", "foreign_files",
           "process_alive", "read_manifest", "write_manifest"]

#: the file, written by boundlab last, that lists every file of an output folder with its hash:
#: only a folder holding a valid manifest that lists all of its files may be replaced or updated
MANIFEST = "boundlab-manifest.json"
_MANIFEST_FORMAT = "boundlab-manifest/1"
_MANIFEST_MAX = 16 << 20


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
