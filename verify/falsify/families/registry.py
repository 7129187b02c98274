"""Search families: the protocol every family implements, and the registry of families.

A family is a set of federated problems whose constants hold **by construction**: every
instance is L-smooth and mu-strongly convex (mu = 0: convex) for the :class:`Spec` it is built
for, and starts at distance exactly ``D`` from an exact minimiser. A point ``z`` of the search
box [-1, 1]^n_vars is one instance. The protocol (any frozen dataclass with these members is a
family; the style of :mod:`toys.algorithms.server`)::

    name: str                                    # registry key
    classes: tuple[str, ...]                     # function classes it belongs to
    n_vars(spec) -> int                          # dimension of the search box
    build(z, spec) -> (problem, x0)              # a toys.FederatedProblem (toys.run runs it)
    stack(Z, spec) -> Stacked | None             # the population Z (P, n_vars) as one batch

A family that can hold DKR's zeta fixed has ``tilt = True``: with ``Spec(zeta=z)`` its clients
share one function and get linear tilts of norm z (:mod:`verify.falsify.families.tilt`; its
``n_vars`` counts the tilt directions).

``stack`` may return None (no batched form): the search then runs ``toys.run`` once per
instance. A :class:`Stacked` population has ``p`` (N,), ``x_star`` (P, d), ``F_star`` (P,),
``losses(W) -> (P, N)`` and ``grads(W) -> (P, N, d)`` for client points ``W`` (P, N, d), and
its row k must be the problem ``build(Z[k], spec)`` (the tests check it against ``toys.run``).
For bounds that name Li et al.'s Gamma = F* - sum_i p_i F_i* it also has ``F_star_i`` (P, N),
the clients' own minima (the built problem's ``F_star_i``; a tilted population has none).

A bound's ``function_class`` decides which families apply (:func:`families_for`): a family
built for mu = 0 is in every class (a convex function is also a non-convex one), a family
with ``"smooth-strongly-convex"`` in ``classes`` is searched for strongly convex bounds.

Example
-------
>>> import numpy as np
>>> spec = Spec(L=1.0, mu=0.0, D=1.0, n_clients=1, dim=2)
>>> fam = get_family("huber")
>>> prob, x0 = fam.build(np.zeros(fam.n_vars(spec)), spec)
>>> round(float(np.linalg.norm(x0 - prob.x_star)), 12), prob.kind
(1.0, 'ridge')
>>> [f.name for f in families_for("smooth-convex")]
['quadratic', 'huber', 'softplus', 'logistic']
"""

from __future__ import annotations

from dataclasses import dataclass

from boundlab.errors import DomainError, UnknownNameError

__all__ = ["Spec", "register_family", "get_family", "family_names", "families_for"]

_FAMILIES: dict = {}
_BUILTIN = ("quadratic", "huber", "softplus", "logistic")
CLASSES = ("smooth-convex", "smooth-strongly-convex", "smooth-nonconvex")


@dataclass(frozen=True)
class Spec:
    """What every instance satisfies: L-smooth, mu-strongly convex clients (mu = 0: convex),
    ``n_clients`` clients in dimension ``dim``, ``||x0 - x*|| = D``, data weights ``weights``
    (the objective F = sum_i p_i F_i; default uniform).

    >>> Spec(L=1.0, mu=2.0, D=1.0, n_clients=1, dim=1)
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: mu = 2.0 is outside its domain: 0 <= mu < L = 1.0
    """

    L: float = 1.0
    mu: float = 0.0
    D: float = 1.0
    n_clients: int = 1
    dim: int = 2
    zeta: float | None = None  # held fixed: shared function + tilts (families.tilt)
    weights: tuple | None = None  # the clients' data weights p (None: uniform 1/N)

    def __post_init__(self):
        if self.weights is not None:
            w = tuple(float(v) for v in self.weights)
            object.__setattr__(self, "weights", w)
            if len(w) != int(self.n_clients) or not all(v > 0 for v in w) or \
                    abs(sum(w) - 1.0) > 1e-12 or self.zeta is not None:
                raise DomainError("weights", w, f"{self.n_clients} positive weights summing to "
                                  "1 (uniform when zeta is held fixed)")
        if not (self.L > 0):
            raise DomainError("L", self.L, "a positive number")
        if not (0 <= self.mu < self.L):
            raise DomainError("mu", self.mu, f"0 <= mu < L = {self.L}")
        if not (self.D > 0):
            raise DomainError("D", self.D, "a positive number")
        if int(self.n_clients) < 1 or int(self.dim) < 1:
            raise DomainError("n_clients", self.n_clients, "integers n_clients, dim >= 1")

    @property
    def p(self):
        """The clients' data weights (N,): ``weights``, or uniform."""
        import numpy as np

        N = int(self.n_clients)
        return np.full(N, 1.0 / N) if self.weights is None else np.array(self.weights)


def _load_builtin() -> None:
    if all(n in _FAMILIES for n in _BUILTIN):
        return
    from . import huber, logistic, quadratic, softplus

    for mod in (quadratic, huber, softplus, logistic):
        _FAMILIES.setdefault(mod.FAMILY.name, mod.FAMILY)


def register_family(family, *, replace: bool = False):
    """Add a family (an object following the protocol above); returns it."""
    _load_builtin()
    for attr in ("name", "classes", "n_vars", "build", "stack"):
        if not hasattr(family, attr):
            raise DomainError("family", type(family).__name__,
                              f"an object with name, classes, n_vars, build, stack (no {attr})")
    if family.name in _FAMILIES and not replace:
        raise DomainError("family", family.name, "a new family name (or replace=True)")
    _FAMILIES[family.name] = family
    return family


def get_family(name: str):
    """The registered family called ``name``."""
    _load_builtin()
    if name not in _FAMILIES:
        raise UnknownNameError("search family", name, list(_FAMILIES))
    return _FAMILIES[name]


def family_names() -> list[str]:
    """Names of every registered family, in registration order."""
    _load_builtin()
    return list(_FAMILIES)


def families_for(function_class: str, tilt: bool = False) -> list:
    """The families that belong to ``function_class`` (see the module docstring); ``tilt``:
    only those that can hold zeta fixed."""
    _load_builtin()
    if function_class not in CLASSES:
        raise UnknownNameError("function class", function_class, list(CLASSES))
    return [f for f in _FAMILIES.values()
            if (function_class != "smooth-strongly-convex" or function_class in f.classes)
            and (not tilt or getattr(f, "tilt", False))]
