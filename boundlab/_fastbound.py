"""Evaluation of a bound without sympy: the shared methods, and a bound rebuilt from the cache.

:class:`BoundEvaluation` holds what :class:`boundlab.core.Bound` does with values (validate,
evaluate, evaluate terms, judge preconditions); it needs only ``id``, ``params``,
``extra_params``, ``preconditions`` and the compiled ``_fn`` / ``_term_fns``. :class:`FastBound`
is the same interface built from plain data (the compiled programs kept by the evaluator
cache, :mod:`boundlab._cache`), so ``boundlab bounds eval`` runs without importing sympy and,
running the same methods and the same program interpreter (:mod:`boundlab._fastops`), prints
the same bits. Where a value needs the exact fallback (sympy's ``evalf``), a FastBound raises
:class:`NeedsExact` and the caller redoes the evaluation with the real bound.

Example
-------
>>> from boundlab.domains import POSITIVE
>>> prog = [("arg", (), 0), ("const", (), (2.0, 0.0)), ("mul", (0, 1), None)]  # 2 * eta
>>> b = FastBound("demo.twice", "upper", {"eta": FastParam("eta", POSITIVE, "step")}, {},
...               Program(prog, 2))
>>> b.evaluate(eta=0.25)
0.5
>>> b.evaluate(eta=-1)
Traceback (most recent call last):
...
boundlab.errors.DomainError: eta = -1 is outside its domain: positive real (0, inf)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ._fastcheck import (
    failed_preconditions,
    judge,
    shape_output,
    unchecked_preconditions,
    validate,
)
from ._fastops import evaluate_program
from .domains import Domain
from .errors import PreconditionError

__all__ = ["BoundEvaluation", "FastBound", "FastParam", "FastPrecondition", "Program",
           "NeedsExact"]


class NeedsExact(Exception):  # noqa: N818 - a signal, not an error
    """A cached program met a value it cannot certify in float64: use the sympy path."""


def _needs_exact(point):
    raise NeedsExact(point)


class BoundEvaluation:
    """What a bound does with values; shared by :class:`~boundlab.core.Bound` and
    :class:`FastBound` (one implementation, so both give the same results and errors)."""

    def _validate(self, values: Mapping, *, allow_extra: bool = False) -> dict[str, np.ndarray]:
        return validate(self.id, {n: p.domain for n, p in self.params.items()},
                        {n: p.domain for n, p in self.extra_params.items()}, values,
                        allow_extra=allow_extra)

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
        return shape_output(self._fn(*[arrs[n] for n in self.params]), arrs)

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
        return {k: shape_output(f(*args), arrs) for k, f in self._term_fns.items()}

    def _failed(self, arrs: Mapping[str, np.ndarray]) -> list[str]:
        return failed_preconditions(self.preconditions, arrs)

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
        return unchecked_preconditions(self.preconditions, values)


@dataclass(frozen=True)
class Program:
    """A compiled expression (see :mod:`boundlab._fastops`); calling it raises
    :class:`NeedsExact` where the exact fallback would be needed."""

    prog: tuple
    out: int

    def __call__(self, args):
        return evaluate_program(self.prog, self.out, args, _needs_exact)


@dataclass(frozen=True)
class FastParam:
    """A parameter of a :class:`FastBound`: name, domain, meaning (as in ``boundlab.Param``)."""

    name: str
    domain: Domain
    doc: str = ""


@dataclass(frozen=True)
class FastPrecondition:
    """``lhs <op> rhs`` as two programs over the parameters ``names`` (sorted, as in
    :attr:`boundlab.core.Precondition.names`)."""

    text: str
    op: str
    names: tuple[str, ...]
    lhs: Program
    rhs: Program

    def holds(self, values: Mapping[str, np.ndarray]) -> np.ndarray:
        args = [values[n] for n in self.names]
        lhs, rhs = self.lhs(list(args)), self.rhs(list(args))
        return judge(self.op, lhs, rhs)


@dataclass(frozen=True)
class FastBound(BoundEvaluation):
    """A catalogue bound rebuilt from the evaluator cache: evaluation only (no expression)."""

    id: str
    kind: str
    params: Mapping[str, FastParam]
    extra_params: Mapping[str, FastParam]
    program: Program
    terms: Mapping[str, Program] = field(default_factory=dict)
    preconditions: tuple[FastPrecondition, ...] = ()

    def _fn(self, *args):
        return self.program(list(args))

    @property
    def _term_fns(self):
        return {k: (lambda *args, ev=ev: ev(list(args))) for k, ev in self.terms.items()}
