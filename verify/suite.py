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


def run_suite(only: str | None = None, ctx: Context | None = None, progress=True
              ) -> list[CheckResult]:
    """Run the selected checks; a crashing check becomes an ``error`` result.

    ``progress``: True, a rich progress bar on stderr; a callable, called as
    ``progress("family: check")`` after each check (``boundlab verify`` passes the step of
    :func:`verify.cli.progress.counter`: a bar, plain lines or nothing); False, nothing.
    """
    ctx = ctx or Context()
    if ctx.backend not in ("numpy", "torch"):
        raise DomainError("backend", ctx.backend, "one of numpy, torch")
    specs = select(only)
    results: list[CheckResult] = []

    def one(spec: CheckSpec) -> None:
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
        results.extend(out)

    if callable(progress):
        for spec in specs:
            one(spec)
            progress(f"{spec.family}: {spec.name}")
    elif progress:
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("checks", total=len(specs))
            for spec in specs:
                bar.update(task, description=f"{spec.family}: {spec.name}")
                one(spec)
                bar.advance(task)
    else:
        for spec in specs:
            one(spec)
    return results
