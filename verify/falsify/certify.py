"""Certified verdicts of :func:`verify.falsify`: the worst instance replayed in high precision.

A float64 replay repeats the rounding of the search: on a tight true bound (gradient descent
on a smooth strongly convex function at its exact rate) the measured gap is a difference of
numbers of order 1 and its ratio to the bound lands a few ulps above 1. So the verdict rests
on :func:`certify`: the instance's run is redone in mpmath (:mod:`verify.falsify._mpreplay`) at
:data:`DPS` and at ``2 DPS`` digits on the built problem's own float64 arrays, the bound is
evaluated in mpmath at the same parameters, and the ratio's **certified error** is

* the two precisions' disagreement (times 4, plus ``10**-(DPS - 10)``), and
* the bound's sensitivity to the constants the family holds by construction (L, mu, D, zeta)
  moved by :data:`CLASS_RTOL` relative: a built instance lies in its class only up to the
  rounding of its construction (eigenvalues scaled in float64).

:func:`decide` then says ``VIOLATED`` only for ``ratio - 1 > error``; ``|ratio - 1| <= error``
is a tight bound (``holds``, the reason says so). Where no high-precision replay exists (other
algorithms, partial participation beyond GD / FedAvg / FedProx, measured pi / Pi, PEP
interpolations, the catalogue quadratics) the certificate is ``"float64-only"`` and the old
rule stays: ``VIOLATED`` above ``1 + TOL``. A run beyond :data:`DIVERGED` (or not finite) is
``diverged``, never judged.

>>> decide(Certificate("mpmath-50", 1.0 + 1e-15, 1e-12, 1.0, 1.0))[0]
'holds'
>>> decide(Certificate("mpmath-50", 1.5, 1e-12, 1.5, 1.0))[0]
'VIOLATED'
>>> decide(Certificate("float64-only", DIVERGED_RATIO, math.inf, math.nan, math.nan))[0]
'diverged'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: a float64-only ratio above 1 + TOL is VIOLATED (floating point and PEP solver accuracy;
#: also the tolerance of the exact worst case, :mod:`verify.falsify.exact`)
TOL = 1e-6

__all__ = ["Certificate", "certify", "decide", "check_real", "diverged_rows", "DPS",
           "DIVERGED", "DIVERGED_RATIO", "CLASS_RTOL", "FLOAT64"]

#: working precision (decimal digits) of the certified replay; checked against 2 DPS
DPS = 50
#: a run whose gap or distance exceeds this (or is not finite) diverged: never judged
DIVERGED = 1e100
#: the judge's ratio for a diverged instance: below every judged ratio, above -inf (undefined)
DIVERGED_RATIO = -1e300
#: relative accuracy to which a built instance holds its class's constants (L, mu, D, zeta)
CLASS_RTOL = 2.0 ** -40
#: the certificate of a verdict resting on the float64 replay alone
FLOAT64 = "float64-only"
_CONSTANTS = ("L", "mu", "D", "D0", "R", "zeta")
_LHS = ("final_gap", "gap_t", "dist_next", "avg_shadow_gap", "avg_grad_norm2", "grad_norm_sq",
        "max_client_drift", "client_discrepancy", "local_divergence", "round_avg_gap")


@dataclass(frozen=True)
class Certificate:
    """How a worst ratio was obtained: ``kind`` (``"mpmath-50"`` or ``"float64-only"``), the
    ratio, its certified error (absolute, on the ratio; inf where none is certified), the
    measured and bound values of the worst round, and why a replay was float64 only."""

    kind: str
    ratio: float
    error: float
    lhs: float
    rhs: float
    reason: str = ""


def diverged_rows(q) -> np.ndarray:
    """(P,) which runs of the quantities ``q`` diverged (gap or distance beyond
    :data:`DIVERGED` or not finite in some round)."""
    with np.errstate(invalid="ignore"):
        bad = np.zeros(np.shape(q["gap"])[0], dtype=bool)
        for k in ("gap", "dist2"):
            v = np.asarray(q[k], dtype=float)
            bad |= np.any(~np.isfinite(v) | (np.abs(v) > DIVERGED), axis=1)
    return bad


def certify(inst, float_ratio: float) -> Certificate:
    """The certified ratio of ``inst`` (a :class:`verify.falsify.Instance`) whose float64 replay
    measured ``float_ratio``: a high-precision replay where one exists, else float64 only."""
    if float_ratio <= DIVERGED_RATIO:
        return Certificate(FLOAT64, DIVERGED_RATIO, math.inf, math.nan, math.nan,
                           "the run diverged (beyond 1e100 or not finite)")
    why = _unsupported(inst)
    if why:
        return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), inst.lhs, inst.rhs,
                           why)
    from . import _mpreplay

    try:
        return _high_precision(inst)
    except (_mpreplay.Unsupported, ArithmeticError, ValueError, TypeError) as exc:
        return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), inst.lhs, inst.rhs,
                           f"no high-precision replay: {exc}")


def _float_error(ratio) -> float:

    return TOL * max(1.0, abs(ratio)) if math.isfinite(ratio) else math.inf


def _unsupported(inst) -> str:
    from ..measures import paper_name
    from ._mpreplay import ALGORITHMS, PARTIAL

    plan = inst.plan
    if plan is None or inst.family in ("worst.quadratic", "pep-interpolation"):
        return f"instance family {inst.family}: replayed in float64 only"
    if plan.algorithm not in ALGORITHMS:
        return f"algorithm {plan.algorithm}: replayed in float64 only"
    if plan.participation is not None and (plan.algorithm not in PARTIAL or
                                           "z" not in (inst.data or {})):
        return (f"algorithm {plan.algorithm} under participation {plan.participation}: "
                "replayed in float64 only")
    if plan.lhs not in _LHS or paper_name(plan.lhs, plan.algorithm) != plan.lhs:
        return f"lhs {plan.lhs}: measured in float64 only"
    if set(plan.measured) - {"Gamma"}:  # Gamma: re-solved by the replay
        return f"{', '.join(plan.measured)} measured in float64 only"
    return ""


def _high_precision(inst) -> Certificate:
    import mpmath

    from ._mpreplay import replay

    plan, run = inst.plan, inst.run
    T, tau, eta = int(run["rounds"]), int(run["local_steps"]), float(run["lr"])
    steps = np.broadcast_to(np.asarray(plan.steps(np.array([eta]), T, tau)[0], dtype=float),
                            (T * tau,)) if plan.schedule is None else \
        np.asarray(plan.steps(np.array([eta]), T, tau)[0], dtype=float)
    prob, x0 = inst.problem()
    masks = None if plan.participation is None else \
        plan.masks(np.asarray(inst.data["z"], dtype=float)[None], T)[0]
    found = []
    for dps in (DPS, 2 * DPS):
        with mpmath.workdps(dps):
            q = replay(plan, prob, x0, T, tau, steps, masks)
            found.append(_mp_judge(plan, q, T, tau, eta))
    (r1, _, _, _), (r2, lhs, rhs, vals) = found
    if r2 == -mpmath.inf:
        return Certificate(f"mpmath-{DPS}", -math.inf, 0.0, math.nan, math.nan,
                           "no round of the replay lies inside the bound's preconditions")
    if mpmath.isinf(r2):
        return Certificate(f"mpmath-{DPS}", math.inf, 0.0, float(lhs), float(rhs))
    with mpmath.workdps(2 * DPS):
        err = 4 * abs(r2 - r1) + mpmath.mpf(10) ** (-(DPS - 10)) + \
            abs(r2) * _sensitivity(plan.bound, vals, rhs)
    return Certificate(f"mpmath-{DPS}", float(r2), float(mpmath.mpf(err) * (1 + 2 ** -40)),
                       float(lhs), float(rhs))


def _measure(lhs, q, T):
    """``(values, per-round parameters)`` of ``lhs`` from the mpmath quantities: the registry's
    measure (:func:`verify.measures.measure`) on object arrays of ``mpf`` (one instance)."""
    from ..measures import measure

    arrays = {k: np.array([list(v)], dtype=object) for k, v in q.items()
              if isinstance(v, list)}
    values, per = measure(lhs, arrays)
    return list(values[0]), {k: list(v[0]) for k, v in per.items()}


def _mp_judge(plan, q, T, tau, eta):
    """``(ratio, lhs, rhs, parameters)`` of the worst round in mpmath (-inf: no round inside
    the preconditions, judged as the search judges them)."""
    import mpmath

    from ..measures import get

    bound = plan.bound
    values, rounds = _measure(plan.lhs, q, T)
    signed = get(plan.lhs).signed
    g2 = [v for v in q["g2_max"] if not mpmath.isnan(v)]  # nanmax, as the search's G
    per = {"Delta": q["gap"][0], "F0": q["gap"][0], "G": mpmath.sqrt(max(g2)) if g2 else
           mpmath.nan}
    if "Gamma" in q:
        per["Gamma"] = q["Gamma"]
    if plan.step_name is not None:
        per[plan.step_name] = mpmath.mpf(eta)
    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: mpmath.mpf(float(v)) for k, v in {**plan.scalars(T, tau), **per}.items()
             if k in names}
    fn = _mp_function(bound)
    best = (-mpmath.inf, mpmath.nan, mpmath.nan, {})
    for k, lhs in enumerate(values):
        vals = {**fixed, **{n: v[k] for n, v in rounds.items() if n in names}}
        if not _admissible(bound, vals):
            continue
        rhs = fn(**{n: vals[n] for n in bound.params})
        if isinstance(rhs, mpmath.mpc) or not mpmath.isfinite(rhs):
            continue
        if signed and rhs < 0:  # verify.falsify.judge.ratios' rule for a negative bound
            r = max(mpmath.mpf(0), 1 + (lhs - rhs) / abs(rhs))
        else:
            r = mpmath.mpf(0) if lhs <= 0 else (lhs / rhs if rhs > 0 else mpmath.inf)
        if r > best[0]:
            best = (r, lhs, rhs, vals)
    return best


def _mp_function(bound):
    import sympy as sp

    syms = [p.symbol for p in bound.params.values()]
    f = sp.lambdify(syms, bound.expr, modules="mpmath")
    order = list(bound.params)
    return lambda **kw: f(*[kw[n] for n in order])


def _admissible(bound, vals) -> bool:
    if not bound.preconditions:
        return True
    try:
        return not bound.violated_preconditions(**{k: float(v) for k, v in vals.items()})
    except Exception:  # noqa: BLE001 - a value outside its domain: not admissible
        return False


def _sensitivity(bound, vals, rhs):
    """Relative change of the bound when each construction constant moves by CLASS_RTOL."""
    import mpmath

    fn, total = _mp_function(bound), mpmath.mpf(0)
    for name in _CONSTANTS:
        if name not in bound.params or not vals.get(name):
            continue
        worst = mpmath.mpf(0)
        for s in (-1, 1):
            moved = {**vals, name: vals[name] * (1 + s * mpmath.mpf(CLASS_RTOL))}
            try:
                v = fn(**{n: moved[n] for n in bound.params})
            except (ArithmeticError, ValueError):
                return mpmath.inf
            if isinstance(v, mpmath.mpc) or not mpmath.isfinite(v):
                return mpmath.inf
            worst = max(worst, abs(v / rhs - 1))
        total += worst
    return total


def decide(cert: Certificate) -> tuple:
    """``(verdict, reason)`` of a certified worst ratio (module docstring)."""

    r, e = cert.ratio, cert.error
    how = f"certificate {cert.kind}, ratio {r:.17g} +- {e:.3g}"
    if r <= DIVERGED_RATIO:
        return "diverged", "the worst instance's run diverged (beyond 1e100 or not finite): " \
                           "never judged"
    if r == -math.inf:
        return "holds", cert.reason or "no instance inside the preconditions"
    if r == math.inf:  # the bound is <= 0 where the measured side is above its zero floor,
        # or (cert.reason says so) a positive ratio beyond the float range
        return "VIOLATED", cert.reason or f"the bound is <= 0 where the measured value is " \
                                          f"positive ({how})"
    if cert.kind == FLOAT64:
        if r > 1 + max(TOL, e):
            return "VIOLATED", f"{how} ({cert.reason})"
        tight = abs(r - 1) <= max(TOL, e)
        return "holds", f"tight within round-off: {how} ({cert.reason})" if tight else ""
    if r - 1 > e:
        return "VIOLATED", how
    if abs(r - 1) <= e:
        return "holds", f"tight: measured / bound = 1 within its certified error ({how})"
    return "holds", ""


def check_real(plan) -> None:
    """A DomainError naming the parameter when the bound is not real at a point the search
    evaluates: a square root, fractional power or logarithm of a value below 0 at the plan's
    constants and run settings (every scale, horizon and local-step count of its grids)."""
    import sympy as sp

    from boundlab.errors import DomainError

    bound = plan.bound
    parts = [(n, n.base if isinstance(n, sp.Pow) else n.args[0])
             for n in sp.preorder_traversal(bound.expr)
             if (isinstance(n, sp.Pow) and not n.exp.is_integer) or isinstance(n, sp.log)]
    if not parts:
        return
    for sc in plan.scales:
        sub = plan.at_scale(*sc)
        for T in plan.T_grid:
            for tau in plan.tau_grid:
                vals = sub.scalars(T, tau)
                for node, arg in parts:
                    names = sorted(s.name for s in arg.free_symbols)
                    if not names or not set(names) <= set(vals):
                        continue
                    v = float(arg.subs({s: vals[s.name] for s in arg.free_symbols}))
                    if v < 0 or (v == 0 and isinstance(node, sp.log)):
                        at = ", ".join(f"{n} = {vals[n]:g}" for n in names)
                        raise DomainError(names[0], vals[names[0]],
                                          f"values where {arg} >= 0",
                                          f"{bound.id} holds {node}, not real at {at}")
