"""Reading a checkpoint back: bounded, and rebuilt from the run's own template state.

A checkpoint is data from a stranger (:mod:`toys.engine.checkpoint`). This module

- reads its ``.npz`` (a zip of ``.npy`` members) without ``np.load``: the file is refused over
  a size limit before it is read, every member must be stored uncompressed, and each array's
  dtype (plain bool / integer / float only) and shape are read from its ``.npy`` header and
  checked against the bytes that are really there before any array is allocated
  (:func:`read_npz`);
- rebuilds the state *structurally* from a template, the fresh initial state of the same run
  (:class:`Rebuild`): the file's tree must have the template's node types, NamedTuple fields,
  container lengths and keys, array shapes and dtype kinds. NamedTuples are rebuilt with the
  template's own type; no class or function name is ever read from the file.

The few parts of a state that legitimately change their structure during a run have explicit
rules (see :class:`Rebuild`): a piece's state that starts as ``None`` may later hold one array
of shape (N,), (d,) or (N, d); ``prev_end`` is ``None`` or (W (N, d), mask (N,)); ``metrics``
maps names to float arrays of shape (rounds,); ``round``, ``diverged_at`` and ``stopped_at`` are
round numbers. Anything else is an :class:`~boundlab.errors.IntegrityError` naming the file and
the place in the tree (e.g. ``weights.omega``).

Example
-------
>>> import numpy as np
>>> rb = Rebuild("ck.npz", [np.zeros(2)], n_clients=2, dim=3, rounds=4, torch_device=None)
>>> rb.value({"t": "tuple", "items": [{"t": "array", "i": 0}]}, (np.ones(2),), "client")
(array([0., 0.]),)
>>> rb.value({"t": "int", "v": "1"}, 0.5, "server")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
boundlab.errors.IntegrityError: ck.npz: server is not valid: node type float, ...'int')
"""

from __future__ import annotations

import io
import math
import re
import zipfile

import numpy as np

from boundlab.errors import IntegrityError
from boundlab.integrity import escape, read_bounded

__all__ = ["MAX_MEMBERS", "Rebuild", "read_npz"]

MAX_MEMBERS = 4096
"""At most this many arrays in a checkpoint."""
_KINDS = "biuf"  # plain bool / signed / unsigned / float dtypes only
_INT = re.compile(r"-?[0-9]{1,40}\Z")
_INT_BOUND = 2 ** 128  # 128-bit random-generator states fit


# ------------------------------------------------------------------------------ the npz
def _plain_dtype(dtype) -> bool:
    return (dtype.kind in _KINDS and dtype.fields is None and dtype.subdtype is None
            and not dtype.hasobject and (dtype.isnative or dtype.itemsize == 1)
            and dtype.itemsize <= 8)


def _member(fh, size: int, path, name: str) -> np.ndarray:
    """One ``.npy`` member of ``size`` bytes: header first, then exactly its data."""
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"npy format version {version}")
    read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran, dtype = read_header(fh, max_header_size=4096)
    if not _plain_dtype(dtype):
        raise IntegrityError(path, name, "an array of a plain bool / integer / float dtype",
                             f"it is {escape(str(dtype))[:60]}")
    if len(shape) > 8 or any(not isinstance(n, int) or n < 0 for n in shape):
        raise IntegrityError(path, name, "an array of at most 8 dimensions",
                             f"its shape is {escape(str(shape))[:60]}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes != size - fh.tell():  # before allocating: the header must match the data
        raise IntegrityError(path, name, "an array whose header matches its data",
                             f"the header claims {nbytes} bytes, the file holds "
                             f"{size - fh.tell()}")
    raw = fh.read(nbytes)
    if len(raw) != nbytes:
        raise ValueError("truncated array data")
    arr = np.frombuffer(raw, dtype=dtype).copy()
    return arr.reshape(shape[::-1]).T if fortran else arr.reshape(shape)


def read_npz(path, max_bytes: int) -> tuple[bytes, list]:
    """(the ``meta`` member's bytes, the arrays ``a0``, ``a1``, ...) of the checkpoint
    ``path``; IntegrityError for a file over ``max_bytes``, not a zip of plain ``.npy``
    members named so, or an array whose header claims more data than there is."""
    data = read_bounded(path, max_bytes, "checkpoint")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if not 1 <= len(infos) <= MAX_MEMBERS + 1:
                raise IntegrityError(path, "checkpoint", f"an npz of 1 to {MAX_MEMBERS + 1} "
                                     "members", f"it has {len(infos)}")
            names = sorted(i.filename for i in infos)
            wanted = sorted(["meta.npy"] + [f"a{k}.npy" for k in range(len(infos) - 1)])
            if names != wanted:
                raise IntegrityError(path, "checkpoint", "members meta, a0, a1, ...",
                                     f"it has {escape(', '.join(names))[:120]}")
            out = {}
            for info in infos:
                if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 \
                        or info.file_size > len(data):
                    raise IntegrityError(path, info.filename, "a stored (uncompressed) member",
                                         "it is compressed, encrypted or larger than the file")
                with zf.open(info) as fh:
                    out[info.filename] = _member(fh, info.file_size, path, info.filename)
    except IntegrityError:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, OverflowError, SyntaxError,
            TypeError, KeyError, NotImplementedError, RuntimeError) as exc:
        raise IntegrityError(path, "checkpoint", "a boundlab checkpoint file (.npz)",
                             f"cannot read it: {escape(str(exc))[:160]}") from None
    meta = out.pop("meta.npy")
    if meta.dtype != np.uint8 or meta.ndim != 1:
        raise IntegrityError(path, "meta", "UTF-8 JSON bytes (uint8)")
    return meta.tobytes(), [out[f"a{k}.npy"] for k in range(len(out))]


# ------------------------------------------------------------------------------ the tree
def _kind(arr) -> str:
    name = str(arr.dtype).replace("torch.", "")
    try:
        kind = np.dtype(name).kind
    except TypeError:
        kind = "f"  # bfloat16 & co
    return "i" if kind == "u" else kind


def _is_array(x) -> bool:
    return isinstance(x, np.ndarray) or type(x).__module__.startswith("torch")


def _named(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


class Rebuild:
    """Rebuild a state from the file's tree (``node``) and arrays, following a template.

    ``value(node, template, where)`` returns the rebuilt value or raises IntegrityError naming
    ``path`` and ``where``. Every array of the file is used at most once; ``torch_device`` is
    where ``"tensor"`` nodes go (None: a numpy run, where they are refused).
    """

    def __init__(self, path, arrays, *, n_clients, dim, rounds, torch_device):
        self.path, self.arrays, self.used = path, arrays, set()
        self.N, self.d, self.R, self.device = n_clients, dim, rounds, torch_device

    def fail(self, where, allowed, detail=""):
        raise IntegrityError(self.path, where, allowed, detail)

    def node(self, node, where, tags, keys):
        """``node`` as a dict whose tag is one of ``tags`` with exactly ``keys`` besides it."""
        if not isinstance(node, dict) or node.get("t") not in tags:
            got = (f"node type {escape(repr(node.get('t')))[:60]}" if isinstance(node, dict)
                   else f"a bare JSON {type(node).__name__}")
            self.fail(where, f"node type {' or '.join(tags)}, as in this run's state",
                      f"the file has {got}")
        if set(node) != {"t", *keys}:
            extra = sorted(set(node) - {"t", *keys}) or sorted({"t", *keys} - set(node))
            self.fail(where, f"a {node['t']} node with keys {sorted({'t', *keys})}",
                      f"it has {escape(', '.join(map(str, extra)))[:80]} wrongly")
        return node

    # ------------------------------------------------------------------ leaves
    def array(self, node, where, shapes, kind):
        """An array node of one of ``shapes`` and dtype kind ``kind`` ('b', 'i' or 'f')."""
        node = self.node(node, where, ("array", "tensor"), ("i",))
        i = node["i"]
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(self.arrays) \
                or i in self.used:
            self.fail(where, f"the index of an unused array 0..{len(self.arrays) - 1}",
                      f"it is {escape(repr(i))[:40]}")
        self.used.add(i)
        arr = self.arrays[i]
        if tuple(arr.shape) not in shapes or _kind(arr) != kind:
            want = " or ".join(str(s) for s in shapes)
            self.fail(where, f"an array of shape {want} and kind {kind}, as in this run",
                      f"it is {arr.dtype} {tuple(arr.shape)}")
        if node["t"] == "array":
            return arr
        if self.device is None:
            self.fail(where, "a numpy array (this run's backend is numpy)", "it is a tensor")
        import torch

        return torch.as_tensor(arr, device=self.device)

    def integer(self, node, where, lo=-_INT_BOUND, hi=_INT_BOUND):
        v = self.node(node, where, ("int",), ("v",))["v"]
        if not isinstance(v, str) or not _INT.match(v) or not lo <= int(v) <= hi:
            span = "of magnitude at most 2**128" if hi == _INT_BOUND else f"in [{lo}, {hi}]"
            self.fail(where, f"an integer {span}", f"it is {escape(repr(v))[:60]}")
        return int(v)

    def scalar(self, node, template, where):
        if isinstance(template, (bool, np.bool_)):
            v = self.node(node, where, ("bool",), ("v",))["v"]
            if not isinstance(v, bool):
                self.fail(where, "true or false", f"it is {escape(repr(v))[:40]}")
            return v
        if isinstance(template, (int, np.integer)):
            return self.integer(node, where)
        if isinstance(template, (float, np.floating)):
            v = self.node(node, where, ("float",), ("v",))["v"]
            try:
                return float(v) if isinstance(v, str) and len(v) <= 40 else float("x")
            except ValueError:
                self.fail(where, "a float written as text", f"it is {escape(repr(v))[:40]}")
        v = self.node(node, where, ("str",), ("v",))["v"]
        if v != template:
            self.fail(where, f"the text {escape(repr(template))[:60]}, as in this run",
                      f"it is {escape(repr(v))[:60]}")
        return v

    # ------------------------------------------------------------------ structure
    def value(self, node, template, where):
        """The value of ``node`` rebuilt with the structure of ``template``."""
        if template is None:
            return self.none_or_array(node, where)
        if _is_array(template):
            return self.array(node, where, (tuple(template.shape),), _kind(template))
        if _named(template):
            node = self.node(node, where, ("record",), ("fields", "items"))
            if node["fields"] != list(template._fields):
                self.fail(where, f"a record of fields {list(template._fields)}",
                          f"it has {escape(repr(node['fields']))[:80]}")
            return type(template)(*self.items(node["items"], template, where))
        if isinstance(template, (tuple, list)):
            tag = "tuple" if isinstance(template, tuple) else "list"
            items = self.items(self.node(node, where, (tag,), ("items",))["items"], template,
                               where)
            return tuple(items) if tag == "tuple" else items
        if isinstance(template, dict):
            items = self.node(node, where, ("dict",), ("items",))["items"]
            if not isinstance(items, dict) or set(items) != set(template):
                got = sorted(items) if isinstance(items, dict) else type(items).__name__
                self.fail(where, f"a dict of keys {sorted(template)}",
                          f"it has {escape(repr(got))[:80]}")
            return {k: self.value(items[k], t, f"{where}.{k}") for k, t in template.items()}
        return self.scalar(node, template, where)

    def items(self, items, template, where):
        if not isinstance(items, list) or len(items) != len(template):
            n = len(items) if isinstance(items, list) else type(items).__name__
            self.fail(where, f"{len(template)} items, as in this run's state", f"it has {n}")
        return [self.value(v, t, f"{where}[{k}]") for k, (v, t) in enumerate(zip(items,
                                                                                 template))]

    # ------------------------------------------------------------------ the explicit rules
    def is_none(self, node, where) -> bool:
        """Whether ``node`` is a (well-formed) None node."""
        if isinstance(node, dict) and node.get("t") == "none":
            self.node(node, where, ("none",), ())
            return True
        return False

    def none_or_array(self, node, where):
        """A piece's state that is None at the start: None, or one float / bool array of
        shape (N,), (d,) or (N, d) (e.g. a running minimum of the losses)."""
        if self.is_none(node, where):
            return None
        shapes = ((self.N,), (self.d,), (self.N, self.d))
        kind = "b" if self._file_kind(node) == "b" else "f"
        return self.array(node, where, shapes, kind)

    def _file_kind(self, node):
        i = node.get("i") if isinstance(node, dict) else None
        ok = isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(self.arrays)
        return _kind(self.arrays[i]) if ok else None

    def round_or_none(self, node, where):
        """``diverged_at`` / ``stopped_at``: None or a round 0..rounds-1."""
        if self.is_none(node, where):
            return None
        return self.integer(node, where, 0, self.R - 1)

    def prev_end(self, node, where):
        """None, or (W (N, d) float, mask (N,) bool) of the last round."""
        if self.is_none(node, where):
            return None
        items = self.node(node, where, ("tuple",), ("items",))["items"]
        if not isinstance(items, list) or len(items) != 2:
            self.fail(where, "None or a pair (W, mask)")
        return (self.array(items[0], f"{where}[0]", ((self.N, self.d),), "f"),
                self.array(items[1], f"{where}[1]", ((self.N,),), "b"))

    def metrics(self, node, where, max_names=1024):
        """Per-round metrics: names (1..200 characters) -> float arrays (rounds,)."""
        items = self.node(node, where, ("dict",), ("items",))["items"]
        if not isinstance(items, dict) or len(items) > max_names:
            self.fail(where, f"a dict of at most {max_names} metrics")
        out = {}
        for k, v in items.items():
            if not 1 <= len(k) <= 200:
                self.fail(where, "metric names of 1 to 200 characters",
                          f"one has {len(k)}")
            arr = self.array(v, f"{where}.{escape(k)}", ((self.R,),), "f")
            if not isinstance(arr, np.ndarray):
                self.fail(f"{where}.{escape(k)}", "a numpy array", "it is a tensor")
            out[k] = arr
        return out
