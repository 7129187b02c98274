""":func:`verify.falsify` for DKR's textbook properties (seed 004, appendix §2.3): statements
about one client objective at chosen points, or about two vectors, not values of a run.

* ``f_combination`` (``drift.convexity``): f(lam x + (1 - lam) y), parameters lam, f_x, f_y;
* ``tangent_value`` (``drift.first_order_convexity``): f(x) + <grad f(x), y - x>, f_y;
* ``f_at_y`` (``drift.smoothness``): f(y), parameters f_x, lin, L, dist_xy;
* ``inner_product`` (``drift.young``): <a, b>, parameters lam_young, a_sq, b_sq.

The quantities are those of :mod:`verify.checks.drift_properties` (:func:`tangent_sides`,
:func:`f_combination`, :func:`young_sides`: one implementation). An instance of a function
property is a client of a problem of a search family of the bound's function class
(:func:`verify.falsify.families.families_for`; L-smooth and convex by construction, ``Spec``
from the setting: L, mu, D, n_clients, dim), plus a constant ``offset`` (f + c is as convex and
as smooth as f: signed values matter to a typo), the points x, y and the weight lam in [0, 1].
A vector instance is (a, b, lam_young): random vectors, b near lam^2 a (Young's equality), and
the check's a = grad F_i(x) - grad F(x), b = x - x* on a family problem.

Search (seeded; ``budget`` = comparisons): 60 % random (problems from every family in turn,
points at log-uniform distances from x* and from each other, lam uniform or near 0 / 1, the
optimum as y), then local moves around the 8 worst (points, lam, offset, lam_young). Signed
sides are judged by :func:`signed_ratio` = 1 + (lhs - rhs)/|rhs| (lhs/rhs where rhs > 0; > 1
iff lhs > rhs). Certificate: lhs and rhs recomputed in mpmath on the instance's float64 arrays
(:class:`verify.falsify._mpreplay._Clients`: quadratic, Huber, softplus) at 50 and 100 digits;
the error is their disagreement plus the bound's sensitivity to L moved by
:data:`~verify.falsify.certify.CLASS_RTOL` (L holds by construction up to rounding). Logistic
clients are certified in float64 only (no mpmath form).

>>> import verify
>>> res = verify.falsify("drift.young", budget=60, seed=0)
>>> res.verdict, res.certificate, res.worst_ratio <= 1 + res.certified_error
('holds', 'mpmath-50', True)
"""

from __future__ import annotations

import numpy as np

from ._points import (
    _eval_vectors,
    _judge,
    _score,
    _sides,
    certify,
    measure_instance,
    signed_ratio,
)

__all__ = ["FAMILY", "LHS", "KINDS", "falsify_route", "measure_instance", "certify",
           "signed_ratio"]

FAMILY = "points"
LHS = ("f_combination", "tangent_value", "f_at_y", "inner_product")
KINDS = ("upper",)
_FUNCTION_PARAMS = ("lam", "f_x", "f_y", "lin", "L", "dist_xy")
_VECTOR_PARAMS = ("lam_young", "a_sq", "b_sq")
_SPEC = ("L", "mu", "D", "n_clients", "dim")


def _is_vector(bound) -> bool:
    return bound.lhs == "inner_product"


def _fixed(bound, setting) -> dict:
    """The bound's parameters given by the setting; one neither computed here nor given:
    NotApplicable."""
    from .plan import NotApplicable

    mine = _VECTOR_PARAMS if _is_vector(bound) else _FUNCTION_PARAMS
    names = set(bound.params) | set(bound.extra_params)
    fixed = {k: float(v) for k, v in setting.items() if k in names and k not in _SPEC}
    missing = sorted(n for n in bound.params if n not in mine and n not in fixed
                     and n not in setting)
    if missing:
        raise NotApplicable(f"{bound.id}: parameter(s) {', '.join(missing)} are neither "
                            f"computed at the points ({', '.join(mine)}) nor given")
    if "L" in setting:
        fixed.pop("L", None)  # the family's L (by construction)
    return fixed


def _spec(setting, function_class):
    from .families import Spec

    L = float(setting.get("L", 1.0))
    mu = float(setting.get("mu", 0.0))
    return Spec(L=L, mu=mu if function_class == "smooth-strongly-convex" or mu > 0 else 0.0,
                D=float(setting.get("D", 1.0)), n_clients=int(setting.get("n_clients", 2)),
                dim=int(setting.get("dim", 2)))


# ---------------------------------------------------------------- function properties

def _problems(spec, n, rng, function_class, free_l=False):
    """n problems (family name, z, problem, losses, grads, spec), every family of the class in
    turn; ``free_l``: L log-uniform in [0.1, 10] per problem (mu scaled with it)."""
    import dataclasses

    from verify.checks.drift_properties import client_rows

    from .families import families_for

    fams = families_for(function_class)
    out = []
    for k in range(n):
        fam = fams[k % len(fams)]
        sp = spec
        if free_l:
            L = float(10.0 ** rng.uniform(-1, 1))
            sp = dataclasses.replace(spec, L=L, mu=spec.mu * L / spec.L)
        z = rng.uniform(-1.0, 1.0, fam.n_vars(sp))
        prob, _ = fam.build(z, sp)
        out.append((fam.name, z, prob, *client_rows(prob), sp))
    return out


def _draw_points(rng, m, prob, D):
    """m random comparisons on one problem: x, y (m, d), lam (m,), offset (m,)."""
    d = prob.dim
    xs = np.asarray(prob.x_star, dtype=float).ravel()

    def unit(k):
        u = rng.normal(size=(k, d))
        return u / np.linalg.norm(u, axis=1, keepdims=True)

    x = xs + D * 10.0 ** rng.uniform(-3, 1, (m, 1)) * unit(m)
    mode = rng.integers(0, 4, m)
    far = xs + D * 10.0 ** rng.uniform(-3, 1, (m, 1)) * unit(m)
    near = x + D * 10.0 ** rng.uniform(-4, 0, (m, 1)) * unit(m)
    g = x - xs  # along the line through x*: where a quadratic's gradient points
    along = x + 10.0 ** rng.uniform(-3, 0.5, (m, 1)) * g * np.sign(rng.normal(size=(m, 1)))
    y = np.where(mode[:, None] == 0, far, np.where(mode[:, None] == 1, near,
                                                   np.where(mode[:, None] == 2, along, xs)))
    lm = rng.integers(0, 4, m)
    tiny = 10.0 ** rng.uniform(-6, 0, m)
    lam = np.where(lm == 0, rng.random(m), np.where(lm == 1, tiny, 1 - tiny))
    lam = np.where(lm == 3, rng.integers(0, 2, m).astype(float), lam)
    off = np.where(rng.random(m) < 0.3, 0.0, np.sign(rng.normal(size=m)) *
                   10.0 ** rng.uniform(-3, 3, m))
    return x, y, lam, off


def _eval_function(bound, pb, x, y, lam, off, fixed):
    """(score, ratio, lhs, rhs, client) per comparison (worst client of each)."""
    _, _, prob, losses, grads, spec = pb
    L = spec.L
    N = prob.n_clients
    X, Y = (np.repeat(v[:, None, :], N, axis=1) for v in (x, y))
    lhs, prm = _sides(bound, losses, grads, X, Y, lam, off, L)
    r, lv, rv = _judge(bound, lhs, prm, fixed)
    score = signed_ratio(_score(lv, prm), rv)
    score = np.where(np.isfinite(r) | (r == np.inf), score, -np.inf).reshape(-1, N)
    c = np.argmax(score, axis=1)
    rows = np.arange(len(c))
    pick = (lambda a: a.reshape(-1, N)[rows, c])
    return pick(score.ravel()), pick(r), pick(lv), pick(rv), c


def _search_function(bound, budget, rng, spec, fixed, function_class, setting):
    n_prob = int(min(12, max(1, budget // 25)))
    probs = _problems(spec, n_prob, rng, function_class, free_l="L" not in setting)
    n1 = max(n_prob, int(0.6 * budget))
    per = -(-n1 // n_prob)
    cols = {k: [] for k in ("p", "x", "y", "lam", "off", "score", "client")}
    for k, pb in enumerate(probs):
        x, y, lam, off = _draw_points(rng, per, pb[2], spec.D)
        sc, *_, c = _eval_function(bound, pb, x, y, lam, off, fixed)
        for key, v in zip(cols, (np.full(per, k), x, y, lam, off, sc, c)):
            cols[key].append(v)
    cols = {k: np.concatenate(v) for k, v in cols.items()}
    done, scale = n_prob * per, 1.0
    while done < budget:
        top = np.argsort(-cols["score"])[:8]
        n = min(budget - done, 16)
        i = top[rng.integers(0, len(top), n)]
        new = _moves(rng, cols, i, spec.D, scale)
        for k in np.unique(new["p"]):
            g = new["p"] == k
            sc, *_, c = _eval_function(bound, probs[k], new["x"][g], new["y"][g],
                                       new["lam"][g], new["off"][g], fixed)
            part = {**{key: v[g] for key, v in new.items()}, "score": sc, "client": c}
            cols = {key: np.concatenate([cols[key], part[key]]) for key in cols}
        done, scale = done + n, max(scale * 0.8, 1e-4)
    b = int(np.argmax(cols["score"]))
    name, z, *_, sp = probs[int(cols["p"][b])]
    return {"kind": "function", "family": name, "z": z.tolist(),
            "spec": {k: getattr(sp, k) for k in _SPEC}, "client": int(cols["client"][b]),
            "x": cols["x"][b].tolist(), "y": cols["y"][b].tolist(),
            "lam": float(cols["lam"][b]), "offset": float(cols["off"][b]), "fixed": fixed}, done


def _moves(rng, cols, i, D, scale):
    n, d = len(i), cols["x"].shape[1]
    step = D * scale * 10.0 ** rng.uniform(-4, 0, (n, 1))
    x = cols["x"][i] + step * rng.normal(size=(n, d)) * (rng.random((n, 1)) < 0.7)
    y = cols["y"][i] + step * rng.normal(size=(n, d)) * (rng.random((n, 1)) < 0.7)
    lam = np.clip(cols["lam"][i] + scale * 0.1 * rng.normal(size=n), 0.0, 1.0)
    off = cols["off"][i] * np.exp(scale * rng.normal(size=n))
    return {"p": cols["p"][i], "x": x, "y": y, "lam": lam, "off": off}


# ---------------------------------------------------------------- Young's inequality

def _draw_vectors(rng, m, spec, function_class, fixed):
    from verify.checks.drift_properties import young_vectors

    d = spec.dim
    lam = fixed.get("lam_young", None)
    lam = np.full(m, lam) if lam is not None else 10.0 ** rng.uniform(-2, 2, m)
    a = rng.normal(size=(m, d)) * 10.0 ** rng.uniform(-3, 3, (m, 1))
    mode = rng.integers(0, 3, m)
    free = rng.normal(size=(m, d)) * 10.0 ** rng.uniform(-3, 3, (m, 1))
    eq = (lam**2 * 10.0 ** rng.normal(0, 0.3, m))[:, None] * a * \
        np.where(rng.random((m, 1)) < 0.8, 1.0, -1.0)
    b = np.where(mode[:, None] == 0, free, eq)
    k = int(np.sum(mode == 2))
    if k:  # the check's vectors: client dissimilarity and distance to x* on a family problem
        prob = _problems(spec, 1, rng, function_class)[0][2]
        xs = np.asarray(prob.x_star, dtype=float).ravel()
        models = xs + spec.D * rng.normal(size=(-(-k // prob.n_clients), d))
        va, vb = young_vectors(prob, models)
        a[mode == 2], b[mode == 2] = va[:k], vb[:k]
    return a, b, lam


def _search_vectors(bound, budget, rng, spec, fixed, function_class, setting=None):
    n1 = max(1, int(0.6 * budget))
    a, b, lam = _draw_vectors(rng, n1, spec, function_class, fixed)
    sc = _eval_vectors(bound, a, b, lam, fixed)[0]
    done, scale = n1, 1.0
    while done < budget:
        n = min(budget - done, 16)
        i = np.argsort(-sc)[:8][rng.integers(0, min(8, sc.size), n)]
        na = a[i] * np.exp(scale * 0.3 * rng.normal(size=a[i].shape))
        nb = b[i] * np.exp(scale * 0.3 * rng.normal(size=b[i].shape))
        nl = lam[i] if "lam_young" in fixed else lam[i] * np.exp(scale * 0.3 *
                                                                 rng.normal(size=n))
        a, b, lam = np.vstack([a, na]), np.vstack([b, nb]), np.concatenate([lam, nl])
        sc = np.concatenate([sc, _eval_vectors(bound, na, nb, nl, fixed)[0]])
        done, scale = done + n, max(scale * 0.8, 1e-4)
    k = int(np.argmax(sc))
    return {"kind": "vectors", "a": a[k].tolist(), "b": b[k].tolist(),
            "lam_young": float(lam[k]), "fixed": fixed}, done


# ---------------------------------------------------------------- the route

def search_points(bound, budget: int, seed: int, setting: dict, function_class="smooth-convex"):
    """``(data, evaluations)``: the worst comparison found (module docstring)."""
    rng = np.random.default_rng([int(seed), 2004])
    fixed = _fixed(bound, setting)
    spec = _spec(setting, function_class)
    how = _search_vectors if _is_vector(bound) else _search_function
    return how(bound, int(budget), rng, spec, fixed, function_class, setting)


def _function_class(bound, setting) -> str:
    import boundlab

    try:
        fc = boundlab.registry.meta(bound.id).get("function_class")
    except Exception:  # noqa: BLE001 - a user bound not registered: DKR's class
        fc = None
    return fc or "smooth-convex"


def falsify_route(bound, budget, seed, setting, types):
    """The :class:`~verify.falsify.Falsification` (not yet concluded) of ``bound``."""
    Falsification, Instance = types
    fc = _function_class(bound, setting)
    data, n = search_points(bound, budget, seed, setting, fc)
    r, lhs, rhs = measure_instance(bound, data)[:3]
    run = {"algorithm": "none", "property": bound.lhs}
    inst = Instance(bound.id, FAMILY, data, run, r, lhs, rhs, None, bound)
    where = ("vectors a, b (random, b near lam^2 a, and the check's client dissimilarity / "
             "distance to x*)" if data["kind"] == "vectors" else
             f"clients of the {fc} families at searched points (worst: {data['family']})")
    return Falsification(bound.id, "holds", evaluations=n, instance=inst,
                         per_family={FAMILY: r}, notes=[f"{bound.lhs} at {where}"],
                         exact_reason="a property at points: no PEP model")

