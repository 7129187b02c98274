"""What :func:`verify.falsify` runs for a bound: read from its metadata, never its id.

A bound declares ``lhs``, ``algorithm`` and ``function_class`` (a registered one with
``boundlab.register(b, algorithm=..., function_class=...)``, a catalogue one in
:mod:`boundlab._catalogue_meta`; both read through :func:`boundlab.registry.meta`). The plan
follows them:

* ``algorithm``: ``"gd"`` (gradient descent: one client, one step per round, T = iterations),
  ``"fedavg"`` (full participation, exact gradients, ``tau`` local steps, T = rounds),
  ``"fedprox"`` (FedAvg with proximal local steps, coefficient ``alpha``), ``"beta"`` (seed
  003's beta-perturbed local steps, uniform message graph) or ``"fedsoftmax"`` (seeds
  000/001's loss-weighted aggregation, temperature searched; strongly convex classes, where
  the clients' minima F_i* it scores with exist) or ``"fedau"`` (seed 002, judged in expectation
  over every Bernoulli participation path: :mod:`verify.falsify.fedau_paths`, which gives
  its F, W, Q, G, PsiG, delta and global step eta); see :mod:`verify.falsify.toys_map`. Any
  other algorithm is *not applicable* (it is never replaced by another one);
* ``function_class`` picks the families (:func:`~verify.falsify.families.families_for`);
  strongly convex instances use ``mu`` (setting, default L/10), the others mu = 0;
* ``lhs``: one of :func:`verify.measures.names` (the one registry of measured quantities).

Run settings the bound leaves free are searched: the horizon ``T`` (grid :data:`T_GRID`
unless ``T=`` is given), the local steps (grid :data:`TAU_GRID` unless ``tau=``), the
algorithm's hyper-parameter (FedProx's alpha, beta's beta: the grids of
:data:`verify.falsify.toys_map.HYPER` unless the setting gives it), and the step size when
the bound names one (``eta``, ``lr`` or ``gamma``): log-uniform in [eta_max/20, eta_max],
eta_max the largest step its preconditions allow (bisection; at most 2/L, where gradient
descent on an L-smooth convex function still descends). A precondition that names the step
alone on one side (``gamma >= 1/(2 E (L + alpha))``) bounds the range by the other side's
value, so a theorem's prescribed step (``<=`` and ``>=`` together) is searched at that step
exactly. A bound that names no step size is judged at ``eta=`` of the setting, default 1/L
(stated in the result), or, for an algorithm analysed with a decaying step
(:data:`verify.falsify.toys_map.SCHEDULES`: fedsoftmax), at that step, BM's
eta_t = 1/(mu (t + gamma)) with gamma = max(4L/mu, 1 + 3/(8 p_min), E - 1). A bound whose
metadata reads its ``T`` as SGD iterations (``symbols`` T = ``rounds*local_steps``, BM) gets
T = rounds x local steps (the grid stays one of rounds).

Bound parameters are given by name: ``L``, ``mu``, ``D`` = ``D0`` = ``R`` = ||x0 - x*||,
``T``, the step, the local steps (``tau``, ``E``, ``K``, ``I``), ``M`` = ``N`` = clients,
``Delta`` = ``F0`` = F(x0) - F*, ``G`` = max ||g_i|| over the gradients used, ``sigma`` = 0,
``S`` = sum p_i^2, ``p_min``, BM's ``pi`` / ``Pi`` (min / max over the run's rounds and
clients of kappa = alpha_i / p_i, measured on each instance), and the per-round ones of its
left-hand side
(:attr:`verify.measures.Measure.gives`: ``t``, ``dist_t``, ``gamma_prev`` (the previous
round's step, 0 at t = 0), ``f_w``, ``f_star``, ``dist0``, ``dist_tau``, ``drift_sum``). Any
other parameter must be given in the setting, else the bound is not applicable.
Heterogeneity constants (:data:`HETEROGENEITY`) are 0 for gradient descent (one client).
With several clients:

* Li et al.'s ``Gamma`` = F* - sum_i p_i F_i* is **measured** on every instance of a strongly
  convex class, from the exact minima of the clients (closed form for quadratics, batched
  Newton for ridge sums, toys' solver for logistic clients);
* DKR's ``zeta`` is held fixed by construction: the families that can (``tilt = True``) give
  every client one shared function plus a linear tilt, max norm zeta (``zeta=`` of the
  setting, default :data:`ZETA_DEFAULT` L D; :mod:`verify.falsify.families.tilt`);
* the others (and Gamma on convex classes, where a client may have no minimiser, or together
  with zeta, whose tilted clients have none) are not applicable yet: a value measured at x*
  would judge a "for all x" bound on instances outside its class.

Participation: every client every round, unless a registered bound is searched with
``participation=`` (:func:`~verify.falsify._plan_parts.draw_masks`: Bernoulli, cyclic, Markov
patterns, their parameters one more grid of the search, the masks drawn per instance); the catalogue
bounds the search runs all assume full participation. Data weights: uniform, except for a
bound that names ``p_min`` (and not fixed by the setting): p_i ∝ r^i, r in {1, 1/2, 1/5}.

>>> import boundlab
>>> from boundlab import Bound, make_params, sym
>>> b = Bound(id="mine.plan_demo", source="note", expr=sym("L") * sym("D") ** 2 / sym("T"),
...           params=make_params("L", "D", "T"), kind="upper", lhs="final_gap")
>>> _ = boundlab.register(b, algorithm="gd", function_class="smooth-convex")
>>> p = make_plan(b, {})
>>> p.algorithm, p.T_grid, p.step_fixed
('gd', (1, 2, 4, 8, 16, 64), 1.0)
>>> _ = boundlab.unregister("mine.plan_demo")
>>> p = make_plan(boundlab.get("contraction.fedprox_sc"), {})
>>> p.hyper_grid
({'alpha': 0.1}, {'alpha': 1.0}, {'alpha': 10.0})
>>> p.with_hyper({"alpha": 1.0}).eta_range(4, 5)   # gamma = 1/(2 E (L + alpha)), pinned
(0.05, 0.05)
>>> p = make_plan(boundlab.get("skew.pi_bound"), {})
>>> p.schedule, p.measured, p.scalars(T=4, tau=5)["T"]   # BM's T counts SGD iterations
('bm', ('Gamma', 'pi', 'Pi'), 20)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from . import toys_map as _toys_map
from ._plan_parts import (
    LOCAL_NAMES,
    STEP_NAMES,
    NotApplicable,
    check_loss_weights,
    check_participation_allowed,
    draw_masks,
    eta_max,
    feasible,
    run_extras,
    shift_name,
    skewed,
    step_of,
    step_sides,
    t_iterations,
    unit_skew,
)
from ._plan_setting import (
    HETEROGENEITY,
    SCALE_FACTORS,  # noqa: F401 - re-exported: the grid of Plan.at_scale
    ZETA_DEFAULT,
    declared,
    heterogeneity,
    scales,
    spec_of,
)
from .families.registry import Spec
from .toys_map import ALGORITHMS

__all__ = ["Plan", "NotApplicable", "make_plan", "T_GRID", "TAU_GRID", "ALGORITHMS"]

T_GRID = (1, 2, 4, 8, 16, 64)
TAU_GRID = (1, 2, 5)
GIVEN = {"L", "mu", "D", "D0", "R", "T", "M", "N", "Delta", "F0", "G", "sigma", "S",
         "p_min", "t", "dist_t", *STEP_NAMES, *LOCAL_NAMES}
#: BM's extreme weight ratios, measured on every instance (kappa = alpha / p over the run)
KAPPA = ("pi", "Pi")
#: grid keys that set the run, not the algorithm (participation pattern, data weights' skew)
_RUN_KEYS = ("participation", "p_skew")

#: measured on every instance (per-instance parameters of the search and the replay)
MEASURED = ("Gamma", *KAPPA)


@dataclass(frozen=True)
class Plan:
    """How a bound is searched (see the module docstring)."""

    bound: object
    lhs: str
    algorithm: str
    function_class: str
    spec: Spec
    T_grid: tuple
    tau_grid: tuple
    step_name: str | None
    step_fixed: float | None
    fixed: dict = field(default_factory=dict)
    notes: tuple = ()
    scales: tuple = ((1.0, 1.0),)
    hyper_grid: tuple = ({},)  # the algorithm's hyper-parameter points (algorithms.HYPER)
    hyper_scaled: tuple = ()  # their names that scale with L (a searched alpha)
    measured: tuple = ()  # per-instance parameters measured on each instance (Gamma, pi, Pi)
    schedule: str | None = None  # a step schedule (algorithms.SCHEDULES) instead of one step
    #: the searched ``step_name`` is BM's shift gamma of eta_t = 1/(mu (t + gamma))
    #: (:data:`~verify.falsify._plan_parts.SHIFT_ROLE`), not a step size
    shift: bool = False
    t_iterations: bool = False  # the bound's T counts SGD iterations (rounds x local steps)

    def at_scale(self, l_factor: float, d_factor: float) -> Plan:
        """This plan with L, mu (and a default step 1/L, a searched alpha) times ``l_factor``
        and D times ``d_factor``: one point of its ``scales`` (:data:`SCALE_FACTORS`; a typo in
        an exponent of L or D is invisible at L = D = 1)."""
        if (l_factor, d_factor) == (1.0, 1.0):
            return self
        s = self.spec
        zeta = None if s.zeta is None else s.zeta * l_factor * d_factor  # units of L D
        spec = dataclasses.replace(s, L=s.L * l_factor, mu=s.mu * l_factor, D=s.D * d_factor,
                                   zeta=zeta)
        step = None if self.step_fixed is None else self.step_fixed / l_factor
        f = _toys_map.unit_factor(self.algorithm, l_factor, d_factor)
        grid = tuple({k: v * f if k in self.hyper_scaled else v for k, v in h.items()}
                     for h in self.hyper_grid)
        return dataclasses.replace(self, spec=spec, step_fixed=step, scales=((1.0, 1.0),),
                                   hyper_grid=grid)

    def with_hyper(self, hyper: dict) -> Plan:
        """This plan at one point of its hyper-parameter grid (with a ``p_skew``, the data
        weights of its spec)."""
        plan = dataclasses.replace(self, hyper_grid=(dict(hyper),))
        if "p_skew" not in hyper:
            return plan
        w = skewed(self.spec.n_clients, hyper["p_skew"])
        return dataclasses.replace(plan, spec=dataclasses.replace(self.spec, weights=w))

    @property
    def hyper(self) -> dict:
        """The algorithm's hyper-parameters: the plan's grid point (:meth:`with_hyper`); a
        plan with several reads as at the first one (:meth:`scalars`, :meth:`eta_range`)."""
        return {k: v for k, v in self.hyper_grid[0].items() if k not in _RUN_KEYS}

    @property
    def participation(self) -> str | None:
        """The participation pattern of the grid point (None: full participation)."""
        return self.hyper_grid[0].get("participation")

    def masks(self, Z, T: int):
        """(P, T, N) participation masks of the search points ``Z`` (None: full)."""
        if self.participation is None:
            return None
        if Z is None:
            raise ValueError(f"participation {self.participation!r}: the masks are drawn from "
                             "the instance's search point z, and none was given")
        return draw_masks(self.participation, Z, T, self.spec.n_clients)

    def run_info(self, T: int, tau: int) -> dict:
        """What an instance's run record adds to its step and rounds: the step schedule and
        the participation pattern, when the plan has them."""
        out = {}
        if self.shift:
            out["lr_schedule"] = f"1/(mu (t + {self.step_name})), mu = {self.spec.mu:g}, " \
                                 f"{self.step_name} searched (the run's lr)"
        elif self.schedule is not None:
            out["lr_schedule"] = f"1/(mu (t + {self.bm_gamma(T, tau):.6g})), mu = {self.spec.mu:g}"
        if self.participation is not None:
            out["participation"] = self.participation
        if self.spec.weights is not None:
            out["p_min"] = float(self.spec.p.min())
        return out

    def steps(self, eta, T: int, tau: int):
        """The steps of a run from the search's ``eta`` (P,): ``eta`` itself (one step per
        instance) or the plan's schedule, (P, T tau) one value per SGD iteration."""
        eta = np.asarray(eta, dtype=float)
        if self.shift:  # eta holds each instance's shift gamma
            t = np.arange(int(T) * int(tau), dtype=float)
            return 1.0 / (self.spec.mu * (t[None, :] + eta[:, None]))
        if self.schedule is None:
            return eta
        sched = _toys_map.schedule(self.spec.mu, self.bm_gamma(T, tau), T, tau)
        return np.tile(sched, (eta.shape[0], 1))

    def bm_gamma(self, T: int, tau: int) -> float:
        """gamma of BM's step schedule (:func:`verify.falsify.toys_map.bm_gamma`)."""
        s = self.spec
        return _toys_map.bm_gamma(s.L, s.mu, self.scalars(T, tau)["p_min"], tau)

    def accepts(self, family) -> bool:
        """Whether ``family`` gives every parameter of this plan (G / PsiG of FedAU's bounds:
        only families with bounded gradients; FedAU's h: quadratics, verify.falsify.fedau_lhs)."""
        if self.algorithm == "fedau":
            from .fedau_lhs import accepts

            if not accepts(self, family):
                return False
        return not {"G", "PsiG"} & set(self.measured) or \
            bool(getattr(family, "bounded_gradient", False))

    def toys_call(self) -> tuple:
        """``(algorithm, keyword arguments)`` of ``toys.run`` for this plan's algorithm."""
        return _toys_map.toys_call(self.algorithm, self.hyper, self.spec.n_clients)

    def eta_range(self, T: int, tau: int):
        """(lo, hi) of the step size for a run of ``T`` rounds of ``tau`` local steps (of BM's
        shift gamma for a plan with :attr:`shift`)."""
        if self.shift:
            from ._plan_parts import shift_range

            return shift_range(self, T, tau)
        if self.schedule is not None:  # the schedule's first step (the search's eta)
            eta0 = 1.0 / (self.spec.mu * self.bm_gamma(T, tau))
            return eta0, eta0
        if self.step_name is None:
            return self.step_fixed, self.step_fixed
        key = self._range_key(T, tau)
        if key is not None and key in _RANGES:  # the same statement and settings: the same
            return _RANGES[key]                  # exact bisection (every family, every group)
        hi = eta_max(self, T, tau)
        lo = hi / 20.0
        if not feasible(self, T, tau, lo):  # a lower bound on the step (a pinned step)
            lower = [v for v in step_sides(self, T, tau) if lo < v <= hi
                     and feasible(self, T, tau, v)]
            lo = min(lower) if lower else hi
        if key is not None:
            if len(_RANGES) >= _RANGES_MAX:
                _RANGES.clear()
            _RANGES[key] = (lo, hi)
        return lo, hi

    def _range_key(self, T: int, tau: int):
        """What :meth:`eta_range` depends on (the bound's statement, the scalars, the step's
        name), or None when a value is not hashable."""
        b = self.bound
        try:
            key = (b.id, str(b.expr), str(b.preconditions), self.step_name, int(T), int(tau),
                   tuple(sorted(self.scalars(T, tau).items())))
            hash(key)
        except TypeError:
            return None
        return key

    def scalars(self, T: int, tau: int) -> dict:
        """The parameters known before a run (constants, run settings, the setting)."""
        s = self.spec
        p = s.p
        out = {"L": s.L, "mu": s.mu, "D": s.D, "D0": s.D, "R": s.D,
               "T": T * tau if self.t_iterations else T, "M": s.n_clients,
               "N": s.n_clients, "sigma": 0.0, "S": float(p @ p), "p_min": float(p.min())}
        out.update({k: tau for k in LOCAL_NAMES})
        if s.zeta is not None:
            out["zeta"] = s.zeta
            if self.algorithm == "fedau":  # A3's delta: the tilts' largest norm
                out["delta"] = s.zeta
        out.update(self.hyper)
        out.update(self.fixed)
        return out


_RANGES: dict = {}
_RANGES_MAX = 4096  # step ranges kept per process (:meth:`Plan.eta_range`)


def make_plan(bound, setting: dict, algorithm=None, function_class=None,
              participation=None, symbols=None) -> Plan:
    """The :class:`Plan` of a registered bound, or :class:`NotApplicable` with the reason.

    ``algorithm`` / ``function_class``: those of a Bound object that is not registered (a
    registered or catalogue bound keeps its own; a different value is a DomainError).
    ``participation``: the patterns a registered bound is searched under
    (:func:`~verify.falsify._plan_parts.draw_masks`; default every client every round).
    ``symbols``: what a Bound object's symbols mean on a run (as ``boundlab.register``
    takes them; a registered bound keeps its own)."""
    from ._plan_pins import unpin  # sympy: loaded when a plan is made, not on import

    bound = unpin(bound)  # a pinned local-step count: judged at the run's (_plan_pins)
    check_participation_allowed(bound, participation)
    algo, fclass = declared(bound, algorithm, function_class)
    names = set(bound.params) | set(bound.extra_params)
    s = dict(setting)
    spec = spec_of(s, algo, fclass)
    if algo == "fedau":
        return _fedau_plan(bound, s, spec, fclass, names, participation, setting)
    T_grid = (int(s.pop("T")),) if "T" in s else T_GRID
    tau_names = [k for k in LOCAL_NAMES if k in s]
    tau_grid = (1,) if algo == "gd" else (
        (int(s.pop(tau_names[0])),) if tau_names else TAU_GRID)
    # under BM's schedule (a shift symbol) the steps come from it: a step the lhs's measure
    # gives per round (client_discrepancy's eta_t) is not a second searched step
    given_by_lhs = set(_gives(bound.lhs)) if shift_name(bound, symbols) else set()
    step_name, step_fixed, notes, step_given = step_of(names - given_by_lhs, s, spec.L)
    shift = step_name is not None and step_name == shift_name(bound, symbols)
    if shift:
        notes = [f"{step_name} is the shift of BM's step schedule eta_t = 1/(mu (t + "
                 f"{step_name})), searched from the smallest value the preconditions allow to "
                 "20 times it"]
    decaying = step_name is None and not step_given and algo in _toys_map.SCHEDULES
    if decaying:  # the algorithm's schedule, not 1/L (run_extras)
        step_fixed, notes = None, []
    try:
        hyper_grid, hyper_scaled = _toys_map.hyper_grid(algo, s, spec.L, spec.D)
    except ValueError as exc:
        from boundlab.errors import DomainError

        raise DomainError("setting", setting, str(exc)) from exc
    notes += _toys_map.notes(algo, hyper_grid, hyper_scaled)
    hetero = sorted(names & HETEROGENEITY)
    spec, measured, het_notes = heterogeneity(spec, hetero, algo, fclass, s)
    notes += het_notes
    check_loss_weights(algo, fclass, spec)
    hyper_grid, schedule, extra = run_extras(bound, algo, spec, participation, hyper_grid,
                                             decaying, set(s))
    notes = extra[:1] + notes + extra[1:] if decaying else notes + extra
    measured += tuple(k for k in KAPPA if k in names)
    fixed = {k: float(v) for k, v in s.items() if k in names}
    fixed.update({k: step_fixed for k in STEP_NAMES if k in names and step_given})
    skew, skew_notes = unit_skew(algo, names, participation, s)
    fixed.update(skew)
    notes += skew_notes
    if algo == "gd":  # one client: no heterogeneity at all
        fixed.update({k: 0.0 for k in hetero})
    held = {"zeta"} if spec.zeta is not None else set()
    searched = set().union(*hyper_grid) | set(measured)
    missing = sorted(names - GIVEN - held - searched - set(_gives(bound.lhs))
                     - set(fixed))
    if missing:
        raise NotApplicable(f"parameter(s) {', '.join(missing)} of {bound.id} are not measured "
                            f"by falsify for lhs={bound.lhs}, algorithm={algo}: give them as "
                            "name=value")
    plan = Plan(bound, bound.lhs, algo, fclass, spec, T_grid, tau_grid, step_name, step_fixed,
                fixed, tuple(notes), scales(setting, step_given), hyper_grid, hyper_scaled,
                measured, "bm" if shift else schedule,
                t_iterations=t_iterations(bound, symbols), shift=shift)
    if skew:  # rho = 1 made it searchable: a step range must exist too (else, as before, the
        plan.eta_range(T_grid[0], tau_grid[0])  # plan is NotApplicable and a catalogue bound
    return plan                                  # falls back to its paper-setting search


def _fedau_plan(bound, s, spec, fclass, names, participation, setting) -> Plan:
    """FedAU's plan (:mod:`verify.falsify.fedau_paths`: Bernoulli paths enumerated,
    F, W, Q, G, eta per instance, delta held by tilts)."""
    from ._plan_fedau import plan_fields

    f = plan_fields(s, spec, names, ZETA_DEFAULT, participation, GIVEN, bound.id, bound.lhs)
    held = dict(setting, zeta=1.0) if {"delta", "zeta"} & set(setting) else setting
    return Plan(bound, bound.lhs, "fedau", fclass, scales=scales(held, f.pop("step_given")),
                **f)


def _gives(lhs: str) -> tuple:
    """The per-round parameters the measure of ``lhs`` gives the bound."""
    from .. import measures

    return measures.get(lhs).gives


def batched_plan_applies(bound) -> bool:
    """Whether the batched search of :func:`verify.falsify` runs ``bound`` as it is declared
    (its metadata's algorithm and class, a measured left-hand side)."""
    import boundlab

    try:
        meta = boundlab.registry.meta(bound.id)
        make_plan(bound, {}, meta.get("algorithm"), meta.get("function_class"))
    except Exception:  # noqa: BLE001 - NotApplicable, or no metadata: not searched here
        return False
    return True
