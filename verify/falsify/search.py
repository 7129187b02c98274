"""The batched population search of :func:`verify.falsify` over the families of a plan.

For every family and every (T, tau, hyper-parameter) of the plan's grids, a population of
search points z in [-1, 1]^n (the family's variables, plus one for the step size when it is
free) is run as one population on the toys engine (:func:`toys.run_many` through
:mod:`verify.falsify.population`, the algorithm's own pieces of :mod:`toys.algorithms`);
families without a batched form, and algorithms with a piece that has no population axis, run
``toys.run`` per instance; Gamma is measured on each instance where the bound names it.
Generation 0 is uniform plus the corners (all -1, all +1: the extreme curvatures,
thresholds and the largest step); later generations perturb the best points found so far with a
shrinking Gaussian step. The budget counts instance evaluations and is split evenly over the
groups (at least :data:`MIN_GROUP` each; with a small budget the grid points are visited in a
seeded random order, every family at each); the same seed gives the same search bit for bit.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .. import measures
from ..measures import paper_name
from . import population
from .judge import judge

__all__ = ["Candidate", "search", "run_group", "MIN_GROUP", "EXECUTORS"]

MIN_GROUP = 8
EXECUTORS = ("local", "dask")
_SIGMAS = (0.5, 0.25, 0.1, 0.04, 0.015)


@dataclass
class Candidate:
    """The best point of one search group."""

    family: str
    z: np.ndarray
    T: int
    tau: int
    eta: float
    ratio: float
    lhs: float
    rhs: float
    plan: object = None  # the plan at the scale this point was found at


def search(plan, families, budget: int, seed: int, executor: str = "local", scheduler=None,
           device=None):
    """``(best Candidate or None, evaluations, {family: best ratio})``.

    The groups are (scale, T, tau, hyper-parameter) of the plan's grids (:attr:`Plan.scales`
    first at scale 1) times the families, visited in a seeded order that puts every family at
    each point. Each group draws from its own generator (``seed`` and the group's index) and
    its share of the budget is fixed before any group runs, so the groups are independent:
    ``executor="dask"`` runs them as one task each (:func:`verify.sweep.executor.run_dask`, a
    local cluster or ``scheduler``) and gives the local result bit for bit. ``device``: None
    runs the populations on numpy, a torch device name on torch there
    (:func:`verify.falsify.population.run`; the other paths run on numpy).
    """
    rng = np.random.default_rng(seed)
    grid = [(T, tau, h) for T in plan.T_grid for tau in plan.tau_grid for h in plan.hyper_grid]
    grid = [grid[i] for i in rng.permutation(len(grid))]  # a small budget still sees every family
    scales = list(plan.scales)
    # pass j visits every grid point once, the scale turning with the point: a small budget
    # sees every (T, tau) and several scales; the whole product is covered after all passes
    points = [(scales[(i + j) % len(scales)], g) for j in range(len(scales))
              for i, g in enumerate(grid)]
    groups = [(_at(plan, sc, h), f, T, tau) for sc, (T, tau, h) in points for f in families]
    share = max(MIN_GROUP, budget // max(1, len(groups)))
    tasks, spent = [], 0
    for i, (sub, fam, T, tau) in enumerate(groups):
        if spent >= budget:
            break
        n = min(share, budget - spent)
        tasks.append(((sub, fam, T, tau, n, seed, i, device), i))
        spent += n
    results = _dispatch(tasks, executor, scheduler)
    best, per_family = None, {}
    for i in range(len(tasks)):  # in group order: ties go to the earlier group, as locally
        cand = results[i]
        if cand is not None:
            per_family[cand.family] = max(per_family.get(cand.family, -math.inf), cand.ratio)
            if best is None or cand.ratio > best.ratio:
                best = cand
    return best, spent, per_family


def run_group(task):
    """One search group (a task of :func:`search`): its best Candidate or None."""
    sub, fam, T, tau, n, seed, i, device = task[0]
    return _group(sub, fam, T, tau, n, np.random.default_rng([int(seed), int(i)]), device)[0]


def _dispatch(tasks, executor, scheduler) -> dict:
    if executor == "local":
        return {t[1]: run_group(t) for t in tasks}
    from ..sweep.executor import run_dask

    out: dict = {}
    run_dask(tasks, out.__setitem__, run=run_group, scheduler=scheduler)
    return out


def _at(plan, scale, hyper):
    """The plan at one (scale, hyper-parameter) point; the hyper-parameter is the one of the
    scale-1 grid, scaled with the plan (a searched alpha is in units of L)."""
    i = plan.hyper_grid.index(hyper)
    sub = plan.at_scale(*scale)
    return sub.with_hyper(sub.hyper_grid[i])


def _group(plan, fam, T, tau, n, rng, device=None):
    lo, hi = plan.eta_range(T, tau)
    free = plan.step_name is not None
    dim = fam.n_vars(plan.spec) + _extra(plan) + (1 if free else 0)
    gens = max(1, min(len(_SIGMAS) + 1, n // MIN_GROUP))
    size = max(1, n // gens)
    best, seen, used = None, [], 0
    for g in range(gens):
        m = size if g < gens - 1 else n - used
        if m <= 0:
            break
        if g == 0 or not seen:  # no finite point yet: keep sampling uniformly
            Z = rng.uniform(-1, 1, (m, dim))
            Z[:1] = 1.0
            if m > 2:
                Z[1] = -1.0
                Z[2, -1] = 1.0  # the largest step with a random instance
        else:
            top = sorted(seen, key=lambda t: -t[0])[:4]
            parents = np.array([t[1] for t in top])
            Z = np.clip(parents[rng.integers(0, len(parents), m)]
                        + _SIGMAS[g - 1] * rng.standard_normal((m, dim)), -1, 1)
        eta = hi * (hi / lo) ** ((Z[:, -1] - 1) / 2) if free else np.full(m, lo)
        r, lhs, rhs = _evaluate(plan, fam, Z[:, :dim - 1] if free else Z, T, tau, eta, device)
        used += m
        seen.extend((float(r[i]), Z[i]) for i in range(m) if np.isfinite(r[i]) or r[i] > 0)
        i = int(np.argmax(r))
        if r[i] > -math.inf and (best is None or r[i] > best.ratio):
            best = Candidate(fam.name, Z[i, :dim - 1] if free else Z[i].copy(), T, tau,
                             float(eta[i]), float(r[i]), float(lhs[i]), float(rhs[i]), plan)
    return best, used


def _extra(plan) -> int:
    """Search variables an algorithm appends to the family's (FedAU: p_n and eta's place)."""
    if plan.algorithm != "fedau":
        return 0
    from .fedau_paths import extra_vars

    return extra_vars(plan.spec.n_clients)


def _evaluate(plan, fam, Z, T, tau, eta, device=None):
    if plan.algorithm == "fedau":  # every participation path, in expectation
        from .fedau_paths import evaluate

        return evaluate(plan, fam, Z, T, tau, eta)
    try:
        stacked = fam.stack(Z, plan.spec)
        gamma = None if stacked is None else _gamma(plan, stacked)
    except (ArithmeticError, ValueError, RuntimeError, np.linalg.LinAlgError):
        stacked = None  # e.g. one optimum not solved: judge instance by instance (-inf there)
    name = paper_name(plan.lhs, plan.algorithm)  # BC's: the virtual averages
    if stacked is None or not population.batched(plan):  # a user's piece without a
        return _evaluate_each(plan, fam, Z, T, tau, eta)  # population axis: one by one
    q = population.run(plan, stacked, eta, T, tau, plan.masks(Z, T), virtual=_stepwise(name),
                       device=device)
    per = _per_instance(plan, q, eta, gamma)
    r, lhs, rhs, _ = judge(plan.bound, q, plan.scalars(T, tau), per, lhs=name)
    return r, lhs, rhs


def _stepwise(name: str) -> bool:
    """Whether the measure of ``name`` reads a ``record="step"`` run (BC's virtual averages,
    or a registered quantity that needs them)."""
    return measures.get(name).record == "step"


def _gamma(plan, prob):
    """Li et al.'s Gamma = F* - sum_i p_i F_i* (P,) of a stacked population or (1,) of one
    problem, when the plan measures it (else None: the client minima are not solved)."""
    if "Gamma" not in plan.measured:
        return None
    F_star_i = np.atleast_2d(np.asarray(prob.F_star_i, dtype=float))
    gamma = np.atleast_1d(np.asarray(prob.F_star, dtype=float)) - F_star_i @ np.asarray(prob.p)
    return np.maximum(gamma, 0.0)  # >= 0 exactly (F* >= sum_i p_i F_i*): -1e-17 is rounding


def _per_instance(plan, q, eta, gamma=None):
    with warnings.catch_warnings():  # all-NaN rows: no participant ever, or diverged (-inf)
        warnings.simplefilter("ignore", RuntimeWarning)
        per = {"Delta": q["gap"][:, 0], "F0": q["gap"][:, 0],
               "G": np.sqrt(np.nanmax(q["g2_max"], axis=1))}
        if "pi" in plan.measured or "Pi" in plan.measured:  # BM's extremes of kappa = alpha/p:
            per["pi"] = np.minimum(np.nanmin(q["kappa_min"], axis=1), 1.0)  # pi <= 1 <= Pi
            per["Pi"] = np.maximum(np.nanmax(q["kappa_max"], axis=1), 1.0)  # (rounding)
    if plan.step_name is not None:
        per[plan.step_name] = eta
    if gamma is not None:
        per["Gamma"] = gamma
    return per


def run_instance(plan, prob, x0, T, tau, eta, z=None):
    """One instance through the real engine: ``(ratio, lhs, rhs)`` measured on ``toys.run``
    with the plan's algorithm and hyper-parameters, its step schedule and the participation
    masks of the search point ``z`` (needed when the plan has a participation pattern); the
    left-hand side measured as the search does (:func:`verify.measures.paper_name`:
    BC's virtual averages from a ``record="step"`` run)."""
    import toys

    if plan.algorithm == "fedau":
        from .fedau_paths import replay

        return replay(plan, prob, x0, T, tau, eta, z)
    algo, hyper = plan.toys_call()
    lr = plan.steps(np.array([float(eta)]), T, tau)[0]
    part = plan.masks(np.asarray(z, dtype=float)[None], T)[0] if plan.participation else "full"
    name = paper_name(plan.lhs, plan.algorithm)
    rec = {"record": "step", **population.extra_steps(name)} if _stepwise(name) else {}
    tr = toys.run(prob, algo, rounds=T, seed=0, lr=lr, local_steps=int(tau), x0=x0,
                  participation=part, **hyper, **rec)
    q = population.quantities(tr, prob.p)
    gamma = _gamma(plan, prob)
    r, lhs, rhs, _ = judge(plan.bound, q, plan.scalars(T, tau),
                           _per_instance(plan, q, np.array([eta]), gamma), lhs=name)
    return float(r[0]), float(lhs[0]), float(rhs[0])


def _evaluate_each(plan, fam, Z, T, tau, eta):
    out = np.full((3, Z.shape[0]), -math.inf)
    for i in range(Z.shape[0]):
        try:
            prob, x0 = fam.build(Z[i], plan.spec)
            out[:, i] = run_instance(plan, prob, x0, T, tau, eta[i], z=Z[i])
        except Exception:  # noqa: BLE001 - an instance without an optimum scores -inf
            continue
    return out[0], out[1], out[2]
