"""The simulation engine: :func:`run`, the round loop, the :class:`Trace`, callbacks,
checkpoints and the backends registry.

=====================  =====================================================================
:mod:`.run`            ``toys.run``: validation, setup, the run's context
:mod:`.rounds`         one round: the pieces called in order, divergence, the engine state
:mod:`.measure`        state metrics, the per-step observer (drift, virtual average)
:mod:`.settle`         measured rounds completed in batches: losses at many points, summaries
:mod:`.callbacks`      round callbacks (``TestMetrics``) and the loop that calls them
:mod:`.checkpoint`     save / resume the complete engine state (bit-identical)
:mod:`.trace`          the measurements of one run
:mod:`.backends`       numpy / torch (the one place that knows which backends exist)
:mod:`.limits`         memory and time estimated from the sizes, refused before allocation
=====================  =====================================================================

Example
-------
>>> from toys.engine import RECORD_MODES
>>> RECORD_MODES
('none', 'sync', 'round', 'step')
"""

from __future__ import annotations

from .callbacks import RoundInfo, TestMetrics
from .rounds import DIVERGENCE
from .run import RECORD_MODES, run
from .trace import Trace

__all__ = ["DIVERGENCE", "RECORD_MODES", "RoundInfo", "TestMetrics", "Trace", "run"]
