"""A saved worst instance on disk (:meth:`verify.worst.WorstInstance.save`): sealed JSON, read
back as untrusted data by :func:`load`.

The file is the instance's plain JSON (``to_dict``) plus ``"seal"``
(:func:`boundlab.integrity.seal`) over

- the claim: what the file is (``kind``), the bound's id, its left-hand side and its
  parameters at the instance, the family, the SHA-256 of the matrices (``A``, ``c``,
  ``weights``, ``x0``), the run's setting and the boundlab release (not the source hash: a
  saved instance is a counterexample people share, and replay re-derives everything it
  reports from the matrices, so it stays replayable across commits of one release);
- the payload: the canonical JSON of everything but the seal.

:func:`load` reads at most :data:`MAX_BYTES`, parses strict JSON, checks every field's type,
the shapes of the matrices and the size bounds (:data:`MAX_CLIENTS`, :data:`MAX_DIM`,
:data:`MAX_ROUNDS`, :data:`MAX_STEPS`, :data:`MAX_WORK`: a small file cannot claim a huge
replay), then the seal. The seal catches edited and foreign files; it does not stop someone
who recomputes it, so :func:`verify.worst.replay` also recomputes the instance's constants from
its matrices (``verify.worst.measures.check_constants``).
"""

from __future__ import annotations

import json
import math

import numpy as np

from boundlab.errors import IntegrityError

__all__ = ["KIND", "MAX_BYTES", "seal_document", "load"]

KIND = "boundlab worst instance"
#: largest saved instance read (bytes)
MAX_BYTES = 64 * 1024 ** 2
MAX_CLIENTS = 1000
MAX_DIM = 100
#: most entries of the Hessians A (N d^2)
MAX_ENTRIES = 10 ** 6
MAX_ROUNDS = 10 ** 4
MAX_STEPS = 10 ** 4
#: most client-steps of a replay (rounds x local steps x clients)
MAX_WORK = 10 ** 7
MAX_TRACE = 10 ** 6
_MAX_TEXT = 2000

_INT, _NUM, _STR, _BOOL = "int", "number", "str", "bool"
#: the run settings a saved instance may hold, and their types
_CFG = {"tau": _INT, "E": _INT, "rounds": _INT, "n_clients": _INT, "dim": _INT,
        "extra_vars": _INT, "eta_max": _NUM, "L": _NUM, "mu": _NUM, "zeta": _NUM,
        "Gamma": _NUM, "D": _NUM, "beta": _NUM, "prox": _NUM,
        "describe": _STR, "rule": _STR, "beta_algo": _BOOL}
_TOP = {"bound_id": _STR, "family": _STR, "ratio": _NUM, "lhs": _NUM, "rhs": _NUM,
        "evaluations": _INT, "seconds": _NUM, "seed": _INT, "budget": _INT, "how": _STR,
        "path": _STR, "verdict": _STR}


def _matrices(inst) -> dict:
    return {k: np.asarray(inst[k], dtype=float) for k in ("A", "c", "weights", "x0")}


def claim_of(doc: dict) -> dict:
    """What a saved instance claims to be (the seal's claim)."""
    import boundlab
    from boundlab.integrity import digest

    inst = doc["instance"]
    return {"kind": KIND, "bound_id": doc["bound_id"], "lhs": doc["extra"].get("lhs"),
            "params": doc["params"], "family": doc["family"],
            "matrices": digest(_matrices(inst)), "run": inst["run"],
            "release": boundlab.__version__}


def _payload(doc: dict) -> bytes:
    body = {k: v for k, v in doc.items() if k != "seal"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def seal_document(doc: dict) -> dict:
    """``doc`` (plain JSON data of an instance) with its ``"seal"``."""
    from boundlab.integrity import seal

    doc = {k: v for k, v in doc.items() if k != "seal"}
    return {"seal": seal(claim_of(doc), _payload(doc)), **doc}  # first: save() recognises it


def load(path) -> dict:
    """The validated plain data of a saved instance, or IntegrityError naming ``path`` and the
    first field that is wrong."""
    from boundlab.integrity import check_seal, loads_plain, read_bounded

    doc = loads_plain(read_bounded(path, MAX_BYTES, "saved instance"), path, "saved instance")
    if not isinstance(doc, dict):
        raise IntegrityError(path, "saved instance", "a JSON object (a saved worst instance)",
                             f"it is a {type(doc).__name__}")
    for key, kind in _TOP.items():
        _typed(doc, key, kind, path, key)
    if doc["bound_id"] == "" or len(doc["bound_id"]) > 200:
        raise IntegrityError(path, "bound_id", "a bound id of 1..200 characters")
    _trace(doc, path)
    _params(doc, path)
    _extra(doc, path)
    _instance(doc, path)
    check_seal(doc.get("seal"), claim_of(doc), _payload(doc), path)
    return doc


def _is(value, kind) -> bool:
    if kind == _BOOL:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == _INT:
        return isinstance(value, int)
    if kind == _NUM:  # JSON reads 1e999 as inf and 10**400 as an int no float holds
        return (isinstance(value, int) and abs(value) < 10 ** 300) or (
            isinstance(value, float) and math.isfinite(value))
    return isinstance(value, str) and len(value) <= _MAX_TEXT


def _typed(tree, key, kind, path, field):
    if key not in tree:
        raise IntegrityError(path, field, f"a field {field} ({kind})", "it is missing")
    if not _is(tree[key], kind):
        raise IntegrityError(path, field, f"a {kind}" + (f" of at most {_MAX_TEXT} characters"
                                                         if kind == _STR else ""),
                             f"it is {_show(tree[key])}")


def _show(value) -> str:
    from boundlab.integrity import escape

    text = escape(repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _trace(doc, path):
    t = doc.get("trace")
    if not isinstance(t, list) or len(t) > MAX_TRACE or not all(
            v is None or _is(v, _NUM) for v in t):
        raise IntegrityError(path, "trace", f"a list of at most {MAX_TRACE} numbers or nulls",
                             f"it is {_show(t)}")


def _params(doc, path):
    p = doc.get("params")
    if not isinstance(p, dict) or len(p) > 100:
        raise IntegrityError(path, "params", "an object of at most 100 parameters",
                             f"it is {_show(p)}")
    for k, v in p.items():
        ok = _is(v, _NUM) or (isinstance(v, list) and len(v) <= MAX_ROUNDS + 1 and
                              all(_is(x, _NUM) for x in v))
        if not ok:
            raise IntegrityError(path, f"params.{k}", "a number (or a list of numbers)",
                                 f"it is {_show(v)}")


def _extra(doc, path):
    e = doc.get("extra")
    if not isinstance(e, dict) or not isinstance(e.get("lhs"), str):
        raise IntegrityError(path, "extra", "an object with the bound's lhs and the setting",
                             f"it is {_show(e)}")
    _cfg(e.get("setting"), path, "extra.setting")


def _cfg(cfg, path, field):
    if not isinstance(cfg, dict):
        raise IntegrityError(path, field, "an object of run settings", f"it is {_show(cfg)}")
    for k in cfg:
        if k not in _CFG:
            raise IntegrityError(path, f"{field}.{_show(k)}", "one of " + ", ".join(_CFG))
        _typed(cfg, k, _CFG[k], path, f"{field}.{k}")
    n = cfg.get("n_clients", 3)
    bounds = {"rounds": MAX_ROUNDS, "tau": MAX_STEPS, "E": MAX_STEPS,
              "n_clients": MAX_CLIENTS, "dim": MAX_DIM}
    for k, hi in bounds.items():
        if k in cfg and not 1 <= cfg[k] <= hi:
            raise IntegrityError(path, f"{field}.{k}", f"an integer in 1..{hi}",
                                 f"it is {cfg[k]}")
    if "rule" in cfg:
        import toys

        if cfg["rule"] not in toys.ALGORITHMS:
            raise IntegrityError(path, f"{field}.rule", "a toys algorithm name: "
                                 + ", ".join(toys.ALGORITHMS), f"it is {_show(cfg['rule'])}")
    steps = cfg.get("tau", cfg.get("E", 1))
    if cfg.get("rounds", 30) * steps * n > MAX_WORK:
        raise IntegrityError(path, field, f"a replay of at most {MAX_WORK} client-steps "
                             "(rounds x local steps x clients)")


def _instance(doc, path):
    inst = doc.get("instance")
    if not isinstance(inst, dict) or not isinstance(inst.get("run"), dict):
        raise IntegrityError(path, "instance", "an object with A, c, weights, x0 and run",
                             f"it is {_show(inst)}")
    A = _array(inst, "A", 3, path)
    N, d = len(A), len(A[0]) if A else 0
    if not (2 <= N <= MAX_CLIENTS and 1 <= d <= MAX_DIM and N * d * d <= MAX_ENTRIES):
        raise IntegrityError(path, "instance.A", f"N x d x d with 2 <= N <= {MAX_CLIENTS}, "
                             f"1 <= d <= {MAX_DIM}, N d^2 <= {MAX_ENTRIES}",
                             f"it is {N} x {d} x ...")
    for key, shape in (("A", (N, d, d)), ("c", (N, d)), ("weights", (N,)), ("x0", (d,))):
        got = np.shape(_array(inst, key, len(shape), path))
        if got != shape:
            raise IntegrityError(path, f"instance.{key}", f"an array of shape {shape}",
                                 f"it has shape {got}")
    run = inst["run"]
    for k in run:
        if k not in ("eta", "cfg"):
            raise IntegrityError(path, f"instance.run.{_show(k)}", "eta and cfg only")
    if "eta" in run:
        _typed(run, "eta", _NUM, path, "instance.run.eta")
    _cfg(run.get("cfg"), path, "instance.run.cfg")
    cfg = run["cfg"]
    if cfg.get("n_clients", N) != N or cfg.get("dim", d) != d:
        raise IntegrityError(path, "instance.run.cfg.n_clients", f"the matrices' N = {N}, "
                             f"d = {d}", f"it claims {cfg.get('n_clients')} x {cfg.get('dim')}")


def _array(inst, key, rank, path) -> list:
    """The nested list ``inst[key]`` checked to be ``rank`` deep, rectangular, of numbers."""
    value = inst.get(key)
    field = f"instance.{key}"
    level, count = [value], 1
    for depth in range(rank):
        if not all(isinstance(v, list) for v in level):
            raise IntegrityError(path, field, f"a {rank}-dimensional array of numbers",
                                 f"level {depth} is not a list")
        widths = {len(v) for v in level}
        if len(widths) > 1:
            raise IntegrityError(path, field, "a rectangular array", "its rows differ in length")
        count *= widths.pop() if widths else 0
        if count > MAX_ENTRIES:
            raise IntegrityError(path, field, f"at most {MAX_ENTRIES} entries")
        level = [x for v in level for x in v]
    if not all(_is(x, _NUM) for x in level):
        raise IntegrityError(path, field, "numbers", "it holds a non-number")
    return value
