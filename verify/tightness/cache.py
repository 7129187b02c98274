"""Disk cache of PEP solutions: one JSON file per (method, function class, normalized parameters).

PEPs are solved in normalized units (L = 1 and one scale parameter set to 1, see
:mod:`verify.tightness.scaling`), so one cached entry serves every problem that differs by a
rescaling. The key is the canonical JSON of ``{"format", "method", "class", "params"}`` with
floats rounded to 12 significant digits; the file name is its SHA-256.

A cache file is data from a stranger (issue 20), so:

* the user's cache lives in a private directory (:func:`boundlab.integrity.private_dir`: mode
  0700, owned by the user); a directory that others can write, or that another user owns, is
  refused with a warning, and every PEP is solved (the same output, slower);
* a file is read with a size limit (:data:`MAX_ENTRY_BYTES`) as strict JSON, and sealed
  (:func:`boundlab.integrity.seal`): the claim is the key and the digest of the PEP's data
  (its constraint rows, :func:`verify.tightness.certificate.rows_digest`), the payload is the
  result; a file of another PEP, an edited or a truncated file is refused with a warning that
  names the file and the field, and the PEP is re-solved and the entry rewritten. The entry is
  bound to the code through what the code builds (the PEP's rows), not through a hash of the
  sources: an edit elsewhere keeps the entries (and the shipped ones) valid, an edit of a model
  that changes its PEP refuses them;
* the result carries the solver's certificate, and the bracket is *recomputed* from it on load
  (:mod:`verify.tightness.certificate`, done by :func:`verify.tightness._common.cached_solve`):
  a forged bracket with a recomputed seal is still refused.

Writes go to a temporary file in the same directory and are renamed (atomic); a cache that
cannot be written (``BOUNDLAB_CACHE`` pointing at a file, a read-only directory) warns and
keeps the solve.

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
import warnings

from boundlab.errors import IntegrityError
from boundlab.integrity import check_seal, escape, loads_plain, private_dir, read_bounded, seal

__all__ = ["PEPCache", "canonical", "default_cache_dir", "checksum", "valid_result",
           "MAX_ENTRY_BYTES"]

_FORMAT = 4  # 4: sealed, with the solver's certificate; older entries read as misses
#: the largest cache file read (a Gram size of ~200 needs ~2 MB)
MAX_ENTRY_BYTES = 32 * 2**20
_TEXT_MAX = 400  # the longest status / solver text kept from a file


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


def _payload(result) -> bytes:
    """The canonical bytes of a result (strict JSON: a non-finite number raises ValueError)."""
    return json.dumps(result, sort_keys=True, allow_nan=False, separators=(",", ":")).encode()


def checksum(key, result) -> str:
    """SHA-256 of the canonical JSON of ``(key, result)`` (detects edits and truncation; a
    forger can recompute it, which is why entries are also sealed and certified).

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


def _plain_text(v) -> bool:
    return isinstance(v, str) and len(v) <= _TEXT_MAX and escape(v) == v


def valid_result(result) -> bool:
    """Schema of a cached solve: a dict; when a PEP result (it has ``ok``), the fields the
    records read, with their types (value / lower / gap a number or null; ok a bool; solver,
    status plain text without control characters; seconds a finite number >= 0; gram_size an
    int >= 0; errors a dict of numbers; attempts a list).

    >>> valid_result({"value": 1.5}), valid_result({"value": "abc"}), valid_result([1])
    (True, False, False)
    >>> valid_result({"value": 1.0, "lower": 1.0, "gap": 0.0, "ok": True, "solver": "SCS",
    ...               "status": "optimal\\x1b[2J", "seconds": 1.0, "gram_size": 3})
    False
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
    if not (_plain_text(result["solver"]) and _plain_text(result["status"])
            and math.isfinite(result["seconds"]) and result["seconds"] >= 0
            and result["gram_size"] >= 0):
        return False
    if not all(k in result for k in ("value", "lower", "gap")):
        return False
    errors = result.get("errors") or {}
    if not isinstance(errors, dict) or not all(_num_or_none(v) for v in errors.values()):
        return False
    return isinstance(result.get("attempts", []), list)


def _refuse(exc: IntegrityError) -> None:
    warnings.warn(f"PEP cache entry refused: {exc}; solving instead", RuntimeWarning,
                  stacklevel=3)


class PEPCache:
    """A directory of JSON files, one per solved PEP.

    Parameters
    ----------
    directory : path or None
        Where to keep the files; ``None`` means :func:`default_cache_dir`.
    read_only : bool
        A cache shipped with the package (:data:`verify.tightness._common.SHIPPED`): never
        written, read wherever it is installed (its entries pass the same seal and certificate
        checks as the user's).
    """

    def __init__(self, directory=None, *, read_only: bool = False):
        self.directory = pathlib.Path(directory) if directory is not None else default_cache_dir()
        self.read_only = read_only

    def key(self, method: str, fclass: str, params: dict) -> dict:
        """The canonical key of one PEP."""
        return {"format": _FORMAT, "method": method, "class": fclass,
                "params": canonical(dict(params))}

    def _root(self) -> pathlib.Path | None:
        """The directory when it can be trusted, else None (with a warning)."""
        if not self.read_only:
            return private_dir(self.directory, "PEP cache")
        # shipped with the package: as trusted as the code beside it (its modes are the
        # installer's umask), and every entry is certified on load all the same
        return self.directory if self.directory.is_dir() else None

    def path(self, key: dict, root=None) -> pathlib.Path:
        """Where the entry of ``key`` lives."""
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        return pathlib.Path(root or self.directory) / key["method"] / f"{digest}.json"

    _path = path

    def has(self, key: dict) -> bool:
        """True when a file exists for ``key`` (nothing is read or checked)."""
        return self.path(key).is_file()

    def get(self, key: dict, problem: str | None = None) -> dict | None:
        """The stored result for ``key`` (of the PEP whose data digest is ``problem``), or
        ``None``: missing, or refused with a warning naming the file and the field (an
        untrusted directory, too large, not strict JSON, another key or PEP, an edited
        payload, a result off :func:`valid_result`) -- the caller then re-solves and
        :meth:`put` rewrites the entry."""
        root = self._root()
        if root is None:
            return None
        path = self.path(key, root)
        if not path.exists():
            return None
        try:
            return self._read(path, key, problem)
        except IntegrityError as exc:
            _refuse(exc)
            return None

    def _read(self, path, key, problem):
        data = loads_plain(read_bounded(path, MAX_ENTRY_BYTES, "PEP cache entry"), path,
                           "PEP cache entry")
        if not isinstance(data, dict) or not isinstance(data.get("result"), dict):
            raise IntegrityError(path, "result", "a boundlab PEP cache entry", "it has none")
        result = data["result"]
        try:
            payload = _payload(result)
        except ValueError:
            raise IntegrityError(path, "result", "strict JSON", "non-finite number") from None
        check_seal(data.get("seal"), {"key": key, "problem": problem}, payload, path)
        if not valid_result(result):
            raise IntegrityError(path, "result", "a PEP result (numbers, plain text)",
                                 "a field is missing or of the wrong type")
        return result

    def put(self, key: dict, result: dict, problem: str | None = None) -> bool:
        """Store ``result`` (JSON-ready dict) under ``key``, atomically, sealed with ``key``
        and ``problem`` (the PEP's data digest).

        A cache that cannot be written (a file where the directory should be, no space, no
        permission, a directory others can write) never loses the solve: a warning is issued
        and ``False`` returned. A result with a non-finite number is not stored.
        """
        if self.read_only:
            return False
        try:
            payload = _payload(result)
        except ValueError:
            return False
        root = self._root()
        if root is None:
            return False
        path = self.path(key, root)
        text = json.dumps({"key": key, "problem": problem, "result": result,
                           "seal": seal({"key": key, "problem": problem}, payload)},
                          sort_keys=True, allow_nan=False)
        tmp = None
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
            os.replace(tmp, path)
            return True
        except OSError as exc:
            warnings.warn(f"PEP cache {escape(self.directory)} not written ({escape(exc)}); "
                          "the result is kept in memory only", RuntimeWarning, stacklevel=2)
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
        if self.directory.exists() and not self.read_only:
            for p in self.directory.rglob("*.json"):
                p.unlink()
                n += 1
        return n
