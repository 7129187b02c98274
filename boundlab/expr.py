"""A whitelist grammar for user expressions such as step-size schedules (``0.1/sqrt(t)``).

Text from a command line, a file or a web form is data, never code: it is parsed with
``ast.parse(mode="eval")`` and only these nodes are accepted — numbers, the variables the caller
names, ``+ - * / **`` (unary and binary), parentheses, and calls of a few named functions
(``sqrt exp log log1p expm1 sin cos abs min max floor ceil``). Anything else (attributes,
subscripts, strings, comprehensions, lambdas, keywords, ``__import__``...) is refused with a
:class:`~boundlab.errors.DomainError` naming the parameter. Nothing is evaluated while parsing;
the result is a vectorized numpy function of the variables, computed in float64 (a power tower
such as ``9**9**9**9`` overflows to ``inf`` instead of building a huge integer).

Example
-------
>>> from boundlab.expr import parse
>>> f = parse("0.1/sqrt(t + 1)", ("t",), name="lr")
>>> float(f(t=3))
0.05
>>> parse("__import__('os').system('echo hi')", ("t",), name="lr")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
boundlab.errors.DomainError: lr = ... (not allowed: a call of something that is not a named ...)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import numpy as np

from .errors import DomainError

__all__ = ["parse", "Expression", "FUNCTIONS", "MAX_LENGTH", "is_finite_positive"]

#: the longest expression accepted (characters); deeper nesting is refused before parsing
MAX_LENGTH = 500
_MAX_DEPTH = 50

FUNCTIONS = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1,
    "sin": np.sin, "cos": np.cos, "abs": np.abs, "floor": np.floor, "ceil": np.ceil,
    "min": np.minimum, "max": np.maximum,
}
_ARITY = {"min": 2, "max": 2}
_BINOPS = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
           ast.Div: np.true_divide, ast.Pow: np.power}
_UNARY = {ast.UAdd: np.positive, ast.USub: np.negative}


@dataclass(frozen=True)
class Expression:
    """A parsed expression: call it with the variables as keywords (scalars or arrays).

    >>> e = parse("2**-k", ("k",))
    >>> e(k=[0, 1, 2]).tolist(), e.text, e.variables
    ([1.0, 0.5, 0.25], '2**-k', ('k',))
    """

    text: str
    variables: tuple[str, ...]
    _tree: ast.AST

    def __call__(self, **values):
        with np.errstate(all="ignore"):
            arrs = {k: np.asarray(values[k], dtype=float) for k in self.variables}
            return np.asarray(_eval(self._tree, arrs), dtype=float)


def _domain(variables) -> str:
    names = ", ".join(FUNCTIONS)
    var = " and ".join(variables) if variables else "no variable"
    return f"an expression in {var} with numbers, + - * / **, ( ) and {names}"


def parse(text, variables=("t",), *, name: str = "expression") -> Expression:
    """Parse ``text`` with the whitelist grammar; raises :class:`DomainError` naming ``name``.

    >>> float(parse("max(1e-3, 0.5*0.99**r)", ("r",), name="lr")(r=1000))
    0.001
    >>> parse("t.real", ("t",), name="lr")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: lr = 't.real' is outside its domain: ... (not allowed: .real)
    """
    variables = tuple(variables)
    dom = _domain(variables)
    if not isinstance(text, str):
        raise DomainError(name, text, dom, "not text")
    if not text.strip():
        raise DomainError(name, text, dom, "empty")
    if len(text) > MAX_LENGTH:
        raise DomainError(name, text[:40] + "...", dom, f"longer than {MAX_LENGTH} characters")
    depth = 0
    for ch in text:  # refuse deep nesting before the parser recurses
        depth += ch == "("
        depth -= ch == ")"
        if depth > _MAX_DEPTH:
            raise DomainError(name, text[:40] + "...", dom, f"nested deeper than {_MAX_DEPTH}")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise DomainError(name, text, dom, f"syntax error: {getattr(exc, 'msg', exc)}") from None
    _check(tree.body, variables, name, text, dom)
    return Expression(text, variables, tree.body)


def _check(node, variables, name, text, dom) -> None:
    def bad(why):
        raise DomainError(name, text, dom, f"not allowed: {why}")

    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            bad(f"the constant {v!r}")
        if isinstance(v, int) and abs(v) > 2**53:
            bad(f"the integer {v} (larger than 2**53)")
        return
    if isinstance(node, ast.Name):
        if node.id not in variables:
            if node.id in FUNCTIONS:
                bad(f"the function {node.id} used as a value")
            raise DomainError(name, text, dom, f"unknown symbols [{node.id!r}] (variables: "
                                               f"{', '.join(variables) or 'none'})")
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            bad(f"the operator {type(node.op).__name__}")
        _check(node.left, variables, name, text, dom)
        _check(node.right, variables, name, text, dom)
        return
    if isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            bad(f"the operator {type(node.op).__name__}")
        _check(node.operand, variables, name, text, dom)
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            bad("a call of something that is not a named function")
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            bad("keyword or starred arguments")
        if len(node.args) != _ARITY.get(node.func.id, 1):
            bad(f"{node.func.id} with {len(node.args)} arguments")
        for a in node.args:
            _check(a, variables, name, text, dom)
        return
    if isinstance(node, ast.Attribute):
        bad(f".{node.attr}")
    bad(type(node).__name__)


def _eval(node, arrs):
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return arrs[node.id]
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, arrs), _eval(node.right, arrs))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_eval(node.operand, arrs))
    args = [np.asarray(_eval(a, arrs), dtype=float) for a in node.args]
    return FUNCTIONS[node.func.id](*args)


def is_finite_positive(values) -> bool:
    """True when every value is finite and > 0 (used to check a schedule over its range).

    >>> is_finite_positive([0.1, 1.0]), is_finite_positive([0.1, float("inf")])
    (True, False)
    """
    arr = np.asarray(values, dtype=float)
    return bool(np.all(np.isfinite(arr)) and np.all(arr > 0))
