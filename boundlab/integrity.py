"""Every file boundlab reads back is data from a stranger: the checks they all share.

A file boundlab writes and later reads (checkpoint, sweep point, ``sweep.json``, saved
instance, cache entry, output manifest) is

- *bounded*: :func:`read_bounded` refuses a file over its size limit before reading it;
- *sealed*: :func:`seal` stores, beside the payload, the SHA-256 of what the file claims to
  be (its ``claim``: the problem's data, every setting, the :func:`code_version`) and of its
  own payload; :func:`check_seal` recomputes both on load and names the first field of the
  claim that differs;
- *plain*: JSON is parsed by :func:`loads_plain`, which refuses NaN/Infinity literals, deep
  nesting and oversized text, and nothing read is ever turned into a call, an import or code.

Caches live in a private per-user directory (:func:`private_dir`: mode 0700, owned by the
user, as OpenSSH and pip require); text read from a file is printed through :func:`escape`.

Example
-------
>>> from boundlab.integrity import seal, check_seal, digest
>>> s = seal({"problem": "p1", "seed": 0}, b"payload")
>>> check_seal(s, {"problem": "p1", "seed": 0}, b"payload", "f.npz") is None
True
>>> check_seal(s, {"problem": "p2", "seed": 0}, b"payload", "f.npz")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
boundlab.errors.IntegrityError: f.npz: does not belong here: problem is 'p1' in the file, ...
>>> len(digest({"a": [1, 2.5, None]}))
64
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import pathlib
import stat
import warnings

from .errors import IntegrityError

__all__ = ["digest", "sha256", "code_version", "source_files", "seal", "check_seal", "read_bounded",
           "loads_plain", "private_dir", "escape", "MAX_JSON_DEPTH", "CODE_PACKAGES"]

#: JSON read back from a file may nest at most this deep
MAX_JSON_DEPTH = 64
#: the packages whose sources make up :func:`code_version`
CODE_PACKAGES = ("boundlab", "toys", "verify")


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _canon(obj):
    """Plain data in a canonical form: floats as exact hex text, tuples as lists."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return {"f": obj.hex()} if math.isfinite(obj) else {"f": repr(obj)}
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):
        if getattr(obj, "ndim", 0) == 0:
            return _canon(obj.item())
        return {"a": str(obj.dtype), "s": list(obj.shape), "h": sha256(obj.tobytes())}
    if isinstance(obj, dict):
        return {str(k): _canon(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    raise TypeError(f"digest of {type(obj).__name__}: plain data only")


def digest(obj) -> str:
    """SHA-256 of the canonical JSON of plain data (numbers, strings, None, lists, dicts,
    numpy arrays by dtype, shape and bytes). Equal data gives equal digests, bit for bit."""
    text = json.dumps(_canon(obj), sort_keys=True, separators=(",", ":"))
    return sha256(text.encode())


def _sources(name: str) -> list[tuple[str, bytes]]:
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    return source_files(list(spec.submodule_search_locations)[0])


def source_files(root) -> list[tuple[str, bytes]]:
    """``(relative path, bytes)`` of every ``.py`` file under ``root``, sorted (what a code
    fingerprint hashes)."""
    out = []
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(base, f)
                with open(path, "rb") as fh:
                    out.append((os.path.relpath(path, root).replace(os.sep, "/"), fh.read()))
    return sorted(out)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """``"<boundlab version>+<12 hex>"``: the version and a hash of every source file of
    boundlab, toys and verify (found without importing them), so a file made by other code is
    told apart from one made by this code.

    >>> import boundlab
    >>> code_version().startswith(boundlab.__version__ + "+")
    True
    """
    from . import __version__

    h = hashlib.sha256(__version__.encode())
    for pkg in CODE_PACKAGES:
        for rel, data in _sources(pkg):
            h.update(f"\n{pkg}/{rel} {len(data)}\n".encode())
            h.update(data)
    return f"{__version__}+{h.hexdigest()[:12]}"


# ------------------------------------------------------------------------------ seals
def seal(claim: dict, payload: bytes) -> dict:
    """What a file stores to bind it to what made it: the claim itself (plain data, for the
    error message), its digest and the payload's SHA-256."""
    return {"claim": _canon(claim), "claim_sha256": digest(claim),
            "payload_sha256": sha256(payload)}


def _leaf(node) -> bool:
    """An encoded float ``{"f"}`` or array ``{"a", "s", "h"}`` is one value, not a subtree."""
    return isinstance(node, dict) and (set(node) == {"f"} or set(node) == {"a", "s", "h"})


def _first_difference(stored, wanted, prefix="") -> str | None:
    if isinstance(stored, dict) and isinstance(wanted, dict) and not (_leaf(stored) or
                                                                      _leaf(wanted)):
        for k in sorted(set(stored) | set(wanted)):
            if k not in stored or k not in wanted:
                return f"{prefix}{k}"
            sub = _first_difference(stored[k], wanted[k], f"{prefix}{k}.")
            if sub is not None:
                return sub
        return None
    return None if stored == wanted else prefix.rstrip(".") or "(value)"


def _show(value) -> str:
    if isinstance(value, dict) and set(value) == {"f"}:
        try:
            return repr(float.fromhex(value["f"]))
        except (TypeError, ValueError):
            return escape(repr(value["f"]))
    if isinstance(value, dict) and {"a", "s", "h"} <= set(value):
        return f"array {value['a']} {tuple(value['s'])} #{str(value['h'])[:8]}"
    text = escape(repr(value))
    return text if len(text) <= 80 else text[:77] + "..."


def _lookup(tree, dotted: str):
    node = tree
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return "(absent)"
        node = node[part]
    return node


def check_seal(stored, claim: dict, payload: bytes, path) -> None:
    """Raise :class:`~boundlab.errors.IntegrityError` naming ``path`` unless ``stored`` (what
    :func:`seal` wrote) matches ``claim`` and ``payload``: first the claim (naming its first
    field that differs), then the payload's hash (an edited file)."""
    if not isinstance(stored, dict) or not all(isinstance(stored.get(k), str) for k in
                                               ("claim_sha256", "payload_sha256")):
        raise IntegrityError(path, "seal", "a boundlab file with its content hashes",
                             "it has none")
    wanted = _canon(claim)
    if stored["claim_sha256"] != digest(claim):
        field = _first_difference(stored.get("claim"), wanted)
        if field is None or field == "(value)":
            raise IntegrityError(path, "claim", "a file made by this run",
                                 "its description does not match its hash (edited)")
        raise IntegrityError(path, field, "a file made by this run",
                             f"{field} is {_show(_lookup(stored.get('claim'), field))} in the "
                             f"file, {_show(_lookup(wanted, field))} expected",
                             header="does not belong here")
    if stored["payload_sha256"] != sha256(payload):
        raise IntegrityError(path, "payload", "a file as boundlab wrote it",
                             "its content does not match its hash (edited or damaged)")


# ------------------------------------------------------------------------------ reading
def read_bounded(path, max_bytes: int, name: str = "file") -> bytes:
    """The bytes of ``path``, refusing (IntegrityError) a file larger than ``max_bytes``
    before reading it, a missing file, a directory or an unreadable one."""
    p = pathlib.Path(path)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            raise IntegrityError(p, name, "a regular file", "it is not one")
        if st.st_size > max_bytes:
            raise IntegrityError(p, name, f"a file of at most {max_bytes} bytes",
                                 f"it has {st.st_size}")
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise IntegrityError(p, name, "a readable file", escape(str(exc.strerror or exc))) \
            from None
    if len(data) > max_bytes:
        raise IntegrityError(p, name, f"a file of at most {max_bytes} bytes", "it grew")
    return data


def _depth(obj, limit: int) -> int:
    stack, deepest = [(obj, 1)], 0
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((v, d + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, d + 1) for v in node)
    return deepest


def _reject_constant(token):
    raise ValueError(f"non-standard JSON literal {token}")


def loads_plain(text, path, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH):
    """Strict JSON (no NaN/Infinity) nested at most ``max_depth`` deep, or IntegrityError
    naming ``path``. Deep nesting is refused before the parser recurses."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise IntegrityError(path, what, "UTF-8 JSON", "it is not UTF-8 text") from None
    opened = 0
    for ch in text:  # bracket depth before parsing (json recursion would blow the stack)
        if ch in "[{":
            opened += 1
            if opened > max_depth:
                break
        elif ch in "]}":
            opened -= 1
    try:
        if opened > max_depth:
            raise ValueError(f"nested deeper than {max_depth}")
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise IntegrityError(path, what, "strict JSON", escape(str(exc))[:200]) from None
    if _depth(data, max_depth) > max_depth:
        raise IntegrityError(path, what, "strict JSON", f"nested deeper than {max_depth}")
    return data


# ------------------------------------------------------------------------------ caches
def private_dir(path, what: str = "cache") -> pathlib.Path | None:
    """``path`` created (with its missing parents) as a private directory, or None with a
    warning when it cannot be trusted: not owned by this user, or writable by group or others
    (another user could plant entries), or not a directory. The caller then takes its slow
    path. An existing directory of this user's with looser modes is refused, not changed.

    >>> import tempfile, os
    >>> d = private_dir(os.path.join(tempfile.mkdtemp(), "c"))
    >>> oct(d.stat().st_mode & 0o777)
    '0o700'
    """
    p = pathlib.Path(os.path.expanduser(str(path)))
    try:
        if not p.exists():
            p.mkdir(mode=0o700, parents=True)
            os.chmod(p, 0o700)
        st = p.lstat()
    except OSError as exc:
        warnings.warn(f"boundlab {what} {escape(str(p))} unusable ({escape(str(exc))}); "
                      "running without it", RuntimeWarning, stacklevel=2)
        return None
    problem = None
    if not stat.S_ISDIR(st.st_mode):
        problem = "not a directory"
    elif hasattr(os, "getuid") and st.st_uid != os.getuid():
        problem = f"owned by uid {st.st_uid}, not by you (uid {os.getuid()})"
    elif st.st_mode & 0o022:
        problem = f"writable by others (mode {oct(st.st_mode & 0o777)}; chmod 700 it)"
    if problem:
        warnings.warn(f"boundlab {what} {escape(str(p))} refused: {problem}; running without "
                      "it", RuntimeWarning, stacklevel=2)
        return None
    return p


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text) -> str:
    """``text`` with control characters (C0, DEL, C1, and bidi overrides) escaped, so text
    read from a file cannot drive the terminal.

    >>> escape("ok\\x1b[2Jbad\\n")
    'ok\\\\x1b[2Jbad\\\\n'
    """
    out = []
    for ch in str(text):
        o = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif o < 0x20 or 0x7F <= o < 0xA0 or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)
