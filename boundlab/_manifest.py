"""Never delete or overwrite what boundlab did not write, one rule for every write: a file is
replaced or deleted only when boundlab wrote it and it is unchanged since, by the SHA-256
recorded when it was written.

- An output *folder* carries a manifest (:data:`MANIFEST`, every file with its hash) and is
  replaced or updated only when the manifest lists everything in it, unchanged
  (:func:`check_output_dir`).
- A *single-file* output carries a record beside it
  (:func:`~boundlab._atomic.record_path`: the hidden ``.NAME.boundlab.json`` with its hash)
  and is replaced only when the record matches (:func:`~boundlab._atomic.check_replaceable`);
  a file's first bytes prove nothing.
- Temporary files are removed only when provably boundlab's: carrying the mark of a dead
  writer's lock (:func:`clean_temps`, :mod:`boundlab._lock`), never by a name pattern, and
  never in a folder that is refused.

:func:`boundlab.io.force_overwrite` (``--force``) lifts the refusals. Re-exported by
:mod:`boundlab.io`.

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

from ._atomic import TMP_MARK, _file_hash, atomic_write_text, check_replaceable, forced
from ._lock import LOCK, dead_mark, process_alive, remove_marked

__all__ = ["MANIFEST", "check_output_dir", "check_replaceable", "clean_temps", "foreign_files",
           "process_alive", "read_manifest", "write_manifest", "add_to_manifest"]

#: the file, written by boundlab last, that lists every file of an output folder with its hash:
#: only a folder holding a valid manifest that lists all of its files may be replaced or updated
MANIFEST = "boundlab-manifest.json"
_MANIFEST_FORMAT = "boundlab-manifest/1"
_MANIFEST_MAX = 16 << 20


def check_output_dir(path, name: str = "out", kind: str | None = None, *,
                     unchanged: bool = True) -> pathlib.Path:
    """Validate an output directory before any work; returns it as a path.

    Accepted: a directory that does not exist yet in an existing, writable directory; an empty
    directory; a folder boundlab wrote, i.e. one holding a valid :data:`MANIFEST` (of ``kind``
    when given) that lists every file in it, each unchanged since boundlab wrote it. Refused
    (:class:`~boundlab.errors.DomainError` naming ``name``): an empty path, a file, a missing or
    unwritable parent, the current or home directory, and a folder with anything else in it
    -- the message names the unknown or changed files (:class:`~boundlab.errors.OverwriteError`;
    :func:`~boundlab.io.force_overwrite` accepts it). ``unchanged=False``: a listed file counts
    as boundlab's whatever its content (for a folder whose files carry their own seals, which
    then name an edited one precisely). Nothing is deleted here; a dead writer's leftovers,
    proved by its lock, do not count as foreign (:func:`clean_temps` removes them).

    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_dir(d / "new") == d / "new"
    True
    >>> _ = (d / "thesis.tex").write_text("mine")
    >>> check_output_dir(d, "--out")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.OverwriteError: --out = '...' is outside its domain: ...: thesis.tex; ...
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
        unknown = [] if forced() else foreign_files(p, kind, unchanged=unchanged)
        if unknown:
            from .errors import OverwriteError

            shown = ", ".join(_printable(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise OverwriteError(name, str(path), f"it holds files boundlab did not write: "
                                 f"{shown}{more}", "a folder")
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


def foreign_files(directory, kind: str | None = None, *, unchanged: bool = True) -> list[str]:
    """The files of ``directory`` that its manifest does not list as written by boundlab with
    their current content (all of them when there is no valid manifest; ``unchanged=False``:
    with any content). Its writer's lock and a dead writer's marked leftovers are not
    counted."""
    root = pathlib.Path(directory)
    mark = dead_mark(root / LOCK)
    present = [f for f in _walk_files(root) if f not in (MANIFEST, LOCK)
               and not (mark and mark in f)]
    if not present:
        return []
    listed = read_manifest(root, kind) or {}
    if not unchanged:
        return [f for f in present if listed.get(f) is None]
    return [f for f in present if listed.get(f) is None or listed[f] != _file_hash(root / f)]


def write_manifest(directory, kind: str) -> pathlib.Path:
    """List every file under ``directory`` with its SHA-256 in :data:`MANIFEST` (atomically);
    call it last, after the folder's files are written."""
    root = pathlib.Path(directory)
    files = {f: _file_hash(root / f) for f in _walk_files(root)
             if f not in (MANIFEST, LOCK) and TMP_MARK not in f}
    return _put_manifest(root, kind, {k: v for k, v in files.items() if v is not None})


def add_to_manifest(directory, kind: str, entries: dict) -> pathlib.Path:
    """Add ``{relative path: sha256}`` to the manifest of ``directory`` (creating it), for a
    folder written file by file: record each file *before* writing it, so a run killed in
    between leaves nothing unlisted."""
    root = pathlib.Path(directory)
    files = dict(read_manifest(root, kind) or {})
    files.update(entries)
    return _put_manifest(root, kind, files)


def _put_manifest(root: pathlib.Path, kind: str, files: dict) -> pathlib.Path:
    doc = {"format": _MANIFEST_FORMAT, "kind": kind, "files": files}
    return atomic_write_text(root / MANIFEST, json.dumps(doc, indent=1, sort_keys=True))


def clean_temps(directory, recursive: bool = True) -> list[str]:
    """Remove the temporary files and folders a dead boundlab writer left under ``directory``,
    provably its own: they carry the mark its lock there (:data:`~boundlab._lock.LOCK`)
    records; then that lock. Returns what was removed. Nothing else is touched, whatever its
    name; call it only on a folder that is accepted."""
    root = pathlib.Path(directory)
    mark = dead_mark(root / LOCK)
    if mark is None:
        return []
    removed = remove_marked(root, mark, recursive)
    (root / LOCK).unlink(missing_ok=True)
    return removed
