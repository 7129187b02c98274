"""Solving one PEP: a vectorized cvxpy wrapper for PEPit, the solver chain, the result record.

PEPit builds the performance-estimation problem (Gram matrix ``G`` of the leaf points, vector
``F`` of the leaf function values, one scalar constraint per interpolation inequality). Its own
cvxpy wrapper sends every scalar constraint to cvxpy separately, and cvxpy's canonicalization
then dominates the run time (about 70 % at Gram size 22). :class:`VectorizedCvxpyWrapper` stacks
them into one sparse inequality block and one equality block, which is the same SDP (same
constraints, same order of the dual values handed back to PEPit) solved 2-3 times faster.

Success is judged by the duality gap and the primal/dual feasibility errors that PEPit's own
``check_feasibility`` reports, not by the status string: Clarabel says ``optimal_inaccurate``
from Gram size ~22 while its gap is 1e-8.

Example
-------
>>> from verify.tightness._solve import solver_chain
>>> solver_chain(None)[0]
'CLARABEL'
"""

from __future__ import annotations

import contextvars
import importlib.util
import math
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from ._wrapper import TOL, TOL_PROOF, _make_wrapper_class

__all__ = [
    "TOL",
    "TOL_PROOF",
    "WRAPPER_NAME",
    "PEPRecord",
    "solve_pep",
    "solve_with_pepit",
    "solver_chain",
]

WRAPPER_NAME = "boundlab_vectorized"

_SOLVER_OPTIONS = {
    "CLARABEL": {},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
    "MOSEK": {},
}
#: the settings of a retry (an inverted or inaccurate bracket, see
#: :func:`verify.tightness.bracket`): Clarabel with 100x tighter gap / feasibility targets and
#: more iterations; SCS (tried first in a retry, as a second opinion) at its usual 1e-9
_TIGHT_OPTIONS = {
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                 "tol_ktratio": 1e-8, "max_iter": 400},
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
    "MOSEK": {},
}
#: set (by ``bracket``'s retry) to solve with :data:`_TIGHT_OPTIONS`
TIGHT: contextvars.ContextVar = contextvars.ContextVar("boundlab_pep_tight", default=False)


def solver_options(name: str) -> dict:
    """Options passed to solver ``name`` (the tighter set while :data:`TIGHT` is set).

    >>> solver_options("SCS")["eps_abs"]
    1e-09
    """
    table = _TIGHT_OPTIONS if TIGHT.get() else _SOLVER_OPTIONS
    return dict(table.get(name, {}))


@dataclass(frozen=True)
class PEPRecord:
    """Worst case of one method over one function class, with how it was obtained.

    Attributes
    ----------
    method : str
        Model name, e.g. ``"fedavg_round"``.
    value : float or None
        Worst-case upper bound: the dual value of the PEP (``inf`` if unbounded, ``None`` if the
        class is empty or the solve failed).
    lower : float or None
        Worst-case lower bound: the primal value (a concrete instance); ``None`` where the value
        comes from chained one-round PEPs, which give no instance.
    theoretical : float or None
        Closed-form worst case where one exists (gradient descent, FedAvg at zeta = 0).
    solver, status : str
        Solver used (the last one tried) and its status string.
    gap : float or None
        Absolute duality gap ``value - lower`` (for chains: the largest gap of the chain).
    seconds : float
        Wall time of the solve(s) (of the original solve when read from the cache).
    cached : bool
        True when every solve behind the record came from the disk cache.
    ok : bool
        Gap and feasibility errors within tolerance (:data:`TOL`), or a certified empty class.
    gram_size : int
        Size of the Gram matrix (largest one of a chain).
    params : dict
        The parameters as given (after validation).
    relaxed : tuple of str
        Assumptions matched only in a weaker form (empty when the class is matched exactly).
    errors : dict
        Feasibility errors: ``primal_psd``, ``primal_constraints``, ``dual_psd``, ``dual_sign``,
        ``proof`` (PEPit's proof-reconstruction residual), on the normalized problem.
    n_solves : int
        Number of SDPs (for chains: of chained rounds, a revisited one reused) behind it.
    detail : dict
        Model-specific extras (e.g. which PEP gave the upper and which the lower bound).

    Example
    -------
    >>> r = PEPRecord(method="demo", value=1.0, lower=1.0)
    >>> r.to_dict()["value"]
    1.0
    """

    method: str
    value: float | None
    lower: float | None = None
    theoretical: float | None = None
    solver: str = ""
    status: str = ""
    gap: float | None = None
    seconds: float = 0.0
    cached: bool = False
    ok: bool = True
    gram_size: int = 0
    params: dict = field(default_factory=dict)
    relaxed: tuple = ()
    errors: dict = field(default_factory=dict)
    n_solves: int = 1
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Plain JSON-ready data."""
        d = asdict(self)
        d["relaxed"] = list(self.relaxed)
        return d


def solver_chain(solver: str | None) -> list[str]:
    """Solvers tried in order: the one asked for, else Clarabel, MOSEK (only if installed), SCS.

    >>> solver_chain("scs")
    ['SCS']
    """
    if solver is not None:
        return [str(solver).upper()]
    chain = ["CLARABEL"]
    if importlib.util.find_spec("mosek") is not None:
        chain.append("MOSEK")
    chain.append("SCS")
    return chain


def solve_with_pepit(build, solver: str = "CLARABEL") -> float:
    """Solve through PEPit's public ``PEP.solve`` (with the vectorized wrapper registered);
    returns PEPit's own dual value. Used to cross-check :func:`solve_pep`'s direct path.

    >>> from PEPit.functions import SmoothStronglyConvexFunction
    >>> def build(pb):
    ...     f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=0.1)
    ...     xs = f.stationary_point(); x0 = pb.set_initial_point()
    ...     pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    ...     pb.set_performance_metric((x0 - 0.5 * f.gradient(x0) - xs) ** 2)
    >>> round(solve_with_pepit(build), 6)
    0.9025
    """
    from PEPit import PEP
    from PEPit.wrappers import WRAPPERS

    WRAPPERS.setdefault(WRAPPER_NAME, _make_wrapper_class())
    pb = PEP()
    build(pb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(pb.solve(wrapper=WRAPPER_NAME, verbose=0, safe_mode=False, solver=solver,
                              **_SOLVER_OPTIONS.get(solver, {})))


def _certificate(w) -> tuple[float, float, dict]:
    """Primal value, dual value and feasibility errors of a solved wrapper, vectorized.

    With ``z = (vec G, F)``, each constraint ``a_j . z + c_j <= 0`` (or ``== 0``) with
    multiplier ``lambda_j``, the objective ``o . z`` and ``R`` the dual matrix of ``G >> 0``:
    if ``o + vec R - sum_j lambda_j a_j = 0`` then every feasible ``z`` has
    ``o . z <= -sum_j lambda_j c_j`` -- the dual value (PEPit's "upper bound (dual)").
    Errors: ``primal_psd`` = -min eig G, ``primal_constraints`` = max violation, ``dual_psd`` =
    -min eig R, ``dual_sign`` = -min inequality multiplier, ``proof`` = sum of |leftover| of the
    identity above (PEPit's "proof reconstituted up to an error of").
    """
    rows = np.array([r for _, r in w._rows])
    is_eq = np.array([e for e, _ in w._rows])
    duals, _ = w._recover_dual_values()
    lam = np.array([float(v) for v in duals[1:]])
    g, f = np.asarray(w.G.value), np.asarray(w.F.value)
    z = np.concatenate([((g + g.T) / 2).ravel(order="F"), f])
    vals = rows[:, :-1] @ z + rows[:, -1]
    viol = np.where(is_eq, np.abs(vals), vals)
    res = np.asarray(w._psd.dual_value)
    obj = w._objective_row
    leftover = obj[:-1].copy()
    leftover[: res.size] += ((res + res.T) / 2).ravel(order="F")
    leftover -= lam @ rows[:, :-1]
    primal = float(obj[:-1] @ z + obj[-1])
    dual = float(obj[-1] - lam @ rows[:, -1])
    errors = {
        "primal_psd": max(0.0, -float(np.linalg.eigvalsh(g)[0])),
        "primal_constraints": max(0.0, float(viol.max(initial=0.0))),
        "dual_psd": max(0.0, -float(np.linalg.eigvalsh(res)[0])),
        "dual_sign": max(0.0, -float(lam[~is_eq].min(initial=0.0))),
        "proof": float(np.abs(leftover).sum()),
    }
    return primal, dual, errors


def _solve_direct(pb, name):
    """Prepare PEPit's constraints and solve them with the vectorized wrapper.

    This is ``PEP.solve`` without its dict-based post-processing (``check_feasibility`` and
    the evaluation of every point), which cost ~35 % of a one-round solve: the certificate is
    read from the wrapper by :func:`_certificate` instead.
    """
    wrapper = _make_wrapper_class()(verbose=0)
    pb._prepare_constraints(verbose=0)
    pb.wrapper, pb.wrapper_name = wrapper, WRAPPER_NAME
    wrapper.set_main_variables()
    if any(m.activated for m in pb._list_of_prepared_psd):  # pragma: no cover - unused
        raise NotImplementedError("LMI constraints are not supported")
    for c in pb._list_of_prepared_constraints:
        if c.activated:
            wrapper.send_constraint_to_solver(c)
    wrapper.generate_problem(pb.objective)
    wrapper._objective_row = wrapper._row(pb.objective)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status, _, value = wrapper.solve(solver=name, **solver_options(name))
    return wrapper, str(status), value


def solve_pep(build, *, solver: str | None = None, tol: float = TOL,
              tol_proof: float = TOL_PROOF, scale_floor: float = 1.0,
              use: str = "both") -> dict:
    """Build a PEP with ``build(pb)`` and solve it, trying the solvers of :func:`solver_chain`.

    ``build`` receives a fresh ``PEPit.PEP`` and declares everything (functions, points,
    constraints, metric). Returns a plain dict: ``value`` (dual), ``lower`` (primal), ``gap``,
    ``status``, ``solver``, ``seconds``, ``ok``, ``gram_size``, ``errors``, ``attempts``, and,
    when a solution came back, ``certificate`` (the primal point and the dual multipliers, from
    which :mod:`verify.tightness.certificate` recomputes the bracket of a cached entry).
    ``tol`` / ``tol_proof``: acceptance tolerances (see :data:`TOL`, :data:`TOL_PROOF`),
    relative to ``max(|value|, |lower|, scale_floor)``. ``use``: which side of the solution the
    caller relies on -- ``"both"``; ``"upper"`` (only the dual certificate: dual feasibility and
    proof residual are judged, the gap up to ``10 tol``); ``"lower"`` (only the primal instance:
    primal feasibility judged, the gap up to ``10 tol``).
    A status ``infeasible`` (empty class) comes back with ``value = lower = None``, ``ok = True``;
    ``unbounded`` with ``value = inf``.

    >>> from PEPit.functions import SmoothStronglyConvexFunction
    >>> def build(pb):
    ...     f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=0.1)
    ...     xs = f.stationary_point(); x0 = pb.set_initial_point()
    ...     pb.set_initial_condition((x0 - xs) ** 2 <= 1)
    ...     pb.set_performance_metric((x0 - 0.5 * f.gradient(x0) - xs) ** 2)
    >>> out = solve_pep(build)
    >>> round(out["value"], 6), out["ok"]
    (0.9025, True)
    """
    from PEPit import PEP
    from PEPit.point import Point

    from .certificate import judge, pack

    attempts, out = [], None
    # a retry under TIGHT asks for a second opinion: SCS (eps 1e-9) first, then Clarabel at
    # 1e-10 gap / feasibility targets; its answer, ok or not, is the retry's answer
    chain = solver_chain(solver) if solver is not None or not TIGHT.get() \
        else ["SCS", "CLARABEL"]
    for name in chain:
        t0 = time.perf_counter()
        pb = PEP()
        build(pb)
        wrapper, value = None, None
        try:
            wrapper, status, value = _solve_direct(pb, name)
        except Exception as exc:  # noqa: BLE001 - any solver failure: record it, try the next
            status = f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
        gram = int(Point.counter)
        if status == "infeasible":
            out = {"value": None, "lower": None, "gap": None, "ok": True, "errors": {}}
        elif status == "unbounded":
            out = {"value": math.inf, "lower": math.inf, "gap": None, "ok": True, "errors": {}}
        elif value is not None and wrapper is not None and wrapper.G.value is not None:
            lower, value, errors = _certificate(wrapper)
            gap = value - lower
            ok = judge(lower, value, errors, tol, tol_proof, scale_floor, use)
            out = {"value": value, "lower": lower, "gap": gap, "ok": ok, "errors": errors,
                   "certificate": pack(wrapper)}  # what a cache loader re-checks
        else:
            out = {"value": None, "lower": None, "gap": None, "ok": False, "errors": {}}
        seconds = time.perf_counter() - t0
        out.update(status=status, solver=name, seconds=seconds, gram_size=gram)
        attempts.append({"solver": name, "status": status, "ok": out["ok"],
                         "seconds": round(seconds, 4)})
        if out["ok"]:
            break
    out["attempts"] = attempts
    out["seconds"] = float(sum(a["seconds"] for a in attempts))
    return out
