"""Reading a per-round log as untrusted data: bounded, strictly parsed, its rounds and seeds
checked (used by :func:`toys.engine.trace_io.read_log`).

A log is a file from any simulator, so it carries no seal: validation is the defense.

- the file is at most ``max_bytes`` long (:data:`MAX_LOG_BYTES` by default), read with
  :func:`boundlab.integrity.read_bounded`; a Parquet file's metadata must announce at most
  :data:`MAX_LOG_CELLS` cells before anything is decoded;
- CSV: UTF-8, one header, every row with exactly the header's number of fields, no duplicate
  column names; JSON: strict (:func:`boundlab.integrity.loads_plain`), a list of row objects
  with the same keys and scalar values;
- ``round``: integers in 0..:data:`MAX_ROUND`; ``seed`` (optional): integers; for each seed the
  rounds are exactly 0, 1, ..., R (none missing, none twice); at least one row.

Errors are :class:`~boundlab.errors.DomainError` naming the file, the column and the value.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np

from boundlab.errors import BoundlabError, DomainError

__all__ = ["MAX_LOG_BYTES", "MAX_LOG_CELLS", "MAX_ROUND", "parse", "numeric", "check_frame"]

#: largest log file read (bytes); ``read_log(..., max_bytes=)`` raises it
MAX_LOG_BYTES = 256 * 1024 ** 2
#: most cells (rows x columns) a Parquet log may announce
MAX_LOG_CELLS = 64 * 1024 ** 2
#: largest round number of a log
MAX_ROUND = 10 ** 9
#: largest magnitude of a seed label (integers exact in float64)
MAX_SEED = 2 ** 53


def _bad(where: str, column: str | None, value, allowed: str, detail: str = ""):
    name = f"{where}: column {column!r}" if column else where
    return DomainError(name, value, allowed, detail)


# ------------------------------------------------------------------------------ parsing
def parse(data: bytes, kind: str, where: str, max_bytes: int):
    """A DataFrame of the bytes of a CSV / JSON / Parquet log, or a DomainError naming
    ``where``."""
    if not data.strip():
        raise _bad(where, None, "an empty file", "a log with a header and at least one row")
    if kind == "parquet":
        return _parquet(data, where, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad(where, None, "binary data", f"a UTF-8 {kind} table") from None
    return _json(text, where) if kind == "json" else _csv(text, where)


def _csv(text: str, where: str):
    import pandas as pd

    try:
        rows = csv.reader(io.StringIO(text, newline=""), strict=True)
        header = next(rows)
        width = len(header)
        for line, row in enumerate(rows, start=2):
            if row and len(row) != width:
                raise _bad(where, None, f"line {line} with {len(row)} fields",
                           f"a rectangular CSV table: every row with the header's {width} fields")
    except csv.Error as exc:
        raise _bad(where, None, "unreadable CSV", "a readable csv table", str(exc)[:120]) \
            from None
    names = [h.strip() for h in header]
    dup = sorted({h for h in names if names.count(h) > 1})
    if dup or not all(names):
        raise _bad(where, None, f"header {', '.join(map(repr, names[:8]))}",
                   "distinct, non-empty column names")
    try:
        return pd.read_csv(io.StringIO(text), index_col=False, skipinitialspace=True)
    except (ValueError, OSError, MemoryError) as exc:
        raise _bad(where, None, "unreadable CSV", "a readable csv table", str(exc)[:120]) \
            from None


def _json(text: str, where: str):
    import pandas as pd

    from boundlab.integrity import loads_plain

    try:
        rows = loads_plain(text, where, "log")
    except BoundlabError as exc:
        raise _bad(where, None, "not strict JSON", "a readable json table (a list of row "
                   "objects)", str(exc)[:160]) from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise _bad(where, None, type(rows).__name__, "a readable json table: a list of row "
                   "objects")
    keys = list(rows[0]) if rows else []
    for i, r in enumerate(rows):
        if list(r) != keys and set(r) != set(keys):
            raise _bad(where, None, f"row {i} with keys {sorted(r)[:8]}",
                       f"rows with the same keys as row 0 ({', '.join(keys[:8])})")
        for k, v in r.items():
            if isinstance(v, (dict, list)):
                raise _bad(where, k, f"a {type(v).__name__} in row {i}",
                           "numbers, strings or null")
    frame = pd.DataFrame(rows, columns=keys)
    for c in frame.columns:
        if frame[c].map(lambda v: isinstance(v, bool)).any():
            continue  # booleans stay as they are (refused where a number is needed)
        try:
            frame[c] = pd.to_numeric(frame[c])
        except (ValueError, TypeError):
            pass
    return frame


def _parquet(data: bytes, where: str, max_bytes: int):
    import pandas as pd
    import pyarrow.parquet as pq

    try:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
        rows, cols = int(meta.num_rows), int(meta.num_columns)
        size = sum(int(meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types on a damaged file
        raise _bad(where, None, "unreadable Parquet", "a readable parquet table",
                   str(exc)[:120]) from None
    if rows < 0 or cols < 0 or rows * max(cols, 1) > MAX_LOG_CELLS or size > max_bytes:
        raise _bad(where, None, f"{rows} rows x {cols} columns ({size} bytes decoded)",
                   f"a Parquet log of at most {MAX_LOG_CELLS} cells and {max_bytes} bytes")
    try:
        return pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types on a damaged file
        raise _bad(where, None, "unreadable Parquet", "a readable parquet table",
                   str(exc)[:120]) from None


# ------------------------------------------------------------------------------ columns
def numeric(frame, column: str, where: str) -> np.ndarray:
    """Column ``column`` as float64 (null / empty -> NaN), refusing strings that are not
    numbers, booleans and other objects, naming the first offending value."""
    s = frame[column]
    kind = s.dtype.kind
    if kind in "iuf":
        return s.to_numpy(dtype=float)
    if kind == "b":
        raise _bad(where, column, bool(s.iloc[0]), "numbers (not booleans)")
    out = np.empty(len(s))
    for i, v in enumerate(s.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out[i] = np.nan
        elif isinstance(v, bool) or not isinstance(v, (int, float, str, np.number)):
            raise _bad(where, column, _short(v), f"numbers (row {i} holds a "
                       f"{type(v).__name__})")
        else:
            try:
                out[i] = float(v.strip() if isinstance(v, str) else v)
            except (ValueError, OverflowError):
                raise _bad(where, column, _short(v), f"numbers (row {i})") from None
    return out


def _short(v):
    text = str(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _integers(values: np.ndarray, where: str, column: str, lo: int, hi: int) -> np.ndarray:
    ok = np.isfinite(values) & (values == np.floor(values)) & (values >= lo) & (values <= hi)
    if not np.all(ok):
        bad = values[~ok][0]
        raise _bad(where, column, float(bad), f"integers >= {lo} and <= {hi}")
    return values.astype(np.int64)


def check_frame(frame, where: str):
    """``frame`` with integer ``round`` (and ``seed``) columns, each seed's rounds exactly
    0..R, at least one row; else a DomainError naming ``where``, the column and the value."""
    if "round" not in frame.columns:
        raise DomainError("columns of the log" if where == "log" else f"columns of {where}",
                          ", ".join(map(str, list(frame.columns)[:8])),
                          "a table with a 'round' column")
    if len(frame) == 0:
        raise _bad(where, None, "no rows", "a log with at least one row (round 0)")
    frame["round"] = _integers(numeric(frame, "round", where), where, "round", 0, MAX_ROUND)
    if "seed" in frame.columns:
        frame["seed"] = _integers(numeric(frame, "seed", where), where, "seed", -MAX_SEED,
                                  MAX_SEED)
        groups = frame.groupby("seed", sort=True)["round"]
    else:
        groups = [(None, frame["round"])]
    for seed, rounds in groups:
        r = np.sort(rounds.to_numpy())
        label = "" if seed is None else f" of seed {int(seed)}"
        dup = r[1:][r[1:] == r[:-1]]
        if dup.size:
            raise _bad(where, "round", int(dup[0]), f"each round once per seed (round "
                       f"{int(dup[0])}{label} is there twice)")
        if r[0] != 0 or r[-1] != len(r) - 1:
            gaps = np.nonzero(r != np.arange(len(r)))[0]
            missing = int(gaps[0]) if gaps.size else len(r)
            raise _bad(where, "round", f"rounds {int(r[0])}..{int(r[-1])}{label}",
                       f"every round 0..{int(r[-1])} (round {missing} is missing)")
    return frame
