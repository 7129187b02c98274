"""Readers of data files the user already has: MNIST-format IDX (:func:`load_idx`, gzip or not)
and LEAF JSON (:func:`load_leaf`, FEMNIST style). A file is data from a stranger: every
malformed header, size or record is a :class:`~boundlab.errors.DomainError` naming the file and
what is wrong, never a crash or a silently wrong array.

Example
-------
>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "u.json")
>>> _ = open(p, "w").write('{"users": ["a"], "num_samples": [2], '
...                        '"user_data": {"a": {"x": [[0.5], [1.0]], "y": [0, 1]}}}')
>>> users, Xs, ys = load_leaf(p)
>>> users, Xs[0].shape, ys[0].tolist()
(['a'], (2, 1), [0, 1])
"""

from __future__ import annotations

import gzip
import json
import os

import numpy as np

from boundlab.errors import DomainError

__all__ = ["load_idx", "load_leaf"]

_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def load_idx(path, name: str = "path") -> np.ndarray:
    """Read an IDX file (the MNIST "ubyte" format), gzip-compressed or not.

    Header: two zero bytes, a type code (0x08 ubyte, 0x09 byte, 0x0B short, 0x0C int,
    0x0D float, 0x0E double), the number of dimensions, then each size as a big-endian uint32.

    >>> import os, tempfile, numpy as np
    >>> p = os.path.join(tempfile.mkdtemp(), "t.idx")
    >>> _ = open(p, "wb").write(bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3]) + bytes(range(6)))
    >>> load_idx(p).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    raw = _read_bytes(path, name)
    what = "an IDX file (magic 0x0000 + type code + ndim, big-endian uint32 sizes, data)"
    if raw[:2] == b"\x1f\x8b":
        import zlib

        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise DomainError(name, str(path), what + ", optionally gzip-compressed",
                              f"corrupt or truncated gzip data: {exc}") from None
    if len(raw) < 4:
        raise DomainError(name, str(path), what, f"only {len(raw)} bytes (empty or truncated)")
    if raw[:2] != b"\x00\x00" or raw[2] not in _IDX_TYPES or raw[3] < 1:
        raise DomainError(name, str(path), what, "bad magic number")
    ndim = raw[3]
    head = 4 + 4 * ndim
    if len(raw) < head:
        raise DomainError(name, str(path), what, "truncated header")
    dims = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dt = np.dtype(_IDX_TYPES[raw[2]])
    count = int(np.prod(dims))
    if len(raw) != head + count * dt.itemsize:
        raise DomainError(name, str(path), what, f"expected {count} values of {dt.itemsize} "
                                                   f"bytes after the header, found "
                                                   f"{len(raw) - head} bytes")
    data = np.frombuffer(raw, dtype=dt, count=count, offset=head)
    return data.astype(dt.newbyteorder("=")).reshape(dims)


def load_leaf(path):
    """Read LEAF JSON (FEMNIST style) from a file or a directory of ``*.json`` files.

    Returns ``(users, Xs, ys)``: user ids, and per user an (n_u, f) feature array (rows are
    flattened) and an (n_u,) label array. Format: ``{"users": [...], "num_samples": [...],
    "user_data": {user: {"x": [...], "y": [...]}}}``.

    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "train.json")
    >>> doc = {"users": ["a"], "num_samples": [2],
    ...        "user_data": {"a": {"x": [[0, 1], [1, 0]], "y": [0, 1]}}}
    >>> _ = open(p, "w").write(json.dumps(doc))
    >>> users, Xs, ys = load_leaf(p)
    >>> users, Xs[0].shape, ys[0].tolist()
    (['a'], (2, 2), [0, 1])
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".json"))
        if not files:
            raise DomainError("path", path, "a LEAF .json file or a directory containing some")
    elif os.path.isfile(path):
        files = [path]
    else:
        raise DomainError("path", path, "an existing LEAF .json file or directory")
    users, Xs, ys, first = [], [], [], {}
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError, RecursionError) as exc:
            raise DomainError("path", f, "a readable JSON file", str(exc)) from None
        for u, x, y in _leaf_users(f, doc):
            _leaf_consistent(f, u, x, y, first)
            users.append(u)
            Xs.append(x)
            ys.append(y)
    if not users:
        raise DomainError("path", path, "LEAF data with at least one user", "no users")
    return users, Xs, ys


def _leaf_consistent(f: str, u, x, y, first: dict) -> None:
    """Every user has samples, and the same feature width and kind of labels (strings or
    numbers) as the first user read (``first`` keeps it); errors name the file and user."""
    if len(y) == 0:
        raise DomainError("path", f, "LEAF users with at least one sample each",
                          f"user {u!r} has none")
    if x.ndim != 2 or x.shape[0] != len(y) or x.shape[1] == 0:
        raise DomainError("path", f, "LEAF samples with at least one feature each",
                          f"user {u!r} has {len(y)} labels and features of shape {x.shape}")
    kind = "strings" if y.dtype.kind == "U" else "numbers"
    if not first:
        first.update(user=u, width=x.shape[1], kind=kind)
    if x.shape[1] != first["width"]:
        raise DomainError("path", f, "LEAF users with the same number of features",
                          f"user {u!r} has {x.shape[1]}, user {first['user']!r} "
                          f"{first['width']}")
    if kind != first["kind"]:
        raise DomainError("path", f, "LEAF labels of one kind (all strings or all numbers)",
                          f"user {u!r} has {kind}, user {first['user']!r} {first['kind']}")


def _leaf_users(f: str, doc):
    """Validate one LEAF document; yields (user, x (n, f), y (n,)). Errors name the file."""
    what = ("LEAF JSON: {'users': [ids], 'num_samples': [ints], 'user_data': {id: {'x': "
            "[[numbers]], 'y': [labels]}}}")

    def bad(why):
        return DomainError("path", f, what, why)
    if not isinstance(doc, dict) or "users" not in doc or "user_data" not in doc:
        raise bad("keys 'users' and 'user_data' are required")
    users, data, counts = doc["users"], doc["user_data"], doc.get("num_samples")
    if not isinstance(users, list) or not all(isinstance(u, (str, int)) for u in users):
        raise bad("'users' must be a list of user ids (strings)")
    if not isinstance(data, dict):
        raise bad("'user_data' must be an object keyed by user id")
    if counts is not None and (not isinstance(counts, list) or len(counts) != len(users) or not
                               all(isinstance(c, int) and not isinstance(c, bool)
                                   for c in counts)):
        raise bad(f"'num_samples' must be a list of {len(users)} integers (one per user)")
    for j, u in enumerate(users):
        rec = data.get(str(u), data.get(u)) if isinstance(u, int) else data.get(u)
        if not isinstance(rec, dict) or "x" not in rec or "y" not in rec:
            raise bad(f"user {u!r} needs an object with 'x' and 'y'")
        if not isinstance(rec["x"], list) or not isinstance(rec["y"], list):
            raise bad(f"'x' and 'y' of user {u!r} must be lists")
        try:
            x = np.asarray(rec["x"], dtype=float)
        except (TypeError, ValueError):
            raise bad(f"features 'x' of user {u!r} are not a rectangular array of numbers"
                      ) from None
        y = _leaf_labels(rec["y"], u, bad)
        if x.size and x.shape[0] != len(y):
            raise bad(f"consistent sizes for user {u!r}: {x.shape[0]} samples in 'x', "
                      f"{len(y)} in 'y'")
        x = x.reshape(len(y), -1) if x.size else np.zeros((0, 0))
        if not np.all(np.isfinite(x)):
            raise bad(f"features 'x' of user {u!r} contain nan or inf")
        if counts is not None and counts[j] != len(y):
            raise bad(f"consistent sizes for user {u!r}: num_samples[{j}] = {counts[j]}, "
                      f"{len(y)} samples")
        yield u, x, y


def _leaf_labels(values: list, u, bad) -> np.ndarray:
    """One user's labels: a flat list of numbers or of strings (not both), else ``bad(why)``."""
    try:
        y = np.asarray(values)
    except (TypeError, ValueError):
        raise bad(f"labels 'y' of user {u!r} are ragged") from None
    if len({isinstance(v, str) for v in values}) > 1:
        raise bad(f"labels 'y' of user {u!r} mix strings and numbers")
    if y.ndim != 1 or y.dtype.kind not in "iufU":
        raise bad(f"labels 'y' of user {u!r} must be a flat list of class labels")
    return y


def _read_bytes(path, name: str = "path") -> bytes:
    try:
        with open(os.fspath(path), "rb") as fh:
            return fh.read()
    except TypeError:
        raise DomainError(name, path, "a path to a readable file") from None
    except OSError as exc:
        raise DomainError(name, str(path), "a readable file", exc.strerror or "") from None
