"""Seed 000's Table 4 smoothness candidates and the R_x statistics of the reproductions."""

import math

import numpy as np
import pytest

from boundlab.errors import DomainError
from verify.reproduce.common import ci95, fmt_ci, rounds_to
from verify.reproduce.metrics import smoothness


def test_smoothness_by_hand():
    acc = [0.5, 0.6, 0.65, 0.7, 0.72]  # variations 0.1, 0.05, 0.05, 0.02
    d = np.array([0.1, 0.05, 0.05, 0.02])
    sd = math.sqrt(sum((v - 0.055) ** 2 for v in d) / 3)
    assert smoothness(acc, "S1") == pytest.approx(sd / 0.055, rel=1e-12)
    c = d - 0.055
    assert smoothness(acc, "S2") == pytest.approx((c[1:] @ c[:-1]) / (c @ c), rel=1e-12)


def test_smoothness_edge_cases():
    assert smoothness([0.1, 0.2, 0.3, 0.4], "S1") == pytest.approx(0.0, abs=1e-12)
    assert math.isnan(smoothness([0.1, 0.2], "S1"))
    assert math.isnan(smoothness([0.5, 0.5, 0.5], "S2"))
    with pytest.raises(DomainError, match="kind"):
        smoothness([0.1, 0.2, 0.3], "S3")


def test_rounds_to_and_ci():
    acc = np.array([[0.2, 0.95, 0.97], [0.1, 0.3, 0.91], [0.1, 0.2, 0.3]])
    assert rounds_to(acc, 0.9).tolist()[:2] == [2.0, 3.0]
    assert math.isnan(rounds_to(acc, 0.9)[2])
    m, h, n = ci95([1.0, 2.0, 3.0])
    assert (m, n) == (2.0, 3)
    assert h == pytest.approx(4.302652729911275 * 1.0 / math.sqrt(3), rel=1e-9)  # t_{.975,2}
    assert fmt_ci([float("nan")] * 2) == "never reached (0/2)"
