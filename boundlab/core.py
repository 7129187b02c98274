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

from .errors import DomainError, MissingParameterError, PreconditionError, UnknownNameError
from .symbols import LATEX_NAMES, Domain, domain_of, meaning_of, sym

__all__ = ["Bound", "Param", "Precondition", "KINDS", "make_params", "as_real_array",
           "check_shapes"]

KINDS = ("upper", "order", "identity")

# relative tolerance used when judging a precondition (eta = 1/(4L) computed in floating point
# must count as satisfied)
PRECONDITION_RTOL = 1e-12


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
    def _fn(self):
        from ._exact import ExactEvaluator

        syms = [sym(n) for n in self.names]
        lhs, rhs = ExactEvaluator(self.lhs, syms), ExactEvaluator(self.rhs, syms)
        return lambda *args: (lhs(list(args)), rhs(list(args)))

    def holds(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        """Boolean array: where the precondition holds (nan on either side: it does not)."""
        lhs, rhs = self._fn(*[values[n] for n in self.names])
        lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
        slack = PRECONDITION_RTOL * np.maximum(np.abs(lhs), np.abs(rhs))
        if self.op == "<=":
            return lhs <= rhs + slack
        if self.op == "<":
            return lhs < rhs
        if self.op == ">=":
            return lhs >= rhs - slack
        return lhs > rhs


@dataclass(frozen=True)
class Bound:
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
    def _fn(self):
        from ._exact import ExactEvaluator

        syms = [p.symbol for p in self.params.values()]
        ev = ExactEvaluator(self.stable if self.stable is not None else self.expr, syms,
                            reference=self.expr)
        return lambda *args: ev(list(args))

    @functools.cached_property
    def _term_fns(self):
        from ._exact import ExactEvaluator

        syms = [p.symbol for p in self.params.values()]
        evs = {k: ExactEvaluator(v, syms) for k, v in self.terms.items()}
        return {k: (lambda *args, ev=ev: ev(list(args))) for k, ev in evs.items()}

    def _validate(self, values: Mapping, *, allow_extra: bool = False) -> dict[str, np.ndarray]:
        known = set(self.params) | set(self.extra_params)
        unknown = [k for k in values if k not in known]
        if unknown and not allow_extra:
            raise UnknownNameError(f"parameter of {self.id}", unknown[0], list(known))
        missing = [n for n in self.params if n not in values]
        if missing:
            raise MissingParameterError(
                self.id, missing, {n: self.params[n].domain.describe() for n in missing})
        out: dict[str, np.ndarray] = {}
        for n, param in {**self.params, **self.extra_params}.items():
            if n not in values:
                continue
            arr = as_real_array(n, values[n], param.domain.describe())
            bad = param.domain.bad_mask(arr)
            if bad.any():
                shown = arr[bad].ravel()[0] if arr.ndim else float(arr)
                raise DomainError(n, _num(shown), param.domain.describe())
            out[n] = arr
        check_shapes(out, self.id)
        return out

    def evaluate(self, *, strict: bool = False, **values):
        """Vectorized value of the right-hand side.

        Every parameter in ``params`` is required; values may be numpy arrays that broadcast.
        Raises :class:`DomainError` (naming parameter, value and domain) for a value outside its
        domain. With ``strict=True`` a violated precondition raises :class:`PreconditionError`.

        >>> import boundlab, numpy as np
        >>> b = boundlab.get("drift.plateau")
        >>> b.evaluate(eta=np.array([0.1, 0.2]), tau=10, L=0.19, zeta=0.407).round(4).tolist()
        [0.5665, 2.2661]
        """
        arrs = self._validate(values)
        if strict:
            failed = self._failed(arrs)
            if failed:
                raise PreconditionError(self.id, failed)
        return _out(self._fn(*[arrs[n] for n in self.params]), arrs)

    def evaluate_from(self, mapping: Mapping, *, strict: bool = False, **values):
        """Like :meth:`evaluate`, taking what it needs from ``mapping`` and ignoring the rest.

        Keyword ``values`` override entries of ``mapping``.

        >>> import boundlab
        >>> consts = {"L": 0.19, "zeta": 0.407, "mu": 0.01, "Gamma": 1.0}
        >>> round(float(boundlab.get("drift.plateau").evaluate_from(consts, eta=0.2, tau=10)), 3)
        2.266
        """
        merged = {**mapping, **values}
        names = set(self.params) | set(self.extra_params)
        return self.evaluate(strict=strict, **{k: v for k, v in merged.items() if k in names})

    def evaluate_terms(self, **values) -> dict:
        """Value of each named term (same validation as :meth:`evaluate`).

        >>> import boundlab
        >>> t = boundlab.get("drift.fedavg_convex").evaluate_terms(
        ...     D=2.0, eta=0.2, tau=10, T=50, sigma=0.0, M=20, L=0.19, zeta=0.407)
        >>> round(float(t["init"]), 4), round(float(t["drift_het"]), 4)
        (0.02, 2.2661)
        """
        arrs = self._validate(values)
        args = [arrs[n] for n in self.params]
        return {k: _out(f(*args), arrs) for k, f in self._term_fns.items()}

    def _failed(self, arrs: Mapping[str, np.ndarray]) -> list[str]:
        failed = []
        for pc in self.preconditions:
            if all(n in arrs for n in pc.names) and not np.all(pc.holds(arrs)):
                failed.append(pc.text)
        return failed

    def violated_preconditions(self, **values) -> list[str]:
        """Texts of the preconditions that fail for some of the given values.

        Preconditions whose parameters are not all given are not judged (see
        :meth:`unchecked_preconditions`).

        >>> import boundlab
        >>> boundlab.get("drift.plateau").violated_preconditions(eta=0.2, tau=1, L=0.19, zeta=1)
        []
        """
        arrs = self._validate(values, allow_extra=False)
        return self._failed(arrs)

    def unchecked_preconditions(self, **values) -> list[str]:
        """Preconditions that cannot be judged with the given values (a parameter is absent).

        >>> import boundlab
        >>> boundlab.get("drift.client_drift").unchecked_preconditions(
        ...     eta=0.1, tau=2, zeta=1.0, sigma=0.0)
        ['eta <= 1/(4*L)']
        """
        return [pc.text for pc in self.preconditions if not all(n in values for n in pc.names)]


def as_real_array(name: str, value, domain: str) -> np.ndarray:
    """``value`` as a float64 array: real numbers only (no bool, complex, text, None, objects).

    >>> as_real_array("eta", [0.1, 2], "positive real (0, inf)").tolist()
    [0.1, 2.0]
    >>> as_real_array("tau", True, "integer >= 1")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: tau = True is outside its domain: integer >= 1 (a bool is not \
a number)
    """
    if isinstance(value, (bool, np.bool_)):
        raise DomainError(name, value, domain, "a bool is not a number")
    if isinstance(value, (str, bytes, dict, set)) or value is None:
        raise DomainError(name, value, domain, "not a number")
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise DomainError(name, value, domain, "not a number") from None
    kind = raw.dtype.kind
    if kind == "b":
        raise DomainError(name, value, domain, "a bool is not a number")
    if kind == "c":
        raise DomainError(name, value, domain, "a complex number is not real")
    if kind == "O":
        items = raw.ravel().tolist()
        if any(isinstance(x, (bool, np.bool_, complex, str, bytes)) or x is None for x in items):
            raise DomainError(name, value, domain, "not a number")
    elif kind not in "iuf":
        raise DomainError(name, value, domain, "not a number")
    try:
        return np.asarray(raw, dtype=float)
    except OverflowError:
        raise DomainError(name, value, domain, "too large for float64") from None
    except (TypeError, ValueError):
        raise DomainError(name, value, domain, "not a number") from None


def check_shapes(arrays: Mapping[str, np.ndarray], owner: str = "") -> tuple:
    """The common broadcast shape of named arrays, or a DomainError naming the two that clash.

    >>> check_shapes({"eta": np.ones(2), "tau": np.ones((3, 1))})
    (3, 2)
    >>> check_shapes({"eta": np.ones(2), "tau": np.ones(3)}, "drift.plateau")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: tau = 'shape (3,)' is outside its domain: an array that \
broadcasts with eta (shape (2,)) (drift.plateau: parameter shapes do not agree)
    """
    shape: tuple = ()
    first = None
    for n, a in arrays.items():
        try:
            shape = np.broadcast_shapes(shape, a.shape)
        except ValueError:
            clash = next(m for m, b in arrays.items()
                         if _no_broadcast(a.shape, b.shape)) if first else first
            raise DomainError(n, f"shape {a.shape}", f"an array that broadcasts with {clash} "
                              f"(shape {arrays[clash].shape})",
                              f"{owner + ': ' if owner else ''}parameter shapes do not agree"
                              ) from None
        first = first or n
    return shape


def _no_broadcast(a, b) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return True
    return False


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _out(value, arrs):
    """Broadcast the lambdified result to the inputs' shape; plain float for scalar inputs."""
    shape = np.broadcast_shapes(*(a.shape for a in arrs.values())) if arrs else ()
    out = np.asarray(value, dtype=float)
    if out.shape != shape:
        out = np.broadcast_to(out, shape).copy()
    if out.ndim == 0:
        return float(out)
    return out


def isclose_expr(a: sp.Expr, b: sp.Expr) -> bool:
    """True when two expressions are symbolically equal (used by derivation tests).

    >>> from boundlab.symbols import sym
    >>> isclose_expr((sym("L") + 1) ** 2, sym("L") ** 2 + 2 * sym("L") + 1)
    True
    """
    return sp.simplify(sp.expand(a - b)) == 0

