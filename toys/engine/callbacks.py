"""Round callbacks of :func:`toys.run` and the loop that calls them.

A callback is any callable ``callback(info)`` called after every completed round (not after a
round that diverged). ``info`` (:class:`RoundInfo`) has ``round`` (the round just finished,
0-based), ``model`` (the global model x_{round+1}, numpy), ``state`` (the engine's
:class:`~toys.engine.rounds.State`: every piece's state), ``problem``; ``info.record(name,
value)`` stores a per-round value in ``Trace.metrics[name]`` (NaN where not recorded),
``info.stop()`` (or returning True) ends the run after this round, ``info.checkpoint(path)``
saves a checkpoint now. The engine's measurement buffers in ``state.buffers`` are internal:
the shadow losses of the last rounds may still be pending there (they are evaluated in batches
across rounds, :data:`toys.engine.settle.PENDING_POINTS`, and complete in the returned
:class:`~toys.Trace`). Callbacks must not draw from the run's random streams (they do not get
them), so a run with callbacks is bit-identical to one without.

Built-in: :class:`TestMetrics` — accuracy and loss of the global model on held-out data (the
papers report test accuracy and rounds-to-target R_x, :meth:`toys.Trace.rounds_to`).

Example
-------
>>> import toys
>>> prob = toys.from_dataset("breast_cancer", n_clients=4, seed=0, test_fraction=0.2)
>>> tr = toys.run(prob, "fedavg", rounds=5, seed=0, lr=0.5, callbacks=[TestMetrics(prob)])
>>> sorted(tr.metrics), bool(tr.metrics["test_accuracy"][-1] > 0.8)
(['test_accuracy', 'test_loss'], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError

from .._array import to_numpy
from .rounds import finish, one_round

__all__ = ["RoundInfo", "TestMetrics", "held_out", "run_loop"]


@dataclass
class RoundInfo:
    """What a callback sees after round ``round``."""

    round: int
    state: object
    problem: object = None
    _ctx: object = field(default=None, repr=False)
    _stop: bool = False

    @property
    def model(self) -> np.ndarray:
        return np.array(to_numpy(self.state.x), dtype=float)

    def record(self, name: str, value) -> None:
        """Store ``value`` as round ``round``'s entry of ``Trace.metrics[name]``."""
        if not isinstance(name, str) or not name:
            raise DomainError("metric name", name, "a non-empty string")
        arr = self.state.metrics.setdefault(name, np.full(self._ctx.rounds, np.nan))
        arr[self.round] = float(value)

    def stop(self) -> None:
        """End the run after this round."""
        self._stop = True

    def checkpoint(self, path) -> None:
        """Save the complete engine state to ``path`` now (atomically)."""
        from .checkpoint import save

        save(path, self._ctx, self.state)


def run_loop(ctx, st, trace, callbacks=(), checkpoint=None, checkpoint_every=None):
    """Run the remaining rounds of ``st``; callbacks and periodic checkpoints after each."""
    from ..validation import check_int

    callbacks = list(callbacks or ())
    for cb in callbacks:
        if not callable(cb):
            raise DomainError("callbacks", cb, "callables callback(info)")
    every = None
    if checkpoint is not None:
        every = check_int("checkpoint_every", 1 if checkpoint_every is None
                          else checkpoint_every, lo=1)
        from boundlab.io import check_replaceable

        check_replaceable(checkpoint, "checkpoint", "a checkpoint")
    while st.round < ctx.rounds:
        one_round(ctx, st)
        if st.diverged_at is not None:
            break
        if callbacks and _call(ctx, st, callbacks):
            st.stopped_at = st.round - 1
            break
        if every is not None and (st.round % every == 0 or st.round == ctx.rounds):
            from .checkpoint import save

            save(checkpoint, ctx, st)
    finish(ctx, st, trace)
    return trace


def _call(ctx, st, callbacks) -> bool:
    info = RoundInfo(round=st.round - 1, state=st, problem=getattr(ctx, "problem", None),
                     _ctx=ctx)
    stop = False
    for cb in callbacks:
        stop = bool(cb(info)) or stop
    return stop or info._stop


def held_out(model, w, test) -> tuple:
    """``(accuracy, pooled loss)`` of parameters ``w`` on the held-out ``test`` (``X``, ``y``,
    ``offset``), as ``model`` evaluates them: its ``test_metrics`` (one forward pass for both,
    the MLP) or its ``accuracy`` and ``pooled_loss``. :class:`TestMetrics`' numbers."""
    args = (w, test["X"], test["y"], test.get("offset"))
    both = getattr(model, "test_metrics", None)
    return both(*args) if both is not None else (model.accuracy(*args), model.pooled_loss(*args))


class TestMetrics:
    """Accuracy and loss of the global model on a held-out set, every ``every`` rounds, into
    ``Trace.metrics["test_accuracy"]`` / ``["test_loss"]``. ``data`` is a problem with a
    held-out split (``toys.from_dataset(..., test_fraction=...)``: ``problem.test``) or a dict
    with ``X``, ``y`` (and ``offset``) plus ``model=`` the problem that evaluates them
    (``accuracy`` / ``pooled_loss``, e.g. a logistic problem).
    """

    __test__ = False  # not a pytest test class

    def __init__(self, data, every: int = 1, model=None):
        from ..validation import check_int

        self.every = check_int("every", every, lo=1)
        if isinstance(data, dict):
            self.test, self.model = data, model
        else:
            self.test, self.model = getattr(data, "test", None), data if model is None else model
        if not self.test or not hasattr(self.model, "accuracy"):
            raise DomainError("data", data, "a classification problem with a held-out split "
                                            "(from_dataset(..., test_fraction > 0)) or a dict "
                                            "of X, y with model=")

    def __call__(self, info: RoundInfo) -> None:
        if (info.round + 1) % self.every:
            return
        acc, loss = held_out(self.model, info.model, self.test)
        info.record("test_accuracy", acc)
        info.record("test_loss", loss)
