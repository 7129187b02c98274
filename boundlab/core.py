"""The :class:`Bound` object: one theorem, lemma or corollary as a checked symbolic expression.

A bound is immutable. It carries its sympy expression, the domain of every parameter, its
step-size and structural preconditions, named terms that add up to the expression (for stacked
plots), its kind (``upper`` / ``order`` / ``identity``), and the name of the measured quantity it
speaks about. ``evaluate`` is vectorized (one cached ``lambdify`` per bound) and validates every
value against its domain before computing.

Example
-------
>>> import boundlab
>>> b = boundlab.get("drift.plateau")
>>> round(float(b.evaluate(eta=0.2, tau=10, L=0.190, zeta=0.407)), 3)
2.266
>>> b.violated_preconditions(eta=0.2, tau=10, L=2.0, zeta=0.4)
['eta <= 1/(4*L)']
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ._fastbound import BoundEvaluation
from ._fastcheck import (
    PRECONDITION_RTOL,  # noqa: F401 - its historic home
    as_real_array,
    check_shapes,
    judge,
)
from .symbols import LATEX_NAMES, Domain, domain_of, meaning_of, sym

__all__ = ["Bound", "Param", "Precondition", "KINDS", "make_params", "as_real_array",
           "check_shapes"]

KINDS = ("upper", "order", "identity")

# The value checks (domains, shapes, PRECONDITION_RTOL: the relative tolerance with which a
# precondition is judged) live in boundlab._fastcheck, shared with the evaluator cache
# (boundlab._fastbound), which runs them without sympy.


@dataclass(frozen=True)
class Param:
    """A parameter of a bound: its name, symbol, domain and meaning.

    >>> p = Param.of("eta")
    >>> p.name, p.domain.describe()
    ('eta', 'positive real (0, inf)')
    """

    name: str
    symbol: sp.Symbol
    domain: Domain
    doc: str = ""

    @classmethod
    def of(cls, name: str, domain: Domain | None = None, doc: str = "") -> Param:
        dom = domain if domain is not None else domain_of(name)
        return cls(name, sym(name, domain_of(name)), dom, doc or meaning_of(name))


def make_params(*names: str, **overrides) -> dict[str, Param]:
    """Build the ``params`` mapping of a bound from names, overriding domains or docs.

    ``overrides`` maps a name to a :class:`Domain` or to ``(Domain, doc)``.

    >>> sorted(make_params("eta", "L"))
    ['L', 'eta']
    """
    out: dict[str, Param] = {}
    for n in names:
        ov = overrides.get(n)
        if isinstance(ov, tuple):
            out[n] = Param.of(n, ov[0], ov[1])
        else:
            out[n] = Param.of(n, ov)
    return out


@dataclass(frozen=True)
class Precondition:
    """``lhs <op> rhs`` where op is one of ``<=, <, >=, >``; judged with a tiny relative tolerance.

    >>> from boundlab.symbols import sym
    >>> pc = Precondition(sym("eta"), "<=", 1 / (4 * sym("L")), "eta <= 1/(4*L)")
    >>> pc.names
    ('L', 'eta')
    """

    lhs: sp.Expr
    op: str
    rhs: sp.Expr
    text: str
    why: str = ""

    def __post_init__(self):
        if self.op not in ("<=", "<", ">=", ">"):
            raise ValueError(f"op must be one of <=, <, >=, >; got {self.op!r}")

    @property
    def relation(self) -> sp.Basic:
        return {"<=": sp.Le, "<": sp.Lt, ">=": sp.Ge, ">": sp.Gt}[self.op](
            self.lhs, self.rhs, evaluate=False)

    @property
    def names(self) -> tuple[str, ...]:
        free = sp.sympify(self.lhs).free_symbols | sp.sympify(self.rhs).free_symbols
        return tuple(sorted(s.name for s in free))

    @functools.cached_property
    def evaluators(self):
        """The compiled ``(lhs, rhs)`` (:class:`~boundlab._exact.ExactEvaluator`, arguments in
        the order of :attr:`names`)."""
        from ._exact import ExactEvaluator

        syms = [sym(n) for n in self.names]
        return ExactEvaluator(self.lhs, syms), ExactEvaluator(self.rhs, syms)

    @functools.cached_property
    def _fn(self):
        lhs, rhs = self.evaluators
        return lambda *args: (lhs(list(args)), rhs(list(args)))

    def holds(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """Boolean array: where the precondition holds (nan on either side: it does not)."""
        lhs, rhs = self._fn(*[values[n] for n in self.names])
        return judge(self.op, lhs, rhs)


@dataclass(frozen=True)
class Bound(BoundEvaluation):
    """One published bound, encoded exactly as proved (printed typos corrected).

    Attributes
    ----------
    id : str
        ``family.name``, e.g. ``"drift.fedavg_convex"``; a stable public name.
    source : str
        Seed file and theorem/equation, e.g. ``"seed 004, Theorem 2.1 (appendix eq. (4))"``.
    expr : sympy.Expr
        The right-hand side (for ``identity`` kinds, the exact value).
    params : dict[str, Param]
        Every free symbol of ``expr`` with its domain.
    preconditions : tuple[Precondition, ...]
        Conditions under which the statement is proved (step sizes, gamma rules, ...).
    terms : dict[str, sympy.Expr]
        Named pieces that add up to ``expr`` (a test checks the sum symbolically).
    kind : str
        ``upper``, ``order`` (hidden constants set to 1; never judged) or ``identity``.
    lhs : str
        Name of the measured quantity the bound speaks about.
    description : str
        Statement in words, with what was corrected.
    errata : tuple[str, ...]
        Ids of the errata (:mod:`boundlab.errata`) this bound encodes.
    extra_params : dict[str, Param]
        Parameters that only preconditions use (optional in ``evaluate``).
    stable : sympy.Expr, optional
        A numerically stable form of ``expr`` (log1p/expm1, rewritten sums) used for evaluation;
        a test checks it equals ``expr``. Evaluation is accurate either way (see ``evaluate``).

    Example
    -------
    >>> import boundlab
    >>> b = boundlab.get("drift.fedavg_convex")
    >>> sorted(b.terms)
    ['drift_het', 'drift_noise', 'init', 'noise']
    """

    id: str
    source: str
    expr: sp.Expr
    params: Mapping[str, Param]
    kind: str
    lhs: str
    description: str = ""
    preconditions: tuple[Precondition, ...] = ()
    terms: Mapping[str, sp.Expr] = field(default_factory=dict)
    errata: tuple[str, ...] = ()
    extra_params: Mapping[str, Param] = field(default_factory=dict)
    printed: bool = False
    stable: sp.Expr | None = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        self._check_functions()  # first: a too-deep or complex expression before sympy walks it
        free = {s.name for s in sp.sympify(self.expr).free_symbols}
        missing = free - set(self.params)
        if missing:
            raise ValueError(f"{self.id}: free symbols without a param entry: {sorted(missing)}")
        unused = set(self.params) - free
        if unused:
            raise ValueError(f"{self.id}: params not in the expression: {sorted(unused)}")
        for pc in self.preconditions:
            unknown = set(pc.names) - set(self.params) - set(self.extra_params)
            if unknown:
                raise ValueError(f"{self.id}: precondition {pc.text!r} uses {sorted(unknown)}")

    def _check_functions(self) -> None:
        """Refuse (BoundlabError naming the bound and the function) an expression that applies
        a function that is not sympy's own: its name would become code in ``lambdify``."""
        from ._exact import check_functions

        forms = [("expr", self.expr), ("stable", self.stable)]
        forms += [(f"term {k!r}", v) for k, v in self.terms.items()]
        for pc in self.preconditions:
            forms += [(f"precondition {pc.text!r}", pc.lhs), (f"precondition {pc.text!r}", pc.rhs)]
        for where, form in forms:
            if form is not None:
                check_functions(form, f"{self.id}: {where}")

    # ------------------------------------------------------------------ introspection
    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def param_names(self) -> tuple[str, ...]:
        """Names ``evaluate`` requires, in a stable order."""
        return tuple(self.params)

    def latex(self) -> str:
        """LaTeX of the right-hand side with the papers' symbols.

        >>> import boundlab
        >>> boundlab.get("drift.plateau").latex()
        '18 L \\\\eta^{2} \\\\tau^{2} \\\\zeta^{2}'
        """
        names = {p.symbol: LATEX_NAMES.get(n, n) for n, p in self.params.items()}
        return sp.latex(self.expr, symbol_names=names)

    def to_dict(self) -> dict:
        """Plain-data description (what ``boundlab bounds show --json`` prints)."""
        return {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "lhs": self.lhs,
            "description": self.description,
            "expr": sp.sstr(self.expr),
            "latex": self.latex(),
            "params": {n: {"domain": p.domain.describe(), "doc": p.doc}
                       for n, p in self.params.items()},
            "extra_params": {n: {"domain": p.domain.describe(), "doc": p.doc}
                             for n, p in self.extra_params.items()},
            "preconditions": [pc.text for pc in self.preconditions],
            "terms": {k: sp.sstr(v) for k, v in self.terms.items()},
            "errata": list(self.errata),
            "printed": self.printed,
        }

    # ------------------------------------------------------------------ evaluation
    @functools.cached_property
    def evaluator(self):
        """The compiled right-hand side (:class:`~boundlab._exact.ExactEvaluator`; arguments in
        the order of :attr:`params`)."""
        from ._exact import ExactEvaluator

        syms = [p.symbol for p in self.params.values()]
        return ExactEvaluator(self.stable if self.stable is not None else self.expr, syms,
                              reference=self.expr)

    @functools.cached_property
    def term_evaluators(self) -> dict:
        """The compiled terms, by name (arguments in the order of :attr:`params`)."""
        from ._exact import ExactEvaluator

        syms = [p.symbol for p in self.params.values()]
        return {k: ExactEvaluator(v, syms) for k, v in self.terms.items()}

    @functools.cached_property
    def _fn(self):
        ev = self.evaluator
        return lambda *args: ev(list(args))

    @functools.cached_property
    def _term_fns(self):
        return {k: (lambda *args, ev=ev: ev(list(args)))
                for k, ev in self.term_evaluators.items()}


def isclose_expr(a: sp.Expr, b: sp.Expr) -> bool:
    """True when two expressions are symbolically equal (used by derivation tests).

    >>> from boundlab.symbols import sym
    >>> isclose_expr((sym("L") + 1) ** 2, sym("L") ** 2 + 2 * sym("L") + 1)
    True
    """
    return sp.simplify(sp.expand(a - b)) == 0

