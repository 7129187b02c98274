"""Parts of :mod:`verify.falsify.plan`: the reason a bound is not searched
(:class:`NotApplicable`), what an algorithm's run needs (its step schedule, the participation
patterns, loss weights' client minima, T in SGD iterations) and the step-size range its
preconditions allow (bisection on the preconditions, the sides that pin the step).
"""

from __future__ import annotations

import math

import numpy as np

from . import toys_map as _toys_map
from ._keys import FEDAU_PATH_KEYS, ROUND_KEYS, STATE_KEYS

__all__ = ["NotApplicable", "POPULATION_ARRAYS", "check_population_measures", "unit_skew",
           "ALPHA_IS_P", "P_SKEWS",
           "STEP_NAMES", "LOCAL_NAMES", "step_of",
           "check_no_pinned_setting", "check_loss_weights", "check_participation_allowed",
           "eta_max", "feasible", "run_extras", "skewed", "step_sides", "t_iterations",
           "with_participation", "canonical", "draw_masks", "GRIDS", "CYCLE", "PARTIAL"]


STEP_NAMES = ("eta", "lr", "gamma")
LOCAL_NAMES = ("tau", "E", "K", "I")


class NotApplicable(Exception):
    """The bound cannot be judged by this search; ``str(exc)`` is the reason."""


#: the run arrays a population run (``toys.run_many``) gives the search
#: (:func:`verify.falsify.population.quantities`); any other array of
#: :mod:`verify.measures` would come from one ``toys.run`` trace only
POPULATION_ARRAYS = (*STATE_KEYS, *ROUND_KEYS, "kappa_min", "kappa_max", "grad_norm2_virtual",
                     "rho_max", "step_dist2", "step_lr", "step_pairwise_drift",
                     "step_local_deviation", "step_perturbed_divergence",
                     "step_neighbour_avg_deviation")


#: algorithms that aggregate with the clients' weights (alpha = p under full participation):
#: BM's skew rho(t, w) = sum_i alpha_i x_i / sum_i p_i x_i is then 1 at every point
ALPHA_IS_P = ("fedavg",)
SKEW_NAMES = ("rho_bar", "rho_tilde")


def unit_skew(algo: str, names, participation, given) -> tuple:
    """``({rho_bar: 1, rho_tilde: 1} for those the bound names and the setting does not give,
    notes)`` when ``algo`` aggregates with alpha = p under full participation; else nothing.

    >>> unit_skew("fedavg", {"rho_bar", "eta"}, None, {})[0]
    {'rho_bar': 1.0}
    >>> unit_skew("fedsoftmax", {"rho_bar"}, None, {})[0]
    {}
    """
    if algo not in ALPHA_IS_P or participation is not None:
        return {}, []
    out = {k: 1.0 for k in SKEW_NAMES if k in names and k not in given}
    return out, ([f"{', '.join(out)} = 1: {algo} aggregates with alpha = p (every client "
                  "every round), so rho(t, w) = 1 at every point (BM)"] if out else [])


def check_population_measures(lhs: str, algorithm: str | None = None) -> None:
    """NotApplicable when the registry's measure of ``lhs`` reads a run array a population
    run does not record (verify.check still measures it on a ``toys.run``); FedAU's path
    search (``algorithm="fedau"``) also gives :data:`~verify.falsify._keys.FEDAU_PATH_KEYS`.

    >>> check_population_measures("final_gap")
    >>> check_population_measures("rho")  # rho_max: a record="step" population's skews
    """
    from .. import measures

    m = measures.get(lhs)
    known = POPULATION_ARRAYS + (FEDAU_PATH_KEYS if algorithm == "fedau" else ())
    missing = [k for k in m.needs if k not in known]
    if missing:
        raise NotApplicable(f"lhs {lhs!r} needs the run array(s) {', '.join(missing)}, which "
                            "the search's population runs do not record: verify.check "
                            f"measures it on a toys.run ({m.doc})")


def step_of(names, s: dict, L: float):
    """``(step name searched or None, fixed step or None, notes, whether the setting gave
    it)``."""
    steps = [k for k in STEP_NAMES if k in names]
    if len(steps) > 1:
        raise NotApplicable(f"the bound names several step sizes {steps}: falsify cannot tell "
                            "which one the algorithm uses")
    given = [k for k in STEP_NAMES if k in s]
    step_fixed = float(s.pop(given[0])) if given else None
    if steps and step_fixed is None:
        return steps[0], None, [], False
    if step_fixed is None:
        return None, 1.0 / L, [f"step size 1/L = {1.0 / L:g} (the bound names none; pass "
                               "eta=)"], False
    return None, step_fixed, [], True


#: a bound's symbol that is the shift gamma of BM's schedule eta_t = 1/(mu (t + gamma)), not
#: a step size: its metadata's ``symbols`` map it to this role (``boundlab.register(...,
#: symbols={"gamma": "lr_shift"})``; BM's corollaries in the catalogue)
SHIFT_ROLE = "lr_shift"


def roles(bound, symbols=None) -> dict:
    """What the bound's symbols mean on a run (its metadata's ``symbols``, see
    :func:`boundlab.register`), or ``symbols`` for a Bound object that is not registered; a
    registered bound given other ``symbols`` is a DomainError."""
    import boundlab
    from boundlab.errors import DomainError

    try:
        meta = dict(boundlab.registry.meta(bound.id).get("symbols", {}) or {})
    except Exception:  # noqa: BLE001 - a Bound object that is not registered: no roles
        meta = None
    if symbols is None:
        return meta or {}
    if not isinstance(symbols, dict) or not all(isinstance(k, str) and (v is None or isinstance(
            v, str)) for k, v in symbols.items()):
        raise DomainError("symbols", symbols, "a dict of parameter name -> run meaning (str "
                          "or None)")
    if meta and meta != symbols:
        raise DomainError("symbols", symbols, f"{meta!r}, the ones {bound.id} is declared with")
    return dict(symbols)


def shift_name(bound, symbols=None):
    """The step-named symbol of ``bound`` that :func:`roles` reads as BM's schedule shift
    (:data:`SHIFT_ROLE`), or None."""
    table = roles(bound, symbols)
    names = set(bound.params) | set(bound.extra_params)
    found = [k for k in STEP_NAMES if table.get(k) == SHIFT_ROLE and k in names]
    return found[0] if found else None


def shift_range(plan, T, tau) -> tuple:
    """(lo, hi) of BM's shift gamma: lo the smallest value the preconditions allow (the
    largest of their lower bounds ``gamma >= ...`` at the run's scalars), hi = 20 lo (steps
    20x smaller). NotApplicable when no such gamma is feasible."""
    sides = step_sides(plan, T, tau)
    lo = max(sides) if sides else 1.0
    for _ in range(8):  # a lower bound that is not the binding one: move up
        if feasible(plan, T, tau, lo):
            return lo, 20.0 * lo
        lo *= 2.0
    raise NotApplicable(f"no shift {plan.step_name} >= {max(sides) if sides else 1.0:.6g} of "
                        f"BM's schedule 1/(mu (t + {plan.step_name})) satisfies the "
                        f"preconditions of {plan.bound.id} at T={T}, tau={tau}")


def check_no_pinned_setting(bound) -> None:
    """NotApplicable when the preconditions pin a run setting the search takes from an integer
    grid (``T``, the local steps) to an expression (``E <= E_opt`` and ``E >= E_opt``)."""
    seen = {}
    for pc in bound.preconditions:
        name = getattr(pc.lhs, "name", None)
        if name in ("T", *LOCAL_NAMES) and pc.op in ("<=", ">="):
            seen.setdefault((name, str(pc.rhs)), set()).add(pc.op)
    for (name, rhs), ops in seen.items():
        if ops == {"<=", ">="}:
            raise NotApplicable(f"its preconditions pin {name} = {rhs}: falsify runs {name} "
                                "from an integer grid, not at a value set by the instance")


#: the data weights searched for a bound that names p_min: p_i ∝ r^i, r in P_SKEWS
P_SKEWS = (1.0, 0.5, 0.2)


def skewed(n_clients: int, r: float) -> tuple:
    """Data weights p_i ∝ r^i, i = 0..N-1 (r = 1: uniform).

    >>> [round(v, 4) for v in skewed(3, 0.5)]
    [0.5714, 0.2857, 0.1429]
    """
    w = float(r) ** np.arange(int(n_clients), dtype=float)
    return tuple((w / w.sum()).tolist())


def run_extras(bound, algo, spec, participation, grid, decaying, given=()):
    """``(grid, schedule, notes)``: the hyper-parameter grid times the participation patterns
    and (for a bound naming p_min, unless the setting gives it: then uniform weights) the data
    weights' skews; the algorithm's step schedule when ``decaying`` (the bound names no step
    and the setting gives none)."""
    names = set(bound.params) | set(bound.extra_params)
    grid, notes = with_participation(bound, algo, participation, spec, grid)
    skews = (1.0,)
    if "p_min" in names and "p_min" not in given and spec.n_clients > 1 and algo != "beta" \
            and spec.zeta is None:
        skews = P_SKEWS
        grid = tuple({**h, "p_skew": r} for h in grid for r in skews)
        notes.append(f"data weights p_i ∝ r^i searched, r in {{{', '.join(map(str, skews))}}} "
                     "(the bound names p_min)")
    if not decaying:
        return grid, None, notes
    p_min = min(skewed(spec.n_clients, r)[-1] for r in skews)
    if 4.0 * spec.L / spec.mu < 1.0 + 3.0 / (8.0 * p_min):
        raise NotApplicable(f"4L/mu = {4 * spec.L / spec.mu:g} < 1 + 3/(8 p_min) = "
                            f"{1 + 3 / (8 * p_min):g}: the gamma of BM's step would depend on "
                            "the measured weights (give eta= for a constant step)")
    return grid, _toys_map.SCHEDULES[algo], [
        "step eta_t = 1/(mu (t + gamma)), t = SGD iteration, gamma = max(4L/mu, 1 + 3/(8 p_min), "
        "E - 1) (BM's corollary step; pass eta= for a constant step)"] + notes


#: the cycle length (rounds) of the searched cyclic patterns: a horizon of 4..64 rounds sees
#: whole cycles (toys' default, 100, is longer than every horizon searched)
CYCLE = 4
#: the points of each pattern family a participation setting searches (module of the plan)
GRIDS = {"bernoulli": ({"p": 0.25}, {"p": 0.5}, {"p": 0.9}),
         "cyclic": ({"p": 0.25, "cycle": CYCLE}, {"p": 0.5, "cycle": CYCLE}),
         "markov": ({"p": 0.25, "rate": 0.25}, {"p": 0.5, "rate": 0.25})}
#: the algorithms searched under partial participation (beta's graph and FedAU's expectation
#: over its own Bernoulli paths are searched with every client)
PARTIAL = ("gd", "fedavg", "fedprox", "fedsoftmax")


def _text(name: str, opts: dict) -> str:
    return name + (":" + ",".join(f"{k}={v:g}" for k, v in opts.items()) if opts else "")


def canonical(spec, n_clients: int) -> tuple:
    """The pattern texts a participation setting ``spec`` stands for (:mod:`verify.falsify.
    plan`); () for full participation. Each is checked by building its ``toys.participation``
    process (errors name the option, its value and domain).

    >>> canonical("bernoulli", 3)
    ('bernoulli:p=0.25', 'bernoulli:p=0.5', 'bernoulli:p=0.9')
    """
    from boundlab.errors import DomainError
    from toys import participation as part

    if spec is None or spec == "full":
        return ()
    if not isinstance(spec, str):
        raise DomainError("participation", spec, "a pattern name: 'full', 'any', "
                          f"{', '.join(map(repr, GRIDS))} or 'name:key=value,...'")
    name, opts = part.parse(spec)
    if name == "full" and not opts:
        return ()
    if name == "any" and not opts:
        pts = [(n, o) for n in GRIDS for o in GRIDS[n]]
    elif name in GRIDS and not opts:
        pts = [(name, o) for o in GRIDS[name]]
    else:
        pts = [(name, opts)]
    for n, o in pts:
        part.make(n, int(n_clients), **o)
    return tuple(_text(n, o) for n, o in pts)


def with_participation(bound, algo, participation, spec, grid):
    """``(grid, notes)``: the hyper-parameter grid times the participation patterns."""
    patterns = canonical(participation, spec.n_clients)
    if not patterns:
        return grid, []
    if algo not in PARTIAL:
        raise NotApplicable(f"participation={participation!r}: partial participation is "
                            f"searched for {', '.join(PARTIAL)}, not {algo}")
    grid = tuple({**h, "participation": q} for h in grid for q in patterns)
    return grid, [f"participation searched over {', '.join(patterns)} (masks drawn per "
                  "instance, replayed on toys.run as its participation matrix)"]


_SALT = 0x5EED_FA15


def draw_masks(pattern: str, Z, rounds: int, n_clients: int) -> np.ndarray:
    """(P, rounds, N) participation masks of the search points ``Z`` (P, n) under ``pattern``
    (a text of :func:`~verify.falsify._plan_parts.canonical`): row k drawn by toys' process
    (``toys.participation.sample``) with a generator seeded by the bytes of Z[k] and the
    pattern, so the search and the replay see the same draw and perturbing z draws anew.

    >>> m = draw_masks("bernoulli:p=0.5", np.zeros((2, 4)), rounds=3, n_clients=2)
    >>> m.shape, bool(np.array_equal(m[0], m[1]))   # the same z, the same draw
    ((2, 3, 2), True)
    """
    from toys import participation as part

    name, opts = part.parse(pattern)
    proc = part.make(name, int(n_clients), **opts)
    Z = np.ascontiguousarray(np.atleast_2d(np.asarray(Z, dtype=np.float64)))
    tag = [int(b) for b in pattern.encode()]
    out = np.zeros((Z.shape[0], int(rounds), int(n_clients)), dtype=bool)
    for k in range(Z.shape[0]):  # each point's own stream (the draws only)
        words = np.frombuffer(Z[k].tobytes(), dtype=np.uint32).tolist()
        ss = np.random.SeedSequence([_SALT, *tag, int(rounds), *words])
        out[k] = part.sample(proc, int(rounds), np.random.default_rng(ss))
    return out


def check_participation_allowed(bound, participation) -> None:
    """A DomainError for a partial participation pattern on a catalogue bound: every one the
    search runs assumes every client in every round."""
    if participation is None or participation == "full":
        return
    import boundlab
    from boundlab.errors import DomainError

    if not boundlab.registry.is_registered(bound.id) and bound.id in boundlab.ids():
        raise DomainError("participation", participation, "'full' for the catalogue bound "
                          f"{bound.id}: its theorem assumes every client in every round "
                          "(register a copy to search it under partial participation)")


def check_loss_weights(algo, fclass, spec) -> None:
    """fedsoftmax scores the clients by F_i(x) - F_i*: their minima must exist."""
    if algo == "fedsoftmax" and (fclass != "smooth-strongly-convex" or spec.zeta is not None):
        raise NotApplicable("fedsoftmax weighs the clients by F_i(x) - F_i*: falsify runs it on "
                            "strongly convex clients (their minima F_i* exist), not on "
                            f"{fclass}{' with zeta held fixed' if spec.zeta is not None else ''}")


def t_iterations(bound, symbols=None) -> bool:
    """Whether the bound's T counts SGD iterations (rounds x local steps, :func:`roles`)."""
    return roles(bound, symbols).get("T") == "rounds*local_steps"


def feasible(plan, T, tau, eta) -> bool:
    b = plan.bound
    names = set(b.params) | set(b.extra_params)
    vals = {k: v for k, v in {**plan.scalars(T, tau), plan.step_name: eta}.items() if k in names}
    if not set(names) - set(vals):
        try:
            return not b.violated_preconditions(**vals)
        except Exception:  # noqa: BLE001 - a value outside a domain: not a feasible step
            return False
    # per-round parameters are measured later: the preconditions that do not read them decide
    # the step here; the judge checks every precondition on each measured instance
    try:
        return all(bool(pc.holds({n: vals[n] for n in pc.names}))
                   for pc in b.preconditions if set(pc.names) <= set(vals))
    except Exception:  # noqa: BLE001
        return False


def step_sides(plan, T, tau) -> list:
    """The values of the preconditions' other side where one side is the step alone
    (``gamma <= 1/(2*L)``, ``gamma >= 1/(2*E*(L+alpha))``), at the run's scalars."""
    import sympy as sp

    vals = {**plan.scalars(T, tau), plan.step_name: 1.0}  # the step's value is not read
    out = []
    for pc in plan.bound.preconditions:
        if not set(pc.names) <= set(vals):
            continue
        sides = (sp.sympify(pc.lhs), sp.sympify(pc.rhs))
        for i in (0, 1):
            one, other = sides[i], sides[1 - i]
            if isinstance(one, sp.Symbol) and one.name == plan.step_name and \
                    plan.step_name not in {x.name for x in other.free_symbols}:
                try:
                    v = float(pc.evaluators[1 - i]([vals[n] for n in pc.names]))
                except Exception:  # noqa: BLE001 - not a number here: no bound from it
                    continue
                if math.isfinite(v) and v > 0:
                    out.append(v)
    return out


def strictly_inside(plan, T, tau, eta) -> float:
    """The step ``eta`` moved down (by 2**-40 relative at a time) until every precondition
    that reads only the run's values holds exactly, in 50-digit arithmetic without the
    judge's relative tolerance: the search never runs a step at its limit times (1 + 1e-12)."""
    for _ in range(200):
        if _exact_ok(plan, T, tau, eta):
            return eta
        eta *= 1.0 - 2.0 ** -40
    return eta


def _exact_ok(plan, T, tau, eta) -> bool:
    import mpmath
    import sympy as sp

    vals = {**plan.scalars(T, tau), plan.step_name: eta}
    with mpmath.workdps(50):
        for pc in plan.bound.preconditions:
            if not set(pc.names) <= set(vals):
                continue
            syms = [sp.Symbol(n) for n in pc.names]
            sides = [sp.lambdify(syms, e.subs({s: sp.Symbol(s.name) for s in
                                               sp.sympify(e).free_symbols}), "mpmath")
                     for e in (sp.sympify(pc.lhs), sp.sympify(pc.rhs))]
            a, b = (f(*[mpmath.mpf(float(vals[n])) for n in pc.names]) for f in sides)
            if isinstance(a, mpmath.mpc) or isinstance(b, mpmath.mpc):
                return False
            ok = {"<=": a <= b, "<": a < b, ">=": a >= b, ">": a > b}[pc.op]
            if not ok:
                return False
    return True


def eta_max(plan, T, tau) -> float:
    """The largest step the preconditions allow (at most 2/L), strictly inside them
    (:func:`strictly_inside`) unless they pin the step."""
    cap = 2.0 / plan.spec.L * (1 - 1e-9)
    if feasible(plan, T, tau, cap):
        return strictly_inside(plan, T, tau, cap)
    lo = cap * 1e-6
    if not feasible(plan, T, tau, lo):
        pinned = [v for v in step_sides(plan, T, tau) if v <= cap
                  and feasible(plan, T, tau, v)]
        if pinned:  # a lower bound on the step too: the largest step the sides allow
            return max(pinned)
        raise NotApplicable(f"no step size in [{lo:.3g}, {cap:.3g}] satisfies the "
                            f"preconditions of {plan.bound.id} at T={T}, tau={tau}")
    hi = cap
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if feasible(plan, T, tau, mid) else (lo, mid)
    return strictly_inside(plan, T, tau, lo)
