"""The folder of a resumable sweep (``verify.sweep(..., out=DIR)``): every file in it is
checked as data from a stranger before a single row of it reaches the table.

Layout
------
``sweep.json``
    ``{"format": "boundlab-sweep/2", "sweep": <the sweep's description>, "seal": ...}``; the
    seal (:func:`boundlab.integrity.seal`) binds the folder to its *claim*: the description
    (problem, algorithm, rounds, seeds, bound, fixed settings, grid points, ...), the data
    digest of every object setting that holds data (a problem object's arrays, a frozen
    dataclass such as a participation process) and :func:`boundlab.integrity.code_version`.
``point-NNNNN.parquet`` (``.csv`` without pyarrow)
    The rows of grid point N (every seed), written atomically.
``seal-NNNNN.json``
    The point's seal: claim ``{"file", "index", "params", "sweep"}`` (``sweep`` is the digest
    of the folder's claim) and the SHA-256 of the point file's bytes. A sidecar, not Parquet
    key-value metadata: it is the same for CSV and Parquet, and the payload hash is checked on
    the raw bytes before any parser reads them. It is written *before* its point file, so a
    point file present always has its seal (a kill in between leaves an orphan seal, which the
    re-run of that point replaces).

``boundlab-manifest.json``
    The folder rule of every output folder (:func:`boundlab.io.check_output_dir`): a folder is
    used only when it is new, empty, or every file in it is listed there (each file is listed
    *before* it is written, so a killed run leaves nothing unlisted). A folder holding anything
    else (a user's files, directly or through a symlink) is refused, naming them.

While a sweep writes, its lock ``.boundlab-lock`` records the mark of its temporary files. On
opening, the temporary files of a dead writer are removed only when its lock proves them its
own (never by a name pattern); every point file present is checked (seal, size limit, parse,
columns, dtypes, rows) before any new work. A point that fails is an
:class:`~boundlab.errors.IntegrityError` naming the file and what is wrong, never a silent
recomputation: the folder was changed by someone else, and deleting the file (or the folder)
is the user's decision.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pathlib
import re

import numpy as np

from boundlab.errors import DomainError, IntegrityError

__all__ = ["SweepStore", "FORMAT", "sweep_claim"]

FORMAT = "boundlab-sweep/2"
_POINT_FORMAT = "boundlab-sweep-point/1"
_SEAL_MAX = 1 << 20
_MAX_COLUMNS = 4096
_ROW_BYTES = 16 << 10      # bytes a point file may hold per expected row (beyond the base)
_BASE_BYTES = 1 << 20
_POINT = re.compile(r"point-(\d{5})\.(parquet|csv)")
_SEAL = re.compile(r"seal-(\d{5})\.json")
KIND = "sweep"  # the kind of the folder's manifest
_ADVICE = "delete it (or the whole folder) to run the point again"


# ------------------------------------------------------------------------------ claims
def _problem_data(obj):
    """A problem object's data (its raw arrays, weights and sample counts), or None."""
    try:
        arrays = obj.arrays()
    except Exception:  # noqa: BLE001 - a problem without raw arrays: its attributes below
        arrays = None
    data = {"arrays": arrays, "p": getattr(obj, "p", None),
            "counts": getattr(obj, "counts", None), "name": getattr(obj, "name", None),
            "n_clients": getattr(obj, "n_clients", None), "dim": getattr(obj, "dim", None)}
    return data


def _data_digest(obj) -> str | None:
    """The digest of the data an object setting holds (None: an object without plain data,
    e.g. a function, named by its type in the description only)."""
    from boundlab.integrity import digest

    if hasattr(obj, "n_clients") and hasattr(obj, "arrays"):
        data = _problem_data(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type) and \
            obj.__dataclass_params__.frozen:  # immutable: e.g. a participation process
        data = {f.name: getattr(obj, f.name, None) for f in dataclasses.fields(obj)}
    else:
        return None
    try:
        return digest({"type": f"{type(obj).__module__}.{type(obj).__qualname__}", **data})
    except TypeError:  # some value is not plain data
        plain = {k: v for k, v in data.items() if _is_plain(v)}
        return digest({"type": f"{type(obj).__module__}.{type(obj).__qualname__}", **plain})


def _is_plain(v) -> bool:
    from boundlab.integrity import digest

    try:
        digest(v)
    except TypeError:
        return False
    return True


def _object_digests(task) -> dict:
    """``{setting: data digest}`` of the problem and fixed settings that are objects."""
    out = {}
    for name, value in [("problem", task["problem"]), *[(f"fixed.{k}", v) for k, v in
                                                       task["fixed"].items()]]:
        if isinstance(value, (str, int, float, bool, np.ndarray)) or value is None:
            continue
        d = _data_digest(value)
        if d is not None:
            out[name] = d
    return out


def sweep_claim(spec) -> dict:
    """What a sweep folder claims to hold: the description, the data of object settings and
    the code version (the keys sort in that order, so the first difference is the most
    telling)."""
    from boundlab.integrity import code_version

    return {"sweep": spec["describe"], "sweep_data": _object_digests(spec["task"]),
            "version": code_version()}


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _load_json(path, limit, what):
    from boundlab.integrity import loads_plain, read_bounded

    return loads_plain(read_bounded(path, limit, what), path, what)


# ------------------------------------------------------------------------------ the store
class SweepStore:
    """The finished points of one sweep in a directory (sealed, atomic files).

    Parameters
    ----------
    out : path
        The folder (created if missing).
    spec : dict
        The sweep's spec (``verify.sweep.api._spec``).
    """

    def __init__(self, out, spec):
        self.dir = _open_dir(out)
        self.spec, self.out = spec, str(out)
        self.suffix = ".parquet" if _has_pyarrow() else ".csv"
        self.n = len(spec["points"])
        self.rows = len(spec["task"]["seeds"]) * (spec["task"]["rounds"] + 1)
        self.cache: dict = {}
        try:
            points, seals = self._scan()
            self.claim = sweep_claim(spec)
            self.digest = self._open_meta(bool(points or seals))
            for i in sorted(points):
                self.cache[i] = self._load(i)
        except BaseException:
            self.close()
            raise

    # ---------------------------------------------------------------- folder
    def _scan(self):
        """The point and seal files present; refuses unknown files named like them."""
        points, seals = set(), set()
        for entry in sorted(os.listdir(self.dir)):
            m, s = _POINT.fullmatch(entry), _SEAL.fullmatch(entry)
            if m and int(m.group(1)) < self.n and "." + m.group(2) == self.suffix:
                points.add(int(m.group(1)))
            elif s and int(s.group(1)) < self.n:
                seals.add(int(s.group(1)))
            elif entry.startswith(("point-", "seal-")):
                raise IntegrityError(self.dir / entry, "file name", f"point-NNNNN{self.suffix} "
                                     f"or seal-NNNNN.json with NNNNN < {self.n} (the points "
                                     "of this sweep)", "an unknown file named like a point; "
                                     "move it away or use another out directory")
        return points, seals

    def _open_meta(self, has_points: bool) -> str:
        """The digest of this sweep's claim, after checking (or writing) ``sweep.json``."""
        from boundlab.integrity import digest, seal

        meta = self.dir / "sweep.json"
        if not meta.exists() and not meta.is_symlink():
            if has_points:
                raise IntegrityError(meta, "sweep.json", "a sweep folder with its sweep.json",
                                     "the folder holds point files but no sweep.json, so "
                                     "nothing says which sweep they belong to; delete them "
                                     "or use another out directory")
            from boundlab.io import json_safe

            shown = json_safe(self.spec["describe"])  # for people: strict JSON
            doc = {"format": FORMAT, "sweep": shown, "seal": seal(self.claim, _canonical(shown))}
            self._put(meta, json.dumps(doc, sort_keys=True, indent=1, allow_nan=False).encode())
            return digest(self.claim)
        self._check_meta(meta)
        return digest(self.claim)

    def _check_meta(self, meta) -> None:
        from boundlab.integrity import check_seal, digest

        limit = 16 * len(json.dumps(self.spec["describe"])) + (1 << 20)
        doc = _load_json(meta, limit, "sweep.json")
        fmt = doc.get("format") if isinstance(doc, dict) else None
        if fmt != FORMAT:
            raise IntegrityError(meta, "format", f"a sweep.json of this boundlab ({FORMAT})",
                                 f"it has format {_show(fmt)}; an older or foreign sweep "
                                 "folder: use another out directory or delete it")
        stored = doc.get("seal")
        if not isinstance(stored, dict) or not isinstance(stored.get("claim"), dict) or \
                stored.get("claim_sha256") != digest(stored["claim"]):
            raise IntegrityError(meta, "seal", "a sweep.json as boundlab wrote it",
                                 "its description does not match its hash (edited)")
        try:
            check_seal(stored, self.claim, _canonical(doc.get("sweep")), meta)
        except IntegrityError as exc:
            if exc.field in ("seal", "claim", "payload"):
                raise
            raise DomainError("out", self.out, "an empty directory or one holding this same "
                              "sweep", f"it holds a different sweep (sweep.json: "
                              f"{_tail(exc)}); use another out directory") from None

    # ---------------------------------------------------------------- points
    def path(self, i: int) -> pathlib.Path:
        return self.dir / f"point-{i:05d}{self.suffix}"

    def seal_path(self, i: int) -> pathlib.Path:
        return self.dir / f"seal-{i:05d}.json"

    def finished(self) -> set:
        """The indices of the points already in the folder (all checked when it was opened)."""
        return set(self.cache)

    def _point_claim(self, i: int) -> dict:
        return {"file": self.path(i).name, "index": i, "sweep": self.digest,
                "params": self.spec["describe"]["points"][i]}  # the point as JSON data

    def write(self, i, frame) -> None:
        """Write point ``i``: its seal first, then the point file (both atomically)."""
        from boundlab.integrity import seal

        buf = io.BytesIO()
        if self.suffix == ".parquet":
            frame.to_parquet(buf, index=False)
        else:
            buf.write(frame.to_csv(index=False).encode())
        data = buf.getvalue()
        doc = {"format": _POINT_FORMAT, "seal": seal(self._point_claim(i), data)}
        self._put(self.seal_path(i), json.dumps(doc, sort_keys=True).encode())
        self._put(self.path(i), data)

    def _put(self, path: pathlib.Path, data: bytes) -> None:
        """Write one file of the folder: listed in the manifest first, then written atomically;
        a file already there (an orphan seal) is replaced only when it is as listed."""
        from boundlab.integrity import sha256
        from boundlab.io import add_to_manifest, atomic_write_bytes, forced, read_manifest

        listed = read_manifest(self.dir, KIND) or {}
        if (path.exists() or path.is_symlink()) and not forced() and \
                listed.get(path.name) != _sha_of(path):
            from boundlab.errors import OverwriteError

            raise OverwriteError("out", path, "it changed since boundlab wrote it")
        add_to_manifest(self.dir, KIND, {path.name: sha256(data)})
        atomic_write_bytes(path, data, name="out")

    def close(self) -> None:
        """Release the folder's lock (the sweep is done, or failed)."""
        from boundlab.io import LOCK, release_lock

        release_lock(self.dir / LOCK)

    def read(self, i):
        """The checked frame of point ``i``."""
        if i in self.cache:
            return self.cache.pop(i)
        return self._load(i)

    def _load(self, i):
        from boundlab.integrity import check_seal, digest, read_bounded

        path, sp = self.path(i), self.seal_path(i)
        limit = _BASE_BYTES + self.rows * _ROW_BYTES
        data = read_bounded(path, limit, "point file")
        if not sp.exists():
            raise IntegrityError(path, "seal", f"a point file with its seal {sp.name}",
                                 f"the seal is missing; {_ADVICE}")
        doc = _load_json(sp, _SEAL_MAX, "seal")
        if not isinstance(doc, dict) or doc.get("format") != _POINT_FORMAT:
            raise IntegrityError(sp, "format", f"a point seal ({_POINT_FORMAT})",
                                 f"it is not one; {_ADVICE}")
        stored = doc.get("seal")
        if not isinstance(stored, dict) or "claim" not in stored or \
                stored.get("claim_sha256") != digest(stored["claim"]):
            raise IntegrityError(sp, "seal", "a point seal as boundlab wrote it",
                                 f"its claim does not match its hash (edited); {_ADVICE}")
        try:
            check_seal(stored, self._point_claim(i), data, path)
        except IntegrityError as exc:
            exc.args = (f"{exc.args[0]}; {_ADVICE}",)
            raise
        from .frames import check_frame, parse

        frame = parse(data, path, self.suffix, self.rows, _MAX_COLUMNS)
        check_frame(frame, path, self.spec, i, csv=self.suffix == ".csv")
        return frame


# ------------------------------------------------------------------------------ helpers
def _open_dir(out) -> pathlib.Path:
    """The sweep folder, checked by the folder rule of every output folder, created, cleaned
    of what a dead writer's lock proves its leftovers, and locked for this process."""
    from boundlab.io import LOCK, check_output_dir, clean_temps, hold_lock

    p = pathlib.Path(out).expanduser()
    if p.exists() and not p.is_dir():
        raise DomainError("out", str(out), "a directory of sweep results", "a file is there")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DomainError("out", str(out), "a directory that can be created",
                          str(exc.strerror or exc)) from None
    check_output_dir(p, "out", KIND, unchanged=False)  # the seals name an edited file
    try:
        p.mkdir(exist_ok=True)
    except OSError as exc:
        raise DomainError("out", str(out), "a directory that can be created",
                          str(exc.strerror or exc)) from None
    clean_temps(p)
    hold_lock(p / LOCK, "out")
    return p


def _sha_of(path: pathlib.Path) -> str | None:
    from boundlab.integrity import sha256

    if path.is_symlink() or not path.is_file():
        return None
    return sha256(path.read_bytes())


def _tail(exc: IntegrityError) -> str:
    text = str(exc)
    head = "does not belong here: "
    return text.split(head, 1)[1] if head in text else text


def _show(value) -> str:
    from boundlab.integrity import escape

    text = escape(repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _has_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True
