"""Checkpoints of a run: the complete engine state in one ``.npz`` file, written atomically.

What is saved: the round reached, the model, every piece's state (client, weights, server),
the participation process's state, both random streams (numpy ``bit_generator.state``, or the
``torch.Generator`` state), the measurement buffers and metrics so far, and a fingerprint of
the run (algorithm, problem name, seed, rounds, N, d, backend, record, hyper-parameters) that
a resume must match. A run resumed from a checkpoint is bit-identical to the uninterrupted run.

The file is data, never code: arrays in an ``.npz`` (loaded with ``allow_pickle=False``) and a
JSON description of the state's structure (None, numbers, strings, tuples, lists, dicts, and
NamedTuples of toys' own modules only).

Example
-------
>>> import os, tempfile, numpy as np, toys
>>> prob = toys.quadratic(3, 2, seed=0); path = os.path.join(tempfile.mkdtemp(), "ck.npz")
>>> part = toys.run(prob, "fedau", rounds=6, seed=1, lr=0.1, participation="bernoulli:p=0.5",
...                 checkpoint=path, checkpoint_every=3)
>>> full = toys.run(prob, "fedau", rounds=6, seed=1, lr=0.1, participation="bernoulli:p=0.5")
>>> bool(np.array_equal(part.final_model, full.final_model))
True
"""

from __future__ import annotations

import importlib
import io
import json

import numpy as np

from boundlab.errors import DomainError
from boundlab.io import atomic_write_bytes

from .._array import is_numpy, to_numpy
from .rounds import State, settle

__all__ = ["restore", "save"]

_FORMAT = "boundlab-checkpoint/1"


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
        cls = type(obj)
        return {"t": "namedtuple", "cls": f"{cls.__module__}:{cls.__qualname__}",
                "items": [_enc(v, arrays) for v in obj]}
    if isinstance(obj, (tuple, list)):
        return {"t": type(obj).__name__, "items": [_enc(v, arrays) for v in obj]}
    if isinstance(obj, dict) and all(isinstance(k, str) for k in obj):
        return {"t": "dict", "items": {k: _enc(v, arrays) for k, v in obj.items()}}
    raise DomainError("checkpoint state", type(obj).__name__,
                      "arrays, numbers, strings, None, tuples, lists, str-keyed dicts and "
                      "NamedTuples (a piece's state must be made of these)")


def _dec(node, arrays, device):
    t = node["t"]
    scalars = {"none": lambda: None, "bool": lambda: bool(node["v"]),
               "int": lambda: int(node["v"]), "float": lambda: float(node["v"]),
               "str": lambda: str(node["v"])}
    if t in scalars:
        return scalars[t]()
    if t == "array":
        return arrays[node["i"]]
    if t == "tensor":
        import torch

        return torch.as_tensor(arrays[node["i"]], device=device)
    if t in ("tuple", "list"):
        items = [_dec(v, arrays, device) for v in node["items"]]
        return tuple(items) if t == "tuple" else items
    if t == "dict":
        return {k: _dec(v, arrays, device) for k, v in node["items"].items()}
    if t == "namedtuple":
        module, _, name = node["cls"].partition(":")
        if not module.startswith("toys."):
            raise ValueError(f"NamedTuple class {node['cls']!r} outside toys")
        cls = getattr(importlib.import_module(module), name)
        return cls(*(_dec(v, arrays, device) for v in node["items"]))
    raise ValueError(f"unknown node type {t!r}")


def _rng_state(rng):
    if isinstance(rng, np.random.Generator):
        return {"numpy": rng.bit_generator.state}
    return {"torch": rng.get_state()}


def _set_rng_state(rng, state) -> None:
    if "numpy" in state:
        rng.bit_generator.state = state["numpy"]
    else:
        import torch

        rng.set_state(torch.as_tensor(np.asarray(state["torch"]), dtype=torch.uint8))


def save(path, ctx, st: State) -> None:
    """Write the complete engine state after ``st.round`` rounds to ``path`` (atomically);
    pending shadow measurements are evaluated first (:func:`~toys.engine.rounds.settle`)."""
    settle(ctx, st)
    arrays: list = []
    tree = {"fingerprint": ctx.fingerprint, "round": st.round, "x": st.x,
            "client": st.client, "weights": st.weights, "server": st.server,
            "participation_state": st.participation_state, "prev_end": st.prev_end,
            "buffers": st.buffers, "participation": st.participation, "metrics": st.metrics,
            "diverged_at": st.diverged_at, "stopped_at": st.stopped_at,
            "part_rng": {"numpy": ctx.part_rng.bit_generator.state},
            "sample_rng": _rng_state(ctx.sample_rng)}
    meta = json.dumps({"format": _FORMAT, "tree": _enc(tree, arrays)})
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(meta.encode(), dtype=np.uint8),
             **{f"a{i}": a for i, a in enumerate(arrays)})
    atomic_write_bytes(path, buf.getvalue())


def _load(path):
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            n = sum(1 for k in z.files if k.startswith("a"))
            arrays = [z[f"a{i}"] for i in range(n)]
    except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
        raise DomainError("resume", str(path), "a boundlab checkpoint file (.npz)",
                          f"cannot read it: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise DomainError("resume", str(path), f"a checkpoint of format {_FORMAT}")
    return meta["tree"], arrays


def restore(path, ctx) -> State:
    """The engine state saved in ``path``; the random streams of ``ctx`` are set to the saved
    ones. The checkpoint must come from the same run (fingerprint) or a DomainError says what
    differs."""
    node, arrays = _load(path)
    try:
        tree = _dec(node, arrays, getattr(ctx.ops, "device", None))
    except (ValueError, KeyError, TypeError, AttributeError, ImportError) as exc:
        raise DomainError("resume", str(path), "a boundlab checkpoint file",
                          f"malformed state: {exc}") from None
    diff = [k for k, v in ctx.fingerprint.items() if tree["fingerprint"].get(k) != v]
    if diff:
        raise DomainError("resume", str(path), "a checkpoint of this run",
                          "differs in " + ", ".join(f"{k} ({tree['fingerprint'].get(k)!r} "
                                                    f"there, {ctx.fingerprint[k]!r} here)"
                                                    for k in diff))
    _set_rng_state(ctx.part_rng, tree["part_rng"])
    _set_rng_state(ctx.sample_rng, tree["sample_rng"])
    fields = ("round", "x", "client", "weights", "server", "participation_state", "prev_end",
              "buffers", "participation", "metrics", "diverged_at", "stopped_at")
    return State(**{k: tree[k] for k in fields})
