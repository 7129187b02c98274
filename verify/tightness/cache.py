"""Disk cache of PEP solutions: one JSON file per (method, function class, normalized parameters).

PEPs are solved in normalized units (L = 1 and one scale parameter set to 1, see
:mod:`verify.tightness.scaling`), so one cached entry serves every problem that differs by a
rescaling. The key is the canonical JSON of ``{"method", "class", "params"}`` with floats
rounded to 12 significant digits; the file name is its SHA-256. Each file also stores a SHA-256
checksum of its key and result; an entry that is corrupt, foreign, edited (checksum) or
malformed (:func:`valid_result`) reads as a miss, so the PEP is re-solved and the entry
rewritten. Writes go to a temporary file in the same directory and are renamed (atomic); a
cache that cannot be written (``BOUNDLAB_CACHE`` pointing at a file, a read-only directory)
warns and keeps the solve.

Location: ``$BOUNDLAB_CACHE/pep`` when the environment variable ``BOUNDLAB_CACHE`` is set (the
root of boundlab's caches), else ``~/.cache/boundlab/pep``. Tests pass a temporary directory.

Example
-------
>>> import tempfile
>>> from verify.tightness.cache import PEPCache
>>> c = PEPCache(tempfile.mkdtemp())
>>> key = c.key("demo", "class", {"eta": 0.1})
>>> c.get(key) is None
True
>>> c.put(key, {"value": 1.5})
True
>>> c.get(key)["value"]
1.5
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import tempfile

__all__ = ["PEPCache", "canonical", "default_cache_dir", "checksum", "valid_result"]

_FORMAT = 3  # entries of older builds (no checksum) read as misses and are rewritten


def default_cache_dir() -> pathlib.Path:
    """``$BOUNDLAB_CACHE/pep`` if the variable is set, else ``~/.cache/boundlab/pep``.

    >>> default_cache_dir().name
    'pep'
    """
    root = os.environ.get("BOUNDLAB_CACHE")
    base = pathlib.Path(root).expanduser() if root else pathlib.Path.home() / ".cache" / "boundlab"
    return base / "pep"


def canonical(obj):
    """Round floats to 12 significant digits, recursively (so 0.1 + 0.2 and 0.3 share a key).

    >>> canonical({"a": 0.1 + 0.2, "b": [1, 2.0]})
    {'a': 0.3, 'b': [1, 2.0]}
    """
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj) or obj == 0.0:
            return obj
        return float(f"{obj:.12g}")
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in sorted(obj.items())}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    try:  # numpy scalars
        return canonical(obj.item())
    except AttributeError:
        raise TypeError(f"cannot put {type(obj).__name__} in a cache key") from None


def checksum(key, result) -> str:
    """SHA-256 of the canonical JSON of ``(key, result)`` (detects edits and truncation).

    >>> len(checksum({"a": 1}, {"value": 2.0}))
    64
    """
    text = json.dumps({"key": key, "result": result}, sort_keys=True, allow_nan=True,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_NUM = (int, float)


def _num_or_none(v, *, allow_inf: bool = True) -> bool:
    if v is None:
        return True
    if isinstance(v, bool) or not isinstance(v, _NUM):
        return False
    return not math.isnan(v) and (allow_inf or math.isfinite(v))


def valid_result(result) -> bool:
    """Schema of a cached solve: a dict; when a PEP result (it has ``ok``), the fields the
    records read, with their types (value / lower / gap a number or null; ok a bool; solver,
    status text; seconds a finite number >= 0; gram_size an int >= 0; errors a dict).

    >>> valid_result({"value": 1.5}), valid_result({"value": "abc"}), valid_result([1])
    (True, False, False)
    """
    if not isinstance(result, dict):
        return False
    if not all(_num_or_none(result[k]) for k in ("value", "lower", "gap") if k in result):
        return False
    if "ok" not in result:
        return True
    need = {"ok": bool, "solver": str, "status": str, "seconds": _NUM, "gram_size": int}
    for k, typ in need.items():
        v = result.get(k)
        if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool)):
            return False
    if not (math.isfinite(result["seconds"]) and result["seconds"] >= 0
            and result["gram_size"] >= 0):
        return False
    if not all(k in result for k in ("value", "lower", "gap")):
        return False
    return isinstance(result.get("errors", {}), dict) or result.get("errors") is None


class PEPCache:
    """A directory of JSON files, one per solved PEP.

    Parameters
    ----------
    directory : path or None
        Where to keep the files; ``None`` means :func:`default_cache_dir`.
    """

    def __init__(self, directory=None):
        self.directory = pathlib.Path(directory) if directory is not None else default_cache_dir()

    def key(self, method: str, fclass: str, params: dict) -> dict:
        """The canonical key of one PEP."""
        return {"format": _FORMAT, "method": method, "class": fclass,
                "params": canonical(dict(params))}

    def _path(self, key: dict) -> pathlib.Path:
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        return self.directory / key["method"] / f"{digest}.json"

    def get(self, key: dict) -> dict | None:
        """The stored result for ``key``, or ``None``: missing, unreadable, another key, a
        checksum that does not match (edited or truncated), or a result that fails
        :func:`valid_result` — the caller then re-solves and :meth:`put` rewrites the entry."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        result = data.get("result")
        if data.get("checksum") != checksum(key, result) or not valid_result(result):
            return None
        return result

    def put(self, key: dict, result: dict) -> bool:
        """Store ``result`` (JSON-ready dict) under ``key``, atomically, with its checksum.

        A cache that cannot be written (a file where the directory should be, no space, no
        permission) never loses the solve: a warning is issued and ``False`` returned.
        """
        path = self._path(key)
        text = json.dumps({"key": key, "result": result, "checksum": checksum(key, result)},
                          sort_keys=True, allow_nan=True)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
            return True
        except OSError as exc:
            import warnings

            warnings.warn(f"PEP cache {self.directory} not written ({exc}); the result is kept "
                          "in memory only", RuntimeWarning, stacklevel=2)
            return False
        finally:
            if tmp is not None and os.path.exists(tmp):
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def clear(self) -> int:
        """Delete every cached entry; returns how many files were removed."""
        n = 0
        if self.directory.exists():
            for p in self.directory.rglob("*.json"):
                p.unlink()
                n += 1
        return n
