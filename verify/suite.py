"""The check registry and the suite runner behind ``boundlab verify``.

A check is a function ``fn(ctx) -> list[CheckResult]`` registered with :func:`register` under a
family and the bound ids it judges. Every catalogue bound also gets a check generated from its
metadata (:mod:`verify.checks.generic`: a fixed instance and a ``verify.falsify`` search).
The runner selects checks (``--only FAMILY|ID|CHECK``), runs them with a progress bar, and
records a crash as an ``error`` result so the suite goes on.

Example
-------
>>> from verify.suite import checks
>>> sorted({c.family for c in checks()}) == ['contraction', 'drift', 'skew', 'weight_error']
True
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from boundlab.errors import DomainError, UnknownNameError

from .compare import CheckResult, errored

__all__ = ["Context", "CheckSpec", "register", "checks", "select", "run_suite", "FAMILIES",
           "FALSIFY_BUDGET", "FALSIFY_BUDGET_QUICK"]

FAMILIES = ("drift", "skew", "weight_error", "contraction")
#: evaluations of each generated falsify search in the main job (``--budget`` raises it)
FALSIFY_BUDGET = 40
FALSIFY_BUDGET_QUICK = 12


@dataclass(frozen=True)
class Context:
    """What every check receives.

    ``quick`` shrinks runs (fewer seeds and rounds) for tests and a first look; ``backend`` and
    ``device`` select the simulation backend; ``seeds`` overrides the number of seeds;
    ``executor`` / ``scheduler`` are passed to :func:`verify.sweep` for the checks' seeds and
    settings ("dask" with the address of a running scheduler).

    >>> Context(quick=True).n_seeds(10, 3)
    3
    """

    quick: bool = False
    backend: str = "numpy"
    device: str | None = None
    seeds: int | None = None
    tightness: bool = True
    worst_budget: int | None = None
    executor: str = "local"
    scheduler: str | None = None
    falsify_budget: int | None = None

    def search_budget(self) -> int:
        """Instance evaluations of each generated ``verify.falsify`` search
        (:mod:`verify.checks.generic`): ``falsify_budget`` (``boundlab verify --budget N``;
        0 = no search), else :data:`FALSIFY_BUDGET` (``--quick``: :data:`FALSIFY_BUDGET_QUICK`).

        >>> Context(quick=True).search_budget(), Context(falsify_budget=500).search_budget()
        (12, 500)
        """
        if self.falsify_budget is not None:
            return int(self.falsify_budget)
        return FALSIFY_BUDGET_QUICK if self.quick else FALSIFY_BUDGET

    def budget(self, full: int, quick: int) -> int:
        """Instance evaluations of a worst-instance search (``worst_budget`` overrides)."""
        if self.worst_budget is not None:
            return self.worst_budget
        return quick if self.quick else full

    def n_seeds(self, full: int, quick: int) -> int:
        if self.seeds is not None:
            return self.seeds
        return quick if self.quick else full

    def pick(self, full, quick):
        """``quick`` in quick mode, else ``full``."""
        return quick if self.quick else full


@dataclass(frozen=True)
class CheckSpec:
    """A registered check."""

    name: str
    family: str
    bound_ids: tuple[str, ...]
    fn: Callable = field(repr=False)
    doc: str = ""


_REGISTRY: dict[str, CheckSpec] = {}
_LOADED = False


def register(family: str, *bound_ids: str):
    """Decorator registering a check function under ``family`` for ``bound_ids``.

    >>> @register("drift", "drift.plateau")
    ... def demo_check(ctx):
    ...     return []
    >>> "demo_check" in {c.name for c in checks()}
    True
    >>> _ = _REGISTRY.pop("demo_check")
    """
    if not (isinstance(family, str) and family.isidentifier()):  # any family name (issue 14)
        raise ValueError(f"family must be an identifier (e.g. one of {FAMILIES}); got {family!r}")

    def deco(fn):
        doc = (fn.__doc__ or "").strip().splitlines()
        _REGISTRY[fn.__name__] = CheckSpec(fn.__name__, family, tuple(bound_ids), fn,
                                           doc[0] if doc else "")
        return fn

    return deco


def _load() -> None:
    global _LOADED
    if not _LOADED:
        for fam in FAMILIES:
            try:
                importlib.import_module(f"verify.checks.{fam}")
            except ModuleNotFoundError as exc:
                if exc.name != f"verify.checks.{fam}":
                    raise
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


def run_suite(only: str | None = None, ctx: Context | None = None, progress: bool = True
              ) -> list[CheckResult]:
    """Run the selected checks; a crashing check becomes an ``error`` result.

    With ``progress`` a rich progress bar is shown on stderr.
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

    if progress:
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
