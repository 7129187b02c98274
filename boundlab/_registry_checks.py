"""What :func:`boundlab.register` checks before a bound enters the catalogue: the bound itself
(:func:`check_bound`: id, lhs, a finite expression, parameters built by
:func:`boundlab.make_params`, terms adding up), its ``symbols`` and its run metadata. Every
refusal is a :class:`RegistrationError` naming the bound and what is wrong.

Example
-------
>>> import boundlab
>>> check_bound(boundlab.get("drift.plateau")) is None
True
>>> check_meta("mine.x", "fedavg", "convex", None)
Traceback (most recent call last):
...
boundlab.registry.RegistrationError: mine.x: function_class = 'convex' is not one of \
smooth-convex, smooth-strongly-convex, smooth-nonconvex
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import BoundlabError, UnknownNameError

__all__ = ["FUNCTION_CLASSES", "RegistrationError", "check_bound", "check_meta", "check_symbols"]

#: function classes a registered bound may declare (``verify.tightness`` matches PEP models)
FUNCTION_CLASSES = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RUN_KEYS = ("problem", "algorithm", "rounds", "seeds", "hyper", "params")


class RegistrationError(BoundlabError):
    """A bound cannot be registered: duplicate id, malformed bound, or a broken plug-in.

    >>> str(RegistrationError("x.y: duplicate id"))
    'x.y: duplicate id'
    """

    __module__ = "boundlab.registry"  # its public home (users catch it from there)


def check_bound(b) -> None:
    import sympy as sp

    from .core import Bound, Param, Precondition

    if not isinstance(b, Bound):
        raise RegistrationError(f"register() takes a boundlab.Bound; got {type(b).__name__}")
    if not isinstance(b.id, str) or not _ID.match(b.id):
        raise RegistrationError(f"bound id {b.id!r} must read family.name (letters, digits, _)")
    bad = []
    if not isinstance(b.source, str):
        bad.append("source must be a string")
    if not isinstance(b.lhs, str) or not _NAME.match(b.lhs):
        bad.append(f"lhs must name a measured quantity (an identifier); got {b.lhs!r}")
    if not isinstance(b.expr, sp.Expr) or b.expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
        bad.append("expr must be a finite sympy expression")
    allp = {}
    for where in ("params", "extra_params"):
        for name, p in getattr(b, where).items():
            if not isinstance(p, Param) or p.name != name or p.symbol.name != name:
                bad.append(f"{where}[{name!r}] must be a Param named {name!r} "
                           "(use boundlab.make_params)")
            elif name in allp:
                bad.append(f"{name!r} is in both params and extra_params")
            else:
                allp[name] = p.symbol
    exprs = [("expr", b.expr)] + [(f"term {k!r}", v) for k, v in b.terms.items()]
    for pc in b.preconditions:
        if not isinstance(pc, Precondition):
            bad.append(f"preconditions must be Precondition objects; got {type(pc).__name__}")
            continue
        exprs += [(f"precondition {pc.text!r}", pc.lhs), (f"precondition {pc.text!r}", pc.rhs)]
    for where, e in exprs:
        for s in getattr(sp.sympify(e), "free_symbols", ()):
            if s.name in allp and allp[s.name] != s:
                bad.append(f"{where}: symbol {s.name!r} differs from the parameter's symbol "
                           f"(assumptions {s.assumptions0} vs {allp[s.name].assumptions0}); build "
                           f"it with boundlab.sym({s.name!r})")
            elif s.name not in allp:
                bad.append(f"{where}: symbol {s.name!r} is not a parameter")
    if not bad and b.terms and sp.simplify(sum(b.terms.values()) - b.expr) != 0:
        bad.append("terms do not add up to expr")
    if bad:
        raise RegistrationError(f"{b.id}: malformed bound: " + "; ".join(dict.fromkeys(bad)))


_SYMBOL_VALUE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\*[A-Za-z_][A-Za-z0-9_]*)?$")


def check_symbols(bound, symbols) -> dict:
    """``symbols`` of :func:`register`: a dict of the bound's parameter names to identifiers
    (or ``a*b``); RegistrationError naming what is wrong."""
    if symbols is None:
        return {}
    if not isinstance(symbols, Mapping):
        raise RegistrationError(f"{bound.id}: symbols must be a dict of parameter name -> run "
                                f"meaning; got {type(symbols).__name__}")
    names = set(bound.params) | set(bound.extra_params)
    for k, v in symbols.items():
        if k not in names:
            raise RegistrationError(f"{bound.id}: symbols names {k!r}, not a parameter of the "
                                    f"bound ({', '.join(sorted(names))})")
        if v is not None and (not isinstance(v, str) or not _SYMBOL_VALUE.match(v)):
            raise RegistrationError(f"{bound.id}: symbols[{k!r}] = {v!r} is not a run setting "
                                    "name (an identifier, or 'rounds*local_steps')")
    return dict(symbols)


def check_meta(bid, algorithm, function_class, run) -> dict:
    if algorithm is not None and not (isinstance(algorithm, str) and algorithm):
        raise RegistrationError(f"{bid}: algorithm must be an algorithm name; got {algorithm!r}")
    if function_class is not None and function_class not in FUNCTION_CLASSES:
        raise RegistrationError(f"{bid}: function_class = {function_class!r} is not one of "
                                f"{', '.join(FUNCTION_CLASSES)}")
    if run is not None:
        if not isinstance(run, Mapping):
            raise RegistrationError(f"{bid}: run must be a dict with keys {_RUN_KEYS}")
        unknown = [k for k in run if k not in _RUN_KEYS]
        if unknown:
            raise UnknownNameError(f"key of the run of {bid}", unknown[0], _RUN_KEYS)
        run = dict(run)
    return {"algorithm": algorithm, "function_class": function_class, "run": run,
            "plugin": None}
