"""The power of boundlab's layers: which typo-mutants of a bound each layer catches.

For one bound, :func:`evaluate` makes its typo-mutants (:func:`verify.falsify.mutants.mutants`),
decides the **truth** of each and which layer **flags** it:

* ``fixed`` -- the main job's fixed-instance checks of the bound (``boundlab verify``);
* ``search`` -- the worst-instance search (``verify.worst_instance`` for a catalogue bound,
  ``verify.falsify(exact=False)`` for a registered one);
* ``exact`` -- the exact worst case (PEP, ``verify.tightness`` / ``verify.falsify.pep``).

Truth (:func:`truth`) needs a proof either way:

* ``true`` -- the mutant is >= the original everywhere on the domain, under the original's
  preconditions: then it is still a valid upper bound, and flagging it is a **false alarm**.
  Proved symbolically (``mutant - original`` simplifies to an expression sympy knows is >= 0
  under the parameters' assumptions: ``how = "symbolic"``) or checked on a dense random grid of
  :data:`GRID` points of the domain satisfying the preconditions (``how = "grid"``: evidence,
  not a proof);
* ``false`` -- a certificate: a concrete instance whose measured left-hand side (a run of the
  real engine in the fixed-instance or search layer) exceeds the mutant, or a PEP lower bound
  in the bound's class exceeding it at a point satisfying its preconditions;
* ``unknown`` -- neither: the mutant is below the original somewhere, and nothing measured
  exceeds it.

A mutant of an **identity** (an exact equality) is false: mutants equal to the original are
left out, so each differs from the exact expression somewhere.

The certificates of falsity come from the layers and from an **oracle** that is not a layer:
``verify.falsify`` with :data:`ORACLE_FACTOR` times the layers' budget, another seed and the
exact worst case (PEP) where a model exists, run on every mutant the layers left unflagged
(where falsify's batched search applies). A mutant only the oracle breaks is false and missed
by the layers, so ``caught / false`` measures the layers against counterexamples they did not
produce themselves; the figure against ``false + unknown`` (``caught_pessimistic``) is given
beside it.

>>> import boundlab
>>> from boundlab import Bound, make_params, sym
>>> L, D, T = sym("L"), sym("D"), sym("T")
>>> b = Bound(id="mine.gd", source="note", expr=L * D**2 / (4 * T + 2),
...           params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
>>> m = mutants(b, ["const"])
>>> truth(b, next(x for x in m if x.id.endswith("term[expr]*2")), {}).status
'true'
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ._power_layers import Flag, LayerRun, exact_layer, fixed_layer, run_checks, search_layer
from .mutants import domain_points, evaluate_expr, mutants, operator_of

__all__ = ["Truth", "MutantResult", "truth", "evaluate", "summarize", "judged_ids", "LAYERS",
           "GRID", "ORACLE_FACTOR"]

LAYERS = ("fixed", "search", "exact")
GRID = 20000
#: the oracle's budget, relative to the layers' search budget (at least ORACLE_MIN)
ORACLE_FACTOR, ORACLE_MIN = 3, 200


@dataclass
class Truth:
    """``status`` (``true`` / ``false`` / ``unknown``) and ``how`` it was decided."""

    status: str
    how: str


@dataclass
class MutantResult:
    """One mutant: its truth, and per layer whether it flagged it (None: not run)."""

    id: str
    bound_id: str
    operator: str
    expr: str
    truth: str
    truth_how: str
    flags: dict = field(default_factory=dict)
    witness: dict = field(default_factory=dict)

    @property
    def caught(self) -> bool:
        return any(bool(v) for v in self.flags.values())


def judged_ids() -> list[str]:
    """The catalogue ids the main job (``boundlab verify``) judges, in its order.

    >>> "drift.plateau" in judged_ids()
    True
    """
    from verify.suite import checks

    out: list[str] = []
    for c in checks():
        out += [b for b in c.bound_ids if b not in out]
    return out


# ----------------------------------------------------------------------------- truth
def _feasible(bound, pts) -> np.ndarray:
    ok = np.ones(len(next(iter(pts.values()))), dtype=bool)
    for pc in bound.preconditions:
        with np.errstate(all="ignore"):
            ok &= np.asarray(pc.holds({n: pts[n] for n in pc.names}), dtype=bool)
    return ok


def above(original, mutant, n: int = GRID, seed: int = 0) -> tuple:
    """``(is >= original everywhere, how)``: symbolic when sympy proves it, else a grid."""
    d = sp.simplify(mutant.expr - original.expr)
    if d.is_nonnegative:
        return True, "symbolic: mutant - original >= 0 under the parameters' assumptions"
    if d.is_negative:
        return False, "symbolic: mutant < original everywhere"
    pts = domain_points(original, n, seed=seed)
    ok = _feasible(original, pts)
    a = evaluate_expr(original.expr, original, pts)
    b = evaluate_expr(mutant.expr, original, pts)
    ok &= np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 100:
        return False, f"grid: only {int(ok.sum())} feasible points"
    below = b[ok] < a[ok] - 1e-12 * np.maximum(np.abs(a[ok]), 1e-300)
    if below.any():
        return False, f"grid: below the original at {int(below.sum())}/{int(ok.sum())} points"
    return True, f"grid: >= the original at {int(ok.sum())} feasible points (evidence)"


def truth(original, mutant, flags: dict, up=None) -> Truth:
    """The truth of ``mutant`` (see the module docstring); ``flags``: layer -> :class:`Flag`
    (their witnesses are the certificates of falsity); ``up``: :func:`above`'s answer when
    already computed."""
    if original.kind == "identity":  # an equality: every mutant differs from it somewhere
        return Truth("false", "an identity: the mutant differs from the exact expression "
                              "(mutants equal to the original are left out)")
    up, how = above(original, mutant) if up is None else up
    if up:
        return Truth("true", how)
    for layer in (*LAYERS, "oracle"):
        f = flags.get(layer)
        if f is not None and f.flagged:
            return Truth("false", f"{layer}: {f.why}")
    return Truth("unknown", f"{how}; no instance or PEP value above it")


# ----------------------------------------------------------------------------- evaluation
def evaluate(bound, *, budget=None, quick: bool = False, layers=LAYERS, operators=None,
             setting=None, oracle: bool = True) -> tuple:
    """Mutants of ``bound`` (catalogue id, registered id or Bound), their truth and flags.

    Returns ``(list of MutantResult, {layer: LayerRun})`` (plus ``"oracle"``: not a layer,
    a source of certificates). ``budget``: evaluations of each search (default: the main
    job's); ``quick``: the main job's quick settings; ``oracle``: run the oracle.
    """
    import boundlab
    from verify.suite import Context

    if isinstance(bound, str):
        bound = boundlab.get(bound)
    ms = mutants(bound) if operators is None else mutants(bound, operators)
    ctx = Context(quick=quick, tightness=False, worst_budget=budget)
    if boundlab.registry.is_registered(bound.id):
        runs = _registered(bound, ms, ctx, budget, dict(setting or {}), layers)
    else:
        runs = _catalogue(bound, ms, ctx, budget, layers)
    ups = {m.id: above(bound, m) for m in ms}  # once: sympy and a 20000-point grid each
    if oracle:
        runs["oracle"] = _oracle(bound, ms, runs, budget, dict(setting or {}), ups)
    out = []
    for m in ms:
        flags = {k: r.flags.get(m.id) for k, r in runs.items()}
        t = truth(bound, m, flags, ups[m.id])
        out.append(MutantResult(m.id, bound.id, operator_of(m.id), sp.sstr(m.expr), t.status,
                                t.how, {k: (None if f is None else bool(f.flagged))
                                        for k, f in flags.items() if k != "oracle"},
                                {k: f.witness for k, f in flags.items() if f and f.flagged}))
    return out, runs


def _oracle(bound, ms, runs, budget, setting, ups) -> LayerRun:
    """The oracle (module docstring) on the mutants no layer flagged and that may be false
    (``ups``: mutant id -> :func:`above`'s answer)."""
    import boundlab
    from verify.checks._registry import FALSIFY_BUDGET

    from ._power_layers import falsify_flags, registered_search
    from .plan import batched_plan_applies

    if not batched_plan_applies(bound):
        return LayerRun(reason="verify.falsify's batched search does not run this bound")
    todo = [m for m in ms if not any(r.flags.get(m.id) and r.flags[m.id].flagged
                                     for r in runs.values()) and not ups[m.id][0]]
    b = max(ORACLE_MIN, ORACLE_FACTOR * int(budget or FALSIFY_BUDGET))
    if not boundlab.registry.is_registered(bound.id):
        return falsify_flags(bound, todo, b, seed=1, exact=True)
    return registered_search(lambda m: _alias(bound, m), todo, b, setting, seed=1, exact=True)


def _catalogue(bound, ms, ctx, budget, layers) -> dict:
    from ._power_layers import catalogue_pep_points

    observed = run_checks(bound.id, ctx)
    runs = {}
    if "fixed" in layers:
        runs["fixed"] = fixed_layer(bound, ms, ctx, observed)
    if "search" in layers:
        runs["search"] = search_layer(bound, ms, observed, budget)
    if "exact" in layers:
        pts, solves, secs, why = catalogue_pep_points(bound.id, observed)
        runs["exact"] = exact_layer(ms, pts) if pts else LayerRun(reason=why)
        runs["exact"].evaluations, runs["exact"].seconds = solves, secs
    return runs


@contextlib.contextmanager
def _alias(original, mutant, n=[0]):  # noqa: B006 - a process-wide counter of aliases
    """Register ``mutant`` under a registrable id with ``original``'s registration."""
    import dataclasses

    import boundlab

    meta = boundlab.registry.registration(original.id)
    n[0] += 1
    aid = f"{original.family}.{original.id.split('.', 1)[1].replace('.', '_')}__mutant{n[0]}"
    boundlab.register(dataclasses.replace(mutant, id=aid), algorithm=meta.get("algorithm"),
                      function_class=meta.get("function_class"), run=meta.get("run"))
    try:
        yield aid
    finally:
        boundlab.unregister(aid)


def _registered(bound, ms, ctx, budget, setting, layers) -> dict:
    from ._power_layers import registered_search

    runs = {}
    alias_of = (lambda m: _alias(bound, m))
    if "fixed" in layers:
        runs["fixed"] = _registered_fixed(bound, ms, ctx, alias_of)
    if "search" in layers:
        runs["search"] = registered_search(alias_of, ms, budget or 200, setting)
    if "exact" in layers:
        runs["exact"] = _registered_exact(bound, ms, setting)
    return runs


def _registered_fixed(bound, ms, ctx, alias_of) -> LayerRun:
    import boundlab
    from verify.suite import select

    out = LayerRun()
    if not boundlab.registry.registration(bound.id).get("run"):
        out.reason = "no run registered (boundlab.register(..., run=...))"
        return out
    t0 = time.perf_counter()
    for m in ms:
        with alias_of(m) as aid:
            res = [r for s in select(aid) for r in s.fn(ctx)]
        bad = [r for r in res if r.verdict == "VIOLATED"]
        out.evaluations += len(res)
        out.flags[m.id] = Flag(bool(bad), "fixed instance VIOLATED" if bad else "",
                               {"measured": bad[0].measured, "bound": bad[0].bound}
                               if bad else {})
    out.seconds = time.perf_counter() - t0
    return out


def _registered_exact(bound, ms, setting) -> LayerRun:
    """PEP of a registered gradient-descent bound at the plan's horizons and largest step."""
    from . import pep
    from .plan import NotApplicable, make_plan

    t0 = time.perf_counter()
    try:
        plan = make_plan(bound, setting)
    except NotApplicable as exc:
        return LayerRun(reason=str(exc))
    if (plan.lhs, plan.algorithm) not in pep.MODELS:
        return LayerRun(reason=f"no PEP model for lhs={plan.lhs}, algorithm={plan.algorithm}")
    points = []
    for T, tau in [(t, k) for t in plan.T_grid for k in plan.tau_grid if t * k <= 8]:
        lo, hi = plan.eta_range(T, tau)
        for eta in sorted({lo, hi}):
            w = pep.worst_case(plan.lhs, plan.algorithm, T=T, tau=tau, eta=eta, L=plan.spec.L,
                               mu=plan.spec.mu, D=plan.spec.D)
            prm = {**plan.scalars(T, tau), **({plan.step_name: eta} if plan.step_name else {})}
            points.append((prm, w["lower"],
                           f"PEP lower bound (T={T}, tau={tau}, eta={eta:.4g})"))
    out = exact_layer(ms, points)
    out.seconds = time.perf_counter() - t0
    return out


# ----------------------------------------------------------------------------- summary
def summarize(results, runs_by_bound=None) -> dict:
    """Per layer and overall: false mutants caught (share), false alarms on true ones,
    evaluations and seconds; the counts of true / false / unknown mutants."""
    res = list(results)
    false = [r for r in res if r.truth == "false"]
    true = [r for r in res if r.truth == "true"]
    unknown = [r for r in res if r.truth == "unknown"]
    out = {"mutants": len(res), "true": len(true), "false": len(false),
           "unknown": len(unknown), "layers": {}}
    for layer in (*LAYERS, "overall"):
        def hit(r, layer=layer):
            return r.caught if layer == "overall" else bool(r.flags.get(layer))
        caught = sum(hit(r) for r in false)
        row = {"caught": caught, "caught_share": caught / len(false) if false else None,
               "caught_pessimistic": caught / (len(false) + len(unknown))
               if false or unknown else None,
               "false_alarms": sum(hit(r) for r in true), "evaluations": 0, "seconds": 0.0}
        for runs in (runs_by_bound or {}).values():
            for name, run in runs.items():
                if name != "oracle" and layer in (name, "overall"):
                    row["evaluations"] += run.evaluations
                    row["seconds"] += run.seconds
        out["layers"][layer] = row
    orc = [r for rs in (runs_by_bound or {}).values() for k, r in rs.items() if k == "oracle"]
    out["oracle"] = {"false_only_oracle": sum(not r.caught for r in false),
                     "evaluations": sum(r.evaluations for r in orc),
                     "seconds": sum(r.seconds for r in orc)}
    return out
