"""The power of boundlab's layers: which typo-mutants of a bound each layer catches.

For one bound, :func:`evaluate` makes its typo-mutants (:func:`verify.falsify.mutants.mutants`),
decides the **truth** of each and which layer **flags** it:

* ``fixed`` -- the main job's fixed-instance checks of the bound (``boundlab verify``);
* ``search`` -- the worst-instance search (``verify.worst_instance`` for a catalogue bound,
  ``verify.falsify(exact=False)`` for a registered one);
* ``exact`` -- the exact worst case (PEP, ``verify.tightness`` / ``verify.falsify.pep``).

Truth (:mod:`verify.falsify._power_truth`; nothing there runs a layer) compares each mutant
with a **reference**, a bound assumed valid: the original, or for a ``.printed`` original (the
paper's text, not assumed valid) its corrected form; an ``order`` bound (hidden constants) is
never judged and has no mutants here.

* ``true`` -- the mutant is >= the reference everywhere on the domain, under the
  preconditions: then it is still a valid upper bound, and flagging it is a **false alarm**.
  Proved symbolically (``how = "symbolic"``) or checked on a grid of :data:`GRID` seeded
  random points of the domain satisfying the preconditions (``how = "grid"``: evidence, not a
  proof); a mutant of an identity equal to it at every grid point;
* ``false`` -- a mutant of an **identity** (the measured side equals it) that differs from it
  at a point satisfying the preconditions; else a certificate: a concrete instance whose
  measured left-hand side (a run of the real engine in a layer or in the oracle) exceeds the
  mutant, or a PEP lower bound in the bound's class exceeding it at a point satisfying its
  preconditions;
* ``unknown`` -- neither: the mutant is below the reference somewhere, and nothing measured
  exceeds it.

The certificates of falsity come from the layers and from an **oracle** that is not a layer,
run on every mutant the layers left unflagged and that is not ``true``, the lowest against
the reference first, its searches within :data:`ORACLE_SECONDS` per bound (the mutants it does
not reach stay unknown; ``skipped`` counts them): ``verify.falsify`` with
:data:`ORACLE_FACTOR` times the layers' budget, another seed and the exact worst case (PEP)
where a model exists, where falsify's batched search applies; else ``verify.worst_instance``
with that budget and another seed, where it measures the bound's left-hand side; and, for a
catalogue bound with a PEP model, the PEP's worst case at up to :data:`ORACLE_PEP_SOLVES`
points moved from the exact layer's one parameter at a time (x 0.01, x 100; one round:
where an exponent typo shows). A mutant only the oracle breaks is false and missed by the
layers, so ``caught / false`` measures the layers against counterexamples they did not
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

import sympy as sp

from ._power_exact import exact_layer
from ._power_layers import Flag, LayerRun, fixed_layer, run_checks, search_layer
from ._power_truth import GRID, Judge, Truth
from .mutants import mutants, operator_of

__all__ = ["Truth", "MutantResult", "truth", "above", "evaluate", "summarize", "judged_ids",
           "LAYERS", "GRID", "ORACLE_FACTOR", "ORACLE_SECONDS", "Judge"]

LAYERS = ("fixed", "search", "exact", "user")
#: the layers :func:`evaluate` runs by default (``user``: every mutant passed to
#: ``verify.falsify`` as a user's own bound, ``benchmarks power --as-user``)
DEFAULT_LAYERS = ("fixed", "search", "exact")
#: the oracle's budget, relative to the layers' search budget (at least ORACLE_MIN)
ORACLE_FACTOR, ORACLE_MIN = 3, 60
#: the oracle's PEP solves (and seconds) per bound, at points scaled from the exact layer's
ORACLE_PEP_SOLVES, ORACLE_PEP_SECONDS = 16, 60.0
#: the oracle's search time per bound (seconds): the mutants it does not reach stay unknown
ORACLE_SECONDS = 60.0


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
    kind: str = "upper"  # the statement's kind (an identity's mutants: "identity")

    @property
    def caught(self) -> bool:
        return any(bool(v) for v in self.flags.values())


def judged_ids() -> list[str]:
    """The catalogue ids the main job (``boundlab verify``) judges, in its order: those its
    checks name, less the ``order`` bounds (hidden constants: shown, never judged).

    >>> ids = judged_ids()
    >>> "drift.plateau" in ids, "weight_error.theorem3" in ids
    (True, False)
    """
    import boundlab
    from verify.suite import checks

    out: list[str] = []
    for c in checks():
        out += [b for b in c.bound_ids if b not in out]
    return [b for b in out if boundlab.get(b).kind != "order"]


def above(original, mutant, n: int = GRID, seed: int = 0) -> tuple:
    """``(mutant >= the reference everywhere, how)`` (:class:`Judge`; the reference is the
    original unless it is a ``.printed`` form)."""
    return Judge(original, n, seed).above(mutant)


def truth(original, mutant, flags: dict, up=None) -> Truth:
    """The truth of ``mutant`` (see the module docstring); ``flags``: layer -> Flag (their
    witnesses are the certificates of falsity); ``up``: :func:`above`'s answer when already
    computed."""
    return Judge(original).truth(mutant, flags, up)


# ----------------------------------------------------------------------------- evaluation
def evaluate(bound, *, budget=None, quick: bool = False, layers=DEFAULT_LAYERS, operators=None,
             setting=None, oracle: bool = True) -> tuple:
    """Mutants of ``bound`` (catalogue id, registered id or Bound), their truth and flags.

    Returns ``(list of MutantResult, {layer: LayerRun})`` (plus ``"oracle"``: not a layer,
    a source of certificates). ``budget``: evaluations of each search (default: the main
    job's); ``quick``: the main job's quick settings; ``oracle``: run the oracle. An
    ``order`` bound has no mutants (never judged): every layer says why.
    """
    import boundlab
    from verify.suite import Context

    if isinstance(bound, str):
        bound = boundlab.get(bound)
    if bound.kind == "order":
        why = "kind 'order' (hidden constants): shown, never judged by the main job"
        return [], {k: LayerRun(reason=why) for k in layers}
    ms = mutants(bound) if operators is None else mutants(bound, operators)
    ctx = Context(quick=quick, tightness=False, worst_budget=budget, falsify_budget=budget)
    observed = None
    if tuple(layers) == ("user",):  # as a user's bounds only: no main-job checks
        from ._power_layers import user_flags

        runs = {"user": user_flags(bound, ms, budget)}
    elif boundlab.registry.is_registered(bound.id):
        runs = _registered(bound, ms, ctx, budget, dict(setting or {}), layers)
    else:
        observed = run_checks(bound.id, ctx)
        runs = _catalogue(bound, ms, ctx, budget, layers, observed)
    judge = Judge(bound)
    ups = {m.id: judge.above(m) for m in ms}  # once: sympy and a GRID-point grid each
    if oracle:
        runs["oracle"] = _oracle(bound, ms, runs, budget, dict(setting or {}), ups, observed,
                                 judge)
    out = []
    for m in ms:
        flags = {k: r.flags.get(m.id) for k, r in runs.items()}
        t = judge.truth(m, flags, ups[m.id])
        out.append(MutantResult(m.id, bound.id, operator_of(m.id), sp.sstr(m.expr), t.status,
                                t.how, {k: (None if f is None else bool(f.flagged))
                                        for k, f in flags.items() if k != "oracle"},
                                {k: f.witness for k, f in flags.items() if f and f.flagged},
                                bound.kind))
    return out, runs


def _oracle(bound, ms, runs, budget, setting, ups, observed, judge) -> LayerRun:
    """The oracle (module docstring) on the mutants no layer flagged and that may be false
    (``ups``: mutant id -> :meth:`Judge.above`'s answer; ``observed``: the main job's checks
    of a catalogue bound, :func:`run_checks`), the lowest (:meth:`Judge.score`) first, its
    searches within :data:`ORACLE_SECONDS`."""
    import boundlab
    from verify.checks._registry import FALSIFY_BUDGET
    from verify.worst import supported

    from ._power_layers import falsify_flags, registered_search, worst_flags
    from .plan import batched_plan_applies

    if bound.kind != "upper":
        return LayerRun(reason=f"kind {bound.kind!r}: its truth needs no search")
    todo = [m for m in ms if not any(r.flags.get(m.id) and r.flags[m.id].flagged
                                     for r in runs.values()) and not ups[m.id][0]]
    todo.sort(key=judge.score)  # the likeliest false first: the deadline cuts the others
    b = max(ORACLE_MIN, ORACLE_FACTOR * int(budget or FALSIFY_BUDGET))
    end = time.perf_counter() + ORACLE_SECONDS
    if boundlab.registry.is_registered(bound.id):
        return registered_search(lambda m: _alias(bound, m), todo, b, setting, seed=1,
                                 exact=True, deadline=end)
    if observed is None:  # the user layer: no main-job checks to search beside
        observed = ([], [], [])
    if batched_plan_applies(bound):
        out = falsify_flags(bound, todo, b, seed=1, exact=True, deadline=end)
    elif bound.lhs in supported():
        out = worst_flags(todo, observed, b, seed=1, prior=False, deadline=end)
    else:
        out = LayerRun(reason=f"no search measures lhs {bound.lhs!r} (searched: "
                              f"{', '.join(supported())}; verify.falsify's batched search does "
                              "not run this bound)")
    base = [p for p, _, _ in runs["exact"].points] if "exact" in runs else []
    if base and todo:  # the exact worst case away from the exact layer's points
        from ._power_exact import pep_points, scaled_points

        pts, solves, secs, why = pep_points(bound.id, scaled_points(bound, base),
                                            ORACLE_PEP_SOLVES, ORACLE_PEP_SECONDS)
        pep = exact_layer(todo, pts) if pts else LayerRun(reason=why)
        pep.evaluations, pep.seconds = solves, secs
        out = out.merge(pep)
    return out


def _catalogue(bound, ms, ctx, budget, layers, observed) -> dict:
    from ._power_exact import catalogue_pep_points

    runs = {}
    if "fixed" in layers:
        runs["fixed"] = fixed_layer(bound, ms, ctx, observed)
    if "search" in layers:
        runs["search"] = search_layer(bound, ms, observed, budget)
    if "exact" in layers:
        pts, solves, secs, why = catalogue_pep_points(bound.id, observed)
        runs["exact"] = exact_layer(ms, pts) if pts else LayerRun(reason=why)
        runs["exact"].evaluations, runs["exact"].seconds = solves, secs
        runs["exact"].points = pts
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
    evaluations and seconds; the counts of true / false / unknown mutants; the oracle's
    share (false mutants only it certified) and cost; ``reached``: the overall figures on
    the bounds some layer reaches (``runs_by_bound``: bound id -> its runs)."""
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
    out["oracle"] = {"false_only_oracle": sum(r.truth_how.startswith("oracle") for r in false),
                     "skipped": sum(r.skipped for r in orc),
                     "evaluations": sum(r.evaluations for r in orc),
                     "seconds": sum(r.seconds for r in orc)}
    out["reached"] = _reached(res, runs_by_bound or {})
    out["user_verdicts"] = _user_verdicts(res, runs_by_bound or {})
    return out


def _user_verdicts(res, runs_by_bound) -> dict:
    """The user layer's verdict counts, over all mutants and over those of upper bounds
    (``not_applicable_share``: the issue's target is under 5 %); empty without that layer."""
    kinds = {r.id: r for r in res}
    counts, upper = {}, {}
    for runs in runs_by_bound.values():
        for mid, v in getattr(runs.get("user"), "verdicts", {}).items():
            counts[v] = counts.get(v, 0) + 1
            if mid in kinds and kinds[mid].kind == "upper":
                upper[v] = upper.get(v, 0) + 1
    if not counts:
        return {}
    n, nu = sum(counts.values()), sum(upper.values())
    return {"all": counts, "upper": upper,
            "not_applicable_share": counts.get("not-applicable", 0) / n,
            "not_applicable_share_upper": upper.get("not-applicable", 0) / nu if nu else None}


def _reached(res, runs_by_bound) -> dict:
    """The overall figures on the bounds some layer reaches (a layer without a ``reason``)."""
    ids = {b for b, runs in runs_by_bound.items()
           if any(not r.reason for k, r in runs.items() if k in LAYERS)}
    rs = [r for r in res if r.bound_id in ids]
    false = [r for r in rs if r.truth == "false"]
    unknown = sum(r.truth == "unknown" for r in rs)
    caught = sum(r.caught for r in false)
    return {"bounds": len(ids), "mutants": len(rs), "false": len(false), "unknown": unknown,
            "true": sum(r.truth == "true" for r in rs), "caught": caught,
            "caught_share": caught / len(false) if false else None,
            "caught_pessimistic": caught / (len(false) + unknown) if false or unknown else None,
            "false_alarms": sum(r.caught for r in rs if r.truth == "true")}
