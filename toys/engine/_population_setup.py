"""The checks and set-up of :func:`toys.run_many` (:mod:`toys.engine.population`): seeds,
what a run measures (``measure=``), the pieces' population axis, the participation processes,
the per-instance step sizes, the memory estimate and the initial models. Every bad input is a
DomainError naming the parameter.

Example
-------
>>> _wanted(["shadow_gap"], "round").summaries
('shadow_gap',)
>>> _seeds(3, 2)
[3, 3]
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from boundlab.errors import DomainError

from .. import participation as part
from ..algorithms import Algorithm
from ..local import lr_schedule
from ..validation import check_int
from ._population_result import SUMMARIES
from .measure import DISC, DIST2, DMAX, DMEAN, DSUM, EXTRA_STEPS, G2, GN, RHO, SHADOW, STATE
from .trace import STATE_FIELDS

__all__ = ["MAX_POPULATION_BYTES", "MEASURABLE", "POPULATION_RECORD"]

POPULATION_RECORD = ("round", "step", "state", "none")
STEP_ONLY = ("grad_norm2_virtual", "rho_max", *EXTRA_STEPS)
MEASURABLE = (*STATE_FIELDS, *SUMMARIES, *STEP_ONLY)
"""The quantities ``run_many(..., measure=...)`` can be restricted to: the state metrics, the
round summaries of the per-step measurements and, with record="step" (:data:`STEP_ONLY`),
||grad F||^2 at the virtual averages, the skew rho(t, w_t) there (``steps["rho"]``, whose
round maxima are ``rho_max``) and the per-step quantities recorded only when named
(:data:`toys.engine.measure.EXTRA_STEPS`, ``steps[name]``)."""
_STEP_ROWS = {"shadow_gap": (SHADOW,), "drift_max": (DMAX,), "drift_mean": (DMEAN,),
              "drift_sum": (DSUM,), "disc_max": (DISC,), "g2_max": (G2,),
              "grad_norm2_virtual": (GN,), "rho_max": (RHO,), "dist2": (DIST2,),
              **{n: (row,) for n, row in EXTRA_STEPS.items()}}
MAX_POPULATION_BYTES = 1 << 33
"""Populations whose arrays (the clients' models and gradients, the state of the pieces and
the records) would exceed this many bytes are refused before any work."""


def _seeds(seeds, B):
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return [check_int("seeds", seeds, lo=0)] * B
    vals = list(seeds)
    if len(vals) != B:
        raise DomainError("seeds", f"{len(vals)} seeds", f"one int or {B} ints (one per problem)")
    return [check_int("seeds", s, lo=0) for s in vals]


def _wanted(measure, record) -> SimpleNamespace:
    """What a run measures: ``state`` (state metric names), ``rows`` (the per-step rows of
    :func:`~toys.engine.measure.step_values`; None: all), ``shadow`` / ``gn`` / ``rho`` (the
    gaps / gradients / skews at the virtual averages), ``summaries`` (the round summaries
    written), ``extra`` (the names of :data:`~toys.engine.measure.EXTRA_STEPS` recorded)."""
    per_step = record in ("round", "step")
    if measure is None:
        return SimpleNamespace(state=frozenset(STATE_FIELDS if record != "none" else ()),
                               rows=None if per_step else frozenset(), shadow=per_step,
                               gn=record == "step", rho=record == "step",
                               summaries=SUMMARIES if per_step else (), extra=())
    names = (measure,) if isinstance(measure, str) else measure
    try:
        names = tuple(names)
    except TypeError:
        raise DomainError("measure", measure, f"a collection of names of {MEASURABLE}") from None
    for n in names:
        if not isinstance(n, str) or n not in MEASURABLE:
            raise DomainError("measure", n, f"names of {MEASURABLE}")
    late = [n for n in names if n not in STATE_FIELDS]
    if record == "none" and names:
        raise DomainError("measure", names, "nothing with record='none' (it measures nothing)")
    if late and not per_step:
        raise DomainError("measure", late[0], f"state metrics {STATE_FIELDS} with record="
                          f"{record!r} (per-step quantities need record='round' or 'step')")
    for n in STEP_ONLY:
        if n in names and record != "step":
            raise DomainError("measure", n, "a quantity of record='step'")
    state = {n for n in names if n in STATE_FIELDS} | ({"gap"} if record != "none" else set())
    rows = {r for n in names if n != "dist2" or record == "step" for r in _STEP_ROWS.get(n, ())}
    gn = GN in rows
    if gn:
        state.add("grad_norm2")
    return SimpleNamespace(state=frozenset(state), rows=frozenset(rows - {SHADOW, GN, RHO}),
                           shadow=SHADOW in rows, gn=gn, rho=RHO in rows,
                           summaries=tuple(n for n in SUMMARIES if n in names),
                           extra=tuple(n for n in EXTRA_STEPS if n in names))


def _check_batched(algo):
    for role in ("client", "weights", "server"):
        piece = getattr(algo, role)
        if not getattr(piece, "batched", False):
            raise DomainError(f"algorithm.{role}", type(piece).__name__,
                              "a piece with a population axis (batched = True); "
                              f"{algo.name!r} runs with toys.run")


def _processes(spec, B, N, rounds):
    """(processes, fixed masks): one process per instance, or a (B, rounds, N) bool array of
    fixed patterns (each instance's row is its own (rounds, N) matrix, as toys.run takes it)."""
    if isinstance(spec, np.ndarray) and spec.ndim == 3:
        if spec.shape != (B, rounds, N) or spec.dtype != bool:
            raise DomainError("participation", f"array of shape {spec.shape}",
                              f"a bool array of shape ({B}, {rounds}, {N})")
        return [part.resolve(spec[0], N, rounds)] * B, spec
    if isinstance(spec, (list, tuple)) and len(spec) == B and not isinstance(spec, str) \
            and B > 1:
        return [part.resolve(s, N, rounds) for s in spec], None
    return [part.resolve(spec, N, rounds)] * B, None  # one shared spec: resolved once


def _vary(algo, vary, B, rounds):
    """The algorithm with the per-instance values of ``vary`` and the (B, rounds * tau) step
    sizes of every instance."""
    for name in vary:
        if name != "lr":
            raise DomainError("vary", name, "'lr' (the per-instance hyper-parameters batched "
                                            "so far)")
    client = algo.client
    tau = int(getattr(client, "local_steps", 1))
    base = getattr(client, "lrs", None)
    if "lr" in vary:
        vals = list(vary["lr"])
        if len(vals) != B:
            raise DomainError("vary['lr']", f"{len(vals)} values", f"{B} values (one per problem)")
        lrs = _lr_rows(vals, rounds, tau)
    else:
        lrs = np.full((B, rounds * tau), np.nan) if base is None else \
            np.broadcast_to(np.asarray(base, dtype=float), (B, rounds * tau))
    lrs = np.array(lrs)  # writable (torch takes it)
    if base is not None:
        from dataclasses import replace

        server = algo.server  # FedNova normalises by the clients' steps
        if getattr(server, "lrs", None) is not None:
            server = replace(server, lrs=lrs)
        algo = Algorithm(algo.name, replace(client, lrs=lrs), algo.weights, server,
                         algo.description)
    return algo, lrs


def _lr_rows(vals, rounds, tau):
    """(B, rounds * tau) step sizes: constants checked at once, schedules one by one
    (:func:`toys.local.lr_schedule`)."""
    if all(isinstance(v, np.ndarray) and v.shape == (rounds * tau,) and v.dtype.kind in "fiu"
           for v in vals):  # one value per iteration, per instance (no object array)
        a = np.asarray(vals, dtype=float)
        if np.all(np.isfinite(a) & (a > 0)):
            return a
    else:
        arr = np.asarray(vals, dtype=object)
        if arr.ndim == 2 and arr.shape[1] == rounds * tau:
            a = np.asarray(vals, dtype=float)
            if np.all(np.isfinite(a) & (a > 0)):
                return a
    if all(isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
           for v in vals):
        a = np.asarray(vals, dtype=float)
        if np.all(np.isfinite(a) & (a > 0)):
            return np.repeat(a[:, None], rounds * tau, axis=1)
    return np.stack([lr_schedule(v, rounds, tau) for v in vals])


def _check_memory(B, N, d, rounds, steps):
    need = 8 * (4 * B * N * d + B * (rounds + 1) * (len(STATE) + 2 * N) + B * steps)
    if need > MAX_POPULATION_BYTES:
        raise DomainError("problems", f"B={B}, N={N}, d={d}, rounds={rounds}",
                          f"a population needing <= {MAX_POPULATION_BYTES} bytes",
                          f"would need {need:.3g} bytes")


def _x0(pop, x0, B, d):
    x = pop.x0 if x0 is None else np.asarray(x0, dtype=float)
    x = np.broadcast_to(x, (B, d)) if x.shape in ((d,), (B, d)) else None
    if x is None or not np.all(np.isfinite(x)):
        raise DomainError("x0", x0, f"finite array of shape ({d},) or ({B}, {d})")
    return np.array(x, dtype=float)
