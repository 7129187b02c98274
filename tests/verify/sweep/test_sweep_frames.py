"""verify.sweep.frames: a CSV point file reads back bit for bit, without pandas' deprecation
warnings (pandas 3.1 deprecates ``float_precision``; pandas 4 drops it)."""

import warnings

import numpy as np
import pandas as pd

from verify.sweep.frames import parse


def test_csv_point_floats_read_back_bit_for_bit_without_warnings():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 2**63 - 1, size=20000, dtype=np.int64).view(np.float64)
    extremes = [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1 + 0.2,
                np.nextafter(1.0, 2.0), -0.0]
    x = np.concatenate([raw[np.isfinite(raw)], rng.normal(size=5000), extremes])
    frame = pd.DataFrame({"seed": np.zeros(len(x), int), "loss": x})
    data = frame.to_csv(index=False).encode()  # as verify.sweep.store writes a point
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = parse(data, "p.csv", ".csv", rows=len(x), max_columns=2)
    assert back["loss"].to_numpy().view(np.int64).tolist() == x.view(np.int64).tolist()
