"""Reading one point file of a sweep folder back: bounded parsing and the checks of what the
frame must be (:mod:`verify.sweep.store` calls these after the point's seal matched).

A point file is parsed only after its size was checked against the rows the point should have
(a Parquet footer's row count, column count and uncompressed size are checked before its data
is decoded), and every pandas / pyarrow error becomes an
:class:`~boundlab.errors.IntegrityError` naming the file. The frame must then be exactly what
:func:`verify.sweep.api.run_point` makes for that point: the grid columns first, holding the
point's values, then ``seed`` and ``round`` (integers, seeds x rounds 0..R in order), and
plain columns (numbers, booleans, text) only.
"""

from __future__ import annotations

import io
import math

import numpy as np

from boundlab.errors import IntegrityError

__all__ = ["parse", "check_frame", "NUMERIC"]

#: a Parquet file may decode to at most this multiple of its size (plus 1 MiB)
_EXPANSION = 64
#: columns that are numbers in every point boundlab writes (``run_<name>`` too, where a grid
#: name is also a measured column)
NUMERIC = frozenset(
    "loss gap dist2 grad_norm2 grad_norm2_virtual grad_dissim rho_sync rho_star rho_min "
    "shadow_gap drift_max drift_mean drift_sum disc_max g2_max lr n_participants zeta_obs "
    "kappa_min kappa_max measured bound_value ratio measured_mean measured_lo measured_hi "
    "worst_ratio n_seeds effective_samples".split())
_ADVICE = "delete it (or the whole folder) to run the point again"


def _bad(path, field, allowed, detail):
    from boundlab.integrity import escape

    return IntegrityError(path, field, allowed, f"{escape(detail)[:200]}; {_ADVICE}")


def parse(data: bytes, path, suffix: str, rows: int, max_columns: int):
    """The DataFrame in ``data`` (the bytes of ``path``), or IntegrityError."""
    import pandas as pd

    if suffix == ".parquet":
        _check_parquet_footer(data, path, rows, max_columns)
    try:
        if suffix == ".parquet":
            return pd.read_parquet(io.BytesIO(data))
        return pd.read_csv(io.BytesIO(data), **_exact_floats(pd.__version__))
    except Exception as exc:  # noqa: BLE001 - pyarrow / pandas errors, all of them
        kind = "Parquet" if suffix == ".parquet" else "CSV"
        raise _bad(path, "point file", f"a {kind} table as boundlab wrote it",
                   f"{type(exc).__name__}: {exc}") from None


def _exact_floats(version: str) -> dict:
    """``read_csv`` options that parse every float bit for bit as written (``repr``): pandas
    before 3.1 needs ``float_precision="round_trip"``; from 3.1 every mode is the exact
    ``fast_float`` converter and the option is deprecated (a ``Pandas4Warning``; pandas 4 drops
    it), so none is passed.

    >>> _exact_floats("2.2.3"), _exact_floats("3.1.1"), _exact_floats("4.0.0.dev0+12")
    ({'float_precision': 'round_trip'}, {}, {})
    """
    major, minor = (int("".join(c for c in part if c.isdigit()) or 0)
                    for part in (version.split(".") + ["0"])[:2])
    return {"float_precision": "round_trip"} if (major, minor) < (3, 1) else {}


def _check_parquet_footer(data: bytes, path, rows: int, max_columns: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        md = pq.ParquetFile(pa.BufferReader(data)).metadata
        n_rows, n_cols = md.num_rows, md.num_columns
        size = sum(md.row_group(k).total_byte_size for k in range(md.num_row_groups))
    except Exception as exc:  # noqa: BLE001 - a damaged footer, in any of pyarrow's ways
        raise _bad(path, "point file", "a Parquet table as boundlab wrote it",
                   f"{type(exc).__name__}: {exc}") from None
    if n_rows != rows:
        raise _bad(path, "rows", f"{rows} rows (seeds x (rounds + 1))", f"it has {n_rows}")
    if n_cols > max_columns:
        raise _bad(path, "columns", f"at most {max_columns} columns", f"it has {n_cols}")
    if size > _EXPANSION * len(data) + (1 << 20):
        raise _bad(path, "point file", f"data of at most {_EXPANSION} times the file's size",
                   f"its footer claims {size} bytes")


def check_frame(frame, path, spec, i: int, csv: bool = False) -> None:
    """Raise IntegrityError unless ``frame`` is what point ``i`` of ``spec`` makes."""
    task = spec["task"]
    point, seeds, rounds = spec["points"][i], task["seeds"], task["rounds"]
    cols = list(frame.columns)
    if not all(isinstance(c, str) for c in cols) or len(set(cols)) != len(cols):
        raise _bad(path, "columns", "distinct text column names", f"they are {cols[:8]!r}")
    head = [*point, "seed", "round"]
    if cols[:len(head)] != head:
        raise _bad(path, "columns", f"the point's columns first: {head}",
                   f"they begin {cols[:len(head)]!r}")
    n = len(seeds) * (rounds + 1)
    if len(frame) != n:
        raise _bad(path, "rows", f"{n} rows (seeds x (rounds + 1))", f"it has {len(frame)}")
    for name, want in (("seed", np.repeat(seeds, rounds + 1)),
                       ("round", np.tile(np.arange(rounds + 1), len(seeds)))):
        col = frame[name]
        if col.dtype.kind not in "iu" or not np.array_equal(col.to_numpy(), want):
            raise _bad(path, name, f"the seeds {seeds} x rounds 0..{rounds}, in order, as "
                       "integers", f"column {name} holds other values")
    for k, v in point.items():
        if not all(_same(x, v, csv) for x in frame[k].tolist()):
            raise _bad(path, k, f"{k} = {v!r} on every row (the point's value)",
                       "the column holds other values")
    for c in cols[len(head):]:
        _check_column(frame[c], c, path)


def _check_column(col, name, path) -> None:
    kind = getattr(col.dtype, "kind", "?")
    if kind in "biuf":
        return
    if name in NUMERIC or name.removeprefix("run_") in NUMERIC:
        raise _bad(path, name, "a column of numbers", f"its type is {col.dtype}")
    if kind == "O" or str(col.dtype) in ("str", "string"):
        bad = next((x for x in col.tolist() if not _plain_cell(x)), None)
        if bad is None:
            return
        raise _bad(path, name, "numbers, booleans, text or empty cells",
                   f"it holds a {type(bad).__name__}")
    raise _bad(path, name, "a column of numbers, booleans or text", f"its type is {col.dtype}")


def _plain_cell(x) -> bool:
    return x is None or isinstance(x, (str, bool, int, float, np.integer, np.floating,
                                       np.bool_))


def _null(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _same(x, v, csv: bool) -> bool:
    """Whether a cell read back holds the grid value ``v`` (CSV: as its text reads back)."""
    if _null(x) or _null(v):
        return _null(x) and _null(v)
    if isinstance(v, (bool, np.bool_)) != isinstance(x, (bool, np.bool_)) and not csv:
        return False
    if x == v:
        return True
    return csv and str(x) == str(v)
