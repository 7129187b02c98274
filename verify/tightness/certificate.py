"""PEP cache entries that prove themselves: the solver's certificate, checked on load.

A cached PEP result is only as good as the file it came from. So an entry stores, beside the
numbers, what lets a loader *recompute* them from the PEP that the current code builds:

* the primal point ``z = (vec G, F)`` (the Gram matrix of the leaf points and the leaf function
  values): a concrete instance, its objective is the lower bound ``LB``;
* the dual multipliers ``lambda`` of the scalar constraints and the dual matrix ``R`` of
  ``G >> 0``: with ``o + vec R - sum_j lambda_j a_j = 0``, ``R >> 0`` and ``lambda >= 0`` on
  inequalities, every feasible point has objective ``<= -sum_j lambda_j c_j``: the upper
  bound ``UB``.

:func:`verify_result` rebuilds the PEP's constraint rows (``build(pb)``, no solve: about a
second at Gram size 60), recomputes ``LB``, ``UB``, the gap and the five feasibility errors
exactly as :func:`verify.tightness._solve._certificate` does, judges ``ok`` with the caller's
tolerances, and refuses an entry whose stored ``value`` / ``lower`` differ from the recomputed
ones. A forged bracket must therefore come with a forged certificate, and a certificate that
passes the check is a proof (up to the stated tolerances): the stored bracket cannot be made
smaller than the worst case without failing the dual checks, nor larger than it without
failing the primal ones. Entries whose claim cannot be certified this way (``infeasible``,
``unbounded``) are not trusted: they are re-solved. An entry that claims nothing (no value, no
lower bound, not ok: a failed solve) is accepted as it is.

Arrays are stored as base64 of little-endian float64 with their shape; the shapes are checked
against the rebuilt PEP before anything is decoded.

Example
-------
>>> from verify.tightness._solve import solve_pep
>>> from PEPit.functions import SmoothStronglyConvexFunction
>>> def build(pb):
...     f = pb.declare_function(SmoothStronglyConvexFunction, L=1.0, mu=0.1)
...     xs = f.stationary_point(); x0 = pb.set_initial_point()
...     pb.set_initial_condition((x0 - xs) ** 2 <= 1)
...     pb.set_performance_metric((x0 - 0.5 * f.gradient(x0) - xs) ** 2)
>>> out = solve_pep(build)
>>> checked = verify_result(out, build, "demo.json", {"tol": 1e-6, "tol_proof": 1e-5})
>>> round(checked["value"], 6), checked["ok"]
(0.9025, True)
>>> verify_result({**out, "value": out["value"] / 1e6}, build, "demo.json", {})
Traceback (most recent call last):
...
boundlab.errors.IntegrityError: demo.json: value is not valid: the value its certificate \
proves (0.9025 stored as 9.025e-07)
"""

from __future__ import annotations

import base64
import binascii
import math

import numpy as np

from boundlab.errors import IntegrityError

__all__ = ["CERT_FIELDS", "pack", "problem_rows", "rows_digest", "verify_result",
           "uncertified_claim", "certified_hit"]

#: the arrays of a certificate
CERT_FIELDS = ("G", "F", "lam", "R")
_REL = 1e-9  # stored value / lower may differ from the recomputed ones by this (relative)


def _enc(arr) -> dict:
    a = np.ascontiguousarray(np.asarray(arr, dtype="<f8"))
    return {"shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode("ascii")}


def pack(wrapper) -> dict:
    """The certificate of a solved vectorized wrapper (plain JSON data)."""
    duals, _ = wrapper._recover_dual_values()
    g = np.asarray(wrapper.G.value, dtype=float)
    return {"G": _enc((g + g.T) / 2), "F": _enc(np.asarray(wrapper.F.value, dtype=float)),
            "lam": _enc(np.array([float(v) for v in duals[1:]])),
            "R": _enc(np.asarray(wrapper._psd.dual_value, dtype=float))}


def problem_rows(build):
    """``(rows, is_eq, objective, n_points, n_values)`` of the PEP ``build`` declares, built
    as the solver's wrapper builds them, without solving."""
    from PEPit import PEP
    from PEPit.expression import Expression
    from PEPit.point import Point

    from ._wrapper import _make_wrapper_class

    row = _make_wrapper_class()._row
    pb = PEP()
    build(pb)
    pb._prepare_constraints(verbose=0)
    cons = [c for c in pb._list_of_prepared_constraints if c.activated]
    n_points, n_values = int(Point.counter), int(Expression.counter)
    width = n_points * n_points + n_values + 1
    rows = np.array([row(c.expression) for c in cons]).reshape(len(cons), width)
    is_eq = np.array([c.equality_or_inequality == "equality" for c in cons], dtype=bool)
    return rows, is_eq, row(pb.objective), n_points, n_values


def rows_digest(problem) -> str:
    """SHA-256 of a PEP's data (constraint rows, kinds, objective): what an entry belongs to
    (the code that built the PEP, through what it built)."""
    from boundlab.integrity import digest

    rows, is_eq, obj, n_points, n_values = problem
    return digest({"rows": _quantized(rows), "is_eq": is_eq, "objective": _quantized(obj),
                   "n_points": n_points, "n_values": n_values})


def _quantized(arr) -> np.ndarray:
    """Mantissas rounded to 32 bits: the digest does not depend on last-bit differences of
    the arithmetic that built the rows (another BLAS, another CPU)."""
    m, e = np.frexp(np.asarray(arr, dtype=float))
    return np.ldexp(np.round(m * 2.0**32), e - 32)


def _dec(cert, name, shape, path) -> np.ndarray:
    item = cert.get(name) if isinstance(cert, dict) else None
    if not isinstance(item, dict) or item.get("shape") != list(shape) \
            or not isinstance(item.get("b64"), str):
        raise IntegrityError(path, f"certificate.{name}", f"an array of shape {list(shape)} "
                             "(this PEP's size)", "missing or of another shape")
    size = int(np.prod(shape)) * 8
    if len(item["b64"]) != 4 * math.ceil(size / 3):  # checked before decoding
        raise IntegrityError(path, f"certificate.{name}", f"{size} bytes of float64",
                             "its text has another length")
    try:
        raw = base64.b64decode(item["b64"], validate=True)
    except (binascii.Error, ValueError):
        raise IntegrityError(path, f"certificate.{name}", "base64 text", "it is not") from None
    arr = np.frombuffer(raw, dtype="<f8").reshape(shape).astype(float)
    if not np.all(np.isfinite(arr)):
        raise IntegrityError(path, f"certificate.{name}", "finite numbers", "it has nan/inf")
    return arr


def _recompute(problem, cert, path):
    """Primal value, dual value and errors from a certificate (as ``_solve._certificate``)."""
    rows, is_eq, obj, n_points, n_values = problem
    g = _dec(cert, "G", (n_points, n_points), path)
    f = _dec(cert, "F", (n_values,), path)
    lam = _dec(cert, "lam", (len(rows),), path)
    res = _dec(cert, "R", (n_points, n_points), path)
    z = np.concatenate([((g + g.T) / 2).ravel(order="F"), f])
    vals = rows[:, :-1] @ z + rows[:, -1]
    viol = np.where(is_eq, np.abs(vals), vals)
    leftover = obj[:-1].copy()
    leftover[: res.size] += ((res + res.T) / 2).ravel(order="F")
    leftover -= lam @ rows[:, :-1]
    primal = float(obj[:-1] @ z + obj[-1])
    dual = float(obj[-1] - lam @ rows[:, -1])
    errors = {
        "primal_psd": max(0.0, -float(np.linalg.eigvalsh(g)[0])) if n_points else 0.0,
        "primal_constraints": max(0.0, float(viol.max(initial=0.0))),
        "dual_psd": max(0.0, -float(np.linalg.eigvalsh(res)[0])) if n_points else 0.0,
        "dual_sign": max(0.0, -float(lam[~is_eq].min(initial=0.0))),
        "proof": float(np.abs(leftover).sum()),
    }
    return primal, dual, errors


def _shown(v) -> str:
    from boundlab.integrity import escape

    if isinstance(v, float):
        return f"{v:.6g}"
    return escape(repr(v))[:40]


def judge(lower, value, errors, tol, tol_proof, scale_floor, use) -> bool:
    """``ok`` as :func:`verify.tightness._solve.solve_pep` judges it."""
    scale = max(abs(value), abs(lower), scale_floor)
    gap = value - lower
    primal_ok = max(errors["primal_psd"], errors["primal_constraints"]) <= tol * scale
    dual_ok = max(errors["dual_psd"], errors["dual_sign"]) <= tol * scale \
        and errors["proof"] <= tol_proof * scale
    if use == "upper":
        return dual_ok and abs(gap) <= 10 * tol * scale
    if use == "lower":
        return primal_ok and abs(gap) <= 10 * tol * scale
    return primal_ok and dual_ok and abs(gap) <= tol * scale


def uncertified_claim(result) -> bool:
    """True when ``result`` claims a bound without a certificate (it must be re-solved):
    anything but a failed solve (no value, no lower bound, not ok)."""
    if isinstance(result.get("certificate"), dict):
        return False
    return not (result.get("value") is None and result.get("lower") is None
                and result.get("ok") is False)


def verify_result(result: dict, build, path, settings: dict, problem=None) -> dict:
    """``result`` with ``value``, ``lower``, ``gap``, ``errors`` and ``ok`` recomputed from its
    certificate against the PEP ``build`` declares (``problem``: its rows, if already built).

    ``settings``: the caller's ``tol``, ``tol_proof``, ``scale_floor``, ``use`` (defaults of
    :func:`~verify.tightness._solve.solve_pep`). Raises
    :class:`~boundlab.errors.IntegrityError` naming ``path`` and the field for a missing or
    malformed certificate, or stored numbers that the certificate does not give.
    """
    from ._wrapper import TOL, TOL_PROOF

    if not isinstance(result.get("certificate"), dict):
        if uncertified_claim(result):
            raise IntegrityError(path, "certificate", "a solver certificate for the stored "
                                 "bracket", "it has none")
        return dict(result)
    problem = problem_rows(build) if problem is None else problem
    lower, value, errors = _recompute(problem, result["certificate"], path)
    for name, mine in (("value", value), ("lower", lower)):
        stored = result.get(name)
        if isinstance(stored, bool) or not isinstance(stored, (int, float)) or \
                not abs(stored - mine) <= _REL * max(abs(mine), abs(stored), 1e-300):
            raise IntegrityError(path, name, f"the {name} its certificate proves",
                                 f"{mine:.6g} stored as {_shown(stored)}")
    ok = judge(lower, value, errors, settings.get("tol") or TOL,
               settings.get("tol_proof") or TOL_PROOF, settings.get("scale_floor") or 1.0,
               settings.get("use") or "both")
    if result.get("ok") is True and not ok:
        raise IntegrityError(path, "ok", "a certificate within the solver tolerances",
                             "its errors are beyond them: " + ", ".join(
                                 f"{k} {v:.3g}" for k, v in errors.items()))
    return {**result, "value": value, "lower": lower, "gap": value - lower, "errors": errors,
            "ok": ok}


def certified_hit(sources, key, build, settings):
    """``(checked result or None, the PEP's rows or None)``: the first entry of ``key`` among
    the caches ``sources`` (the user's, then the shipped one) whose seal matches the PEP's data
    and whose certificate gives its bracket; a refused entry warns and the next is tried. The
    rows are built only when an entry exists."""
    import warnings

    problem = None
    for source in sources:
        if not source.has(key):
            continue
        if problem is None:
            problem = problem_rows(build)
        hit = source.get(key, rows_digest(problem))
        if hit is None:
            continue
        try:
            return verify_result(hit, build, source.path(key), settings, problem), problem
        except IntegrityError as exc:
            warnings.warn(f"PEP cache entry refused: {exc}; solving instead", RuntimeWarning,
                          stacklevel=3)
    return None, problem
