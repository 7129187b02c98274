"""A bound's expression read back from its printed text by a whitelist grammar: numbers, the
bound's parameter names, ``+ - * / **`` and a few named functions (:data:`FUNCS`); nothing is
evaluated (no ``eval``, ``sympify`` or ``parse_expr``). Saved falsifications
(:mod:`verify.falsify._file`) and the unpinned bounds (:mod:`verify.falsify._plan_pins`) use
it.

>>> parse("L*D**2/(4*T + 2)", {"L", "D", "T"}, "x")
D**2*L/(4*T + 2)
"""

from __future__ import annotations

import ast

from boundlab.errors import IntegrityError

__all__ = ["parse", "FUNCS"]

FUNCS = ("sqrt", "exp", "log", "Max", "Min", "Abs", "floor", "ceiling", "sin", "cos", "tanh")


def parse(text, names, path):
    """A sympy expression from ``text`` by the whitelist grammar (nothing is evaluated)."""
    import sympy as sp

    from boundlab.symbols import sym

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise IntegrityError(path, "bound.expr", "an expression", "it does not parse") from exc
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
           ast.Pow: lambda a, b: a ** b}
    consts = {"pi": sp.pi, "E": sp.E}

    def build(node):
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](build(node.left), build(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = build(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return sp.Integer(node.value) if isinstance(node.value, int) else \
                sp.Float(repr(node.value))
        if isinstance(node, ast.Name) and (node.id in names or node.id in consts):
            return sym(node.id) if node.id in names else consts[node.id]  # a parameter E
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in FUNCS and not node.keywords:
            return getattr(sp, node.func.id)(*[build(a) for a in node.args])
        raise IntegrityError(path, "bound.expr", "numbers, the bound's parameters, + - * / ** "
                             f"and {', '.join(FUNCS)}", f"it holds {type(node).__name__}")

    return build(tree.body)
