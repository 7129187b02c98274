""":func:`verify.falsify` for iteration complexities: lhs ``rounds_to_eps`` (seed 003, §5).

``contraction.t_eps_fedprox`` / ``contraction.t_eps_beta`` state a number of rounds T_eps(eps,
...) and claim: **every** integer T >= T_eps, run with the theorem's own step recipe at that T
(FedProx: gamma = 1/(2 (L + alpha) sqrt(T E)), Theorem 2; beta: 1/(2 L sqrt(T E)), Theorem 4)
and E local steps, gives E||grad f(w_hat_T)||^2 <= eps. ``rounds_to_eps`` is not a value of one
run, but the claim is falsified by one: a run at T whose measured quantity (the theorem's lhs,
:data:`verify.measures.PAPER_LHS`: the virtual averages) exceeds some eps with T_eps(eps) <= T.

A run does not depend on eps, so the route judges every eps at once: at the run's T the claim
covers exactly the eps with T_eps(eps) <= T, and it is violated iff the measured value m exceeds
the smallest of them,

    eps_min(T) = inf { eps > 0 : T_eps(eps, ...) <= T }     (then T >= T_eps(eps_min), i.e.
                                                              T = ceil(T_eps) at that eps).

So the route derives the upper bound "m <= eps_min(T)" (:func:`derived_bound`) and runs it
through the planned search of :func:`verify.falsify` (:func:`~verify.falsify.plan.make_plan`,
:func:`~verify.falsify.search.search`; no search of its own): the plan's horizons T, local
steps E, the algorithm's hyper-parameter grid, the step pinned to the recipe by the theorem's
preconditions, and the theorem's other parameters as the plan gives them for the theorem itself
(Delta = F(x0) - F*, G = max ||g_i|| of the run, sigma = 0: exact gradients, S = sum p_i^2).
eps_min is closed-form when T_eps is (a positive multiple of) a max of pieces each a power of
eps, A eps^p (every catalogue form and its typo-mutants but two swaps): a piece with p < 0
gives eps >= (A/T)^(1/|p|), so eps_min = Max of those (0 when none); a piece with p = 0 gives
the precondition A <= T; an increasing piece g (p > 0, or any g with dg/deps >= 0) the
precondition g(eps_min) <= T (sympy, no evaluation of text). Other shapes are not applicable,
with the reason. With ``eps=`` in the setting the claim at that eps is judged instead: m <= eps
with the precondition T >= T_eps(eps).

The worst instance replays from its ``data`` alone (:func:`measure_instance`: the plan is
rebuilt from the saved algorithm, class and setting, at the saved Spec, hyper-parameter and
step, and the run redone on ``toys.run``) and is certified by
:func:`verify.falsify.certify.certify` on the derived bound (float64-only, with its reason,
where no mpmath replay of the virtual averages exists).

>>> import boundlab
>>> d = derived_bound(boundlab.get("contraction.t_eps_beta"), "beta")
>>> d.lhs, sorted(d.params)[:3], [pc.text for pc in d.preconditions][:1]
('avg_grad_norm2', ['Delta', 'E', 'G'], ['gamma <= 1/(2*L*sqrt(T*E))'])
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import sympy as sp

from boundlab.errors import DomainError

from ._plan_pins import power_law

__all__ = ["FAMILY", "LHS", "KINDS", "THEOREMS", "derived_bound", "eps_min", "falsify_route",
           "measure_instance", "certify"]

#: the instance family of a result (saved files name it)
FAMILY = "contraction.rounds_to_eps"
#: the left-hand sides judged here, and the statement kinds (:mod:`verify.falsify.routes`)
LHS = ("rounds_to_eps",)
KINDS = ("upper",)
#: the theorem whose step recipe and left-hand side an algorithm's T_eps is built from
THEOREMS = {"fedprox": "contraction.fedprox_nc", "beta": "contraction.beta_nc"}
_HOW = ("algorithm", "function_class")
#: :func:`verify.falsify` passes its algorithm= and function_class= in the setting
TAKES_HOW = True


# ----------------------------------------------------------------------------- the statement
def _pieces(expr, eps) -> list:
    """The pieces g_i of T_eps = Max(g_i) (a positive eps-free factor distributed over them)."""
    if isinstance(expr, sp.Max):
        return list(expr.args)
    if isinstance(expr, sp.Mul):
        maxes = [f for f in expr.args if isinstance(f, sp.Max)]
        rest = sp.Mul(*[f for f in expr.args if not isinstance(f, sp.Max)])
        if len(maxes) == 1 and eps not in rest.free_symbols and rest.is_positive:
            return [rest * g for g in maxes[0].args]
    return [expr]


def eps_min(expr, eps, T):
    """``(eps_min, preconditions)``: the smallest eps with ``expr`` (T_eps) <= T, and the
    conditions under which that set is not empty (module docstring); NotApplicable for a piece
    that is neither a power of eps nor increasing in it.

    >>> from boundlab.symbols import sym
    >>> e, T, a, b = sym("eps"), sym("T"), sym("a"), sym("b")
    >>> low = eps_min(sp.Max(4 * a**2 / e**2, 2 * b / e), e, T)[0]   # max(2a/sqrt T, 2b/T)
    >>> low.subs({a: 3, b: 1, T: 4}), low.subs({a: 1, b: 8, T: 4})
    (3, 4)
    """
    from .plan import NotApplicable

    lo, const, up = [], [], []
    for g in _pieces(expr, eps):
        ap = power_law(g, eps)
        if ap is not None and ap[1] < 0:
            lo.append((ap[0] / T) ** (-1 / ap[1]))
        elif ap is not None and ap[1] == 0:
            const.append(ap[0])
        elif ap is not None or sp.diff(g, eps).is_nonnegative:
            up.append(g)
        else:
            raise NotApplicable(f"T_eps = {sp.sstr(expr)}: its piece {sp.sstr(g)} is neither a "
                                "power of eps nor increasing in eps, so the smallest eps it "
                                "promises at a run's T has no closed form")
    low = sp.Max(*lo) if lo else sp.Integer(0)
    from boundlab import Precondition

    pcs = [Precondition(T, ">=", A, f"T >= {sp.sstr(A)}", "a piece of T_eps free of eps")
           for A in const]
    for g in up:
        at = g.subs(eps, low)
        if at.has(sp.zoo, sp.nan, sp.oo):
            raise NotApplicable(f"T_eps's piece {sp.sstr(g)} is not finite at eps = "
                                f"{sp.sstr(low)}")
        pcs.append(Precondition(at, "<=", T, f"{sp.sstr(g)} <= T at eps = eps_min",
                                "an increasing piece of T_eps"))
    return low, pcs


def derived_bound(bound, algorithm: str, fixed_eps: bool = False):
    """The planned-run upper bound of ``bound`` (lhs ``rounds_to_eps``) for ``algorithm``:
    the theorem's lhs <= eps_min(T) (or <= eps with T >= T_eps(eps) when ``fixed_eps``), at the
    theorem's step recipe; same id (it is judged under the bound's own registration)."""
    import boundlab
    from boundlab import Bound, Precondition

    from .plan import NotApplicable

    if algorithm not in THEOREMS:
        raise NotApplicable(f"algorithm {algorithm!r}: the step recipe of an iteration "
                            f"complexity is known for {', '.join(THEOREMS)} (seed 003)")
    thm = boundlab.get(THEOREMS[algorithm])
    allp = {**thm.params, **thm.extra_params, **bound.params, **bound.extra_params}
    if "eps" not in bound.params:
        raise NotApplicable(f"{bound.id}: T_eps does not name eps")
    eps, T = allp["eps"].symbol, allp["T"].symbol
    if "T" in bound.params or any("eps" in pc.names for pc in bound.preconditions):
        raise NotApplicable(f"{bound.id}: T_eps names T or a precondition names eps")
    if fixed_eps:
        expr, pcs = eps, [Precondition(T, ">=", bound.expr, "T >= T_eps(eps)", "the claim")]
    else:
        expr, pcs = eps_min(bound.expr, eps, T)
    pcs += [pc for pc in thm.preconditions if "gamma" in pc.names]  # the step recipe
    pcs += list(bound.preconditions)
    names = {s.name for s in expr.free_symbols}
    used = set().union(*[pc.names for pc in pcs]) - names
    how = f"eps_min(T) = {sp.sstr(expr)}" if not fixed_eps else "eps given"
    return Bound(id=bound.id, source=f"{bound.source}; judged on runs at T (complexity_route)",
                 expr=expr, params={n: allp[n] for n in sorted(names)},
                 extra_params={n: allp[n] for n in sorted(used)}, kind="upper", lhs=thm.lhs,
                 description=f"{bound.id} on a run of T rounds with {thm.id}'s step: {how}",
                 preconditions=tuple(pcs))


# ----------------------------------------------------------------------------- the search
def _how(bound, setting) -> tuple:
    """``(algorithm, function class)``: the setting's (a Bound object that is not registered),
    else the registration of the bound or of the original a mutant id names."""
    import boundlab

    from .mutants import parse_id
    from .plan import NotApplicable

    given = {k: setting.get(k) for k in _HOW}
    for bid in (bound.id, parse_id(bound.id)[0]):
        try:
            meta = boundlab.registry.meta(bid)
        except Exception:  # noqa: BLE001 - not registered: the next name, or the setting
            continue
        given = {k: given[k] or meta.get(k) for k in _HOW}
        break
    algo = given["algorithm"]
    if algo not in THEOREMS:
        raise NotApplicable(f"{bound.id}: algorithm {algo!r}; an iteration complexity is "
                            f"judged for {', '.join(THEOREMS)} (pass algorithm=)")
    return algo, given["function_class"] or "smooth-nonconvex"


def _plan(bound, algo, fclass, setting):
    from .plan import make_plan

    derived = derived_bound(bound, algo, "eps" in setting)
    return make_plan(derived, dict(setting), algo, fclass)


def falsify_route(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``: the
    planned search of :func:`derived_bound` (module docstring)."""
    from ._resources import check_search
    from .certify import check_real
    from .families import families_for
    from .plan import NotApplicable
    from .search import search

    Falsification, Instance = types
    algo, fclass = _how(bound, setting)
    s = {k: v for k, v in setting.items() if k not in _HOW}
    plan = _plan(bound, algo, fclass, s)
    fams = [f for f in families_for(plan.function_class, tilt=plan.spec.zeta is not None)
            if plan.accepts(f)]
    check_search(plan, fams, budget)
    check_real(plan)
    best, n, per = search(plan, fams, int(budget), int(seed))
    if best is None:
        raise NotApplicable(f"no run searched ({n} instances) lies where T >= T_eps(eps) for "
                            f"some eps: {plan.bound.description}")
    at = best.plan or plan
    algo_name, hyper = at.toys_call()
    run = {"algorithm": algo_name, **{k: v for k, v in hyper.items() if np.ndim(v) == 0},
           "rounds": int(best.T), "local_steps": int(best.tau), "lr": float(best.eta)}
    data = {"search_family": best.family, "z": [float(v) for v in best.z],
            "spec": _plain(dataclasses.asdict(at.spec)),
            "plan": {"hyper": dict(at.hyper_grid[0]), "step_fixed": at.step_fixed},
            "algorithm": algo, "function_class": fclass, "setting": dict(s),
            "rounds": int(best.T), "local_steps": int(best.tau), "lr": float(best.eta)}
    r, lhs, rhs = measure_instance(bound, data)
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    from ..measures import paper_name

    notes = [f"rounds_to_eps judged on runs: at a run's T the claim covers every eps with "
             f"T_eps(eps) <= T; measured {paper_name(plan.lhs, algo)} (the lhs of "
             f"{THEOREMS[algo]}) vs "
             f"{plan.bound.description.split(': ', 1)[-1]}", *plan.notes]
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r, **per}, notes=notes,
                         exact_reason="an iteration complexity: no PEP model")


def _plain(v):
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# ----------------------------------------------------------------------------- the replay
def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_data(data) -> dict:
    """``data`` read back from a file, validated (DomainError naming the field)."""
    from .families import family_names

    if not isinstance(data, dict):
        raise DomainError("instance data", type(data).__name__, "an object")
    if data.get("search_family") not in family_names():
        raise DomainError("instance search_family", data.get("search_family"),
                          f"one of {', '.join(family_names())}")
    for k in ("rounds", "local_steps"):
        v = data.get(k)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 10 ** 4:
            raise DomainError(f"instance {k}", v, "an integer in 1..10000")
    if not _number(data.get("lr")) or data["lr"] <= 0:
        raise DomainError("instance lr", data.get("lr"), "a finite number > 0")
    z = data.get("z")
    if not isinstance(z, list) or len(z) > 10 ** 6 or not all(_number(v) for v in z):
        raise DomainError("instance z", "...", "a list of at most 10^6 finite numbers")
    for k in ("algorithm", "function_class"):
        if not isinstance(data.get(k), str):
            raise DomainError(f"instance {k}", data.get(k), "a name")
    s, at = data.get("setting"), data.get("plan")
    if not isinstance(s, dict) or not all(isinstance(k, str) and _number(v)
                                          for k, v in s.items()):
        raise DomainError("instance setting", s, "an object of names and finite numbers")
    if not isinstance(at, dict) or not isinstance(at.get("hyper"), dict) or not all(
            isinstance(k, str) and _number(v) for k, v in at["hyper"].items()) or not (
            at.get("step_fixed") is None or _number(at["step_fixed"])):
        raise DomainError("instance plan", at, "{hyper: {name: number}, step_fixed: number}")
    spec = data.get("spec")
    if not isinstance(spec, dict) or not (isinstance(spec.get("n_clients"), int) and
                                          1 <= spec["n_clients"] <= 1000) or not (
            isinstance(spec.get("dim"), int) and 1 <= spec["dim"] <= 100):
        raise DomainError("instance spec", spec, "the family's Spec (n_clients in 1..1000, "
                          "dim in 1..100)")
    return data


def _replay_plan(bound, data):
    """The plan the instance was found with, at its Spec, hyper-parameter point and step."""
    from .families import Spec

    plan = _plan(bound, data["algorithm"], data["function_class"], data["setting"])
    try:
        spec = Spec(**{k: (tuple(v) if isinstance(v, list) else v)
                       for k, v in data["spec"].items()})
    except (TypeError, ValueError) as exc:
        raise DomainError("instance spec", data["spec"], f"a valid Spec ({exc})") from exc
    at = data["plan"]
    return dataclasses.replace(plan, spec=spec, scales=((1.0, 1.0),),
                               hyper_grid=(dict(at["hyper"]),), step_fixed=at["step_fixed"])


def _planned(bound, data):
    """The planned instance behind a saved one: what :mod:`verify.falsify.certify` reads."""
    from types import SimpleNamespace

    from .families import Spec, get_family

    d = _check_data(data)
    plan = _replay_plan(bound, d)
    z = np.asarray(d["z"], dtype=float)

    def problem():
        return get_family(d["search_family"]).build(z, Spec(**dataclasses.asdict(plan.spec)))

    run = {"rounds": d["rounds"], "local_steps": d["local_steps"], "lr": d["lr"]}
    return SimpleNamespace(plan=plan, run=run, family=d["search_family"], problem=problem,
                           data={"z": d["z"]}, bound_id=bound.id)


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs)`` of one saved instance: its run redone on ``toys.run`` (float64)
    and judged against :func:`derived_bound`."""
    from .search import run_instance

    p = _planned(bound, data)
    prob, x0 = p.problem()
    return run_instance(p.plan, prob, x0, p.run["rounds"], p.run["local_steps"], p.run["lr"],
                        z=p.data["z"])


def certify(inst, float_ratio: float):
    """:func:`verify.falsify.certify.certify` of the planned run behind ``inst`` (the derived
    bound; float64-only with the reason where no mpmath replay exists)."""
    from .certify import FLOAT64, Certificate, _float_error
    from .certify import certify as certify_planned

    try:
        p = _planned(inst.judged_bound(), inst.data)
    except (DomainError, ArithmeticError, ValueError) as exc:
        return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), inst.lhs, inst.rhs,
                           f"no replay plan: {exc}")
    p.lhs, p.rhs = inst.lhs, inst.rhs
    cert = certify_planned(p, float_ratio)
    if cert.ratio == math.inf:  # eps_min = 0: every eps > 0 is promised at this T
        return dataclasses.replace(cert, reason="eps_min = 0 at the run's T (T_eps(eps) <= T for "
                                   f"every eps > 0) and the measured value is > 0 "
                                   f"({cert.reason})")
    return cert
