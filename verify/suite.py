"""The check registry and the suite runner behind ``boundlab verify``.

A check is a function ``fn(ctx) -> list[CheckResult]`` registered with :func:`register` under a
family and the bound ids it judges. Every catalogue bound also gets a check generated from its
metadata (:mod:`verify.checks.generic`: a fixed instance and a ``verify.falsify`` search).
The runner selects checks (``--only FAMILY|ID|CHECK``), runs them with a progress bar, and
records a crash as an ``error`` result so the suite goes on.

Example
-------
>>> from verify.suite import checks
>>> {'contraction', 'drift', 'skew', 'weight_error'} <= {c.family for c in checks()}
True
"""

from __future__ import annotations

import contextlib
import time

from boundlab.errors import DomainError, UnknownNameError

from .checks._registry import (
    FALSIFY_BUDGET,
    FALSIFY_BUDGET_QUICK,
    FAMILIES,
    CheckSpec,
    Context,
    load_hand_written,
    register,
)
from .checks._registry import REGISTRY as _REGISTRY
from .compare import CheckResult, errored

__all__ = ["Context", "CheckSpec", "register", "checks", "select", "run_suite", "FAMILIES",
           "FALSIFY_BUDGET", "FALSIFY_BUDGET_QUICK"]

_LOADED = False


def _load() -> None:
    global _LOADED
    if not _LOADED:
        load_hand_written()
        from .checks.generic import specs  # every catalogue bound, from its metadata

        for spec in specs():
            _REGISTRY.setdefault(spec.name, spec)
        _LOADED = True


def checks() -> list[CheckSpec]:
    """Every registered check, in family order."""
    _load()
    from .checks.user import user_specs  # registered bounds (boundlab.register, plug-ins)

    order = {f: i for i, f in enumerate(FAMILIES)}
    specs = list(_REGISTRY.values()) + user_specs()
    return sorted(specs, key=lambda c: order.get(c.family, len(order)))


def select(only: str | None = None) -> list[CheckSpec]:
    """Checks matching ``only``: a family, a bound id (or its prefix), or a check name.

    >>> [c.family for c in select("drift")][:1]
    ['drift']
    """
    allc = checks()
    if not only:
        return allc
    chosen = [c for c in allc if only == c.family or only == c.name
              or any(b == only or b.startswith(only + ".") for b in c.bound_ids)]
    if not chosen:
        valid = sorted({c.family for c in allc} | {b for c in allc for b in c.bound_ids}
                       | {c.name for c in allc})
        raise UnknownNameError("--only value", only, valid)
    return chosen


def run_suite(only: str | None = None, ctx: Context | None = None, progress=True,
              jobs: int = 1) -> list[CheckResult]:
    """Run the selected checks; a crashing check becomes an ``error`` result.

    ``progress``: True, a rich progress bar on stderr; a callable, called as
    ``progress("family: check")`` after each check (``boundlab verify`` passes the step of
    :func:`verify.cli.progress.counter`: a bar, plain lines or nothing); False, nothing.
    ``jobs``: worker processes running checks side by side (forked, so that bounds registered
    in this session are seen; numpy backend and local executor only, else one). Every check
    draws from its own explicit seeds, so the results are the same, in the same order, for any
    ``jobs``; only their ``seconds`` differ.
    """
    ctx = ctx or Context()
    if ctx.backend not in ("numpy", "torch"):
        raise DomainError("backend", ctx.backend, "one of numpy, torch")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise DomainError("jobs", jobs, "an integer >= 1")
    specs = select(only)
    done: list = [None] * len(specs)
    with _progress(progress, len(specs)) as step:
        for i, out in _execute(specs, ctx, _usable_jobs(jobs, ctx, len(specs))):
            done[i] = out
            step(f"{specs[i].family}: {specs[i].name}")
    return [r for out in done for r in out]


def _one(spec: CheckSpec, ctx: Context) -> list[CheckResult]:
    """The results of one check (a crash: one ``error`` result), each with its seconds."""
    t0 = time.perf_counter()
    try:
        out = list(spec.fn(ctx))
    except Exception as exc:  # noqa: BLE001 - recorded, the suite goes on
        out = [errored(spec.name, spec.bound_ids[0] if spec.bound_ids else "", exc)]
    dt = time.perf_counter() - t0
    for r in out:
        r.seconds = r.seconds or dt / max(len(out), 1)
        if r.check != spec.name:  # the name shown is the name --only accepts
            r.case = r.case or r.check
            r.check = spec.name
    return out


def _usable_jobs(jobs: int, ctx: Context, n: int) -> int:
    """``jobs``, or 1 where worker processes are not safe: torch (its thread pools do not
    survive a fork), a Dask executor (the checks' runs are distributed already), no fork."""
    import multiprocessing

    if ctx.backend != "numpy" or ctx.executor != "local" \
            or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(jobs, n))


#: the forked workers' checks and context (set before the pool forks; read in the children)
_WORK: tuple = ()


def _work(i: int):
    specs, ctx = _WORK
    return i, _one(specs[i], ctx)


def _execute(specs, ctx, jobs: int):
    """(index, results) of every check, in the order they finish (in order with one job)."""
    global _WORK
    if jobs == 1:
        for i, spec in enumerate(specs):
            yield i, _one(spec, ctx)
        return
    from .sweep.forked import imap_forked

    _WORK = (specs, ctx)
    try:
        yield from imap_forked(_work, range(len(specs)), jobs)
    finally:
        _WORK = ()


@contextlib.contextmanager
def _progress(progress, total: int):
    """The step called after each check: ``progress`` itself, a rich bar, or nothing."""
    if callable(progress):
        yield progress
    elif progress:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("checks", total=total)
            yield lambda what: bar.update(task, description=what, advance=1)
    else:
        yield lambda what: None
