"""The registry of the main job's checks: what a check receives (:class:`Context`), what is
registered (:class:`CheckSpec`), and :func:`register`. It sits below :mod:`verify.suite` and the
check modules, so the checks import it and the suite imports them, with no cycle.

Example
-------
>>> Context(quick=True).n_seeds(10, 3)
3
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Context", "CheckSpec", "register", "REGISTRY", "FAMILIES", "FALSIFY_BUDGET",
           "FALSIFY_BUDGET_QUICK", "FALLBACK_BUDGET", "FALLBACK_BUDGET_QUICK", "load_hand_written"]

FAMILIES = ("drift", "skew", "weight_error", "contraction")
#: evaluations of each generated falsify search in the main job (``--budget`` raises it):
#: the batched search, and the quadratic worst-instance fallback (one run per evaluation)
FALSIFY_BUDGET, FALSIFY_BUDGET_QUICK = 200, 40
FALLBACK_BUDGET, FALLBACK_BUDGET_QUICK = 40, 12


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

    def search_budget(self, batched: bool = True) -> int:
        """Instance evaluations of each generated ``verify.falsify`` search
        (:mod:`verify.checks.generic`): ``falsify_budget`` (``boundlab verify --budget N``;
        0 = no search), else :data:`FALSIFY_BUDGET` (``--quick``: :data:`FALSIFY_BUDGET_QUICK`)
        for the batched search, :data:`FALLBACK_BUDGET` (``--quick``:
        :data:`FALLBACK_BUDGET_QUICK`) for the quadratic fallback (``batched=False``).

        >>> Context(quick=True).search_budget(), Context(falsify_budget=500).search_budget()
        (40, 500)
        >>> Context().search_budget(batched=False)
        40
        """
        if self.falsify_budget is not None:
            return int(self.falsify_budget)
        if not batched:
            return FALLBACK_BUDGET_QUICK if self.quick else FALLBACK_BUDGET
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


REGISTRY: dict[str, CheckSpec] = {}

def register(family: str, *bound_ids: str):
    """Decorator registering a check function under ``family`` for ``bound_ids``.

    >>> @register("drift", "drift.plateau")
    ... def demo_check(ctx):
    ...     return []
    >>> "demo_check" in REGISTRY
    True
    >>> _ = REGISTRY.pop("demo_check")
    """
    if not (isinstance(family, str) and family.isidentifier()):  # any family name (issue 14)
        raise ValueError(f"family must be an identifier (e.g. one of {FAMILIES}); got {family!r}")

    def deco(fn):
        doc = (fn.__doc__ or "").strip().splitlines()
        REGISTRY[fn.__name__] = CheckSpec(fn.__name__, family, tuple(bound_ids), fn,
                                           doc[0] if doc else "")
        return fn

    return deco


#: hand-written check modules beside the families' own (each imports its family's module,
#: never the other way round: no import cycle)
EXTRA_MODULES = ("weight_error_paths", "weight_error_drift", "drift_pairs", "skew_error_free",
                 "contraction_local", "contraction_nonconvex", "contraction_complexity",
                 "weight_error_descent", "contraction_constants", "weight_error_cutoff",
                 "skew_constants", "skew_softmax", "weight_error_reweighted",
                 "drift_properties")


def load_hand_written() -> None:
    """Import the hand-written check modules (``verify.checks.<family>`` and
    :data:`EXTRA_MODULES`) once; each registers its checks with :func:`register`."""
    for name in (*FAMILIES, *EXTRA_MODULES):
        try:
            importlib.import_module(f"verify.checks.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"verify.checks.{name}":
                raise
