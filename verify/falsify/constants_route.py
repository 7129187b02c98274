""":func:`verify.falsify` for the constants of seeds 000/001's Corollary 4: the speed term V
(lhs ``speed_constant``) and the learning-error term (lhs ``error_constant``), kind
``identity``: the bound states the constant in closed form.

The measured side is the **corollary's own proof**, never the closed form under test: the
induction of :mod:`verify.checks.skew_constants` (one implementation, shared with
``boundlab verify``) reads B, C and D off ``skew.recursion``'s expression at the point and
gives V = (L/2)(gamma D0^2 + beta^2 C/(beta mu B - 1)) and the E-term
(L/2) max(0, D beta/(beta mu B - 1)), beta = 1/mu, in mpmath. Which constant a bound states
(:data:`QUANTITIES`):

* ``V`` -- a ``speed_constant`` with ``rho_bar`` among its parameters: V at the corrected
  gamma = max(4L/mu, B, E - 1) (``skew.speed``);
* ``V_min`` -- a ``speed_constant`` whose source names a Remark or V_min: the limit of V as
  rho_bar -> infinity at the printed gamma = 4L/mu (``skew.vmin``);
* ``V_fedavg`` -- any other ``speed_constant``: V at rho_bar = rho_tilde = 1, alpha = p
  (``skew.fedavg_speed``);
* ``E_term`` -- an ``error_constant``: the clipped E-term (``skew.error``; the printed,
  unclipped form ``skew.error.printed`` is false where rho_tilde < rho_bar and Gamma > 0,
  erratum BM-5).

Every parameter the induction takes is searched, also those the stated constant lacks (a
constant that does not depend on them must not change with them), inside the corollary's class
mu <= L (a point outside it is never a worst case). Search (seeded; ``budget``
points): :func:`verify.falsify._param_search.search`, measured at 40 digits. Certificate: the
induction at 50 and 70 digits (their difference is the error), the stated side at 60 digits
with exact parameters; ``mpmath-50``.

>>> import verify
>>> res = verify.falsify("skew.speed", budget=30, seed=0)
>>> res.verdict, res.certificate, abs(res.worst_ratio - 1) < 1e-12
('holds', 'mpmath-50', True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boundlab.errors import DomainError

from . import _param_search as _ps

__all__ = ["FAMILY", "LHS", "KINDS", "QUANTITIES", "quantity_of", "measure", "falsify_route",
           "measure_instance", "certify"]

FAMILY = "identity.corollary_constants"
LHS = ("speed_constant", "error_constant")
KINDS = ("identity",)
CERTIFICATE = "mpmath-50"

_ALL = ("L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde", "D0")


@dataclass(frozen=True)
class Quantity:
    """A constant of the corollary: its name, left-hand side, the parameters its induction
    takes (the others held at ``forced``) and what it is."""

    name: str
    lhs: str
    params: tuple
    forced: tuple  # ((name, value), ...)
    how: str


QUANTITIES = {
    "V": Quantity("V", "speed_constant", _ALL, (),
                  "V by the corollary's induction at gamma = max(4L/mu, B, E - 1)"),
    "V_min": Quantity("V_min", "speed_constant", ("L", "mu", "E", "G", "sigma", "Gamma", "D0"),
                      (), "lim_{rho_bar -> inf} V by the induction at gamma = 4L/mu"),
    "V_fedavg": Quantity("V_fedavg", "speed_constant",
                         ("L", "mu", "E", "G", "sigma", "Gamma", "D0"),
                         (("rho_bar", 1.0), ("rho_tilde", 1.0)),
                         "V by the induction at rho_bar = rho_tilde = 1 (alpha = p), gamma = "
                         "max(4L/mu, B, E - 1)"),
    "E_term": Quantity("E_term", "error_constant", _ALL, (),
                       "the E-term (L/2) max(0, D beta/(beta mu B - 1)) by the induction"),
}


def quantity_of(bound) -> Quantity:
    """The constant ``bound`` states (module docstring)."""
    if bound.lhs == "error_constant":
        return QUANTITIES["E_term"]
    src = str(getattr(bound, "source", ""))
    if "Remark" in src or "V_min" in src:
        return QUANTITIES["V_min"]
    return QUANTITIES["V" if "rho_bar" in bound.params else "V_fedavg"]


def measure(q: Quantity, params: dict, dps: int = 40, exact: bool = False):
    """The constant ``q`` at ``params`` (floats, taken exactly) by the induction: a float, or
    the mpmath number at ``dps`` digits with ``exact``."""
    from ..checks.skew_constants import corollary_constants, vmin

    a = {**{k: params[k] for k in q.params}, **dict(q.forced)}
    if q.name == "V_min":
        return vmin(*(a[k] for k in q.params), dps=dps, exact=exact)
    v = corollary_constants(*(a[k] for k in _ALL), dps=dps, exact=exact)
    return v[1] if q.name == "E_term" else v[0]


def _domains(bound, q: Quantity) -> dict:
    """Each searched parameter's domain: the bound's where it has one, else the symbol's."""
    from boundlab.symbols import domain_of

    out = {}
    for n in q.params:
        p = bound.params.get(n) or bound.extra_params.get(n)
        out[n] = p.domain if p is not None else domain_of(n)
    return out


def _fixed(bound, q: Quantity, setting: dict) -> dict:
    """The setting's values of searched parameters; a parameter of the bound the induction
    does not take, and the setting does not give: NotApplicable."""
    from .plan import NotApplicable

    extra = sorted(n for n in bound.params if n not in q.params and n not in setting)
    if extra:
        from ..measures import NOT_MEASURED

        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(extra)} are not parameters "
                            f"of {q.name} ({q.how}); {bound.lhs}: {NOT_MEASURED[bound.lhs]}")
    return {k: float(v) for k, v in setting.items() if k in q.params or k in bound.params}


def evaluate(bound, q: Quantity, pts: dict) -> tuple:
    """``(ratio, measured, stated)`` (P,) float64 at the parameter arrays ``pts``; the ratio
    as :func:`verify.falsify._param_search.identity_ratios` (nan where the induction fails)."""
    n = len(next(iter(pts.values())))
    x = np.empty(n)
    for i in range(n):  # one mpmath induction per point (no vectorized form of the proof)
        try:
            x[i] = measure(q, {k: float(v[i]) for k, v in pts.items()})
        except (ArithmeticError, ValueError, OverflowError):
            x[i] = math.nan
    r, s = _ps.identity_ratios(bound, x, pts)
    # the corollary's class: L-smooth and mu-strongly convex, so mu <= L (its constants are
    # not defined elsewhere, whatever the stated bound's own preconditions)
    r = np.where(np.asarray(pts["mu"], dtype=float) <= np.asarray(pts["L"], dtype=float), r,
                 -np.inf)
    return r, x, s


def falsify_route(bound, budget: int, seed: int, setting: dict, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    q = quantity_of(bound)
    fixed = _fixed(bound, q, setting)
    params, n = _ps.search(_domains(bound, q), fixed, lambda p: evaluate(bound, q, p)[0],
                           int(budget), int(seed), salt=3013)
    data = {"quantity": q.name, "params": params}
    r, lhs, rhs = measure_instance(bound, data)
    inst = Instance(bound.id, FAMILY, data, {"quantity": q.name, **params}, r, lhs, rhs,
                    None, bound)
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r},
                         notes=[f"{bound.lhs}: {q.how} (seeds 000/001, Corollary 4's proof; "
                                "mpmath at 40 digits in the search, 50 and 70 in the "
                                "certificate); identity ratio 1 + |measured - stated| / "
                                "|stated|"],
                         exact_reason="a constant derived by the corollary's proof; no PEP "
                                      "model")


def _check_data(bound, data) -> tuple:
    name = data.get("quantity")
    if name not in QUANTITIES:
        raise DomainError("instance quantity", name, " or ".join(QUANTITIES))
    q = quantity_of(bound)
    if q.name != name:
        raise DomainError("instance quantity", name, f"{q.name} (the constant the bound "
                          f"states, lhs {bound.lhs!r})")
    return q, _ps.check_params(data.get("params"), q.params, _domains(bound, q))


def measure_instance(bound, data) -> tuple:
    """``(ratio, measured, stated)`` of one saved instance (float64; ``data`` validated)."""
    q, params = _check_data(bound, data)
    return _ps.measure_one(lambda pts: evaluate(bound, q, pts), params)


def certify(inst, float_ratio: float):
    """The ``mpmath-50`` certificate (module docstring); ``float64-only`` with the reason
    where the high-precision replay fails."""
    from .routes import or_float64

    return or_float64(_certify_mp, inst, float_ratio)


def _certify_mp(inst):
    bound = inst.judged_bound()
    q, params = _check_data(bound, inst.data)
    if measure_instance(bound, inst.data)[0] == -math.inf:
        return _ps.outside(CERTIFICATE)
    x50, x70 = (measure(q, params, dps, exact=True) for dps in (50, 70))
    return _ps.identity_certificate(bound, params, x70, abs(x50 - x70), CERTIFICATE)
