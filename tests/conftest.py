"""Shared pytest configuration: headless plotting, hypothesis profile."""

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile(
    "boundlab", deadline=None, max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("boundlab")
