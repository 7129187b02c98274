"""Disk cache of PEP solutions: one JSON file per (method, function class, normalized parameters).

PEPs are solved in normalized units (L = 1 and one scale parameter set to 1, see
:mod:`verify.tightness.scaling`), so one cached entry serves every problem that differs by a
rescaling. The key is the canonical JSON of ``{"method", "class", "params"}`` with floats
rounded to 12 significant digits; the file name is its SHA-256. Writes go to a temporary file
in the same directory and are renamed (atomic); a corrupt or foreign file reads as a miss.

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

__all__ = ["PEPCache", "canonical", "default_cache_dir"]

_FORMAT = 3


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
        """The stored result for ``key``, or ``None`` (missing, unreadable or another key)."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return data.get("result")

    def put(self, key: dict, result: dict) -> None:
        """Store ``result`` (JSON-ready dict) under ``key``, atomically."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"key": key, "result": result}, sort_keys=True, allow_nan=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def clear(self) -> int:
        """Delete every cached entry; returns how many files were removed."""
        n = 0
        if self.directory.exists():
            for p in self.directory.rglob("*.json"):
                p.unlink()
                n += 1
        return n
