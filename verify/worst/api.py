"""Worst-instance search: the problem of a bound's class that comes closest to violating it.

A fixed toy shows one instance of a bound's class; a bound that is wrong by a factor 10 can
still "hold" there. :func:`worst_instance` searches quadratic federated problems whose
**constants are held fixed** (L, mu, the heterogeneity Gamma or zeta, ||x_0 - x*|| = D, the
number of clients, the step size within the bound's preconditions) for the instance that
maximises measured LHS / RHS, where the LHS is measured on a real run (``toys.run``) and the
RHS is the bound evaluated at the fixed constants and at the quantities the bound measures a
posteriori (G from the gradients the run took, rho, Delta = f(x_0) - f*).

Search space (a point z in [-1, 1]^n, mapped to an instance by :meth:`Family.instance`)
---------------------------------------------------------------------------------------
* Hessians A_i = R_i diag(e_i) R_i^T with eigenvalues e_i in [mu, L] and rotations R_i
  (``exp`` of a skew-symmetric matrix); ``shared_hessian`` families (DKR: a dissimilarity zeta
  bounded *for all x* forces identical Hessians on quadratics) use one A for every client;
* client optima c_i (directions free), rescaled so that Gamma = F* - sum_i p_i F_i* (or zeta =
  max_i ||A (c_i - c_bar)||) equals the fixed value exactly;
* the start x_0 = x* + D u with the direction u free;
* the step size where the bound leaves it free (``eta in [eta_max / 20, eta_max]`` with eta_max
  from the precondition), else the theorem's step size.

Optimiser: scipy's ``differential_evolution`` (seeded, ``updating="deferred"``, about 60 % of
the budget) followed by Nelder-Mead from the best point (the rest). ``budget`` counts
**instance evaluations** (one run each), so a seed gives the same search bit for bit whatever
the machine. Limits: a heuristic search finds a lower bound on the worst ratio over the
family, not the supremum (compare the PEP bracket, an upper bound over a larger class); the
family is quadratic (where the DKR drift terms cannot bite: identical Hessians make the shadow
average exact gradient descent), small (default 3-4 clients, dimension 2) and the budget is
small in the main job.

A ratio > 1 is reported ``VIOLATED`` and, with ``save=``, the instance is written as JSON;
:func:`replay` re-runs it.

Example
-------
>>> import boundlab, verify
>>> w = verify.worst_instance(boundlab.get("drift.client_drift"), "quadratic", budget=40)
>>> w.verdict, 0.0 < w.ratio < 1.0, len(w.trace) == w.evaluations <= 40
('holds', True, True)
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import time
from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

from . import measures
from .family import Family

__all__ = ["Family", "WorstInstance", "worst_instance", "replay", "load", "supported",
           "DEFAULT_BUDGET"]

#: default number of instance evaluations
DEFAULT_BUDGET = 300


@dataclass
class WorstInstance:
    """Result of :func:`worst_instance`.

    ``ratio`` is the largest measured LHS / RHS found (> 1: the bound is VIOLATED there);
    ``lhs`` / ``rhs`` / ``params`` at that instance; ``instance`` its data (A, c, weights, x0 and
    the run's setting: enough to replay it); ``trace`` the ratio of every evaluation in order;
    ``best`` the running maximum.
    """

    bound_id: str
    family: str
    ratio: float
    lhs: float
    rhs: float
    params: dict
    instance: dict
    trace: np.ndarray
    evaluations: int
    seconds: float
    seed: int
    budget: int
    how: str
    path: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """``VIOLATED`` when the search drove LHS / RHS above 1, else ``holds``."""
        return "VIOLATED" if self.ratio > 1 + 1e-9 else "holds"

    @property
    def best(self) -> np.ndarray:
        return np.maximum.accumulate(np.where(np.isfinite(self.trace), self.trace, -np.inf))

    def to_dict(self) -> dict:
        """Plain JSON-ready data (what :meth:`save` writes)."""
        d = dataclasses.asdict(self)
        d["trace"] = [float(v) if math.isfinite(v) else None for v in self.trace]
        d["verdict"] = self.verdict
        return json.loads(json.dumps(d, default=_plain))

    def save(self, path) -> str:
        """Write the instance as sealed JSON (atomically; ``verify.worst.file`` says what the
        seal binds); returns the path. :func:`replay` reads it."""
        from boundlab.io import atomic_write_text, check_replaceable

        from . import file as instance_file

        path = pathlib.Path(path)
        check_replaceable(path, "save", "a worst instance")
        doc = instance_file.seal_document(self.to_dict())
        atomic_write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n", name="save",
                          owned=True)
        self.path = str(path)
        return self.path


def _plain(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return str(v)


def supported() -> list[str]:
    """Measured quantities (``bound.lhs``) the search can measure, e.g. ``avg_shadow_gap``.

    >>> "max_client_drift" in supported()
    True
    """
    return sorted(measures.MEASURES)


def _resolve(bound):
    import boundlab

    bound = boundlab.registry.resolve(bound)  # its own expression; a clashing id is refused
    if bound.kind != "upper":
        raise DomainError("bound", bound.id, "an upper bound (kind 'upper'); "
                          f"{bound.id} is {bound.kind!r}")
    if bound.lhs not in measures.MEASURES:
        raise UnknownNameError("measured quantity (bound.lhs) for the worst-instance search",
                               bound.lhs, supported())
    return bound


def worst_instance(bound, family: str = "quadratic", *, budget: int = DEFAULT_BUDGET,
                   seed: int = 0, setting: dict | None = None, save=None) -> WorstInstance:
    """Search ``family`` for the instance maximising measured LHS / RHS of ``bound``.

    Parameters
    ----------
    bound : Bound or str
        An upper bound whose ``lhs`` the search can measure (:func:`supported`): catalogue
        bounds and any user bound with the same ``lhs`` (e.g. a scaled copy).
    family : str
        ``"quadratic"`` (the only family so far).
    budget : int
        Number of instance evaluations (each one run), >= 10.
    seed : int
        Seed of the search (same seed, same result).
    setting : dict, optional
        Overrides of the fixed constants and run settings (``L``, ``mu``, ``value`` of Gamma or
        zeta, ``D``, ``n_clients``, ``dim``, ``tau`` / ``E``, ``rounds``, ``prox``, ``beta``...).
    save : path, optional
        Where to write the instance when the bound is VIOLATED (always written if given and
        ``save_always`` is in ``setting``).

    >>> import boundlab
    >>> worst_instance(boundlab.get("drift.plateau"), "cubic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: ...
    """
    bound = _resolve(bound)
    _check_search(family, budget, seed)
    measure = measures.MEASURES[bound.lhs]
    cfg = measure.config(bound, dict(setting or {}))
    ratios, best, seconds = _search(measure, bound, cfg, budget, seed)
    if "z" not in best:
        raise DomainError("bound", bound.id, "a bound the search can evaluate: no instance of "
                          "the family gave a finite LHS / RHS")
    w = WorstInstance(bound_id=bound.id, family=f"{family} ({cfg['describe']})",
                      ratio=float(best["ratio"]), lhs=float(best["lhs"]), rhs=float(best["rhs"]),
                      params={k: _num(v) for k, v in best["params"].items()},
                      instance=best["instance"], trace=np.asarray(ratios), evaluations=len(ratios),
                      seconds=seconds, seed=int(seed), budget=int(budget),
                      how=measure.how, extra={"setting": cfg["public"], "lhs": bound.lhs})
    if save is not None and (w.verdict == "VIOLATED" or (setting or {}).get("save_always")):
        w.save(save)
    return w


def _check_search(family, budget, seed) -> None:
    """The search's own arguments, checked in this order (the errors name each one)."""
    if family != "quadratic":
        raise UnknownNameError("family", family, ["quadratic"])
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 10:
        raise DomainError("budget", budget, "integer >= 10 (instance evaluations)")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DomainError("seed", seed, "integer >= 0")


def _search(measure, bound, cfg, budget, seed):
    """Differential evolution (about 60 % of ``budget``), then Nelder-Mead from its best point,
    maximising LHS / RHS; stops after ``budget`` evaluations. Returns (the ratio of every
    evaluation, the best evaluation's data with its point ``z``, the search's seconds)."""
    from scipy.optimize import differential_evolution, minimize

    n = cfg["family"].n_vars + cfg["extra_vars"]
    ratios: list[float] = []
    best: dict = {"ratio": -math.inf}
    t0 = time.perf_counter()

    class _Done(Exception):
        pass

    def objective(z):
        if len(ratios) >= budget:
            raise _Done
        out = measure.evaluate(bound, cfg, np.asarray(z, dtype=float))
        r = out["ratio"]
        ratios.append(r)
        if math.isfinite(r) and r > best["ratio"]:
            best.update(out, z=np.array(z, dtype=float))
        return -r if math.isfinite(r) else 1e300

    rng = np.random.default_rng(seed)
    de_budget = int(0.6 * budget)
    popsize = max(2, min(8, de_budget // (3 * n) or 2))
    maxiter = max(0, de_budget // (popsize * n) - 1)
    try:
        differential_evolution(objective, [(-1.0, 1.0)] * n, seed=rng, popsize=popsize,
                               maxiter=maxiter, polish=False, tol=0.0, init="latinhypercube",
                               updating="deferred", mutation=(0.5, 1.0), recombination=0.7)
        if "z" in best:
            minimize(objective, best["z"], method="Nelder-Mead",
                     options={"maxfev": budget - len(ratios), "xatol": 1e-6, "fatol": 0.0,
                              "initial_simplex": _simplex(best["z"], 0.2)})
    except _Done:
        pass
    return ratios, best, time.perf_counter() - t0


def _simplex(z, step):
    z = np.asarray(z, dtype=float)
    pts = [z]
    for i in range(z.size):
        y = z.copy()
        y[i] = y[i] - step if y[i] > 0 else y[i] + step
        pts.append(y)
    return np.array(pts)


def _num(v):
    a = np.asarray(v, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def load(path) -> dict:
    """The plain data of a saved instance, validated (types, shapes, size bounds) and its seal
    checked, or :class:`~boundlab.errors.IntegrityError` naming the file and the field."""
    from . import file as instance_file

    return instance_file.load(path)


def replay(path, bound=None) -> dict:
    """Re-run a saved instance; returns ``{"ratio", "lhs", "rhs", "params"}`` measured anew.

    ``bound``: the bound (default: the saved id looked up in the catalogue), of the same kind
    of left-hand side as the saved one; the instance, the run's setting and the fixed
    constants come from the file (:func:`load`). The constants are recomputed from the
    instance's matrices (``verify.worst.measures.check_constants``): a file whose L, mu, zeta,
    Gamma, D, ... are not those of its matrices is refused (IntegrityError naming the
    constant, the claimed and the recomputed value).
    """
    import boundlab

    data = load(path)
    bound = _resolve(bound if bound is not None else boundlab.get(data["bound_id"]))
    saved = measures.MEASURES.get(data["extra"]["lhs"])
    measure = measures.MEASURES[bound.lhs]
    if saved is None or type(saved) is not type(measure):
        raise DomainError("bound", bound.id, "a bound measured like the saved one "
                          f"({data['extra']['lhs']!r}); {bound.id} measures {bound.lhs!r}")
    return measure.replay(bound, data, str(path))
