"""What :func:`verify.falsify.plan.make_plan` reads from a bound and its setting: the declared
algorithm and function class (checked against what falsify runs), the :class:`Spec` of the
setting's constants, the heterogeneity constants (zeta held fixed by tilts, Gamma measured)
and the (L, D) scale factors searched when the setting leaves them free.
"""

from __future__ import annotations

import dataclasses

from ._plan_parts import NotApplicable, check_no_pinned_setting, check_population_measures
from .families.registry import CLASSES, Spec
from .toys_map import ALGORITHMS

__all__ = ["SCALE_FACTORS", "ZETA_DEFAULT", "HETEROGENEITY", "scales", "declared",
           "check_declared", "spec_of", "heterogeneity"]

#: the (L, D) scale factors searched when the setting leaves L (and the step) or D free
SCALE_FACTORS = (1.0, 0.1, 10.0)

#: heterogeneity constants: zeta is held fixed by tilts (families.tilt), Gamma measured
#: (strongly convex classes), the others not yet
ZETA_DEFAULT = 0.5  # zeta = ZETA_DEFAULT * L * D when the setting gives none
HETEROGENEITY = {"zeta", "Gamma", "B", "zeta2", "G_het"}


def scales(setting: dict, step_given: bool) -> tuple:
    """The (L factor, D factor) pairs searched: :data:`SCALE_FACTORS` for each of L and D the
    setting leaves free (L is held by a given step or zeta too).

    >>> scales({"L": 2.0, "D": 1.0}, False)
    ((1.0, 1.0),)
    >>> len(scales({}, False)), scales({"D": 1.0}, False)[1]
    (9, (0.1, 1.0))
    """
    lf = (1.0,) if {"L", "zeta"} & set(setting) or step_given else SCALE_FACTORS
    df = (1.0,) if {"D", "D0", "R", "zeta"} & set(setting) else SCALE_FACTORS
    return tuple((a, b) for a in lf for b in df)


def check_declared(bound, algorithm, function_class) -> dict:
    """The metadata of ``bound`` ({} for a Bound object that is not registered); a DomainError
    when ``algorithm`` or ``function_class`` contradicts what it is declared with."""
    import boundlab
    from boundlab.errors import DomainError, UnknownNameError

    try:  # catalogue and registered bounds alike
        meta = boundlab.registry.meta(bound.id)
    except UnknownNameError:  # a Bound object that is not registered
        meta = {}
    for name, given in (("algorithm", algorithm), ("function_class", function_class)):
        if given is not None and meta.get(name) not in (None, given):
            raise DomainError(name, given, f"{meta[name]!r}, the one {bound.id} is "
                                           "declared with")
    return meta


def declared(bound, algorithm, function_class):
    """``(algorithm, function class)`` of ``bound`` from its metadata (or the arguments for an
    unregistered Bound); NotApplicable when falsify cannot run it."""
    meta = check_declared(bound, algorithm, function_class)
    algo = meta.get("algorithm") or algorithm
    fclass = meta.get("function_class") or function_class
    from .. import measures
    from .routes import route_for

    route = route_for(bound)
    if route is not None:  # not a run: verify.falsify sends it to its route
        raise NotApplicable(f"lhs {bound.lhs!r} is judged by {route.__name__} "
                            "(verify.falsify routes it there), not by a planned run")
    if bound.lhs not in measures.names():  # the registry's reason first (an identity too)
        raise NotApplicable(f"lhs {bound.lhs!r} is not measured on a run: "
                            f"{measures.reason(bound.lhs)} (verify.measures: "
                            f"{', '.join(measures.names())})")
    if bound.kind != "upper":
        raise NotApplicable(f"{bound.id} is a {bound.kind!r} statement, not an upper bound")
    check_population_measures(measures.paper_name(bound.lhs, algo), algo)
    if algo not in ALGORITHMS and algo not in _toys_names():
        raise NotApplicable(f"algorithm {algo!r}: falsify runs {', '.join(ALGORITHMS)} and "
                            "every algorithm of toys.algorithms.names() (register the bound "
                            "with one of them); no other algorithm is run in its place")
    if fclass not in CLASSES:
        raise NotApplicable(f"function_class {fclass!r}: register the bound with one of "
                            f"{', '.join(CLASSES)}")
    check_no_pinned_setting(bound)
    return algo, fclass


def _toys_names() -> list:
    import toys

    return toys.algorithms.names()


def spec_of(s: dict, algo: str, fclass: str) -> Spec:
    """The :class:`Spec` of the setting ``s`` (its constants popped)."""
    L = float(s.pop("L", 1.0))
    mu = float(s.pop("mu", 0.1 * L if fclass == "smooth-strongly-convex" else 0.0))
    if fclass == "smooth-strongly-convex" and mu <= 0:
        raise NotApplicable("a strongly convex class needs mu > 0")
    n = 1 if algo == "gd" else int(s.pop("n_clients", s.pop("M", 3)))
    return Spec(L=L, mu=mu, D=float(s.pop("D", 1.0)), n_clients=n, dim=int(s.pop("dim", 2)))


def heterogeneity(spec, hetero, algo, fclass, s):
    """``(spec, measured, notes)``: zeta held fixed (tilted families), Gamma measured on each
    instance (strongly convex classes); NotApplicable for what neither covers."""
    if not hetero or algo == "gd":
        return spec, (), []
    measured = ("Gamma",) if "Gamma" in hetero and fclass == "smooth-strongly-convex" else ()
    others = [h for h in hetero if h != "zeta" and h not in measured]
    if others or (measured and "zeta" in hetero):
        why = ("zeta's tilted clients have no minimiser: Gamma cannot be measured with zeta "
               "held fixed" if not others else
               f"heterogeneity constant(s) {', '.join(others)}: no family holds them fixed or "
               "measures them yet (zeta: tilted clients; Gamma: measured on strongly convex "
               "classes)")
        raise NotApplicable(why)
    if measured:
        return spec, measured, ["Gamma = F* - sum_i p_i F_i* measured on each instance "
                                "(exact client minima)"]
    given = "zeta" in s
    zeta = float(s.pop("zeta")) if given else ZETA_DEFAULT * spec.L * spec.D
    notes = [] if given else [f"zeta = {zeta:g} ({ZETA_DEFAULT:g} L D; pass zeta=): clients "
                              "share one function plus tilts of norm zeta"]
    return dataclasses.replace(spec, zeta=zeta), (), notes
