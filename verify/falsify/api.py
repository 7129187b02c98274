"""``verify.falsify``: try to break a bound, and return a replayable verdict.

:func:`falsify` reads what to run from the bound's registration (:mod:`verify.falsify.plan`),
searches every family of its function class with batched runs (:mod:`verify.falsify.search`),
solves the exact worst case where a PEP model exists (:mod:`verify.falsify.pep`) and turns a
PEP worst case above the bound into a concrete function (:mod:`verify.falsify.interpolate`).
Every ratio it reports as VIOLATED was measured by a run of the real engine (``toys.run``) on a
concrete problem: :meth:`Instance.replay` runs it again. Catalogue bounds are planned from their
metadata (:func:`boundlab.registry.meta`) like registered ones; those the batched search cannot
run are searched by :func:`verify.worst_instance` (quadratics) where it measures their ``lhs``.

Example
-------
>>> import boundlab, verify
>>> from boundlab import Bound, Precondition, make_params, sym
>>> L, D, T = sym("L"), sym("D"), sym("T")
>>> wrong = Bound(id="mine.gd_last", source="my note", expr=L * D**2 / (8 * T),
...               params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
>>> _ = boundlab.register(wrong, algorithm="gd", function_class="smooth-convex")
>>> res = verify.falsify("mine.gd_last", budget=200, eta=1.0)
>>> res.verdict, res.worst_ratio > 1, res.instance.replay() > 1
('VIOLATED', True, True)
>>> _ = boundlab.unregister("mine.gd_last")
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from boundlab.errors import DomainError, UnknownNameError

from .exact import TOL, exact_worst_case
from .plan import NotApplicable, make_plan
from .result import ORIENTATION, Falsification, Instance

__all__ = ["falsify", "Falsification", "Instance", "TOL", "DEFAULT_BUDGET", "ORIENTATION"]

DEFAULT_BUDGET = 2000
_SETTING = ("L", "mu", "D", "n_clients", "M", "dim", "T", "tau", "E", "K", "I", "eta", "lr",
            "gamma", "rounds", "zeta", "Gamma", "value", "prox", "beta",
            "temperature")  # the last four: algorithms' hyper-parameters
_INTEGERS = ("n_clients", "M", "dim", "T", "tau", "E", "K", "I", "rounds")
_POSITIVE = ("L", "D", "eta", "lr", "gamma", "temperature", "prox")
_NONNEGATIVE = ("mu", "zeta", "Gamma", "value")


def _algorithm_hyper(bound, algorithm) -> set:
    """The hyper-parameter names of the toys algorithm the bound is searched on (a setting
    may give them: ``server_lr=`` for FedAdam ...); empty for falsify's own algorithms."""
    import boundlab
    import toys

    from .toys_map import ALGORITHMS

    try:
        algorithm = boundlab.registry.meta(bound.id).get("algorithm") or algorithm
    except Exception:  # noqa: BLE001 - not registered: the algorithm= argument
        pass
    if not isinstance(algorithm, str) or algorithm in ALGORITHMS \
            or algorithm not in toys.algorithms.names():
        return set()
    return set(toys.algorithms.hyper_names(toys.algorithms.get(algorithm)))


def _check_inputs(bound, budget, seed, families, setting, algorithm=None):
    import boundlab

    bound = boundlab.registry.resolve(bound)  # its own expression; a clashing id is refused
    if not hasattr(bound, "lhs") or not hasattr(bound, "evaluate"):
        raise DomainError("bound", bound, "a boundlab.Bound or a bound id")
    for name, v, lo in (("budget", budget, 10), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise DomainError(name, v, f"integer >= {lo}")
    if families is not None:
        from .families import family_names

        families = [families] if isinstance(families, str) else list(families)
        if not families:
            raise DomainError("families", "[]", "one or more search family names "
                              f"({', '.join(family_names())}; None: every family of the class)")
        for f in families:
            if f not in family_names():
                raise UnknownNameError("search family", f, family_names())
    names = set(bound.params) | set(bound.extra_params) | _algorithm_hyper(bound, algorithm)
    for k, v in setting.items():
        if k not in _SETTING and k not in names:
            raise UnknownNameError("falsify setting", k, sorted({*_SETTING, *names}))
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(v)):
            raise DomainError(k, v, "a finite number")
        if k in _INTEGERS and (float(v) != int(v) or v < 1):
            raise DomainError(k, v, "an integer >= 1")
        dom = _setting_domain(bound, k)
        if dom is not None and bool(dom.bad_mask(np.asarray(float(v)))):
            raise DomainError(k, v, dom.describe())
    return bound, families


def _setting_domain(bound, name):
    """The domain of a setting value: the bound's own for its parameters, else positive for
    the constants and steps of :data:`_POSITIVE`, non-negative for :data:`_NONNEGATIVE`."""
    from boundlab.domains import NONNEGATIVE, POSITIVE

    param = bound.params.get(name) or bound.extra_params.get(name)
    if param is not None:
        return param.domain
    return POSITIVE if name in _POSITIVE else NONNEGATIVE if name in _NONNEGATIVE else None


def _check_executor(executor, scheduler) -> None:
    from .search import EXECUTORS

    if executor not in EXECUTORS:
        raise DomainError("executor", executor, " or ".join(map(repr, EXECUTORS)))
    if scheduler is not None:
        if executor != "dask":
            raise DomainError("scheduler", scheduler, "only with executor='dask'")
        from ..sweep.executor import probe_scheduler

        probe_scheduler(scheduler)  # refused here (exit 2), as sweep and verify refuse it


def _check_device(device) -> None:
    """None (numpy), or a torch device this machine has: "cpu", "cuda", "cuda:N"."""
    if device is None:
        return
    import re

    if not isinstance(device, str) or not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise DomainError("device", device, "None (numpy), 'cpu', 'cuda' or 'cuda:N' (torch)")
    try:
        import torch
    except ImportError:
        raise DomainError("device", device, "None (numpy): torch is not installed") from None
    if device.startswith("cuda"):
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if n == 0 or int((device + ":0").split(":")[1]) >= n:
            raise DomainError("device", device, "None (numpy) or 'cpu': CUDA device "
                              f"{device!r} is not available here ({n} CUDA devices)")


def falsify(bound, *, budget: int = DEFAULT_BUDGET, seed: int = 0, families=None,
            exact: bool = True, save=None, executor: str = "local", scheduler=None,
            device=None, **setting) -> Falsification:
    """Try to break ``bound``: search its class for the instance of largest measured / bound.

    Parameters
    ----------
    bound : Bound or str
        A registered bound (``boundlab.register(b, algorithm=..., function_class=...)``:
        they decide what runs, see :mod:`verify.falsify.plan`) or a catalogue bound.
    budget : int
        Instance evaluations of the search (>= 10), split over families and grids.
    seed : int
        Seed of the search (same seed, same result).
    families : list of str, optional
        Restrict the search to these families (default: every family of the class).
    exact : bool
        Also solve the exact worst case (PEP) where a model exists.
    executor : {"local", "dask"}
        Where the search's groups run: here, or one Dask task each (a local cluster, or the
        running scheduler at ``scheduler``, ``tcp://HOST:PORT``). The result is the same bit
        for bit. The catalogue fallback (the quadratic worst-instance search) runs here.
    device : str, optional
        Run the search's populations with torch on this device (``"cpu"``, ``"cuda"``,
        ``"cuda:0"``; default None: numpy). The quantities are judged in float64 numpy as
        before, and the worst instance is replayed on ``toys.run`` (numpy) either way; families
        without a batched form and FedAU's paths run on numpy. Needs torch (and CUDA for a
        ``cuda`` device): refused by name otherwise.
    save : path, optional
        Write the result (with the instance) as JSON there.
    **setting
        Constants and run settings: ``L``, ``mu``, ``D``, ``n_clients``, ``dim``, ``T``, the
        local steps, the step size, and values of the bound's other parameters; for a Bound
        object that is not registered, ``algorithm=`` and ``function_class=`` (what
        ``boundlab.register`` would take).

    Returns
    -------
    Falsification
        ``verdict`` (``VIOLATED``, ``holds``, ``not-applicable`` with ``reason``, ``error``),
        ``worst_ratio`` (``orientation``: measured / bound), ``instance`` (replayable),
        ``exact`` (the PEP bracket divided by the bound: ``lower``, ``upper``; or None with
        ``exact_reason``), ``evaluations``, ``seconds``. ``VIOLATED`` is only ever reported
        for an instance whose replay on ``toys.run`` measured a ratio above ``1 + tolerance``.
    """
    t0 = time.perf_counter()
    how = {k: setting.pop(k, None) for k in ("algorithm", "function_class", "participation")}
    for k, v in how.items():
        if v is not None and not isinstance(v, str):
            raise DomainError(k, v, "a name (str)")
    if setting.get("symbols") is not None:  # a Bound object's symbols (boundlab.register's)
        how["symbols"] = setting.pop("symbols")
    setting.pop("symbols", None)
    bound, families = _check_inputs(bound, budget, seed, families, setting,
                                    how["algorithm"])
    _check_executor(executor, scheduler)
    _check_device(device)
    import boundlab

    from ._plan_setting import check_declared
    from .routes import route_for

    check_declared(bound, how["algorithm"], how["function_class"])
    route = route_for(bound)
    try:  # a left-hand side that is not a planned run: its route (verify.falsify.routes)
        plan = None if route is not None else make_plan(bound, setting, **how)
    except NotApplicable as exc:
        if boundlab.registry.is_registered(bound.id):
            res = Falsification(bound.id, "not-applicable", reason=str(exc))
        else:  # a catalogue bound: the quadratic worst-instance search of its paper's setting
            res = _catalogue(bound, budget, seed, setting, why=str(exc))
    else:
        res = _routed(route, bound, budget, seed, setting, how) if plan is None else \
            _registered(plan, budget, seed, families, exact, (executor, scheduler, device))
    res.seconds = time.perf_counter() - t0
    res.setting = {**how, **setting}  # what replays it (Falsification.load)
    if save is not None:
        res.save(save)
    return res


def _registered(plan, budget, seed, names, exact, where=("local", None)) -> Falsification:
    from .families import families_for
    from .search import search

    fams = [f for f in families_for(plan.function_class, tilt=plan.spec.zeta is not None)
            if (names is None or f.name in names) and plan.accepts(f)]
    res = Falsification(plan.bound.id, "holds", notes=list(plan.notes))
    if not fams:
        return dataclasses.replace(res, verdict="not-applicable",
                                   reason=f"no family of {names} is in {plan.function_class}")
    from ._resources import check_search
    from .certify import check_real

    check_search(plan, fams, budget)  # before any instance: memory and time (DomainError)
    check_real(plan)  # a bound not real at a point the search evaluates: DomainError
    try:
        best, res.evaluations, res.per_family = search(plan, fams, budget, seed, *where)
        if best is not None:
            at = best.plan or plan  # the scale (and hyper-parameter) it was found at
            algo, hyper = at.toys_call()
            run = {"algorithm": algo, **{k: v for k, v in hyper.items() if np.ndim(v) == 0},
                   "rounds": best.T, "local_steps": best.tau, "lr": best.eta,
                   **at.run_info(best.T, best.tau)}
            data = {"z": best.z.tolist(), "spec": dataclasses.asdict(at.spec),
                    "plan": {"hyper": dict(at.hyper_grid[0]), "step_fixed": at.step_fixed},
                    "L": at.spec.L, "mu": at.spec.mu, "D": at.spec.D}
            res.instance = Instance(plan.bound.id, best.family, data, run, best.ratio,
                                    best.lhs, best.rhs, at)
        exact_worst_case(plan, res, exact, Instance)
    except NotApplicable as exc:  # e.g. no step size satisfies the preconditions
        return Falsification(plan.bound.id, "not-applicable", reason=str(exc),
                             evaluations=res.evaluations)
    except (ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError) as exc:
        return dataclasses.replace(res, verdict="error", reason=f"{type(exc).__name__}: {exc}")
    return _conclude(res)


def _conclude(res) -> Falsification:
    """The verdict of the worst instance: its replay on the real engine, certified in high
    precision where it can be (:func:`verify.falsify.certify.certify` and ``decide``)."""
    from .certify import certify, decide

    if res.instance is None:
        res.verdict, res.reason = "error", "no instance gave a finite measured / bound"
        return res
    from .routes import route_for_family

    inst = res.instance  # the verdict rests on the real engine only: a replayed ratio
    route = route_for_family(inst.family)
    if route is not None:  # exact or high precision, by the route (verify.falsify.routes)
        cert = route.certify(inst, inst.replay())
    else:
        cert = certify(inst, inst.ratio if inst.family == "pep-interpolation" else inst.replay())
    res.verdict, why = decide(cert)
    res.worst_ratio = math.nan if res.verdict == "diverged" else cert.ratio
    res.certificate, res.certified_error = cert.kind, cert.error
    if why:
        res.reason = why
    return res


def _routed(route, bound, budget, seed, setting, how=None) -> Falsification:
    """A bound whose left-hand side is not a planned run (FedAU's weight errors: exact
    expectations over (p, K, T)): the search of its route (:mod:`verify.falsify.routes`).
    A route with ``TAKES_HOW`` also gets the call's algorithm and function class (a Bound
    object that is not registered names them only there)."""
    if getattr(route, "TAKES_HOW", False):
        setting = {**setting, **{k: v for k, v in (how or {}).items()
                                 if k in ("algorithm", "function_class") and v is not None}}
    try:
        res = route.falsify_route(bound, budget, seed, setting, (Falsification, Instance))
    except NotApplicable as exc:
        return Falsification(bound.id, "not-applicable", reason=str(exc))
    return _conclude(res)


def _catalogue(bound, budget, seed, setting, why="") -> Falsification:
    """A catalogue bound the batched search cannot run (``why``): :func:`verify.worst_instance`
    (quadratics with the paper's constants held fixed) where it measures the ``lhs``."""
    from boundlab.errors import BoundlabError
    from verify.worst import supported, worst_instance

    if bound.kind != "upper" or bound.lhs not in supported():
        return Falsification(bound.id, "not-applicable",
                             reason=f"{why}; the quadratic worst-instance search measures lhs in "
                                    f"{supported()}, not {bound.lhs!r} ({bound.kind}): judged on "
                                    "its fixed instance only")
    from ._resources import check_catalogue

    check_catalogue(setting, budget)
    try:
        w = worst_instance(bound, budget=int(budget), seed=int(seed), setting=dict(setting))
    except DomainError as exc:
        return Falsification(bound.id, "error", reason=str(exc))
    except (BoundlabError, RuntimeError) as exc:  # scipy wraps the objective's exception
        cause = exc if isinstance(exc, BoundlabError) else (exc.__cause__ or exc.__context__)
        if not isinstance(cause, BoundlabError):
            raise
        return Falsification(bound.id, "not-applicable", reason="the quadratic worst-instance "
                             f"search cannot evaluate the bound: {cause}")
    inst = Instance(bound.id, "worst.quadratic", w.to_dict(), dict(w.extra.get("setting", {})),
                    w.ratio, w.lhs, w.rhs, bound=bound)
    res = Falsification(bound.id, "holds", evaluations=w.evaluations, instance=inst,
                        per_family={"quadratic": w.ratio}, exact_reason="catalogue bounds: "
                        "see boundlab tightness", notes=[w.how])
    return _conclude(res)
