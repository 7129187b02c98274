"""Typo-mutants of a bound: the small slips a transcription makes, as new :class:`boundlab.Bound`.

:func:`mutants` returns, for one bound, every mutant of these operators (:data:`OPERATORS`):

* ``const`` -- each numeric constant of the expression times / divided by 2 and 10
  (``<id>~const[3/8]*2``; a value found twice is told apart as ``[2#1]``), and each term's
  coefficient likewise (``<id>~term[init]/10``; a bound without terms has one term, ``expr``);
* ``exponent`` -- each power of a symbol (``eta**2``, ``(1 - p)**(2*K)``, a bare ``L`` as
  ``L**1``) with its exponent plus or minus one (``<id>~exp[eta**2]+1``);
* ``drop`` -- each of ``bound.terms`` left out (``<id>~drop[noise]``);
* ``swap`` -- two parameters of the same domain swapped (``<id>~swap[L,mu]``);
* ``sign`` (not applied by default: :data:`ALL_OPERATORS`) -- each term with its sign
  flipped (``<id>~sign[init]``).

Constants in exponents are exponent typos, not constant ones. Mutants stay consistent bounds:
with terms, the mutation is made inside a term and ``expr`` is rebuilt as the sum of the terms
(the registry's rule); ``stable`` is dropped (it was a form of the original); a parameter that
disappears from the expression moves to ``extra_params`` when a precondition still uses it.
Mutants whose expression equals the original's or an earlier mutant's are left out: equal as
sympy trees (a set lookup), or equal to :data:`SAME_RTOL` relative at each of :data:`N_PROBE`
seeded random points of the domain (:func:`domain_points`), finite at the same points. No
symbolic simplification runs (its time has no bound on the catalogue's larger expressions), so
the cost is one compiled evaluation per candidate.

>>> import boundlab
>>> ms = mutants(boundlab.get("drift.plateau"))
>>> [m.id for m in ms][:3]
['drift.plateau~const[18]*2', 'drift.plateau~const[18]/2', 'drift.plateau~const[18]*10']
>>> str(next(m for m in ms if m.id.endswith("exp[eta**2]-1")).expr)
'18*L*eta*tau**2*zeta**2'
"""

from __future__ import annotations

import dataclasses

import numpy as np
import sympy as sp

from ._probe import Probe, domain_points, evaluate_expr

__all__ = ["mutants", "OPERATORS", "ALL_OPERATORS", "operator_of", "evaluate_expr", "FACTORS",
           "parse_id", "domain_points", "N_PROBE", "PROBE_SEED", "SAME_RTOL"]

#: the operators :func:`mutants` applies by default (issue 21); ``sign`` is available on demand
OPERATORS = ("const", "exponent", "drop", "swap")
ALL_OPERATORS = (*OPERATORS, "sign")
#: (label, factor) of the constant typos
FACTORS = (("*2", 2), ("/2", sp.Rational(1, 2)), ("*10", 10), ("/10", sp.Rational(1, 10)))
#: points (and their seed) at which mutants are evaluated to find duplicates
N_PROBE, PROBE_SEED = 64, 12345
#: relative agreement at every probe point that makes two expressions duplicates
SAME_RTOL = 1e-12


def parse_id(mutant_id: str) -> tuple[str, str]:
    """``(original id, mutation)`` of a mutant id.

    >>> parse_id("drift.plateau~exp[eta**2]+1")
    ('drift.plateau', 'exp[eta**2]+1')
    """
    base, _, what = str(mutant_id).partition("~")
    return base, what


def operator_of(mutant_id: str) -> str:
    """The operator (one of :data:`OPERATORS`) that made a mutant.

    >>> operator_of("a.b~term[init]*2"), operator_of("a.b~exp[L]-1")
    ('const', 'exponent')
    """
    what = parse_id(mutant_id)[1]
    head = what.split("[", 1)[0]
    return {"term": "const", "exp": "exponent"}.get(head, head)


# ----------------------------------------------------------------------------- tree surgery
def _paths(expr, keep, path=(), in_exponent=False):
    """Paths (tuples of arg indices) of the nodes where ``keep(node, in_exponent)``."""
    out = [path] if keep(expr, in_exponent) else []
    for i, a in enumerate(expr.args):
        out += _paths(a, keep, path + (i,), in_exponent or (expr.is_Pow and i == 1))
    return out


def _at(expr, path):
    for i in path:
        expr = expr.args[i]
    return expr


def _replace(expr, path, new):
    if not path:
        return new
    args = list(expr.args)
    args[path[0]] = _replace(args[path[0]], path[1:], new)
    return _rebuild(expr, args)


def _rebuild(expr, args):
    if isinstance(expr, (sp.Max, sp.Min)):  # their evaluation compares every pair of args
        return expr.func(*args, evaluate=False)  # symbolically: unbounded time
    return expr.func(*args)


def _swap(expr, rep):
    """``expr.xreplace(rep)``, with Max / Min rebuilt unevaluated (:func:`_rebuild`)."""
    if expr in rep:
        return rep[expr]
    if not expr.args:
        return expr
    args = [_swap(a, rep) for a in expr.args]
    return expr if args == list(expr.args) else _rebuild(expr, args)


def _is_const(node, in_exp) -> bool:
    return bool(node.is_Number) and not in_exp and node != 0


def _is_power(node, in_exp) -> bool:
    if in_exp:
        return False
    if node.is_Symbol:
        return True
    return bool(node.is_Pow and node.args[0].free_symbols)


def _label(node) -> str:
    return sp.sstr(node).replace(" ", "")


# ----------------------------------------------------------------------------- operators
def _pieces(bound) -> dict:
    """The named pieces a mutation works on: the terms, or the whole expression."""
    return dict(bound.terms) if bound.terms else {"expr": bound.expr}


def _const(pieces):
    seen: dict = {}
    for name, e in pieces.items():
        for path in _paths(e, _is_const):
            node = _at(e, path)
            lab = _label(node)
            k = seen.get(lab, 0)
            seen[lab] = k + 1
            tag = lab if k == 0 else f"{lab}#{k}"
            for fl, f in FACTORS:
                yield f"const[{tag}]{fl}", {name: _replace(e, path, node * f)}
    if len(pieces) > 1 or next(iter(pieces.values())).free_symbols:
        for name, e in pieces.items():
            for fl, f in FACTORS:
                yield f"term[{name}]{fl}", {name: e * f}


def _exponent(pieces):
    seen: dict = {}
    for name, e in pieces.items():
        for path in _paths(e, _is_power):
            if path and path[-1] == 0 and _at(e, path[:-1]).is_Pow:
                continue  # the base of a power: its power is the mutated one
            node = _at(e, path)
            base, ex = (node, sp.Integer(1)) if node.is_Symbol else node.args
            lab = _label(node)
            k = seen.get(lab, 0)
            seen[lab] = k + 1
            tag = lab if k == 0 else f"{lab}#{k}"
            for sl, d in (("+1", 1), ("-1", -1)):
                yield f"exp[{tag}]{sl}", {name: _replace(e, path, sp.Pow(base, ex + d))}


def _drop(pieces):
    if len(pieces) > 1:
        for name in pieces:
            yield f"drop[{name}]", {name: None}


def _sign(pieces):
    for name, e in pieces.items():
        yield f"sign[{name}]", {name: -e}


def _swaps(bound):
    names = [n for n in bound.params]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pa, pb = bound.params[a], bound.params[b]
            if pa.domain == pb.domain:
                yield a, b, {pa.symbol: pb.symbol, pb.symbol: pa.symbol}


# ----------------------------------------------------------------------------- building
def _sum(pieces):
    """The expression of a mutant's pieces (None: degenerate, not a bound)."""
    expr = sp.Add(*[v for v in pieces.values() if v is not None])
    if expr.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or not expr.free_symbols:
        return None
    return expr


def _build(bound, tag, pieces, expr):
    terms = {k: v for k, v in pieces.items() if v is not None}
    free = {s.name for s in expr.free_symbols}
    used = {n for pc in bound.preconditions for n in pc.names}
    params = {n: p for n, p in bound.params.items() if n in free}
    extra = dict(bound.extra_params)
    extra.update({n: p for n, p in bound.params.items() if n not in free and n in used})
    keep_terms = terms if bound.terms else {}
    try:
        return dataclasses.replace(bound, id=f"{bound.id}~{tag}", expr=expr, params=params,
                                   extra_params=extra, terms=keep_terms, stable=None,
                                   description=f"typo-mutant of {bound.id}: {tag}")
    except (ValueError, TypeError):  # a malformed mutant is left out
        return None


def _candidates(bound, operators):
    pieces = _pieces(bound)
    gens = {"const": lambda: _const(pieces), "exponent": lambda: _exponent(pieces),
            "drop": lambda: _drop(pieces), "sign": lambda: _sign(pieces)}
    for op in operators:
        if op == "swap":
            for a, b, rep in _swaps(bound):
                yield f"swap[{a},{b}]", {k: _swap(v, rep) for k, v in pieces.items()}
        else:
            for tag, change in gens[op]():
                yield tag, {**pieces, **change}


def mutants(bound, operators=OPERATORS, *, seed: int = PROBE_SEED) -> list:
    """The typo-mutants of ``bound`` (see the module docstring), deduplicated, in a stable
    order; each is a :class:`boundlab.Bound` with id ``<bound.id>~<mutation>``.

    Parameters
    ----------
    bound : Bound or str
        A bound (or a catalogue / registered id).
    operators : sequence of str
        A subset of :data:`ALL_OPERATORS`.
    seed : int
        Seed of the :data:`N_PROBE` domain points whose values tell duplicates apart (same
        seed, same list).
    """
    import boundlab
    from boundlab.errors import UnknownNameError

    if isinstance(bound, str):
        bound = boundlab.get(bound)
    ops = [operators] if isinstance(operators, str) else list(operators)
    for op in ops:
        if op not in ALL_OPERATORS:
            raise UnknownNameError("mutation operator", op, list(ALL_OPERATORS))
    probe = Probe(bound, domain_points(bound, N_PROBE, seed=seed))
    seen, prints = {bound.expr}, [probe(bound.expr, keep=True)]
    kept = []
    for tag, pieces in _candidates(bound, ops):
        expr = _sum(pieces)
        if expr is None or expr in seen:  # structurally equal: no evaluation needed
            continue
        seen.add(expr)
        fp = probe(expr, keep=True)
        if _duplicate(fp, prints):
            continue
        m = _build(bound, tag, pieces, expr)
        if m is not None:
            prints.append(fp)
            kept.append(m)
    return kept


def _duplicate(fp, prints) -> bool:
    """``fp`` duplicates a row of ``prints``: finite at the same probe points (at least one),
    equal to :data:`SAME_RTOL` relative there. No symbolic simplification: it has no bound on
    its time."""
    ok = np.isfinite(fp)
    if not ok.any():
        return False
    P = np.asarray(prints)
    same = (np.isfinite(P) == ok).all(axis=1)
    a, b = P[:, ok], fp[ok]
    with np.errstate(all="ignore"):
        close = np.abs(a - b) <= SAME_RTOL * np.maximum(np.abs(a), np.abs(b))
    return bool((same & close.all(axis=1)).any())
