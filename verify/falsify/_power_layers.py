"""The three layers of :mod:`verify.falsify.power`, run on the original bound once and on each
mutant: the main job's fixed-instance checks, the search, and the exact worst case (PEP).

Each ``*_layer`` function returns ``{mutant id: Flag}`` plus the cost. A layer *flags* a mutant
when it would report it violated: the fixed-instance check's verdict is ``VIOLATED``; the
search (``verify.worst_instance`` for a catalogue bound, ``verify.falsify(exact=False)`` for a
registered one) measured a ratio above 1 on the real engine; the PEP's lower bound (a concrete
worst case of the bound's class) exceeds the mutant at a point satisfying its preconditions
(the exact layer lives in :mod:`verify.falsify._power_exact`).

How the fixed layer reaches the checks without editing them: the checks of the original are
run once while :func:`verify.compare.compare` is observed (their measured samples and the
parameters they were judged at are kept), and each mutant is judged by ``compare`` on the same
samples and parameters. A check that passes its own right-hand side (a client average, a
registered run's frame) is re-run per mutant with ``boundlab.get`` answering the mutant for the
original's id inside that check's module only.
"""

from __future__ import annotations

import contextlib
import importlib
import time
import types
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Flag", "LayerRun", "fixed_layer", "search_layer", "falsify_flags", "worst_flags",
           "registered_search", "run_checks", "TOL", "SMALL", "PEP_SECONDS"]

_COMPARE_MODULES = ("verify.checks._common", "verify.checks.weight_error", "verify.checks.user",
                    "verify.checks.weight_error_paths")
TOL = 1e-6
#: caps of the local steps at a PEP point, and the PEP time per bound (seconds)
SMALL = {"tau": 2, "E": 2, "K": 2}
PEP_SECONDS = 60.0


@dataclass
class Flag:
    """One layer's answer for one mutant: ``flagged`` (True / False / None = not run) and the
    counterexample it rests on (``witness``: the measured or PEP value, the bound's value, and
    where)."""

    flagged: bool | None
    why: str = ""
    witness: dict = field(default_factory=dict)


@dataclass
class LayerRun:
    """A layer's flags, evaluations spent (instance runs or PEP solves) and seconds."""

    flags: dict = field(default_factory=dict)
    evaluations: int = 0
    seconds: float = 0.0
    reason: str = ""  # why the layer does not reach this bound ('' if it does)
    points: list = field(default_factory=list)  # the exact layer's (params, value, how)
    skipped: int = 0  # mutants left unsearched at a deadline
    verdicts: dict = field(default_factory=dict)  # the user layer: mutant id -> verdict

    def merge(self, other) -> LayerRun:
        """This run and ``other`` as one: a mutant is flagged where either flags it."""
        flags = dict(self.flags)
        for k, f in other.flags.items():
            if k not in flags or (f.flagged and not flags[k].flagged):
                flags[k] = f
        reason = "; ".join(r for r in (self.reason, other.reason) if r) \
            if not (self.flags or other.flags) else ""
        return LayerRun(flags, self.evaluations + other.evaluations,
                        self.seconds + other.seconds, reason, self.points + other.points,
                        max(self.skipped, other.skipped), {**other.verdicts, **self.verdicts})


# ----------------------------------------------------------------------------- fixed
@contextlib.contextmanager
def _observe(bound_id, calls, searches, where=None):
    import verify.worst as worst

    mods = [importlib.import_module(m) for m in _COMPARE_MODULES]
    saved = [(m, m.compare) for m in mods]
    real_worst = worst.worst_instance

    def spy(fn):
        def compare(bound, lhs_samples, rhs=None, **kw):
            r = fn(bound, lhs_samples, rhs, **kw)
            if bound.id == bound_id and r.kind == "bound":
                calls.append({"samples": np.asarray(lhs_samples, dtype=float).copy(),
                              "rhs": rhs, "kw": kw, "verdict": r.verdict,
                              "spec": (where or {}).get("spec")})
            return r
        return compare

    def spy_worst(bound, *a, **kw):
        w = real_worst(bound, *a, **kw)
        if getattr(bound, "id", bound) == bound_id:
            searches.append({"kw": kw, "result": w})
        return w

    for m, fn in saved:
        m.compare = spy(fn)
    worst.worst_instance = spy_worst
    try:
        yield
    finally:
        for m, fn in saved:
            m.compare = fn
        worst.worst_instance = real_worst


class _Shim(types.ModuleType):
    """``boundlab`` as one check module sees it: ``get(original id)`` is the mutant."""

    def __init__(self, real, original_id, mutant):
        super().__init__("boundlab")
        self._real, self._id, self._mutant = real, original_id, mutant

    def __getattr__(self, name):
        return getattr(self._real, name)

    def get(self, bound_id):
        return self._mutant if bound_id == self._id else self._real.get(bound_id)


def run_checks(bound_id, ctx):
    """Run the main job's checks of ``bound_id`` (the fixed-instance ones and the searches)
    while observing them: ``(fixed specs, calls, searches, results, seconds)``."""
    from verify.suite import select

    specs = [s for s in select(bound_id) if bound_id in s.bound_ids]
    calls, searches, results, where = [], [], [], {}
    t0 = time.perf_counter()
    with _observe(bound_id, calls, searches, where):
        for s in specs:
            where["spec"] = s.name
            try:
                results += list(s.fn(ctx))
            except Exception as exc:  # noqa: BLE001 - a crashing check judges nothing
                results.append(f"{s.name}: {type(exc).__name__}: {exc}")
    return specs, calls, searches, results, time.perf_counter() - t0


def fixed_layer(original, mutants, ctx, observed) -> LayerRun:
    """The fixed-instance layer: each mutant judged where the main job judged the original."""
    from verify.compare import compare

    specs, calls, _, _, seconds = observed
    fixed = [c for c in calls if not c["kw"].get("problem", "").startswith("worst instance")]
    out = LayerRun(evaluations=len(fixed), seconds=seconds)
    if not fixed:
        out.reason = ("no fixed-instance check judges it with a measured left-hand side"
                      if specs else "no check of the main job judges it")
        return out
    t0 = time.perf_counter()
    own = {c["spec"] for c in fixed if c["rhs"] is not None}  # checks passing their own rhs
    rerun = [s for s in specs if s.name in own and not s.name.endswith("_worst_instance")]
    again = [c for c in fixed if c["spec"] not in own]
    for m in mutants:
        verdicts = [(compare(m, c["samples"], None, **c["kw"]), c) for c in again]
        if rerun:
            verdicts += _rerun(original, m, rerun, ctx)
        bad = [(r, c) for r, c in verdicts if r.verdict == "VIOLATED"]
        out.flags[m.id] = Flag(bool(bad), "" if not bad else "fixed instance VIOLATED",
                               {} if not bad else {"measured": bad[0][0].measured,
                                                   "bound": bad[0][0].bound,
                                                   "case": bad[0][0].case or bad[0][0].check})
    out.seconds += time.perf_counter() - t0
    return out


def _rerun(original, mutant, specs, ctx):
    import boundlab

    out = []
    for s in specs:
        fn = getattr(s.fn, "func", s.fn)  # a generated check is a functools.partial
        mod = importlib.import_module(fn.__module__) if hasattr(fn, "__module__") else None
        if mod is None or getattr(mod, "boundlab", None) is not boundlab:
            continue
        mod.boundlab = _Shim(boundlab, original.id, mutant)
        try:
            res = list(s.fn(ctx))
        except Exception:  # noqa: BLE001 - a mutant the check cannot evaluate judges nothing
            res = []
        finally:
            mod.boundlab = boundlab
        out += [(r, {}) for r in res if r.kind == "bound" and r.bound_id == original.id]
    return out


# ----------------------------------------------------------------------------- search
def _past(deadline, out, left) -> bool:
    """Past ``deadline`` (a ``time.perf_counter()`` value; None: never): the ``left``
    mutants are not searched (``out.skipped``)."""
    if deadline is None or time.perf_counter() < deadline:
        return False
    out.skipped = left
    return True


def falsify_flags(original, mutants, budget, seed=0, exact=False, deadline=None) -> LayerRun:
    """``verify.falsify`` on each mutant (a Bound object, with the original's algorithm and
    class): flagged when it reports VIOLATED, which it does only with a replayed instance; a
    mutant ``verify.falsify`` refuses (a :class:`boundlab.errors.BoundlabError`, e.g. not real
    inside the domain) is not flagged, and the others go on."""
    import boundlab
    import verify
    from boundlab.errors import BoundlabError

    meta = boundlab.registry.meta(original.id)
    how = {"algorithm": meta.get("algorithm"), "function_class": meta.get("function_class")}
    out, t0 = LayerRun(), time.perf_counter()
    for k, m in enumerate(mutants):
        if _past(deadline, out, len(mutants) - k):
            break
        try:
            res = verify.falsify(m, budget=int(budget), seed=seed, exact=exact, **how)
        except BoundlabError as exc:  # refused (a mutant not real in the domain): not caught
            out.flags[m.id] = Flag(False, f"falsify refused it: {type(exc).__name__}: "
                                          f"{str(exc)[:160]}", {})
            continue
        out.evaluations += res.evaluations
        ok = res.verdict == "VIOLATED" and res.instance is not None
        out.flags[m.id] = Flag(ok, f"falsify (budget {budget}, seed {seed}): {res.verdict}",
                               {"ratio": res.worst_ratio, "run": res.instance.run}
                               if ok else {})
    out.seconds = time.perf_counter() - t0
    return out


def user_flags(original, mutants, budget, seed=0) -> LayerRun:
    """The **user** layer: each mutant passed to ``verify.falsify`` as a user passes a bound
    of their own -- registered under a new id with the original's algorithm, function class
    and symbol meanings (``boundlab.register``), never through the catalogue's own checks or
    fallbacks -- at ``budget`` (default :data:`verify.falsify.api.DEFAULT_BUDGET`); flagged
    when it reports VIOLATED with an instance (certified and replayed). ``verdicts`` keeps
    every verdict, so the share of ``not-applicable`` answers is reported."""
    import dataclasses

    import boundlab
    import verify

    from .api import DEFAULT_BUDGET

    meta = boundlab.registry.meta(original.id)
    out, t0 = LayerRun(), time.perf_counter()
    for k, m in enumerate(mutants):
        aid = f"powuser.{original.id.replace('.', '_')}__{k}"
        names = set(m.params) | set(m.extra_params)  # a mutant may have dropped a symbol
        symbols = {k: v for k, v in (meta.get("symbols") or {}).items() if k in names}
        boundlab.register(dataclasses.replace(m, id=aid), algorithm=meta.get("algorithm"),
                          function_class=meta.get("function_class"), symbols=symbols or None)
        try:
            res = verify.falsify(aid, budget=int(budget or DEFAULT_BUDGET), seed=seed,
                                 exact=False)
        except Exception as exc:  # noqa: BLE001 - a refused call is reported, not fatal
            res = verify.Falsification(aid, "error", reason=f"{type(exc).__name__}: {exc}")
        finally:
            boundlab.unregister(aid)
        out.evaluations += res.evaluations
        out.verdicts[m.id] = res.verdict
        ok = res.verdict == "VIOLATED" and res.instance is not None
        out.flags[m.id] = Flag(ok, f"falsify as a user bound: {res.verdict} "
                                   f"{res.reason[:160]}".strip(),
                               {"ratio": res.worst_ratio, "certificate": res.certificate}
                               if ok else {})
    out.seconds = time.perf_counter() - t0
    return out


def search_layer(original, mutants, observed, budget) -> LayerRun:
    """The search layer of a catalogue bound, as the main job searches it: the batched
    ``verify.falsify`` where its plan applies (the generated checks' budget,
    :data:`verify.checks._registry.FALSIFY_BUDGET`, unless ``budget``), else
    :func:`verify.worst_instance` on each mutant with the main job's setting, plus the main
    job's own worst instance of the original judged with the mutant."""
    from verify.checks._registry import FALSIFY_BUDGET
    from verify.worst import supported

    from .plan import batched_plan_applies

    if batched_plan_applies(original):
        return falsify_flags(original, mutants, budget or FALSIFY_BUDGET)
    if original.lhs not in supported():
        out = LayerRun()
        out.reason = f"lhs {original.lhs!r} is not searched (searched: {', '.join(supported())})"
        return out
    return worst_flags(mutants, observed, budget)


def worst_flags(mutants, observed, budget, seed=0, prior=True, deadline=None) -> LayerRun:
    """:func:`verify.worst_instance` on each mutant with the main job's setting (``seed``;
    ``budget``, default the main job's), flagged where ``compare`` finds the measured
    left-hand side above the mutant; with ``prior``, the main job's own worst instances of the
    original are judged with the mutant too (the search layer; the oracle runs without)."""
    from verify.compare import compare
    from verify.worst import worst_instance

    out = LayerRun()
    searches = observed[2]
    setting = dict(searches[0]["kw"].get("setting") or {}) if searches else {}
    b = int(budget or (searches[0]["kw"].get("budget") if searches else 0) or 100)
    prior = [s["result"] for s in searches] if prior else []
    t0, errors = time.perf_counter(), []
    for k, m in enumerate(mutants):
        if _past(deadline, out, len(mutants) - k):
            break
        hits = [(w.lhs, w.params, "the main job's worst instance of the original")
                for w in prior]
        try:
            w = worst_instance(m, budget=b, seed=seed, setting=setting)
            out.evaluations += w.evaluations
            hits.insert(0, (w.lhs, w.params, f"worst_instance of the mutant ({w.evaluations} "
                                               "evaluations)"))
        except Exception as exc:  # noqa: BLE001 - e.g. no instance gave a finite ratio
            cause = exc.__cause__ or exc  # scipy wraps the objective's exception
            errors.append(f"{type(cause).__name__}: {str(cause).split(': ', 1)[-1][:120]}")
        flag = Flag(False)
        for lhs, params, where in hits:
            r = compare(m, [lhs], params=params, deterministic=True)
            if r.verdict == "VIOLATED":
                flag = Flag(True, where, {"measured": lhs, "bound": r.bound, "params": params})
                break
        out.flags[m.id] = flag
    if mutants and len(errors) == len(mutants):
        out.reason = f"verify.worst_instance cannot search it: {errors[0]}"
    out.seconds = time.perf_counter() - t0
    return out


def registered_search(alias_of, mutants, budget, setting, seed=0, exact=False,
                      deadline=None) -> LayerRun:
    """The search layer of a registered bound: ``verify.falsify(exact=False)`` per mutant
    (registered under an alias with the original's registration); the oracle of
    :mod:`verify.falsify.power` calls it with another seed and ``exact=True``."""
    import verify

    out = LayerRun()
    t0 = time.perf_counter()
    for k, m in enumerate(mutants):
        if _past(deadline, out, len(mutants) - k):
            break
        with alias_of(m) as aid:
            res = verify.falsify(aid, budget=int(budget), seed=seed, exact=exact, **setting)
        out.evaluations += res.evaluations
        ok = res.verdict == "VIOLATED" and res.instance is not None
        out.flags[m.id] = Flag(ok, f"falsify: {res.verdict} {res.reason}".strip(),
                               {"ratio": res.worst_ratio} if ok else {})
    out.seconds = time.perf_counter() - t0
    return out
