"""Writing the compiled-evaluator cache (:mod:`boundlab._cache`) from the catalogue (sympy side).

Entries are generated here, by boundlab, from its own sympy expressions: each evaluator's
program is encoded as JSON data (floats as exact hex text), decoded back and compared with the
original before it is written, so an entry that would not reproduce the compiled program is
never stored. A bound whose evaluator is not a program (an expression the compiler does not
support falls back to ``lambdify``) gets no entry and always takes the sympy path. Writes are
atomic (temporary file, then rename); a directory that cannot be written makes every function
here return False, silently, and one that is not private (:func:`boundlab._cache.trusted_dir`)
makes them return False with a warning: the caller already has its answer from the sympy path.

Example
-------
>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> store_catalogue(d)
True
>>> from boundlab import _cache
>>> len(_cache.load_index(d)) == len(__import__("boundlab").ids())
True
"""

from __future__ import annotations

import glob
import hashlib
import json
import os

from . import _cache

__all__ = ["entry_key", "encode_program", "encode_bound", "store_catalogue", "store_bound"]

#: the modules whose code decides what a compiled program is and how it runs
_COMPILER = ("_exact.py", "_fastops.py", "_fastcheck.py", "_fastbound.py", "domains.py",
             "_cache.py", "_cache_build.py")
_KEEP_INDEXES = 8  # older index files (of earlier sources) beyond this many are removed


def _compiler_hash() -> str:
    h = hashlib.sha256()
    for name in _COMPILER:
        with open(os.path.join(_cache._PKG, name), "rb") as fh:
            h.update(name.encode() + b"\n" + fh.read())
    return h.hexdigest()


def _params_key(params) -> list:
    import sympy as sp

    return [[n, sp.srepr(p.symbol), repr(p.domain), p.doc] for n, p in params.items()]


def entry_key(bound) -> str:
    """SHA-256 naming a bound's evaluator entry: its expressions (``srepr``), parameters,
    preconditions, id and kind, plus the compiler's sources and sympy's / boundlab's versions.

    >>> import boundlab, dataclasses
    >>> b = boundlab.get("drift.plateau")
    >>> entry_key(b) == entry_key(dataclasses.replace(b, expr=b.expr / 2, terms={}))
    False
    """
    import sympy as sp

    from . import __version__

    content = {
        "format": _cache.FORMAT, "compiler": _compiler_hash(), "sympy": sp.__version__,
        "boundlab": __version__, "id": bound.id, "kind": bound.kind,
        "expr": sp.srepr(bound.expr),
        "stable": None if bound.stable is None else sp.srepr(bound.stable),
        "params": _params_key(bound.params), "extra_params": _params_key(bound.extra_params),
        "terms": [[k, sp.srepr(v)] for k, v in bound.terms.items()],
        "preconditions": [[pc.text, pc.op, sp.srepr(sp.sympify(pc.lhs)),
                           sp.srepr(sp.sympify(pc.rhs))] for pc in bound.preconditions],
    }
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _number(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"cannot store {type(x).__name__} as a number")
    return x if isinstance(x, int) else float(x).hex()


def encode_program(ev) -> dict | None:
    """The JSON form of an :class:`~boundlab._exact.ExactEvaluator`'s program (None when it
    has none: an expression evaluated by ``lambdify``).

    >>> import sympy as sp
    >>> from boundlab._exact import ExactEvaluator
    >>> x = sp.Symbol("x", positive=True)
    >>> encode_program(ExactEvaluator(sp.exp(x) / 2, [x]))
    {'prog': [['const', [], ['0x1.0000000000000p-1', '0x0.0p+0']], ['arg', [], 0], \
['exp', [1], None], ['mul', [0, 2], None]], 'out': 3}
    """
    if not getattr(ev, "checked", False):
        return None
    prog = []
    for op, args, const in ev._prog:
        if op == "const":
            const = [float(const[0]).hex(), float(const[1]).hex()]
        elif op == "powc":
            const = float(const).hex()
        prog.append([op, list(args), const])
    return {"prog": prog, "out": ev._out}


def _params(params) -> list:
    out = []
    for n, p in params.items():
        d = p.domain
        out.append([n, [_number(d.lo), _number(d.hi), d.lo_open, d.hi_open, d.integer], p.doc])
    return out


def encode_bound(bound) -> dict | None:
    """An entry's payload for ``bound``, or None when it cannot be cached faithfully (an
    evaluator without a program, a domain of another class, or a round trip through the
    JSON form that does not give back the compiled programs and domains exactly)."""
    from .domains import Domain

    if any(type(p.domain) is not Domain
           for p in [*bound.params.values(), *bound.extra_params.values()]):
        return None
    evs = [bound.evaluator, *bound.term_evaluators.values()]
    for pc in bound.preconditions:
        evs += list(pc.evaluators)
    enc = [encode_program(ev) for ev in evs]
    if any(e is None for e in enc):
        return None
    try:
        payload = {
            "id": bound.id, "kind": bound.kind,
            "params": _params(bound.params), "extra_params": _params(bound.extra_params),
            "program": enc[0],
            "terms": [[k, e] for k, e in zip(bound.terms, enc[1:1 + len(bound.terms)])],
            "preconditions": [[pc.text, pc.op, list(pc.names), enc[1 + len(bound.terms) + 2 * i],
                               enc[2 + len(bound.terms) + 2 * i]]
                              for i, pc in enumerate(bound.preconditions)],
        }
        payload = json.loads(json.dumps(payload, allow_nan=False))  # as it will be read
        fast = _cache.decode_bound(payload)
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    return payload if _same(bound, fast, evs) else None


def _same(bound, fast, evs) -> bool:
    """True when the decoded bound carries exactly the compiled programs and domains."""
    progs = [fast.program, *fast.terms.values()]
    for pc in fast.preconditions:
        progs += [pc.lhs, pc.rhs]
    if len(progs) != len(evs) or any(repr((p.prog, p.out)) != repr((tuple(ev._prog), ev._out))
                                     for p, ev in zip(progs, evs)):
        return False
    for mine, theirs in ((fast.params, bound.params), (fast.extra_params, bound.extra_params)):
        if list(mine) != list(theirs) or any(
                repr(mine[n].domain) != repr(theirs[n].domain) or mine[n].doc != theirs[n].doc
                for n in mine):
            return False
    return (list(fast.terms) == list(bound.terms)
            and [(p.text, p.op, p.names) for p in fast.preconditions]
            == [(p.text, p.op, p.names) for p in bound.preconditions])


def _write(path: str, kind: str, key: str, payload) -> bool:
    from .errors import BoundlabError
    from .io import atomic_write_text

    text = json.dumps({"kind": kind, "format": _cache.FORMAT, "key": key, "payload": payload,
                       "checksum": _cache.checksum(kind, key, payload)}, allow_nan=False)
    try:
        atomic_write_text(path, text)
    except (OSError, BoundlabError):
        return False
    return True


def _row(bound, key) -> dict:
    return {"id": bound.id, "family": bound.family, "kind": bound.kind, "source": bound.source,
            "lhs": bound.lhs, "params": list(bound.params), "printed": bound.printed,
            "entry": key}


def store_catalogue(directory: str | None = None) -> bool:
    """Write the index and the evaluator entry of every built-in bound (entries already
    valid are kept). Returns False when the cache is off or cannot be written.

    Only the built-in families are stored, never plug-in or registered bounds.
    """
    from .registry import _builtin

    if directory is None and not _cache.enabled():
        return False
    directory = _cache.trusted_dir(directory)  # None: not private (a warning said so)
    if directory is None:
        return False
    fp = _cache.fingerprint()
    if fp is None:
        return False
    rows = []
    for bound in _builtin().values():
        payload = encode_bound(bound)
        key = entry_key(bound) if payload is not None else None
        if key is not None and _cache.read_checked(_cache.entry_path(directory, key),
                                                   "evaluator", key) != payload:
            if not _write(_cache.entry_path(directory, key), "evaluator", key, payload):
                return False
        rows.append(_row(bound, key))
    if not _write(_cache.index_path(directory, fp), "index", fp, rows):
        return False
    _prune(directory, fp)
    return True


def store_bound(bound_id: str, directory: str | None = None) -> bool:
    """Make the cache answer for ``bound_id``: the index when it is missing (which stores
    every built-in bound), else this bound's entry when missing or corrupt. Ids that are not
    built-in are not stored (returns False)."""
    from .registry import FAMILIES, _family

    if directory is None and not _cache.enabled():
        return False
    directory = _cache.trusted_dir(directory)  # None: not private (a warning said so)
    if directory is None:
        return False
    rows = _cache.load_index(directory)
    if rows is None:
        return store_catalogue(directory)
    fam = bound_id.split(".", 1)[0]
    row = next((r for r in rows if r["id"] == bound_id), None)
    if row is None or row["entry"] is None or fam not in FAMILIES \
            or bound_id not in _family(fam):
        return False
    bound = _family(fam)[bound_id]
    key = entry_key(bound)
    payload = encode_bound(bound)
    if key != row["entry"] or payload is None:  # the index disagrees: rebuild it
        return store_catalogue(directory)
    return _write(_cache.entry_path(directory, key), "evaluator", key, payload)


def _prune(directory: str, fp: str) -> None:
    """Keep the newest index files (other source trees may share the directory)."""
    try:
        old = sorted(glob.glob(os.path.join(directory, "index-*.json")), key=os.path.getmtime)
        for path in old[:-_KEEP_INDEXES]:
            if path != _cache.index_path(directory, fp):
                os.unlink(path)
    except OSError:
        pass
