"""Shared pytest configuration: headless plotting, hypothesis profile."""

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile(  # derandomized: CI sees the same examples on every run
    "boundlab", deadline=None, max_examples=100, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("boundlab")

# under pytest-xdist (the README's `-n auto`) each worker is one process per core: one BLAS /
# OpenMP thread each, so that the workers do not oversubscribe the cores
if os.environ.get("PYTEST_XDIST_WORKER"):
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)

# the fuzz suite (tests/fuzz): a fixed, derandomized CI profile; `pytest tests/fuzz
# --hypothesis-profile=deep` for a long local run (see tests/fuzz/_fuzz_harness.fuzz_settings)
settings.register_profile(
    "fuzz-ci", derandomize=True, max_examples=25, deadline=None, database=None,
    suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile(
    "deep", max_examples=500, deadline=None, suppress_health_check=list(HealthCheck),
    print_blob=True)
