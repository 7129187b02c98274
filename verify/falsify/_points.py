"""The comparisons of :mod:`verify.falsify.points_route`, and the replay and certificate of an
instance from its data alone.

The data come from a file: :func:`check_data` validates every field (plain JSON types, finite
numbers, the family registered, the points of the problem's dimension). The float64 replay
rebuilds the family's problem and measures through the check's functions
(:mod:`verify.checks.drift_properties`); the certificate recomputes lhs and rhs in mpmath on
the same float64 numbers (:class:`verify.falsify._mpreplay._Clients`) at 50 and 100 digits.
"""

from __future__ import annotations

import math

import numpy as np

from boundlab.errors import DomainError

__all__ = ["signed_ratio", "rhs_values", "check_data", "measure_instance", "certify"]

_DPS = 50


def signed_ratio(lhs, rhs):
    """1 + (lhs - rhs)/|rhs| (= lhs/rhs where rhs > 0): > 1 exactly when lhs > rhs; rhs = 0:
    inf, 1 or 0 as lhs is >, = or < 0; works on arrays, floats and mpmath numbers.

    >>> signed_ratio(np.array([1.0, -3.0, 2.0, -1.0]), np.array([2.0, -2.0, 0.0, 0.0])).tolist()
    [0.5, 0.5, inf, 0.0]
    """
    if isinstance(lhs, np.ndarray) or isinstance(rhs, np.ndarray):
        lhs, rhs = np.broadcast_arrays(np.asarray(lhs, float), np.asarray(rhs, float))
        with np.errstate(all="ignore"):
            r = 1 + (lhs - rhs) / np.abs(rhs)
        zero = np.where(lhs > 0, np.inf, np.where(lhs == 0, 1.0, 0.0))
        r = np.where(rhs == 0, zero, r)
        return np.where(np.isfinite(lhs) & np.isfinite(rhs), r, -np.inf)
    if rhs == 0:
        return math.inf if lhs > 0 else (1.0 if lhs == 0 else 0.0)
    return 1 + (lhs - rhs) / abs(rhs)


def rhs_values(bound, prm: dict, fixed: dict) -> np.ndarray:
    """The bound at the comparisons' parameters (-inf-ratio rows: NaN or outside the
    preconditions), one vectorized evaluation (:mod:`verify.falsify.judge`)."""
    from .judge import _evaluate, _preconditions_ok

    n = len(next(iter(prm.values())))
    names = set(bound.params) | set(bound.extra_params)
    use = {k: np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy()
           for k, v in {**prm, **fixed}.items() if k in names}
    rhs = _evaluate(bound, use, n)
    return np.where(_preconditions_ok(bound, use, n), rhs, np.nan)


def _sides(bound, losses, grads, X, Y, lam, offset, L):
    """(lhs, params) (n, N) of a function property at client points X, Y (n, N, d)."""
    from verify.checks.drift_properties import f_combination, tangent_sides

    s = tangent_sides(losses, grads, X, Y)
    off = np.asarray(offset, dtype=float)[:, None]
    prm = {"f_x": s["f_x"] + off, "f_y": s["f_y"] + off, "lin": s["lin"],
           "dist_xy": s["dist_xy"], "L": np.full_like(s["lin"], L),
           "lam": np.broadcast_to(np.asarray(lam, dtype=float)[:, None], s["lin"].shape)}
    if bound.lhs == "f_combination":
        lhs = f_combination(losses, X, Y, lam) + off
    elif bound.lhs == "tangent_value":
        lhs = s["tangent_value"] + off
    else:
        lhs = s["f_at_y"] + off
    return lhs, prm


def _judge(bound, lhs, prm, fixed):
    """(ratio, lhs, rhs) per comparison (flat arrays)."""
    flat = {k: np.asarray(v, dtype=float).ravel() for k, v in prm.items()}
    lhs = np.asarray(lhs, dtype=float).ravel()
    rhs = rhs_values(bound, flat, fixed)
    r = signed_ratio(lhs, rhs)
    return np.where(np.isnan(rhs), -np.inf, r), lhs, rhs



def _score(lhs, prm):
    """The search's ranking lhs: lowered by 1e-10 of the comparison's largest term, so that
    float64 rounding of a tight comparison never outranks a real excess."""
    terms = [np.abs(np.asarray(v, dtype=float).ravel()) for k, v in prm.items()
             if k not in ("lam", "lam_young")]
    return lhs - 1e-10 * np.max(np.vstack([np.abs(lhs), *terms]), axis=0)


def _eval_vectors(bound, a, b, lam, fixed):
    from verify.checks.drift_properties import young_sides

    s = young_sides(a, b)
    prm = {"lam_young": lam, "a_sq": s["a_sq"], "b_sq": s["b_sq"]}
    r, lv, rv = _judge(bound, s["inner_product"], prm, fixed)
    return signed_ratio(_score(lv, prm), rv), r, lv, rv


def _num(name, v, lo=-math.inf, hi=math.inf):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or not lo <= v <= hi:
        raise DomainError(f"instance {name}", v, f"a finite number in [{lo}, {hi}]")
    return float(v)


def _vector(name, v, d=None):
    if not isinstance(v, list) or not v or (d is not None and len(v) != d):
        raise DomainError(f"instance {name}", v, f"a list of {d or 'some'} numbers")
    return np.array([_num(f"{name}[]", e) for e in v])


#: the Spec fields a saved quadratic instance holds
QUADRATIC_SPEC = ("L", "mu", "D", "n_clients", "dim")


def quadratic_spec_z(data) -> tuple:
    """``(Spec, z)`` of a saved instance of the quadratic search family (at most 16 clients
    and dimensions), validated: it comes from a file."""
    from .families import Spec, get_family

    if not isinstance(data, dict):
        raise DomainError("instance data", data, "an object")
    spec = data.get("spec")
    if not isinstance(spec, dict) or set(spec) != set(QUADRATIC_SPEC):
        raise DomainError("instance spec", spec, "an object with L, mu, D, n_clients, dim")
    for k in ("n_clients", "dim"):
        if isinstance(spec[k], bool) or not isinstance(spec[k], int) or not 1 <= spec[k] <= 16:
            raise DomainError(f"instance spec {k}", spec[k], "an integer in 1..16")
    spec = Spec(**{k: (v if k in ("n_clients", "dim") else _num(f"spec {k}", v))
                   for k, v in spec.items()})
    return spec, _vector("z", data.get("z"), get_family("quadratic").n_vars(spec))


def check_data(data) -> dict:
    """The validated instance (module docstring); DomainError naming the bad field."""
    if not isinstance(data, dict) or data.get("kind") not in ("function", "vectors"):
        raise DomainError("instance kind", (data or {}).get("kind") if isinstance(data, dict)
                          else data, "'function' or 'vectors'")
    fixed = data.get("fixed") or {}
    if not isinstance(fixed, dict):
        raise DomainError("instance fixed", fixed, "an object of parameter names and numbers")
    out = {"kind": data["kind"], "fixed": {str(k): _num(f"fixed {k}", v)
                                           for k, v in fixed.items()}}
    if data["kind"] == "vectors":
        a = _vector("a", data.get("a"))
        out.update(a=a, b=_vector("b", data.get("b"), len(a)),
                   lam_young=_num("lam_young", data.get("lam_young"), 1e-300))
        return out
    from .families import Spec, family_names

    if data.get("family") not in family_names():
        raise DomainError("instance family", data.get("family"), str(family_names()))
    spec = data.get("spec")
    if not isinstance(spec, dict) or set(spec) != {"L", "mu", "D", "n_clients", "dim"}:
        raise DomainError("instance spec", spec, "an object with L, mu, D, n_clients, dim")
    for k in ("n_clients", "dim"):
        if isinstance(spec[k], bool) or not isinstance(spec[k], int) or not 1 <= spec[k] <= 64:
            raise DomainError(f"instance spec {k}", spec[k], "an integer in 1..64")
    spec = Spec(**{k: (v if k in ("n_clients", "dim") else _num(f"spec {k}", v))
                   for k, v in spec.items()})
    client = data.get("client")
    if isinstance(client, bool) or not isinstance(client, int) or \
            not 0 <= client < spec.n_clients:
        raise DomainError("instance client", client, f"an integer in 0..{spec.n_clients - 1}")
    out.update(family=data["family"], spec=spec, client=client, z=_vector("z", data.get("z")),
               x=_vector("x", data.get("x"), spec.dim), y=_vector("y", data.get("y"), spec.dim),
               lam=_num("lam", data.get("lam"), 0.0, 1.0),
               offset=_num("offset", data.get("offset")))
    return out


def _problem(d):
    from .families import get_family

    fam = get_family(d["family"])
    if len(d["z"]) != fam.n_vars(d["spec"]):
        raise DomainError("instance z", len(d["z"]), f"{fam.n_vars(d['spec'])} numbers")
    return fam.build(d["z"], d["spec"])[0]


def measure_instance(bound, data) -> tuple:
    """``(ratio, lhs, rhs)`` of one saved instance (float64)."""
    from verify.checks.drift_properties import client_rows

    d = check_data(data)
    if d["kind"] == "vectors":
        _, r, lhs, rhs = _eval_vectors(bound, d["a"][None], d["b"][None],
                                       np.array([d["lam_young"]]), d["fixed"])
        return float(r[0]), float(lhs[0]), float(rhs[0])
    prob = _problem(d)
    N, i = prob.n_clients, d["client"]
    X, Y = (np.repeat(v[None, None, :], N, axis=1) for v in (d["x"], d["y"]))
    lhs, prm = _sides(bound, *client_rows(prob), X, Y, np.array([d["lam"]]),
                      np.array([d["offset"]]), d["spec"].L)
    r, lv, rv = _judge(bound, lhs[:, i:i + 1], {k: v[:, i:i + 1] for k, v in prm.items()},
                       d["fixed"])
    return float(r[0]), float(lv[0]), float(rv[0])


def _mp_sides(bound, d, prob):
    """(lhs, {parameter: mpf}) at the current mpmath precision."""
    import mpmath

    from ._mpreplay import _Clients, _dot, _vec

    fixed = {k: mpmath.mpf(v) for k, v in d["fixed"].items()}
    if d["kind"] == "vectors":
        a, b = _vec(d["a"]), _vec(d["b"])
        return _dot(a, b), {"lam_young": mpmath.mpf(d["lam_young"]), "a_sq": _dot(a, a),
                            "b_sq": _dot(b, b), **fixed}
    cl, i = _Clients(prob), d["client"]
    x, y, lam, off = _vec(d["x"]), _vec(d["y"]), mpmath.mpf(d["lam"]), mpmath.mpf(d["offset"])
    diff = [yk - xk for xk, yk in zip(x, y)]
    f_x, f_y = cl.loss(i, x) + off, cl.loss(i, y) + off
    lin = _dot(cl.grad(i, x), diff)
    vals = {"lam": lam, "f_x": f_x, "f_y": f_y, "lin": lin, "dist_xy": _dot(diff, diff),
            "L": mpmath.mpf(d["spec"].L), **fixed}
    if bound.lhs == "f_combination":
        lhs = cl.loss(i, [lam * xk + (1 - lam) * yk for xk, yk in zip(x, y)]) + off
    elif bound.lhs == "tangent_value":
        lhs = f_x + lin
    else:
        lhs = f_y
    return lhs, vals


def _mp_ratio(bound, d, prob, dps):
    import mpmath

    from .certify import _mp_function

    with mpmath.workdps(dps):
        lhs, vals = _mp_sides(bound, d, prob)
        rhs = _mp_function(bound)(**{n: vals[n] for n in bound.params})
        if isinstance(rhs, mpmath.mpc) or not mpmath.isfinite(rhs):
            raise ArithmeticError(f"the bound is not real and finite at the instance: {rhs}")
        return signed_ratio(lhs, rhs), lhs, rhs, vals


def certify(inst, float_ratio: float):
    """The :class:`~verify.falsify.certify.Certificate` of the worst comparison: mpmath at 50
    and 100 digits (error: 4 x their disagreement + 1e-40 + the bound's sensitivity to L
    within CLASS_RTOL), or float64 only (logistic clients; with the reason)."""
    import mpmath

    from ._mpreplay import Unsupported
    from .certify import FLOAT64, Certificate, _float_error, _sensitivity

    bound = inst.judged_bound()
    d = check_data(inst.data)
    if float_ratio == -math.inf:
        return Certificate(f"mpmath-{_DPS}", -math.inf, 0.0, math.nan, math.nan,
                           "the comparison lies outside the bound's domain or preconditions")
    try:
        prob = None if d["kind"] == "vectors" else _problem(d)
        r1 = _mp_ratio(bound, d, prob, _DPS)[0]
        r2, lhs, rhs, vals = _mp_ratio(bound, d, prob, 2 * _DPS)
    except (Unsupported, ArithmeticError, ValueError, TypeError) as exc:
        return Certificate(FLOAT64, float_ratio, _float_error(float_ratio), inst.lhs, inst.rhs,
                           f"no mpmath form: {exc}")
    if r2 == mpmath.inf or r2 == math.inf:
        return Certificate(f"mpmath-{_DPS}", math.inf, 0.0, float(lhs), float(rhs))
    with mpmath.workdps(2 * _DPS):
        sens = _sensitivity(bound, vals, rhs) if rhs != 0 else mpmath.mpf(0)
        err = 4 * abs(r2 - r1) + mpmath.mpf(10) ** -40 + (abs(r2) + 1) * sens
    return Certificate(f"mpmath-{_DPS}", float(r2), float(err) * (1 + 2 ** -40) + 1e-300,
                       float(lhs), float(rhs))
