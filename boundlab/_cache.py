"""The compiled-evaluator cache: catalogue bounds as plain data on disk, read without sympy.

``boundlab bounds eval`` and ``bounds list`` would spend most of their time importing sympy
and building the catalogue. This cache keeps, per catalogue bound, what they need as JSON
data written by boundlab itself from its own sympy expressions: the bound's parameters and
domains, and the straight-line programs that :class:`~boundlab._exact.ExactEvaluator`
compiled from its expression, terms and preconditions (op names, register indices, constants
as exact hexadecimal floats). Reading it never runs code: no pickle, no ``eval``, no
``sympify`` -- entries are parsed against a fixed schema (:func:`decode_program`) and run by the
same interpreter as the sympy path (:mod:`boundlab._fastops`), so results are the same bits.

Two kinds of file, each with a SHA-256 checksum of its content that is verified before use
(an edited, truncated or foreign file reads as a miss, with a warning, and is rewritten):

``index-<fingerprint>.json``
    The catalogue's metadata (what ``bounds list`` prints) and, per bound, the key of its
    evaluator entry. The *fingerprint* hashes every source file of the boundlab package and
    sympy's version, so any change of the catalogue (or of the compiler) starts a new index.
``evaluator-<key>.json``
    One bound's compiled evaluator. The *key* is the SHA-256 of the bound's expressions
    (``srepr`` of expr, stable form, terms, preconditions), its parameters' symbols, domains
    and docs, its id and kind, the compiler's sources, sympy's and boundlab's versions
    (:func:`boundlab._cache_build.entry_key`): a changed expression never reads a stale entry.

Location: ``$BOUNDLAB_CACHE_DIR`` if set; else ``$BOUNDLAB_CACHE/bounds`` (the root of
boundlab's caches, as for the PEP cache); else ``$XDG_CACHE_HOME/boundlab/bounds``; else
``~/.cache/boundlab/bounds``. ``BOUNDLAB_NO_CACHE=1`` turns the cache off (the sympy path
runs, nothing is written). A directory that cannot be read or written is no error: the
sympy path runs and gives the same output.

Trust: a checksum proves nothing against someone who can write the file (they recompute it).
So the directory must be private (:func:`boundlab.integrity.private_dir`: owned by the user,
not writable by group or others, created with mode 0700, as OpenSSH and pip require); a
directory that others can write or another user owns is refused with a warning and never read
or written (the sympy path answers, with the same output). Within a private directory only the
user can plant an entry: an entry is not re-derived from sympy on load (that would cost what
the cache saves). Files are read with a size limit (:data:`MAX_FILE_BYTES`) as strict JSON
(:func:`boundlab.integrity.loads_plain`); rows of the index must have the shape of catalogue
rows (ids of the built-in families), and any text from a file is printed escaped
(:func:`boundlab.integrity.escape`).

What is cached: the built-in catalogue only. Bounds of plug-ins (entry-point group
``boundlab.bounds``) and bounds registered in a process take the sympy path: when a plug-in
is installed, ``bounds list`` builds the catalogue as before, and ``bounds eval`` of a
plug-in id is never looked up here. The command line uses the cache only while the process
has not loaded the registry itself (a fresh ``boundlab`` process), so a bound registered or
replaced in a running process is never shadowed by, nor written to, the cache.

Example
-------
>>> import tempfile
>>> from boundlab import _cache
>>> d = tempfile.mkdtemp()
>>> _cache.load_bound("drift.plateau", d) is None  # cold: a miss
True
>>> from boundlab._cache_build import store_catalogue
>>> store_catalogue(d)
True
>>> b = _cache.load_bound("drift.plateau", d)
>>> b.evaluate(eta=0.2, tau=10, L=0.19, zeta=0.407) == \\
...     __import__("boundlab").get("drift.plateau").evaluate(eta=0.2, tau=10, L=0.19, zeta=0.407)
True
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import warnings

__all__ = ["FORMAT", "cache_dir", "enabled", "pristine", "fingerprint", "load_index",
           "load_bound", "catalogue_rows", "plugins_installed", "checksum", "read_checked",
           "decode_program", "decode_bound", "index_path", "entry_path", "LIST_FIELDS",
           "trusted_dir", "MAX_FILE_BYTES"]

#: bump when the layout of the files changes (older files then read as misses)
FORMAT = 1
#: the fields of a ``bounds list`` row, in output order
LIST_FIELDS = ("id", "kind", "source", "lhs", "params", "printed")
#: the largest cache file read (the index of the catalogue is ~20 kB, an entry a few kB)
MAX_FILE_BYTES = 4 * 2**20
_NO_CACHE = "BOUNDLAB_NO_CACHE"
#: the built-in families (``boundlab.registry.FAMILIES``, not imported here: importing the
#: registry ends :func:`pristine`; a test checks they agree)
_FAMILIES = ("drift", "skew", "weight_error", "contraction")
_KINDS = ("upper", "order", "identity")  # boundlab.core.KINDS (core imports sympy)
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+\Z")
_PKG = os.path.dirname(os.path.abspath(__file__))


def enabled() -> bool:
    """False when ``BOUNDLAB_NO_CACHE`` is set to anything but ``""`` or ``"0"``.

    >>> isinstance(enabled(), bool)
    True
    """
    return os.environ.get(_NO_CACHE, "") in ("", "0")


def pristine() -> bool:
    """True while this process has not loaded the bound registry (so it has registered or
    replaced nothing): only then may the cache stand in for the catalogue."""
    return "boundlab.registry" not in sys.modules


def cache_dir() -> str:
    """The cache directory: ``$BOUNDLAB_CACHE_DIR``, ``$BOUNDLAB_CACHE/bounds``,
    ``$XDG_CACHE_HOME/boundlab/bounds`` or ``~/.cache/boundlab/bounds``, the first that is set
    (tests/boundlab/test_bounds_cache.py checks the order)."""
    own = os.environ.get("BOUNDLAB_CACHE_DIR")
    if own:
        return os.path.expanduser(own)
    root = os.environ.get("BOUNDLAB_CACHE")
    if root:
        return os.path.join(os.path.expanduser(root), "bounds")
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "boundlab", "bounds")


def trusted_dir(directory: str | None = None) -> str | None:
    """``directory`` (default :func:`cache_dir`) when it is a private directory of this user
    (created with mode 0700 when missing), else None with a warning: a directory that others
    can write or another user owns is never read or written."""
    from .integrity import private_dir

    p = private_dir(cache_dir() if directory is None else directory, "evaluator cache")
    return None if p is None else str(p)


# ------------------------------------------------------------------------------ fingerprint
def _sources(pkg: str):
    """(relative path, bytes) of every ``.py`` file under ``pkg``, sorted."""
    from .integrity import source_files

    return source_files(pkg)


def sympy_release() -> bytes | None:
    """The text of sympy's ``release.py`` (its version), found without importing sympy."""
    import importlib.util

    spec = importlib.util.find_spec("sympy")
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        with open(os.path.join(list(spec.submodule_search_locations)[0], "release.py"),
                  "rb") as fh:
            return fh.read()
    except OSError:
        return None


def fingerprint() -> str | None:
    """SHA-256 of the boundlab package's sources, sympy's version and the cache format
    (None when sympy cannot be found)."""
    release = sympy_release()
    if release is None:
        return None
    h = hashlib.sha256(f"boundlab-bounds-cache {FORMAT} {sys.version_info[:2]}\n".encode())
    h.update(release)
    for rel, data in _sources(_PKG):
        h.update(f"\n{rel} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


# ------------------------------------------------------------------------------ files
def checksum(kind: str, key: str, payload) -> str:
    """SHA-256 of the canonical JSON of ``(kind, format, key, payload)``.

    >>> len(checksum("index", "k", {"a": 1}))
    64
    """
    text = json.dumps([kind, FORMAT, key, payload], sort_keys=True, separators=(",", ":"),
                      allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def index_path(directory: str, fp: str) -> str:
    return os.path.join(directory, f"index-{fp[:40]}.json")


def entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, f"evaluator-{key[:40]}.json")


def read_checked(path: str, kind: str, key: str):
    """The payload stored at ``path`` for ``(kind, key)``, or None: missing, of another
    format (silently), or refused with a warning -- too large, not strict JSON, another kind
    or key, or a checksum that does not match."""
    from .errors import IntegrityError
    from .integrity import escape, loads_plain, read_bounded

    if not os.path.exists(path):
        return None
    try:
        data = loads_plain(read_bounded(path, MAX_FILE_BYTES, "cache file"), path, "cache file")
        if isinstance(data, dict) and data.get("format") != FORMAT:
            return None  # written by another version: a plain miss
        if not isinstance(data, dict) or data.get("kind") != kind or data.get("key") != key \
                or "payload" not in data:
            raise IntegrityError(path, "key", f"the {kind} of key {key[:12]}", "another file")
        if data.get("checksum") != checksum(kind, key, data["payload"]):
            raise IntegrityError(path, "checksum", "the file as boundlab wrote it", "edited")
    except IntegrityError as exc:
        warnings.warn(f"boundlab evaluator cache: {escape(exc)}; not used", RuntimeWarning,
                      stacklevel=2)
        return None
    return data["payload"]


def load_index(directory: str | None = None) -> list[dict] | None:
    """The rows of the catalogue index for the current sources, or None (a miss)."""
    if directory is None and not enabled():
        return None
    directory = trusted_dir(directory)
    fp = fingerprint() if directory is not None else None
    if fp is None:
        return None
    rows = read_checked(index_path(directory, fp), "index", fp)
    if not isinstance(rows, list) or not all(_valid_row(r) for r in rows):
        return None
    return rows


def _valid_row(r) -> bool:
    """A row as :mod:`boundlab._cache_build` writes it: a catalogue id of a built-in family,
    text fields, parameter names, an entry key of hex digits or None."""
    if not (isinstance(r, dict) and all(isinstance(r.get(k), str)
                                        for k in ("id", "family", "kind", "source", "lhs"))
            and isinstance(r.get("params"), list) and isinstance(r.get("printed"), bool)):
        return False
    entry = r.get("entry")
    return (bool(_ID.match(r["id"])) and r["family"] in _FAMILIES and r["kind"] in _KINDS
            and r["id"].split(".", 1)[0] == r["family"]
            and all(isinstance(n, str) and n.isidentifier() for n in r["params"])
            and (entry is None or (isinstance(entry, str) and re.fullmatch(r"[0-9a-f]{64}",
                                                                            entry) is not None)))


def plugins_installed() -> bool:
    """True when an installed distribution declares entry points of ``boundlab.bounds``."""
    from importlib.metadata import entry_points

    return bool(entry_points(group="boundlab.bounds"))


def catalogue_rows(family: str | None = None, directory: str | None = None):
    """What ``bounds list`` prints (dicts of :data:`LIST_FIELDS`) from the index, or None
    when the sympy path must answer: a miss, an unknown family (its error is the registry's),
    or an installed plug-in (its bounds are not cached)."""
    from .registry import FAMILIES  # the registry module itself loads no bound

    if family is not None and family not in FAMILIES:
        return None
    rows = load_index(directory)
    if rows is None or plugins_installed():
        return None
    return [{k: r[k] for k in LIST_FIELDS} for r in rows
            if family is None or r["family"] == family]


def load_bound(bound_id: str, directory: str | None = None):
    """The :class:`~boundlab._fastbound.FastBound` of a catalogue bound, or None (a miss: no
    index, an id not in it, a bound whose evaluator cannot be cached, a missing or corrupt
    entry)."""
    rows = load_index(directory)
    if rows is None:
        return None
    row = next((r for r in rows if r["id"] == bound_id), None)
    if row is None or row["entry"] is None:
        return None
    directory = trusted_dir(directory)
    if directory is None:
        return None
    payload = read_checked(entry_path(directory, row["entry"]), "evaluator", row["entry"])
    try:
        bound = decode_bound(payload)
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return bound if bound.id == bound_id else None


# ------------------------------------------------------------------------------ decoding
_CMP = ("<", "<=", ">", ">=")


def _float(x) -> float:
    if not isinstance(x, str):
        raise TypeError("a float is stored as float.hex text")
    return float.fromhex(x)


def _number(x):
    """An int stays an int; a float is stored as its exact hex text."""
    if isinstance(x, bool) or not isinstance(x, (int, str)):
        raise TypeError("bad number")
    return x if isinstance(x, int) else _float(x)


def decode_program(data) -> tuple[tuple, int]:
    """``(program, output index)`` from its JSON form, checked against the schema: known op
    names, argument indices of earlier instructions, constants of the op's type.

    >>> decode_program({"out": 1, "prog": [["arg", [], 0], ["exp", [0], None]]})
    ((('arg', (), 0), ('exp', (0,), None)), 1)
    """
    from ._fastops import OPS

    prog = []
    for i, (op, args, const) in enumerate(data["prog"]):
        if op not in OPS or not isinstance(args, list):
            raise ValueError(f"bad instruction {op!r}")
        if not all(isinstance(a, int) and not isinstance(a, bool) and 0 <= a < i for a in args):
            raise ValueError("bad argument index")
        if op == "arg":
            if isinstance(const, bool) or not isinstance(const, int) or const < 0:
                raise ValueError("bad argument number")
        elif op == "const":
            const = (_float(const[0]), _float(const[1]))
        elif op == "powc":
            const = _float(const)
        elif op == "cmp":
            if const not in _CMP:
                raise ValueError("bad comparison")
        elif const is not None:
            raise ValueError("unexpected constant")
        prog.append((op, tuple(args), const))
    out = data["out"]
    if isinstance(out, bool) or not isinstance(out, int) or not 0 <= out < len(prog):
        raise ValueError("bad output index")
    return tuple(prog), out


def _decode_params(items) -> dict:
    from ._fastbound import FastParam
    from .domains import Domain

    out = {}
    for name, (lo, hi, lo_open, hi_open, integer), doc in items:
        if not all(isinstance(b, bool) for b in (lo_open, hi_open, integer)):
            raise TypeError("bad domain flags")
        if not isinstance(name, str) or not isinstance(doc, str) or name in out:
            raise TypeError("bad parameter")
        out[name] = FastParam(name, Domain(_number(lo), _number(hi), lo_open, hi_open, integer),
                              doc)
    return out


def decode_bound(payload):
    """A :class:`~boundlab._fastbound.FastBound` from an entry's payload (raises TypeError /
    ValueError / KeyError on anything off the schema)."""
    from ._fastbound import FastBound, FastPrecondition, Program

    if not isinstance(payload, dict):
        raise TypeError("an entry is a dict")
    if not all(isinstance(payload[k], list)
               for k in ("params", "extra_params", "terms", "preconditions")):
        raise TypeError("params, extra_params, terms and preconditions are lists")
    params = _decode_params(payload["params"])
    extra = _decode_params(payload["extra_params"])
    nargs = len(params)

    def program(data, n):
        prog, out = decode_program(data)
        if any(op == "arg" and c >= n for op, _, c in prog):
            raise ValueError("argument number out of range")
        return Program(prog, out)

    terms = {}
    for name, data in payload["terms"]:
        if not isinstance(name, str):
            raise TypeError("bad term name")
        terms[name] = program(data, nargs)
    pcs = []
    for text, op, names, lhs, rhs in payload["preconditions"]:
        if not isinstance(text, str) or op not in _CMP or \
                not all(isinstance(n, str) and (n in params or n in extra) for n in names):
            raise ValueError("bad precondition")
        pcs.append(FastPrecondition(text, op, tuple(names), program(lhs, len(names)),
                                    program(rhs, len(names))))
    if not isinstance(payload["id"], str) or payload["kind"] not in _KINDS:
        raise TypeError("bad id or kind")
    return FastBound(payload["id"], payload["kind"], params, extra,
                     program(payload["program"], nargs), terms, tuple(pcs))
