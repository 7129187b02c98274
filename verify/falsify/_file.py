"""A saved falsification on disk (:meth:`verify.falsify.Falsification.save`), read back by
:func:`load` as untrusted data, sealed like every file boundlab reads back.

The file is the result's strict JSON (:meth:`Falsification.to_dict`: a non-finite number is
null) plus what a colleague needs to replay it with nothing else: ``"bound"`` (the statement:
id, source, kind, lhs, expression and preconditions as text, parameter names, the SHA-256 of
the expression's ``srepr``), ``"setting"`` (the falsify call's algorithm, function class,
participation and constants) and, in the instance's ``data``, its Spec (L, mu, D, clients,
dimension, weights), hyper-parameter point and step. ``"seal"``
(:func:`boundlab.integrity.seal`, as :mod:`verify.worst.file` does) covers the claim (kind,
bound id and digest, family, run, boundlab release) and the payload. :func:`load` reads at most
:data:`MAX_BYTES`, parses strict JSON, checks the fields' types and sizes, then the seal; the
bound's text is read by a whitelist grammar (numbers, its parameters' names, + - * / **, a few
named functions: nothing is evaluated) and must give back the saved ``srepr`` digest.
"""

from __future__ import annotations

import math

from boundlab.errors import IntegrityError

from ._expr_text import parse as _parse

__all__ = ["KIND", "MAX_BYTES", "document", "load", "bound_record"]

KIND = "boundlab falsification"
MAX_BYTES = 16 * 1024 ** 2
_MAX_EXPR = 20000
_MAX_ROUNDS, _MAX_STEPS, _MAX_CLIENTS, _MAX_DIM, _MAX_Z = 10 ** 4, 10 ** 4, 1000, 100, 10 ** 6
_SPECIAL = ("worst.quadratic", "pep-interpolation")  # and the routes' families (routes.py)


def bound_record(bound) -> dict:
    """The plain statement of ``bound`` saved in the file."""
    import sympy as sp


    pcs = [[sp.sstr(pc.lhs), pc.op, sp.sstr(pc.rhs), pc.text] for pc in bound.preconditions]
    return {"id": bound.id, "source": str(bound.source), "kind": bound.kind, "lhs": bound.lhs,
            "expr": sp.sstr(bound.expr), "params": list(bound.params),
            "extra_params": list(bound.extra_params), "preconditions": pcs,
            "srepr_sha256": expr_digest(bound.expr)}


def expr_digest(expr) -> str:
    """SHA-256 of the ``srepr`` of ``expr`` with every symbol by its name alone: the structure
    the text must read back to, whatever assumptions the writing process had attached to its
    symbols (they differ between a symbol built with its catalogue domain and one a process
    derived more facts for)."""
    import sympy as sp

    from boundlab.integrity import sha256

    plain = expr.xreplace({s: sp.Symbol(s.name) for s in expr.free_symbols
                           if isinstance(s, sp.Symbol)})
    return sha256(sp.srepr(plain).encode())


def _digests(expr) -> tuple:
    """The digests a saved expression may carry: :func:`expr_digest`, and the full ``srepr``
    one of files written before it."""
    import sympy as sp

    from boundlab.integrity import sha256

    return expr_digest(expr), sha256(sp.srepr(expr).encode())


def _claim(doc) -> dict:
    import boundlab
    from boundlab.integrity import digest

    inst = doc.get("instance") or {}
    return {"kind": KIND, "bound_id": doc.get("bound_id"), "bound": digest(doc.get("bound")),
            "family": inst.get("family"), "run": inst.get("run"),
            "release": boundlab.__version__}


def document(res) -> dict:
    """The sealed plain data of the falsification ``res``."""
    from boundlab.integrity import seal

    from ..worst.file import _payload

    bound = res.instance.judged_bound() if res.instance is not None else None
    if bound is None:
        import boundlab

        bound = boundlab.registry.resolve(res.bound_id)
    doc = {"kind": KIND, **res.to_dict(), "bound": bound_record(bound)}
    return {"seal": seal(_claim(doc), _payload(doc)), **doc}


def load(path, types):
    """The :class:`~verify.falsify.Falsification` saved at ``path``, its instance replayable
    from the file alone; IntegrityError naming the path and the first field that is wrong."""
    from boundlab.integrity import check_seal, loads_plain, read_bounded

    from ..worst.file import _payload

    doc = loads_plain(read_bounded(path, MAX_BYTES, "saved falsification"), path,
                      "saved falsification")
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise IntegrityError(path, "kind", f"a JSON object of kind {KIND!r}",
                             "it is something else")
    _validate(doc, path)
    check_seal(doc.get("seal"), _claim(doc), _payload(doc), path)
    bound = _bound(doc["bound"], path)
    return _result(doc, bound, path, types)


def _validate(doc, path) -> None:
    from ..worst.file import _NUM, _STR, _typed

    for key in ("bound_id", "verdict", "reason"):
        _typed(doc, key, _STR, path, key)
    b, inst, s = doc.get("bound"), doc.get("instance"), doc.get("setting")
    if not isinstance(b, dict) or not all(isinstance(b.get(k), str) for k in
                                          ("id", "kind", "lhs", "expr", "srepr_sha256")):
        raise IntegrityError(path, "bound", "the bound's statement (id, kind, lhs, expr)")
    if len(b["expr"]) > _MAX_EXPR or not all(
            isinstance(b.get(k), list) and all(isinstance(n, str) for n in b[k])
            for k in ("params", "extra_params")):
        raise IntegrityError(path, "bound.expr", f"at most {_MAX_EXPR} characters and "
                             "lists of parameter names")
    sym = s.get("symbols") if isinstance(s, dict) else None
    if not isinstance(s, dict) or not all(isinstance(v, (str, int, float)) or v is None
                                          for k, v in s.items() if k != "symbols") or not (
            sym is None or isinstance(sym, dict) and len(sym) <= 64 and all(
                isinstance(k, str) and (v is None or isinstance(v, str)) and
                len(k) + len(v or "") <= 200
                for k, v in sym.items())):
        raise IntegrityError(path, "setting", "an object of names and numbers (symbols: of "
                             "names)")
    if inst is None:
        return
    if not isinstance(inst, dict) or not isinstance(inst.get("run"), dict) or \
            not isinstance(inst.get("data"), dict):
        raise IntegrityError(path, "instance", "an object with family, data and run")
    for key in ("ratio", "lhs", "rhs"):
        if inst.get(key) is not None:
            _typed(inst, key, _NUM, path, f"instance.{key}")
    _validate_run(inst, path)


def _validate_run(inst, path) -> None:
    from .families import family_names
    from .routes import families

    if inst.get("family") not in (*family_names(), *_SPECIAL, *families()):
        raise IntegrityError(path, "instance.family", "a search family name")
    run, data = inst["run"], inst["data"]
    limits = {"rounds": _MAX_ROUNDS, "local_steps": _MAX_STEPS}
    for k, hi in limits.items():
        v = run.get(k)
        if k in run and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= hi):
            raise IntegrityError(path, f"instance.run.{k}", f"an integer in 1..{hi}")
    spec = data.get("spec")
    from .routes import families

    if inst["family"] in (*_SPECIAL, *families()):
        return
    if not isinstance(spec, dict) or not isinstance(data.get("z"), list) or \
            len(data["z"]) > _MAX_Z or not all(isinstance(v, (int, float)) and
                                               not isinstance(v, bool) for v in data["z"]):
        raise IntegrityError(path, "instance.data", f"the search point z (at most {_MAX_Z} "
                             "numbers) and the Spec")
    n, d = spec.get("n_clients"), spec.get("dim")
    if not (isinstance(n, int) and 1 <= n <= _MAX_CLIENTS and isinstance(d, int)
            and 1 <= d <= _MAX_DIM):
        raise IntegrityError(path, "instance.data.spec", f"n_clients in 1..{_MAX_CLIENTS}, "
                             f"dim in 1..{_MAX_DIM}")


def _bound(rec, path):
    """The saved statement: the registered Bound of that id when it states the same expression,
    else rebuilt from the text (and checked against the saved srepr digest)."""

    import boundlab
    from boundlab import Bound, Precondition, make_params

    try:
        known = boundlab.get(rec["id"])
        if rec["srepr_sha256"] in _digests(known.expr):
            return known
    except boundlab.errors.UnknownNameError:
        pass
    names = set(rec["params"]) | set(rec["extra_params"])
    expr = _parse(rec["expr"], names, path)
    if rec["srepr_sha256"] not in _digests(expr):
        raise IntegrityError(path, "bound.expr", "the saved expression",
                             "it does not read back to its saved digest")
    pcs = tuple(Precondition(_parse(a, names, path), op, _parse(b, names, path), str(text))
                for a, op, b, text in rec.get("preconditions", []))
    return Bound(id=rec["id"], source=str(rec.get("source", "")), expr=expr,
                 params=make_params(*rec["params"]),
                 extra_params=make_params(*rec["extra_params"]), kind=rec["kind"],
                 lhs=rec["lhs"], preconditions=pcs)


def _num(v):
    return math.nan if v is None else float(v)


def _result(doc, bound, path, types):
    Falsification, Instance = types  # the classes of verify.falsify.api (no import back)

    res = Falsification(doc["bound_id"], doc["verdict"], reason=doc["reason"],
                        worst_ratio=_num(doc.get("worst_ratio")),
                        certificate=str(doc.get("certificate", "")),
                        certified_error=_num(doc.get("certified_error")),
                        evaluations=int(doc.get("evaluations") or 0),
                        setting=dict(doc.get("setting") or {}),
                        notes=list(doc.get("notes") or []))
    inst = doc.get("instance")
    if inst is None:
        return res
    from .routes import families

    routed = inst["family"] in (*_SPECIAL, *families())
    plan = None if routed and inst["family"] != "pep-interpolation" else \
        _plan(bound, res.setting, inst["data"], path)
    res.instance = Instance(doc["bound_id"], inst["family"], inst["data"], inst["run"],
                            _num(inst.get("ratio")), _num(inst.get("lhs")),
                            _num(inst.get("rhs")), plan, bound)
    return res


def _plan(bound, setting, data, path):
    """The plan the instance was found with: :func:`make_plan` of the saved setting, at the
    instance's Spec, hyper-parameter point and step."""
    import dataclasses

    from .families import Spec
    from .plan import NotApplicable, make_plan

    how = {k: setting.get(k) for k in ("algorithm", "function_class", "participation",
                                       "symbols")}
    rest = {k: v for k, v in setting.items() if k not in how and v is not None}
    try:
        plan = make_plan(bound, rest, **how)
        spec = Spec(**{k: (tuple(v) if isinstance(v, list) else v)
                       for k, v in data.get("spec", {}).items()})
    except (NotApplicable, TypeError, ValueError) as exc:
        raise IntegrityError(path, "setting", "a setting falsify can plan",
                             f"{type(exc).__name__}: {exc}") from exc
    if "spec" not in data:  # a PEP interpolation: the plan as made
        return plan
    at = data.get("plan") if isinstance(data.get("plan"), dict) else {}
    hyper = at.get("hyper")
    return dataclasses.replace(plan, spec=spec, scales=((1.0, 1.0),),
                               hyper_grid=(dict(hyper),) if isinstance(hyper, dict)
                               else plan.hyper_grid,
                               step_fixed=at.get("step_fixed", plan.step_fixed))
