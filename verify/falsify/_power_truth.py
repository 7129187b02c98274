"""The truth of a typo-mutant, for :mod:`verify.falsify.power`: ``true``, ``false`` or
``unknown``, and how it was decided. Nothing here runs a layer.

The **reference** is the bound a mutant is compared with: the original when it is assumed
valid, i.e. not a ``.printed`` form (those are the papers' text, wrong where the errata register
says so); for a ``.printed`` original, its corrected form (the id without ``.printed``) when
that has the same parameters, the same kind, and preconditions that hold wherever the printed
ones do on the grid; else none. An original whose errata register entry says its proof has a
gap with no repair (:data:`UNREPAIRED`) is still a reference, and each truth built on it says
so (the register reports the bound holds empirically and in exact enumeration).

Facts used, each justified by the reference being a valid bound of the same measured quantity
under the same preconditions:

* mutant >= reference at every point of the domain satisfying the preconditions: the mutant is
  a valid bound too -> ``true``. Proved symbolically when sympy's assumptions give
  ``mutant - reference >= 0`` (no simplification: its time has no bound), else checked on
  :data:`GRID` seeded random points of the domain (evidence, not a proof; say so);
* an identity (``kind == "identity"``: the measured side *equals* the reference everywhere):
  a mutant that differs from the reference by more than :data:`IDENTITY_RTOL` relative at a
  point satisfying the preconditions is ``false`` there; one equal to 1e-12 at every grid
  point is ``true``;
* otherwise ``false`` needs a certificate: a measured instance (a layer's or the oracle's run
  of the real engine) whose left-hand side exceeds the mutant, or a PEP lower bound on the
  worst case of the bound's class exceeding it at a point satisfying its preconditions;
* else ``unknown``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._probe import Probe, domain_points, evaluate_expr

__all__ = ["Truth", "Judge", "reference", "UNREPAIRED", "GRID", "IDENTITY_RTOL"]

GRID = 20000
#: relative difference at a feasible point that makes a mutant of an identity false
IDENTITY_RTOL = 1e-6
#: errata whose bounds have a proof gap with no repaired proof (the register: "holds
#: empirically and in exact enumeration of all paths"); still references, with this caveat
UNREPAIRED = ("FedAU-F5",)


@dataclass
class Truth:
    """``status`` (``true`` / ``false`` / ``unknown``) and ``how`` it was decided."""

    status: str
    how: str


def reference(original) -> tuple:
    """``(reference bound or None, note)`` (module docstring)."""
    import boundlab
    from boundlab.errors import BoundlabError

    if original.kind not in ("upper", "identity"):
        return None, f"kind {original.kind!r}: not a bound the main job judges"
    if not original.printed:
        gaps = [e for e in original.errata if e in UNREPAIRED]
        return original, (f"; the original's proof has a gap with no repair ({', '.join(gaps)}:"
                          " holds empirically)" if gaps else "")
    twin_id = original.id.removesuffix(".printed")
    try:
        twin = boundlab.get(twin_id)
    except BoundlabError:
        return None, "printed form (not assumed valid) with no corrected form in the catalogue"
    names = (set(original.params) | set(original.extra_params),
             set(twin.params) | set(twin.extra_params))
    if twin.printed or twin.kind != original.kind or names[0] != names[1]:
        return None, (f"printed form (not assumed valid); its corrected form {twin_id} has other "
                      "parameters or kind")
    return twin, f" (compared with the corrected form {twin_id}: the printed one is not " \
                 "assumed valid)"


def _feasible(bound, pts) -> np.ndarray:
    ok = np.ones(len(next(iter(pts.values()))), dtype=bool)
    for pc in bound.preconditions:
        with np.errstate(all="ignore"):
            ok &= np.asarray(pc.holds({n: pts[n] for n in pc.names}), dtype=bool)
    return ok


def feasible_grid(bound, n: int = GRID, seed: int = 0) -> tuple:
    """``(points, feasible)``: :func:`domain_points`, and where the preconditions hold. Where
    fewer than a tenth hold (a step size tied to other parameters, an equality written as two
    inequalities), another ``n`` points are drawn and moved into the preconditions one at a
    time (:func:`_repair`); the feasible ones of both draws are kept."""
    pts = domain_points(bound, n, seed=seed)
    ok = _feasible(bound, pts)
    if ok.sum() >= n // 10:
        return pts, ok
    more = _repair(bound, domain_points(bound, n, seed=seed + 1),
                   np.random.default_rng(seed + 2))
    ok2 = _feasible(bound, more)
    pts = {k: np.concatenate([pts[k][ok], more[k][ok2]]) for k in pts}
    return pts, np.ones(int(ok.sum() + ok2.sum()), dtype=bool)


def _repair(bound, pts, rng) -> dict:
    """Move each point into each precondition in turn: solve it for one of its real
    parameters (a unique solution ``s = h(others)``), then put ``s`` on the boundary ``h``
    (half the points) or inside by a log-uniform factor in [10**-2, 1] of the distance in
    scale (the side where the precondition holds)."""
    import sympy as sp

    allp = {**bound.params, **bound.extra_params}
    pts = {k: np.array(v, dtype=float) for k, v in pts.items()}
    for pc in bound.preconditions:
        uses = {nm: sum(nm in q.names for q in bound.preconditions) for nm in pc.names}
        names = sorted((nm for nm in pc.names if not allp[nm].domain.integer),
                       key=uses.get)  # fewest other preconditions first: two pins (a step
        # and a local-step count, Corollary 1) each move their own parameter
        for nm in names:
            sols = sp.solve(sp.Eq(sp.sympify(pc.lhs), sp.sympify(pc.rhs)), allp[nm].symbol)
            if len(sols) == 1 and sols[0].is_real is not False:
                break
        else:
            continue
        h = evaluate_expr(sols[0], bound, pts)
        k = len(h)
        f = 10.0 ** rng.uniform(-2, 0, k)
        with np.errstate(all="ignore"):
            below = np.asarray(pc.holds({**{x: pts[x] for x in pc.names}, nm: h * 0.5}),
                               dtype=bool)
        x = np.where(rng.uniform(size=k) < 0.5, h, np.where(below, h * f, h / f))
        pts[nm] = np.where(np.isfinite(x) & (x > 0), x, pts[nm])
    return pts


class Judge:
    """The facts of the module docstring for the mutants of one ``original``: the grid, the
    preconditions and the reference's values are computed once."""

    def __init__(self, original, n: int = GRID, seed: int = 0):
        self.original = original
        self.ref, self.note = reference(original)
        self.pts, self.feasible = feasible_grid(original, n, seed)
        self.probe = Probe(original, self.pts)
        self.outside = 0
        if self.ref is None:
            return
        if self.ref is original:
            self.a = self.probe(original.expr, keep=True)
        else:
            self.outside = int((self.feasible & ~_feasible(self.ref, self.pts)).sum())
            self.a = evaluate_expr(self.ref.expr, self.ref, self.pts)
        self.use = self.feasible & np.isfinite(self.a)

    def above(self, mutant) -> tuple:
        """``(mutant >= the reference everywhere, how)``."""
        if self.ref is None:
            return False, self.note
        if self.outside:
            return False, (f"the corrected form's preconditions fail at {self.outside} points "
                           "where the printed ones hold")
        d = mutant.expr - self.ref.expr
        if d.is_nonnegative:
            return True, "symbolic: mutant - reference >= 0 under the parameters' assumptions"
        if d.is_negative:
            return False, "symbolic: mutant < reference everywhere"
        n = int(self.use.sum())
        if n < 100:
            return False, f"grid: only {n} feasible points"
        a, b = self.a[self.use], self.probe(mutant.expr)[self.use]
        if np.isnan(b).any():
            return False, f"grid: the mutant is undefined at {int(np.isnan(b).sum())} points"
        below = b < a - 1e-12 * np.abs(a)
        if below.any():
            return False, f"grid: below the reference at {int(below.sum())}/{n} points"
        return True, f"grid: >= the reference at {n} feasible points (evidence)"

    def score(self, mutant) -> float:
        """Median of mutant / reference over the feasible grid (where the reference is > 0):
        the lower, the likelier a search finds an instance above the mutant (the oracle
        searches the lowest first)."""
        if self.ref is None or not self.use.any():
            return 1.0
        a, b = self.a[self.use], self.probe(mutant.expr)[self.use]
        with np.errstate(all="ignore"):
            r = b / a
        r = r[(a > 0) & np.isfinite(r)]
        return float(np.median(r)) if r.size else 1.0

    def identity(self, mutant) -> Truth:
        """The truth of a mutant of an identity."""
        if self.ref is None:
            return Truth("unknown", self.note)
        n = int(self.use.sum())
        b = self.probe(mutant.expr)[self.use]
        a = self.a[self.use]
        with np.errstate(all="ignore"):
            rel = np.where(np.isfinite(b), np.abs(b - a) / np.maximum(np.abs(a), np.abs(b)),
                           np.inf)
        rel = np.where(a == b, 0.0, rel)
        k = int((rel > IDENTITY_RTOL).sum())
        if k:
            return Truth("false", f"an identity: the mutant differs from it by more than "
                                  f"{IDENTITY_RTOL:g} at {k}/{n} feasible points{self.note}")
        if n >= 100 and (rel <= 1e-12).all():
            return Truth("true", f"an identity: the mutant equals it at {n} feasible points"
                                 f"{self.note}")
        return Truth("unknown", f"an identity: the mutant is within {IDENTITY_RTOL:g} of it at "
                                f"{n} feasible points")

    def truth(self, mutant, flags: dict, up=None, order=("fixed", "search", "exact", "user",
                                                         "oracle")) -> Truth:
        """The truth of ``mutant``; ``flags``: layer -> Flag (their witnesses are the
        certificates of falsity); ``up``: :meth:`above`'s answer when already computed."""
        if self.original.kind == "identity":
            return self.identity(mutant)
        up, how = self.above(mutant) if up is None else up
        if up:
            return Truth("true", how + self.note)
        for layer in order:
            f = flags.get(layer)
            if f is not None and f.flagged:
                return Truth("false", f"{layer}: {f.why}")
        return Truth("unknown", f"{how}; no instance or PEP value above it")
