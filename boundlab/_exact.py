"""Accurate float64 evaluation of a sympy expression: running error bound + mpmath fallback.

:class:`ExactEvaluator` compiles an expression once into a straight-line program over numpy
arrays. Every instruction computes its value *and* a first-order bound on its absolute error
(running error analysis: inputs are exact, each operation adds a rounding of its result and
propagates its operands' errors through its derivative). Entries whose bound exceeds
``RTOL * |value|``, or whose value is nan or inf, are recomputed exactly and rounded to
float64. So the
result is the correctly rounded true value up to ~1e-12 relative, ``inf`` only where the true
value overflows float64, and nan only where the true value is not a real number. The fallback
is mpmath at two precisions (:mod:`boundlab._mpfast`, ~0.1 ms a point) where they settle the
correctly rounded float, else sympy's adaptive-precision ``evalf`` at the exact (dyadic) inputs
(~5 ms a point; exact zeros, rounding ties, subnormals, overflow, non-real values, Piecewise).

Two rewrites make the float path itself stable so the fallback stays rare: ``log(1 + x)`` ->
``log1p(x)`` and ``(1 + x)**c`` (non-constant or large ``c``) -> ``exp(c*log1p(x))`` where
``1 + x > 0``.

Example
-------
>>> import numpy as np, sympy as sp
>>> p, K = sp.symbols("p K", positive=True)
>>> ev = ExactEvaluator(1 / p - (1 - p) ** K / p, [p, K])
>>> float(ev([np.float64(1e-17), np.float64(50.0)]))  # the closed form alone gives 0.0
49.999999999999986
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from ._fastops import _U, OPS, RTOL, evaluate_program, fill_exact, run_program

__all__ = ["ExactEvaluator", "RTOL", "MAX_DEPTH", "MAX_DIGITS", "foreign_function",
           "check_functions", "check_shape"]

_OPS = OPS  # the operations (value, error) live in boundlab._fastops (numpy only, no sympy)


def _cf():
    from sympy.codegen.cfunctions import expm1, log1p

    return log1p, expm1


#: functions the fast exact path evaluates (continuous, or floor/ceiling guarded); besides
#: Add, Mul, Pow and atoms
_FAST_FUNCS = (sp.exp, sp.log, sp.Max, sp.Min, sp.Abs, sp.floor, sp.ceiling, sp.sin, sp.cos,
               sp.tan, sp.atan, sp.sinh, sp.cosh, sp.tanh)


class _Unsupported(Exception):
    pass


def foreign_function(expr):
    """The first function application in ``expr`` that is not one of sympy's own -- an
    undefined function (``sympy.Function("name")``, whose name is any text) or a Function class
    defined outside sympy -- or None. ``lambdify`` would print its name into Python source.

    >>> x = sp.Symbol("x")
    >>> foreign_function(sp.exp(x) + sp.Max(x, 1)) is None
    True
    >>> foreign_function(sp.Function("os.system")(x))
    os.system(x)
    """
    from sympy.core.function import AppliedUndef

    for node in sp.preorder_traversal(sp.sympify(expr)):
        if isinstance(node, AppliedUndef) or (
                isinstance(node, sp.Function)
                and not type(node).__module__.startswith("sympy.")):
            return node
    return None


def check_functions(expr, owner: str) -> None:
    """Raise :class:`~boundlab.errors.BoundlabError` naming ``owner`` and the function when
    ``expr`` applies a function that is not sympy's own (see :func:`foreign_function`): boundlab
    never turns a name it did not define into code.

    >>> check_functions(sp.Function("__import__")(sp.Symbol("x")), "mine.b: expr")
    Traceback (most recent call last):
    ...
    boundlab.errors.BoundlabError: mine.b: expr: the function '__import__' is not one of \
sympy's own (an undefined sympy Function); boundlab evaluates only sympy's functions (exp, log, \
Max, Piecewise, ...): write it as an expression of them
    """
    from .errors import BoundlabError
    from .integrity import escape

    check_shape(expr, owner)
    node = foreign_function(expr)
    if node is None:
        return
    name = escape(getattr(node.func, "__name__", type(node).__name__))[:80]
    raise BoundlabError(f"{owner}: the function {name!r} is not one of sympy's own (an "
                        "undefined sympy Function); boundlab evaluates only sympy's functions "
                        "(exp, log, Max, Piecewise, ...): write it as an expression of them")


#: the deepest expression tree accepted (the catalogue's deepest is 12 levels); deeper trees
#: are refused before any recursive sympy operation could run out of stack or time
MAX_DEPTH = 100
#: the most decimal digits of an exact number in an expression (Python prints at most 4300)
MAX_DIGITS = 4000


def check_shape(expr, owner: str) -> None:
    """Refuse (:class:`~boundlab.errors.BoundlabError` naming ``owner``) an expression nested
    deeper than :data:`MAX_DEPTH`, one holding the imaginary unit ``I`` or complex infinity (a
    bound is real-valued), or an exact number of more than :data:`MAX_DIGITS` digits. The walk
    is iterative and visits each shared sub-expression once.

    >>> check_shape(sp.I * sp.Symbol("eta"), "mine.b: expr")
    Traceback (most recent call last):
    ...
    boundlab.errors.BoundlabError: mine.b: expr: the expression holds the imaginary unit I: a \
bound is a real-valued expression (write its real form)
    """
    from .errors import BoundlabError

    if not isinstance(expr, sp.Basic):
        return
    stack, deepest = [(expr, 1)], {}
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BoundlabError(f"{owner}: the expression is nested more than {MAX_DEPTH} "
                                "levels deep (e.g. sqrt(sqrt(...))); boundlab refuses it")
        if node is sp.I or node is sp.zoo:
            raise BoundlabError(f"{owner}: the expression holds the imaginary unit I: a bound "
                                "is a real-valued expression (write its real form)"
                                if node is sp.I else f"{owner}: the expression holds complex "
                                "infinity (zoo): a bound is a real-valued expression")
        if node.is_Rational and max(abs(int(node.p)), int(node.q)).bit_length() \
                > MAX_DIGITS * 3.3219:
            raise BoundlabError(f"{owner}: the expression holds an exact number of more than "
                                f"{MAX_DIGITS} digits; boundlab refuses it (its value is "
                                "beyond float64 anyway: write the bound without it)")
        if deepest.get(id(node), 0) < depth:  # a shared node again only when deeper
            deepest[id(node)] = depth
            stack.extend((a, depth + 1) for a in node.args)


class ExactEvaluator:
    """Vectorized accurate evaluation of ``expr`` at float64 points (see the module docstring).

    ``symbols`` fixes the argument order; call with a list of arrays that broadcast together.
    ``reference`` (optional) is the published form of the same function, used for the exact
    fallback when ``expr`` is a rewritten (stable) form.
    """

    def __init__(self, expr, symbols, reference=None):
        self.expr = sp.sympify(expr)
        self.reference = sp.sympify(reference) if reference is not None else None
        for form in (self.expr, self.reference):  # before anything is compiled or lambdified
            if form is not None:
                check_functions(form, "expression")
        self.symbols = list(symbols)
        self._prog: list = []
        self._memo: dict = {}
        try:
            self._out = self._compile(self.expr)
            self.checked = True
        except _Unsupported:  # another sympy function (never a foreign one, see above): values
            # by lambdify, which prints sympy's own names only; fallback on nan/inf only
            self._plain = sp.lambdify(self.symbols, self.expr, modules="numpy")
            self.checked = False

    # ------------------------------------------------------------------ compile
    def _emit(self, op, args=(), const=None):
        self._prog.append((op, tuple(args), const))
        return len(self._prog) - 1

    def _compile(self, node):  # noqa: C901 - one branch per node type
        if node in self._memo:
            return self._memo[node]
        log1p, expm1 = _cf()
        c = self._compile
        if node.is_Symbol:
            if node not in self.symbols:
                raise ValueError(f"free symbol {node} not among the arguments")
            r = self._emit("arg", (), self.symbols.index(node))
        elif node.is_Number or node.is_NumberSymbol:
            v = float(node)
            q = int(node.q) if node.is_Rational else 3
            exact = (node.is_Integer and abs(v) < 2**53) or (node.is_Rational and q & (q - 1) == 0)
            r = self._emit("const", (), (v, 0.0 if exact else abs(v) * _U))
        elif node.is_Add:
            r = self._emit("add", [c(a) for a in node.args])
        elif node.is_Mul:
            r = self._emit("mul", [c(a) for a in node.args])
        elif node.is_Pow:
            b, e = node.args
            if b.is_Add and 1 in b.args and not (e.is_Integer and abs(int(e)) <= 4):
                rest = sp.Add(*[a for a in b.args if a != 1])
                r = self._emit("pow1p", [c(rest), c(e)])
            elif e.is_Number:
                r = self._emit("powc", [c(b)], float(e))
            else:
                r = self._emit("pow", [c(b), c(e)])
        elif isinstance(node, sp.exp):
            r = self._emit("exp", [c(node.args[0])])
        elif isinstance(node, sp.log) and len(node.args) == 1:
            a = node.args[0]
            if a.is_Add and 1 in a.args:
                r = self._emit("log1p", [c(sp.Add(*[t for t in a.args if t != 1]))])
            else:
                r = self._emit("log", [c(a)])
        elif isinstance(node, log1p):
            r = self._emit("log1p", [c(node.args[0])])
        elif isinstance(node, expm1):
            r = self._emit("expm1", [c(node.args[0])])
        elif isinstance(node, (sp.Max, sp.Min)):
            r = self._emit("max" if isinstance(node, sp.Max) else "min",
                           [c(a) for a in node.args])
        elif isinstance(node, (sp.floor, sp.ceiling)):
            r = self._rounding(node)
        elif isinstance(node, sp.Abs):
            r = self._emit("abs", [c(node.args[0])])
        elif isinstance(node, sp.Piecewise):
            regs = []
            for value, cond in node.args:
                regs.append(c(value))
                regs.append(self._cond(cond))
            r = self._emit("piecewise", regs)
        else:
            raise _Unsupported(type(node).__name__)
        self._memo[node] = r
        return r

    def _rounding(self, node):
        """floor / ceiling; of a quotient n/d as one division (exact for integers: floor(t/K)
        is then certain, where floor(t * (1/K)) is not)."""
        floor = isinstance(node, sp.floor)
        arg = node.args[0]
        num, den = sp.fraction(arg, exact=True) if arg.is_Mul else (arg, sp.S.One)
        if den == 1:
            return self._emit("floor" if floor else "ceil", [self._compile(arg)])
        return self._emit("floordiv" if floor else "ceildiv",
                          [self._compile(num), self._compile(den)])

    def _cond(self, cond):
        if cond is sp.true:
            return self._emit("true")
        if isinstance(cond, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan,
                             sp.LessThan)):
            return self._emit("cmp", [self._compile(cond.lhs), self._compile(cond.rhs)],
                              cond.rel_op)
        raise _Unsupported(type(cond).__name__)

    # ------------------------------------------------------------------ float run
    def _run(self, args):
        return run_program(self._prog, self._out, args)

    def __call__(self, args) -> np.ndarray:
        if self.checked:  # the same function runs a program kept in the evaluator cache
            return evaluate_program(self._prog, self._out, args, self.exact)
        args = [np.asarray(x, dtype=float) for x in args]
        shape = np.broadcast_shapes(*(x.shape for x in args)) if args else ()
        with np.errstate(all="ignore"):
            raw = np.asarray(self._plain(*args))
            if np.iscomplexobj(raw):  # a non-real value is nan (then settled exactly), never
                raw = np.where(raw.imag == 0, raw.real, np.nan)  # its real part
            v = np.broadcast_to(np.asarray(raw, dtype=float), shape).copy()
            bad = ~np.isfinite(v)
        return fill_exact(v, bad, args, shape, self.exact)

    # ------------------------------------------------------------------ exact fallback
    @functools.cached_property
    def _plain_expr(self):
        log1p, expm1 = _cf()
        return self.expr.replace(log1p, lambda x: sp.log(1 + x)).replace(
            expm1, lambda x: sp.exp(x) - 1)

    @functools.cached_property
    def _mp(self):
        ref = self.reference if self.reference is not None else self._plain_expr
        return sp.lambdify(self.symbols, ref, modules="mpmath")

    @functools.cached_property
    def _mp_fast(self):
        """The form of :attr:`_mp` for :func:`~boundlab._mpfast.two_precision_value` (floor and
        ceiling guarded), or None where the form has a function outside :data:`_FAST_FUNCS`
        (a Piecewise or comparison could switch on digits a precision gets wrong)."""
        from ._mpfast import guarded_ceil, guarded_floor

        ref = self.reference if self.reference is not None else self._plain_expr
        for node in sp.preorder_traversal(ref):
            if not (node.is_Atom or node.is_Add or node.is_Mul or node.is_Pow
                    or isinstance(node, _FAST_FUNCS)):
                return None
        guarded = {"floor": guarded_floor, "ceiling": guarded_ceil, "ceil": guarded_ceil}
        return sp.lambdify(self.symbols, ref, modules=[guarded, "mpmath"])

    def exact(self, values) -> float:
        """The value at one point, correctly rounded: mpmath at two precisions where they
        settle it (:func:`~boundlab._mpfast.two_precision_value`, ~0.1 ms), else
        :meth:`_exact_evalf` (~5 ms)."""
        from ._mpfast import two_precision_value

        fn = self._mp_fast
        val = two_precision_value(fn, values) if fn is not None else None
        return val if val is not None else self._exact_evalf(values)

    def _exact_evalf(self, values) -> float:
        """The value at one point, correctly rounded: sympy's adaptive-precision ``evalf`` at
        the exact (dyadic) inputs, which raises its working precision until 25 digits are
        certain; mpmath at increasing precision where ``evalf`` gives no real number."""
        subs = {s: sp.Rational(float(v)) if np.isfinite(v) else sp.oo * np.sign(v)
                for s, v in zip(self.symbols, values)}
        val = None
        for form in (self.reference, self._plain_expr):
            if form is None:
                continue
            try:
                val = form.evalf(25, subs=subs, maxn=4000, strict=True)
                break
            except Exception:  # noqa: BLE001 - PrecisionExhausted (~0), Max of an exact 0...
                val = None
        if val is not None and val.is_Number and val.is_real and val.is_finite:
            try:
                return float(val)
            except OverflowError:
                return float("inf") if val > 0 else float("-inf")
        if val is not None and val in (sp.oo, -sp.oo):
            return float(val)
        return self._exact_mp(values)

    def _exact_mp(self, values) -> float:
        import mpmath

        prev = val = None
        for dps in (30, 60, 120, 240, 480):
            with mpmath.workdps(dps):
                try:
                    val = self._mp(*[mpmath.mpf(x) for x in values])
                except ZeroDivisionError:  # 1 - tiny rounded to 1 at this precision: go on
                    continue
                except (ValueError, OverflowError, TypeError):
                    return float("nan")
                if isinstance(val, mpmath.mpc):
                    if abs(val.imag) > abs(val.real) * mpmath.mpf(10) ** (-dps // 2):
                        return float("nan")
                    val = val.real
                val = mpmath.mpf(val)
                if prev is not None and (val == prev or abs(val - prev) <= abs(val) * 1e-16):
                    break
                prev = val
        return float("nan") if val is None else _to_float(val)


def _to_float(val) -> float:
    import mpmath

    if mpmath.isnan(val):
        return float("nan")
    if mpmath.isinf(val):
        return float(val)
    try:
        return float(val)
    except OverflowError:
        return float("inf") if val > 0 else float("-inf")
