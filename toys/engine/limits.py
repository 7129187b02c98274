"""Resource limits: refuse work the machine cannot hold, before anything is allocated.

``toys.run``, ``verify.sweep`` and ``verify.falsify`` estimate the memory and the time of what
they are asked to do from the sizes they are given (rounds, local steps, clients, dimension,
seeds, grid points, search budget) and refuse, with a :class:`~boundlab.errors.DomainError`
naming the parameter most responsible, its value and the limit, work that

* needs more memory than the machine has available now (:func:`available_memory`: psutil,
  else ``os.sysconf``; the estimate must fit in :data:`MEMORY_FRACTION` of it), or
* would take longer than :func:`max_seconds` (default :data:`MAX_SECONDS`, one day; the
  environment variable ``BOUNDLAB_MAX_SECONDS`` sets another) even at the optimistic speeds
  :data:`FLOPS` and :data:`STEP_SECONDS` (so the time estimate is a lower bound: a refusal is
  certain, an acceptance is no promise).

The estimates count the buffers each piece preallocates (per round, per client, per local
step), not the problem's data (already allocated when a problem object exists).

Example
-------
>>> need = run_need(rounds=100, n_clients=10, local_steps=5, record="round")
>>> need[0] < 1e6, need[1] < 1.0
(True, True)
>>> check("toys.run", lambda s: run_need(record="round", **s),
...       {"rounds": 1000, "n_clients": 10**9, "local_steps": 1})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
boundlab.errors.DomainError: n_clients = 1000000000 is outside its domain: a size for which \
toys.run fits in memory (about ... available) (it would need about ...)
"""

from __future__ import annotations

import math
import os

from boundlab.errors import DomainError

__all__ = ["FLOPS", "MAX_SECONDS", "MEMORY_FRACTION", "STEP_SECONDS", "available_memory",
           "batched_need", "check", "max_seconds", "run_need", "sweep_need"]

#: the share of the memory available now that an estimate may use
MEMORY_FRACTION = 0.8
#: the default longest estimated time (seconds); ``BOUNDLAB_MAX_SECONDS`` overrides it
MAX_SECONDS = 24 * 3600.0
#: an optimistic arithmetic rate (float operations per second): time estimates are lower bounds
FLOPS = 5e10
#: an optimistic cost of one interpreted step of a round loop (seconds)
STEP_SECONDS = 1e-6
_STATE_ROWS = 40  # per-round scalars of the engine and the trace (state, round summaries)
_STEP_ROWS = 16  # per-step rows with record="step" (engine buffer + Trace.steps)


def available_memory() -> int:
    """Bytes of memory available now (psutil if installed, else ``os.sysconf``).

    >>> available_memory() > 0
    True
    """
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - psutil missing or unsupported here
        pass
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            n, size = os.sysconf(pages), os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            continue
        if n > 0 and size > 0:
            return int(n) * int(size)
    return 1 << 34  # unknown: assume 16 GiB


def max_seconds() -> float:
    """The longest estimated time accepted: ``BOUNDLAB_MAX_SECONDS`` or :data:`MAX_SECONDS`."""
    text = os.environ.get("BOUNDLAB_MAX_SECONDS", "")
    try:
        value = float(text)
    except ValueError:
        return MAX_SECONDS
    return value if value > 0 else MAX_SECONDS


def run_need(rounds, n_clients, local_steps=1, record="round", dim=1) -> tuple[float, float]:
    """``(bytes, seconds)`` of one ``toys.run``: its preallocated buffers (step sizes per
    iteration, per-round state and summaries, the (rounds, clients) weights and participation,
    the per-step record) and a lower bound on its time.

    >>> run_need(10, 2, 3, "step")[0] > run_need(10, 2, 3, "round")[0]
    True
    """
    R, N, tau = float(rounds), float(n_clients), float(local_steps)
    nbytes = 8 * R * tau + 8 * _STATE_ROWS * (R + 1) + 27 * R * N
    if record == "step":
        nbytes += 8 * _STEP_ROWS * R * tau
    seconds = R * tau * STEP_SECONDS + 4 * R * tau * N * float(dim) / FLOPS
    return nbytes, seconds


def sweep_need(grid, seeds, rounds, n_clients=1, local_steps=1, record="round",
               columns=40) -> tuple[float, float]:
    """``(bytes, seconds)`` of ``grid`` points x ``seeds`` runs: one point's runs held
    together, and the table of ``columns`` values per round of every run (the points' frames
    and the assembled table).

    >>> sweep_need(2, 3, 10)[0] > 2 * 8 * 40 * 11 * 3 * 2
    True
    """
    one_bytes, one_seconds = run_need(rounds, n_clients, local_steps, record)
    table = 8.0 * columns * (float(rounds) + 1) * float(seeds) * float(grid)
    return float(seeds) * one_bytes + 2 * table, float(grid) * float(seeds) * one_seconds


def batched_need(*, population, n_vars, n_clients, dim, rounds, local_steps, groups=1,
                 evaluations=None, masks=False) -> tuple[float, float]:
    """``(bytes, seconds)`` of a batched population search: ``population`` instances of
    ``n_vars`` search variables each run together for ``rounds`` x ``local_steps`` steps (the
    step sizes per iteration, per-round records, the clients' copies and gradients, the
    participation masks), ``groups`` such batches one after the other, ``evaluations``
    instances in all.

    >>> batched_need(population=8, n_vars=10, n_clients=3, dim=2, rounds=4, local_steps=2)[0]
    11744.0
    """
    P, R, tau = float(population), float(rounds), float(local_steps)
    N, d, n = float(n_clients), float(dim), float(n_vars)
    per = 4 * n + 8 * N * d + 16 * (R + 1) + R * tau + 2 * N + (R * N / 8 if masks else 0)
    nbytes = 8 * P * per + 8 * 4 * N
    evals = P * groups if evaluations is None else float(evaluations)
    seconds = groups * R * tau * STEP_SECONDS + evals * R * tau * 2 * (n + N * d) / FLOPS
    return nbytes, seconds


def check(what: str, estimate, sizes: dict, given=None) -> None:
    """Refuse ``what`` when ``estimate(sizes) -> (bytes, seconds)`` exceeds the machine's
    memory or :func:`max_seconds`: a DomainError naming the size (among ``given``, default
    all of ``sizes``) whose reduction to 1 lowers the estimate most, its value and the limit.
    """
    nbytes, seconds = estimate(sizes)
    mem = MEMORY_FRACTION * available_memory()
    if nbytes > mem:
        name = _culprit(estimate, sizes, given, 0)
        raise DomainError(name, sizes[name], f"a size for which {what} fits in memory (about "
                          f"{_bytes(mem)} available)", f"it would need about {_bytes(nbytes)}")
    limit = max_seconds()
    if seconds > limit:
        name = _culprit(estimate, sizes, given, 1)
        raise DomainError(name, sizes[name], f"a size for which {what} takes at most "
                          f"{_duration(limit)} (BOUNDLAB_MAX_SECONDS)",
                          f"it would take at least {_duration(seconds)}")


def _culprit(estimate, sizes: dict, given, which: int) -> str:
    names = [k for k in (sizes if given is None else given) if k in sizes] or list(sizes)
    base = estimate(sizes)[which]
    best, gain = names[0], -math.inf
    for k in names:
        if not (isinstance(sizes[k], (int, float)) and sizes[k] > 1):
            continue
        g = base / max(estimate({**sizes, k: 1})[which], 1e-300)
        if g > gain:
            best, gain = k, g
    return best


def _bytes(n: float) -> str:
    for unit, size in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.3g} bytes"


def _duration(s: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600),
                       ("minutes", 60)):
        if s >= size:
            return f"{s / size:.3g} {unit}"
    return f"{s:.3g} s"
