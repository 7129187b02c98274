"""A run's per-round log on disk: write a :class:`~toys.engine.trace.Trace`, read any
simulator's log.

The log is a tidy table with one row per server model r = 0..R: a ``round`` column, the state at
x_r (``loss``, ``gap``, ``dist2``, ``grad_norm2``, ``grad_dissim``) and the events of round r
(``shadow_gap``, ``drift_max``, ``drift_sum``, ``disc_max``, ``rho_min``, ``rho_star``, ``lr``,
...; NaN on the last row), as :meth:`Trace.to_frame`; plus ``seed`` and, when the clients'
weights ``p`` are given, ``kappa_min`` / ``kappa_max`` (min / max over the round's participants
of alpha_i / p_i, BM's pi and Pi); with record="step", ``grad_norm2_virtual``
(:attr:`Trace.grad_norm2_virtual`: round r's mean of ||grad F||^2 over its virtual averages)
and ``rho_max`` (:attr:`Trace.rho_max`: round r's largest skew rho(t, w_t)).
Logs of other simulators (Flower, pfl, a training script) need only ``round`` and the columns
the checked bound uses (``verify.check_log`` documents them). Formats: CSV, Parquet
(``.parquet`` / ``.pq``, needs pyarrow) and JSON (``.json``, a list of row objects; NaN written
as null). Files are written atomically (temp file, then rename).

Example
-------
>>> import os, tempfile, toys
>>> from toys.engine.trace_io import read_log, write_log
>>> prob = toys.quadratic(n_clients=3, dim=2, seed=0)
>>> tr = toys.run(prob, "fedavg", rounds=4, seed=0, lr=0.05, local_steps=2)
>>> path = write_log(tr, os.path.join(tempfile.mkdtemp(), "run.csv"), p=prob.p)
>>> log = read_log(path)
>>> len(log), bool(abs(log["gap"].iloc[-1] - tr.gap[-1]) < 1e-12)
(5, True)
"""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np

from boundlab.errors import DomainError
from boundlab.io import atomic_path, check_replaceable

__all__ = ["to_log", "write_log", "read_log", "FORMATS"]

FORMATS = (".csv", ".parquet", ".pq", ".json")


def to_log(trace, p=None):
    """The per-round log of one run (pandas DataFrame), see the module docstring.

    >>> import toys
    >>> tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=5, lr=0.1)
    >>> to_log(tr)[["round", "seed"]].values.tolist()
    [[0, 5], [1, 5], [2, 5]]
    """
    frame = trace.to_frame()
    frame.insert(1, "seed", -1 if trace.seed is None else int(trace.seed))
    if p is not None:
        p = np.asarray(p, dtype=float).ravel()
        if p.shape != (trace.n_clients,) or not np.all(p > 0):
            raise DomainError("p", p, f"{trace.n_clients} positive client weights")
        ratio = np.where(trace.participation, trace.alpha / p[None, :], np.nan)
        with warnings.catch_warnings():  # a round without participants gives NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            kmin, kmax = np.nanmin(ratio, axis=1), np.nanmax(ratio, axis=1)
        frame["kappa_min"] = np.append(kmin, np.nan)
        frame["kappa_max"] = np.append(kmax, np.nan)
    if trace.steps is not None and "grad_norm2" in trace.steps:
        frame["grad_norm2_virtual"] = np.append(trace.grad_norm2_virtual, np.nan)
    if trace.steps is not None and "rho" in trace.steps:
        frame["rho_max"] = np.append(trace.rho_max, np.nan)
    return frame


def write_log(trace_or_frame, path, p=None) -> str:
    """Write a run's log (a Trace, or a frame from :func:`to_log`) atomically; returns ``path``.

    >>> import os, tempfile, toys
    >>> tr = toys.run(toys.quadratic(3, 2, seed=0), "fedavg", rounds=2, seed=0, lr=0.1)
    >>> p = write_log(tr, os.path.join(tempfile.mkdtemp(), "log.json"))
    >>> open(p).read(12)
    '[{"round": 0'
    """
    frame = trace_or_frame if hasattr(trace_or_frame, "columns") else to_log(trace_or_frame, p)
    path = os.fspath(path)
    kind = _kind(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise DomainError("path", path, "a file in an existing directory")
    check_replaceable(path, "path", "a run log")
    with atomic_path(path, name="path", owned=True) as tmp:
        if kind == "parquet":
            frame.to_parquet(tmp, index=False)
        elif kind == "json":
            _write_json(frame, tmp)
        else:
            frame.to_csv(tmp, index=False, float_format="%.17g")
    return path


def read_log(source, *, max_bytes: int | None = None):
    """A per-round log as a DataFrame: a path (CSV, Parquet, JSON) or a frame / dict of columns.

    The log is untrusted data (``toys.engine._log_schema`` says what is checked): a file of
    at most ``max_bytes`` (default :data:`~toys.engine._log_schema.MAX_LOG_BYTES`, 256 MiB),
    strictly parsed; a ``round`` column of integers in 0..1e9, an optional ``seed`` column of
    integers, and for each seed every round 0..R exactly once. Errors name the file, the
    column and the value. ``frame.attrs["source"]`` names where the log came from.

    >>> read_log({"round": [0, 1], "gap": [1.0, 0.5]})["gap"].tolist()
    [1.0, 0.5]
    >>> read_log({"gap": [1.0]})
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: columns of the log = 'gap' is outside its domain: a table with a \
'round' column
    >>> read_log({"round": [0, 2], "gap": [1.0, 0.5]})
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: log: column 'round' = 'rounds 0..2' is outside its domain: \
every round 0..2 (round 1 is missing)
    """
    import pandas as pd

    from . import _log_schema as schema

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        frame = _read_file(path, schema.MAX_LOG_BYTES if max_bytes is None else max_bytes)
        where = path
    elif isinstance(source, pd.DataFrame):
        frame, where = source.copy(), "log"
    elif isinstance(source, dict):
        try:
            frame = pd.DataFrame(source)
        except (ValueError, TypeError) as exc:
            raise DomainError("log", "a dict", "columns of equal length", str(exc)[:120]) \
                from None
        where = "log"
    else:
        raise DomainError("log", type(source).__name__, "a path, a pandas DataFrame or a dict")
    if not all(isinstance(c, str) for c in frame.columns) or frame.columns.duplicated().any():
        raise DomainError(f"{where}: columns", list(map(str, frame.columns))[:8],
                          "distinct column names (strings)")
    frame = schema.check_frame(frame, where)
    frame.attrs["source"] = where
    return frame


def _read_file(path: str, max_bytes: int):
    from boundlab.errors import BoundlabError
    from boundlab.integrity import read_bounded

    from . import _log_schema as schema

    if not os.path.isfile(path):
        raise DomainError("log", path, "an existing CSV, Parquet or JSON file")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise DomainError("max_bytes", max_bytes, "a positive integer (bytes)")
    kind = _kind(path)
    try:
        data = read_bounded(path, max_bytes, "log")
    except BoundlabError as exc:
        raise DomainError("log", path, f"a readable file of at most {max_bytes} bytes "
                          "(read_log(..., max_bytes=) raises the limit)", str(exc)[-120:]) \
            from None
    return schema.parse(data, kind, path, max_bytes)


def _kind(path: str) -> str:
    low = path.lower()
    if low.endswith((".parquet", ".pq")):
        import importlib.util

        if importlib.util.find_spec("pyarrow") is None:
            raise DomainError("path", path, "a .csv or .json path (Parquet needs pyarrow)")
        return "parquet"
    if low.endswith(".json"):
        return "json"
    if low.endswith(".csv"):
        return "csv"
    raise DomainError("path", path, f"a file ending in one of {', '.join(FORMATS)}")


def _write_json(frame, path) -> None:
    """A list of row objects; floats written exactly (repr), NaN / inf as null (strict JSON)."""
    cols = {c: frame[c].tolist() for c in frame.columns}
    rows = [{c: (None if isinstance(v, float) and not math.isfinite(v) else v)
             for c, v in zip(cols, vals)} for vals in zip(*cols.values())]
    with open(path, "w") as fh:
        json.dump(rows, fh, allow_nan=False)
