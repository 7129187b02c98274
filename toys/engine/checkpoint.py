"""Checkpoints of a run: the complete engine state in one ``.npz`` file, written atomically.

What is saved: the round reached, the model, every piece's state (client, weights, server),
the participation process's state, both random streams (numpy ``bit_generator.state``, or the
``torch.Generator`` state), the measurement buffers and metrics so far. A run resumed from a
checkpoint is bit-identical to the uninterrupted run.

The file is data, never code, and is bound to the run that made it:

- plain arrays in an ``.npz`` and a JSON tree of plain values (None, booleans, numbers as
  text, strings, tuples, lists, dicts, records of named fields); no class or function name is
  stored or read. The state is rebuilt structurally from the fresh initial state of the same
  run (:class:`toys.engine.checkpoint_read.Rebuild`): each piece's NamedTuple is rebuilt with
  its own type, and any node that does not fit the template is refused;
- the file is refused over a size limit derived from the run's sizes before it is read, and
  each array's dtype and shape are checked from its header before it is allocated;
- a seal (:func:`boundlab.integrity.seal`) binds it to :func:`claim`: the algorithm, every
  hyper-parameter, the seed, rounds, sizes, backend, dtype, record mode, the digests of the
  problem's data, of the participation process (with its probabilities or matrix) and of
  ``x0``, and the :func:`~boundlab.integrity.code_version`; and to its
  payload (the tree and every array's bytes). The seal is checked before anything is decoded;
  a mismatch names the first field that differs.

Example
-------
>>> import os, tempfile, numpy as np, toys
>>> prob = toys.quadratic(3, 2, seed=0); path = os.path.join(tempfile.mkdtemp(), "ck.npz")
>>> part = toys.run(prob, "fedau", rounds=6, seed=1, lr=0.1, participation="bernoulli:p=0.5",
...                 checkpoint=path, checkpoint_every=3)
>>> full = toys.run(prob, "fedau", rounds=6, seed=1, lr=0.1, participation="bernoulli:p=0.5")
>>> bool(np.array_equal(part.final_model, full.final_model))
True
>>> toys.run(prob, "fedau", rounds=6, seed=2, lr=0.1, participation="bernoulli:p=0.5",
...          resume=path)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
boundlab.errors.IntegrityError: ...ck.npz: does not belong here: seed is 1 in the file, 2 expected
"""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np

from boundlab.errors import DomainError, IntegrityError
from boundlab.integrity import check_seal, code_version, digest, loads_plain, seal, sha256
from boundlab.io import atomic_write_bytes

from .._array import is_numpy, to_numpy
from .checkpoint_read import Rebuild, read_npz
from .rounds import State, init_state, settle

__all__ = ["claim", "max_bytes", "restore", "save"]

_FORMAT = "boundlab-checkpoint/2"
_FIELDS = ("round", "x", "client", "weights", "server", "participation_state", "prev_end",
           "buffers", "participation", "metrics", "diverged_at", "stopped_at")


# ------------------------------------------------------------------------------ the claim
def _plain(obj, depth: int = 0):
    """``obj`` as plain data for a digest: numbers, strings, arrays (by content), containers;
    a callable by its name (its effect on the run is in the schedules), other objects by
    their type and public fields."""
    if obj is None or isinstance(obj, (bool, int, float, str, np.generic, np.ndarray)):
        return obj
    if type(obj).__module__.startswith("torch"):
        return np.asarray(to_numpy(obj))
    if depth > 8:
        return f"{type(obj).__name__} (nested too deep)"
    if isinstance(obj, dict):
        return {str(k): _plain(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v, depth + 1) for v in obj]
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"callable {getattr(obj, '__module__', '?')}.{obj.__qualname__}"
    if dataclasses.is_dataclass(obj):
        fields = {f.name: getattr(obj, f.name, None) for f in dataclasses.fields(obj)}
    else:
        fields = {k: v for k, v in vars(obj).items() if not k.startswith("_")} \
            if hasattr(obj, "__dict__") else {}
    return {"type": type(obj).__name__, **_plain(fields, depth + 1)}


def _problem_data(problem) -> str:
    """Digest of the data that defines the problem instance: its raw arrays
    (``problem.arrays()``; for a bucketed problem, each bucket's), weights and name."""
    parts = getattr(problem, "parts", None)
    if isinstance(parts, list) and parts and all(isinstance(p, tuple) and len(p) == 2
                                                 for p in parts):
        data = {"parts": [[np.asarray(idx), _problem_data(sub)] for idx, sub in parts]}
    else:
        try:
            data = problem.arrays()
        except (AttributeError, NotImplementedError, TypeError):
            data = {k: v for k, v in vars(problem).items()
                    if not k.startswith("_") and isinstance(v, np.ndarray)}
    extra = {k: getattr(problem, k, None) for k in ("name", "kind", "n_clients", "dim", "p",
                                                    "noise_std", "counts")}
    return digest({"type": type(problem).__name__, **_plain(extra), "data": _plain(data)})


def _participation(process) -> dict:
    try:
        probs = getattr(process, "probs", None)
    except (AttributeError, TypeError, ValueError, DomainError):
        probs = None
    return {"process": type(process).__name__, "options": _plain(process),
            "probs": None if probs is None else digest(np.asarray(probs, dtype=float))}


def claim(ctx) -> dict:
    """What a checkpoint of this run claims to be (computed once per run): ``ctx.fingerprint``
    (algorithm, problem name, seed, rounds, sizes, backend, dtype, record mode), every
    hyper-parameter (a step-size function by its name and the schedule it gave), the digests
    of the problem's data, the participation process and x0, and the code version."""
    out = getattr(ctx, "checkpoint_claim", None)
    if out is None:
        raw = getattr(ctx, "hyper", {})
        hyper = _plain(raw)
        if callable(raw.get("lr")):  # a schedule function: bound by the schedule it gave
            hyper["lr"] = {"function": hyper["lr"], "schedule": digest(np.asarray(ctx.lrs))}
        out = {"format": _FORMAT, **ctx.fingerprint, "hyper": hyper,
               "problem_data": _problem_data(ctx.problem),
               "participation": _participation(ctx.process),
               "x0": digest(np.asarray(to_numpy(ctx.x0))), "code_version": code_version()}
        ctx.checkpoint_claim = out
    return out


# ------------------------------------------------------------------------------ writing
def _enc(obj, arrays: list):
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, (bool, np.bool_)):
        return {"t": "bool", "v": bool(obj)}
    if isinstance(obj, (int, np.integer)):
        return {"t": "int", "v": str(int(obj))}
    if isinstance(obj, (float, np.floating)):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, str):
        return {"t": "str", "v": obj}
    if is_numpy(obj) or type(obj).__module__.startswith("torch"):
        arrays.append(np.asarray(to_numpy(obj)))
        return {"t": "array" if is_numpy(obj) else "tensor", "i": len(arrays) - 1}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return {"t": "record", "fields": list(obj._fields),
                "items": [_enc(v, arrays) for v in obj]}
    if isinstance(obj, (tuple, list)):
        return {"t": type(obj).__name__, "items": [_enc(v, arrays) for v in obj]}
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return {"t": "dict", "items": {k: _enc(v, arrays) for k, v in obj.items()}}
    raise DomainError("checkpoint state", type(obj).__name__,
                      "arrays, numbers, strings, None, tuples, lists, str-keyed dicts and "
                      "NamedTuples (a piece's state must be made of these)")


def _payload(tree, arrays) -> bytes:
    """What the seal's payload hash covers: the tree (canonical JSON) and every array's
    dtype, shape and bytes."""
    lines = [json.dumps(tree, sort_keys=True, separators=(",", ":"))]
    lines += [f"{a.dtype.str} {tuple(a.shape)} {sha256(np.ascontiguousarray(a).tobytes())}"
              for a in arrays]
    return "\n".join(lines).encode()


def _rng_state(rng):
    if isinstance(rng, np.random.Generator):
        return {"numpy": rng.bit_generator.state}
    return {"torch": np.asarray(to_numpy(rng.get_state()))}


def _set_rng_state(rng, state, path, where) -> None:
    try:
        if "numpy" in state:
            rng.bit_generator.state = state["numpy"]
        else:
            import torch

            rng.set_state(torch.as_tensor(np.asarray(state["torch"]), dtype=torch.uint8))
    except (ValueError, TypeError, OverflowError, RuntimeError) as exc:
        raise IntegrityError(path, where, "a random-generator state of this run",
                             str(exc)[:120]) from None


def save(path, ctx, st: State, name: str = "checkpoint") -> None:
    """Write the complete engine state after ``st.round`` rounds to ``path`` (atomically);
    pending shadow measurements are evaluated first (:func:`~toys.engine.rounds.settle`). An
    existing file is replaced only when boundlab wrote it and it is unchanged since
    (:func:`boundlab.io.check_replaceable`; refused naming ``name``)."""
    settle(ctx, st)
    arrays: list = []
    tree = {k: getattr(st, k) for k in _FIELDS}
    tree.update(part_rng=_rng_state(ctx.part_rng), sample_rng=_rng_state(ctx.sample_rng))
    node = _enc(tree, arrays)
    meta = {"format": _FORMAT, "seal": seal(claim(ctx), _payload(node, arrays)), "tree": node}
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)})
    atomic_write_bytes(path, buf.getvalue(), name=name, owned=True)


# ------------------------------------------------------------------------------ reading
def _nbytes(obj) -> int:
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if type(obj).__module__.startswith("torch") and hasattr(obj, "element_size"):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(v) for v in obj)
    return 0


def max_bytes(ctx, template: State) -> int:
    """The largest checkpoint file this run accepts: twice the arrays of its initial state,
    room for four more (N, d) arrays (states that start empty, ``prev_end``) and 64 metrics of
    ``rounds`` values, plus 1 MiB for the JSON tree and the headers."""
    own = _nbytes([getattr(template, k) for k in _FIELDS])
    return 2 * own + 4 * 8 * ctx.n_clients * ctx.dim + 64 * 8 * ctx.rounds + (1 << 20)


def _meta(path, raw: bytes):
    meta = loads_plain(raw, path, "checkpoint description")
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise IntegrityError(path, "format", f"a checkpoint of format {_FORMAT}",
                             f"it is {str(got)[:60]!r}")
    return meta


def _rebuild(path, ctx, node, arrays, template: State) -> tuple[dict, dict]:
    """(the State's fields, the random streams) from the tree, shaped like ``template``."""
    device = getattr(ctx.ops, "device", None) if ctx.fingerprint["backend"] == "torch" else None
    rb = Rebuild(path, arrays, n_clients=ctx.n_clients, dim=ctx.dim, rounds=ctx.rounds,
                 torch_device=device)
    rngs = {"part_rng": _rng_state(ctx.part_rng), "sample_rng": _rng_state(ctx.sample_rng)}
    keys = (*_FIELDS, *rngs)
    items = rb.node(node, "tree", ("dict",), ("items",))["items"]
    if not isinstance(items, dict) or sorted(items) != sorted(keys):
        got = sorted(items) if isinstance(items, dict) else type(items).__name__
        rb.fail("tree", f"a dict of keys {sorted(keys)}", f"it has {str(got)[:120]}")
    rules = {"round": lambda n, w: rb.integer(n, w, 0, ctx.rounds), "prev_end": rb.prev_end,
             "diverged_at": rb.round_or_none, "stopped_at": rb.round_or_none,
             "metrics": rb.metrics}
    fields = {k: rules[k](items[k], k) if k in rules else
              rb.value(items[k], getattr(template, k), k) for k in _FIELDS}
    streams = {k: rb.value(items[k], t, k) for k, t in rngs.items()}
    if len(rb.used) != len(arrays):
        rb.fail("tree", "every array of the file used once",
                f"{len(arrays) - len(rb.used)} are not")
    return fields, streams


def restore(path, ctx, template: State | None = None) -> State:
    """The engine state saved in ``path``; the random streams of ``ctx`` are set to the saved
    ones. The file must be sealed for this run (:func:`claim`) and fit the structure of
    ``template`` (default: the run's initial state, :func:`~toys.engine.rounds.init_state`);
    otherwise an IntegrityError names the file and what is wrong."""
    template = init_state(ctx) if template is None else template
    raw, arrays = read_npz(path, max_bytes(ctx, template))
    meta = _meta(path, raw)
    check_seal(meta.get("seal"), claim(ctx), _payload(meta.get("tree"), arrays), path)
    fields, streams = _rebuild(path, ctx, meta.get("tree"), arrays, template)
    _set_rng_state(ctx.part_rng, streams["part_rng"], path, "part_rng")
    _set_rng_state(ctx.sample_rng, streams["sample_rng"], path, "sample_rng")
    return State(**fields)
