"""The reproduce output folder, written by boundlab and read back as untrusted data.

Layout of ``out``: one folder per item ``<paper>-<item>/`` (``results.csv``, ``figure.png``,
``section.md``, ``done.json``), ``report.md``, ``.sweeps/`` (the resumable sweep points, owned
and checked by :func:`verify.sweep`) and the manifest :data:`boundlab.io.MANIFEST` (kind
``"reproduce"``) that lists every file boundlab wrote with its hash.

Safety rules:

- :func:`open_out` refuses (``DomainError``, exit 2 at the CLI) a folder holding anything
  boundlab did not write, naming the files; nothing is ever deleted or overwritten that the
  manifest does not list. Temporary folders of a dead run are removed first, only when the
  run's lock in the folder proves them its own (:mod:`boundlab._lock`), never by their name.
  An item folder that a run renamed into place just before it was killed (before it could
  list it) is adopted only when its ``done.json`` is valid and its seal covers exactly
  the folder's files; leftovers under ``.sweeps/`` of a folder with a manifest are adopted too.
- ``done.json`` is sealed (:func:`boundlab.integrity.seal`): claim = item id + the
  configuration's key + :func:`~boundlab.integrity.code_version`; payload = its own content,
  which lists the SHA-256 of each file of the folder. :func:`read_item` checks size, strict JSON,
  every field's type, the seal and each file's hash; anything wrong is an ``IntegrityError``
  naming the file, and :func:`done` then says "not done" (the item runs again).

Example
-------
>>> slug("002:table1")
'002-table1'
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import shutil
import tempfile
from dataclasses import dataclass

from boundlab.errors import BoundlabError, DomainError, IntegrityError
from boundlab.integrity import (
    check_seal,
    code_version,
    escape,
    loads_plain,
    read_bounded,
    seal,
    sha256,
)
from boundlab.io import (
    MANIFEST,
    check_output_dir,
    clean_temps,
    foreign_files,
    read_manifest,
    write_manifest,
)

from .registry import OUTCOMES

__all__ = ["KIND", "ITEM_FILES", "Record", "done", "item_claim", "open_out", "read_item",
           "replace_file", "replace_item", "sealed_meta", "slug", "stage_item",
           "unstage"]

KIND = "reproduce"
FORMAT = "boundlab-reproduce-item/1"
ITEM_FILES = ("results.csv", "figure.png", "figure.svg", "section.md")
SWEEPS = ".sweeps"
MAX_DONE = 1 << 20        # done.json: claims are a few kB
MAX_SECTION = 1 << 20     # section.md
MAX_FILE = 64 << 20       # results.csv / figure.png, hashed in chunks
_TEXT = ("id", "ref", "outcome", "how", "size", "backend")


def slug(item_id: str) -> str:
    return item_id.replace(":", "-")


@dataclass(frozen=True)
class Record:
    """A finished item folder, validated: its ``outcome`` (one of OUTCOMES or ``"error"``),
    ``how``, ``config`` (the key it ran with), ``section`` (Markdown, control characters
    escaped) and ``error`` (``"Type: message"`` when it failed, else None)."""

    id: str
    outcome: str
    how: str
    config: dict
    section: str
    error: str | None


def item_claim(item_id: str, key: dict) -> dict:
    """What an item folder claims to be: the item, the configuration's key, the code."""
    return {"item": item_id, "config": key, "code_version": code_version()}


def _canonical(meta: dict) -> bytes:
    return json.dumps(meta, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def sealed_meta(meta: dict, item_id: str, key: dict) -> str:
    """``done.json``'s text: ``meta`` and its seal."""
    return json.dumps({**meta, "seal": seal(item_claim(item_id, key), _canonical(meta))},
                      indent=1, allow_nan=False)


def _bad(path, field, allowed, detail=""):
    return IntegrityError(path, field, allowed, escape(detail)[:200])


def _check_types(meta, path, item_id) -> None:
    """Raise IntegrityError naming the first field of ``meta`` of the wrong type or value."""
    if not isinstance(meta, dict):
        raise _bad(path, "done.json", "a JSON object", type(meta).__name__)
    if meta.get("format") != FORMAT:
        raise _bad(path, "format", repr(FORMAT), repr(meta.get("format")))
    for k in _TEXT:
        if not isinstance(meta.get(k), str):
            raise _bad(path, k, "a string", repr(meta.get(k)))
    if meta["id"] != item_id:
        raise _bad(path, "id", repr(item_id), repr(meta["id"]))
    if meta["outcome"] not in OUTCOMES + ("error",):
        raise _bad(path, "outcome", ", ".join(OUTCOMES + ("error",)), repr(meta["outcome"]))
    if not (meta.get("data") is None or isinstance(meta.get("data"), str)):
        raise _bad(path, "data", "a string or null", repr(meta.get("data")))
    s = meta.get("seconds")
    if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s < 0:
        raise _bad(path, "seconds", "a finite number >= 0", repr(s))
    if not isinstance(meta.get("config"), dict):
        raise _bad(path, "config", "an object", repr(meta.get("config")))
    _check_claims(meta.get("claims"), path)
    err = meta.get("error")
    if (err is None) != (meta["outcome"] != "error") or not (err is None or (
            isinstance(err, dict) and set(err) == {"type", "message"}
            and all(isinstance(v, str) for v in err.values()))):
        raise _bad(path, "error", "{type, message} strings exactly when the outcome is error",
                   repr(err))
    files = meta.get("files")
    if not isinstance(files, dict) or "section.md" not in files or not set(files) <= \
            set(ITEM_FILES) or not all(isinstance(v, str) and len(v) == 64 for v in
                                       files.values()):
        raise _bad(path, "files", f"SHA-256 hashes of section.md and of {ITEM_FILES}",
                   repr(files))


def _check_claims(claims, path) -> None:
    keys = {"what", "paper", "ours", "rule", "outcome", "how"}
    if not isinstance(claims, list):
        raise _bad(path, "claims", "a list", repr(claims))
    for i, c in enumerate(claims):
        if not isinstance(c, dict) or set(c) != keys or not all(isinstance(c[k], str)
                                                                 for k in keys):
            raise _bad(path, f"claims[{i}]", f"an object of strings {sorted(keys)}", repr(c))
        if c["outcome"] not in OUTCOMES:
            raise _bad(path, f"claims[{i}].outcome", ", ".join(OUTCOMES), repr(c["outcome"]))


def _hash_bounded(path: pathlib.Path, name: str) -> str:
    return sha256(read_bounded(path, MAX_FILE, name))


def read_item(out, item_id: str, key: dict | None = None) -> Record:
    """The validated item folder ``out/<slug>`` made by this code with configuration ``key``
    (None: with the configuration it names, for adoption); IntegrityError otherwise."""
    d = pathlib.Path(out) / slug(item_id)
    path = d / "done.json"
    meta = loads_plain(read_bounded(path, MAX_DONE, "done.json"), path, "done.json")
    _check_types(meta, path, item_id)
    stored = meta.pop("seal", None)
    check_seal(stored, item_claim(item_id, meta["config"] if key is None else key),
               _canonical(meta), path)
    try:
        present = sorted(os.listdir(d))
    except OSError as exc:
        raise _bad(d, "folder", "a readable item folder", str(exc)) from None
    wanted = sorted(list(meta["files"]) + ["done.json"])
    if present != wanted:
        raise _bad(d, "files", f"exactly {wanted}", f"it holds {present}")
    for name, h in meta["files"].items():
        if (d / name).is_symlink() or _hash_bounded(d / name, name) != h:
            raise _bad(d / name, name, "the file as boundlab wrote it", "its hash differs")
    raw = read_bounded(d / "section.md", MAX_SECTION, "section.md")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(d / "section.md", "section.md", "UTF-8 text") from None
    err = meta.get("error")
    return Record(item_id, meta["outcome"], escape(meta["how"]), meta["config"],
                  "\n".join(escape(line) for line in text.split("\n")),
                  None if err is None else escape(f"{err['type']}: {err['message']}"))


def done(out, item_id: str, key: dict) -> bool:
    """Whether ``item_id`` finished under ``out`` with configuration ``key`` and this code
    (an item that failed is not done). A damaged or foreign folder is not done, never an
    error."""
    try:
        return read_item(out, item_id, key).outcome != "error"
    except (BoundlabError, OSError):
        return False


# ------------------------------------------------------------------ the folder
def _registered_slugs() -> dict:
    from .registry import experiments

    return {slug(e.id): e.id for e in experiments()}


def _adoptable(root: pathlib.Path, unknown: list[str]) -> list[str]:
    """The files of ``unknown`` that cannot be adopted as boundlab's own (see module doc)."""
    slugs, valid = _registered_slugs(), {}
    refused = []
    for f in unknown:
        top = f.split("/", 1)[0]
        if top == SWEEPS and "/" in f:
            continue
        if top in slugs and "/" in f:
            if top not in valid:
                try:
                    read_item(root, slugs[top])
                    valid[top] = not (root / top).is_symlink()
                except (BoundlabError, OSError):
                    valid[top] = False
            if valid[top]:
                continue
        refused.append(f)
    return refused


def _refuse(path, name: str, files: list[str]) -> DomainError:
    shown = ", ".join(escape(u) for u in files[:5])
    more = f" and {len(files) - 5} more" if len(files) > 5 else ""
    return DomainError(name, str(path), f"a new or empty directory, or one boundlab wrote (with "
                       f"its {MANIFEST})", f"it holds files boundlab did not write: {shown}{more}")


def open_out(out, name: str = "out") -> pathlib.Path:
    """Check the output folder ``out`` before any work and mark it as boundlab's (its manifest);
    returns it. Refused with :class:`~boundlab.errors.DomainError` naming ``name`` and the
    unknown files: a folder holding files boundlab did not write (see the module doc)."""
    p = pathlib.Path(out).expanduser()
    if p.is_dir() and not p.is_symlink() and read_manifest(p, KIND) is not None:
        unknown = foreign_files(p, KIND)  # a dead run's leftovers its lock proves: not counted
        if unknown:
            refused = _adoptable(p, unknown)
            if refused:
                raise _refuse(out, name, refused)
            write_manifest(p, KIND)
    p = check_output_dir(out, name, KIND)
    clean_temps(p)  # accepted: only now the leftovers go
    p.mkdir(parents=True, exist_ok=True)
    write_manifest(p, KIND)
    return p


def _ours(root: pathlib.Path, rel: str) -> bool:
    """Whether ``root/rel`` (a file, or an item folder and all it holds) may be replaced:
    absent, or every file under it listed unchanged in the manifest, and a folder holds only the
    files boundlab writes in an item folder (a forged manifest cannot get another file
    deleted)."""
    p = root / rel
    if not p.exists() and not p.is_symlink():
        return True
    if p.is_symlink():
        return False
    if p.is_dir() and any(not (p / f).is_file() or (p / f).is_symlink() or
                          f not in ITEM_FILES + ("done.json",) for f in os.listdir(p)):
        return False  # only the files boundlab writes there, whatever the manifest says
    unknown = foreign_files(root, KIND)
    return not any(f == rel or f.startswith(rel + "/") for f in unknown)


def replace_file(root, rel: str, text: str, name: str = "out") -> pathlib.Path:
    """Write ``root/rel`` atomically when it is absent or boundlab's, then the manifest."""
    from boundlab.io import atomic_write_bytes

    root = pathlib.Path(root)
    if not _ours(root, rel):
        raise _refuse(root, name, [rel])
    atomic_write_bytes(root / rel, text.encode("utf-8"))
    write_manifest(root, KIND)
    return root / rel


def stage_item(root, item_id: str) -> pathlib.Path:
    """A fresh hidden temporary folder for the item, named with this process's mark, which
    its lock in ``root`` records (so the next run removes it if this process dies)."""
    from boundlab.io import LOCK, _umask, hold_lock, process_mark

    hold_lock(pathlib.Path(root) / LOCK)
    tmp = tempfile.mkdtemp(prefix=f".{slug(item_id)}{process_mark()}", dir=root)
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 -> the mode os.mkdir would give
    return pathlib.Path(tmp)


def unstage(root) -> None:
    """Release the lock :func:`stage_item` took (the item's temporary folder is gone)."""
    from boundlab.io import LOCK, release_lock

    release_lock(pathlib.Path(root) / LOCK)


def replace_item(root, item_id: str, tmp: pathlib.Path, name: str = "out") -> pathlib.Path:
    """Rename the staged folder ``tmp`` into place as the item's folder, replacing the old one
    only when the manifest lists all of it (else DomainError, nothing touched); then rewrite
    the manifest."""
    root = pathlib.Path(root)
    final = root / slug(item_id)
    if not _ours(root, slug(item_id)):
        raise _refuse(root, name, [slug(item_id) + "/"])
    old = None
    if final.exists():
        from boundlab.io import process_mark

        old = root / f".{slug(item_id)}{process_mark()}old"
        os.replace(final, old)
    os.replace(tmp, final)
    write_manifest(root, KIND)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return final
