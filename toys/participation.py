"""Client participation processes, optax style: small objects with pure ``init`` / ``step``.

``state = process.init(rng)``; ``state, mask = process.step(state, rng)`` gives the boolean
participation vector (N,) of one round. All randomness comes from the explicit
``numpy.random.Generator``; the same generator state gives the same masks. Every process exposes
``probs``, its stationary (long-run) participation probability per client.

Processes (spec seeds-002-003 §5.1.4, generators of FedAU's code):

* :class:`Full` -- every client, every round;
* :class:`Uniform` -- m of N clients without replacement;
* :class:`Bernoulli` -- client n independently with probability p_n (FedAU's A4);
* :class:`Markov` -- a two-state chain per client: P(0->1) = a, P(1->0) = b = a (1/p_n - 1)
  (if b > 1: a <- a/b, b <- 1), stationary probability p_n; initial state ~ Bernoulli(p_n);
  each round the state transitions, then is reported;
* :class:`Cyclic` -- active for round(cycle p_n) rounds, inactive for the rest of the cycle,
  with a random offset in the first inactive phase;
* :class:`Anchored` -- a fixed set of clients every round plus m uniformly drawn from the
  others (DKR's toy protocol: the outlier plus one regular client).

:func:`fedau_probs` draws the p_n of FedAU's experiments (two Dirichlet draws, a floor p_min).

Example
-------
>>> import numpy as np
>>> from toys import participation
>>> proc = participation.make("bernoulli", 4, p=[0.1, 0.5, 0.9, 1.0])
>>> masks = participation.sample(proc, 2000, np.random.default_rng(0))
>>> masks.shape, bool(abs(masks[:, 1].mean() - 0.5) < 0.05), bool(masks[:, 3].all())
((2000, 4), True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from .validation import check_float, check_int

__all__ = [
    "describe",
    "parse",
    "resolve",
    "Anchored",
    "Bernoulli",
    "Cyclic",
    "FedAUProbs",
    "Fixed",
    "Full",
    "Markov",
    "Uniform",
    "fedau_probs",
    "make",
    "names",
    "sample",
]


def _probs(p, n: int) -> np.ndarray:
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError):
        raise DomainError("p", p, "a probability or an array of probabilities in (0, 1]") from None
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise DomainError("p", p, f"a probability or an array of {n} probabilities")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0) or np.any(arr > 1):
        raise DomainError("p", arr, "probabilities in (0, 1]")
    return arr


@dataclass(frozen=True)
class Full:
    """Full participation. ``probs`` are ones.

    >>> import numpy as np
    >>> Full(3).step(Full(3).init(np.random.default_rng(0)), np.random.default_rng(0))[1].tolist()
    [True, True, True]
    """

    n_clients: int

    def __post_init__(self):
        object.__setattr__(self, "n_clients", check_int("n_clients", self.n_clients, lo=1))

    @property
    def probs(self) -> np.ndarray:
        return np.ones(self.n_clients)

    def init(self, rng):
        return None

    def step(self, state, rng):
        return state, np.ones(self.n_clients, dtype=bool)


@dataclass(frozen=True)
class Uniform:
    """``m`` of ``n_clients`` clients drawn uniformly without replacement each round.

    >>> import numpy as np
    >>> proc = Uniform(5, 2)
    >>> int(proc.step(proc.init(None), np.random.default_rng(0))[1].sum()), proc.probs.tolist()
    (2, [0.4, 0.4, 0.4, 0.4, 0.4])
    """

    n_clients: int
    m: int

    def __post_init__(self):
        n = check_int("n_clients", self.n_clients, lo=1)
        object.__setattr__(self, "n_clients", n)
        object.__setattr__(self, "m", check_int("m", self.m, lo=1, hi=n))

    @property
    def probs(self) -> np.ndarray:
        return np.full(self.n_clients, self.m / self.n_clients)

    def init(self, rng):
        return None

    def step(self, state, rng):
        mask = np.zeros(self.n_clients, dtype=bool)
        mask[rng.choice(self.n_clients, size=self.m, replace=False)] = True
        return state, mask


@dataclass(frozen=True)
class Bernoulli:
    """Independent Bernoulli(p_n) participation (FedAU's assumption A4).

    >>> Bernoulli([0.2, 1.0]).probs.tolist()
    [0.2, 1.0]
    """

    p: np.ndarray = field(repr=False)

    def __post_init__(self):
        object.__setattr__(self, "p", _probs(self.p, np.size(self.p)))

    @property
    def n_clients(self) -> int:
        return len(self.p)

    @property
    def probs(self) -> np.ndarray:
        return self.p.copy()

    def init(self, rng):
        return None

    def step(self, state, rng):
        return state, rng.random(self.n_clients) < self.p


@dataclass(frozen=True)
class Markov:
    """Two-state Markov chain per client with stationary probability p_n ("markov-0.05").

    ``rate`` is the 0->1 transition probability a (FedAU: 0.05); b = a (1/p_n - 1) is the 1->0
    one, and where b > 1 both are rescaled (a <- a/b, b <- 1). The state is the participation.

    >>> m = Markov([0.02, 0.1])
    >>> np.round(m.up, 4).tolist(), np.round(m.down, 4).tolist()
    ([0.0204, 0.05], [1.0, 0.45])
    """

    p: np.ndarray = field(repr=False)
    rate: float = 0.05

    def __post_init__(self):
        p = _probs(self.p, np.size(self.p))
        a = check_float("rate", self.rate, lo=0.0, hi=1.0, lo_open=True)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "rate", a)

    @property
    def n_clients(self) -> int:
        return len(self.p)

    @property
    def down(self) -> np.ndarray:
        """P(1 -> 0) per client."""
        return np.minimum(self.rate * (1.0 / self.p - 1.0), 1.0)

    @property
    def up(self) -> np.ndarray:
        """P(0 -> 1) per client."""
        b = self.rate * (1.0 / self.p - 1.0)
        return np.where(b > 1.0, self.rate / np.where(b > 1.0, b, 1.0), self.rate)

    @property
    def probs(self) -> np.ndarray:
        return self.p.copy()

    def init(self, rng):
        return rng.random(self.n_clients) < self.p

    def step(self, state, rng):
        u = rng.random(self.n_clients)
        new = np.where(state, u >= self.down, u < self.up)
        return new, new.copy()


@dataclass(frozen=True)
class Cyclic:
    """Cyclic participation ("cyclic-100"): active = max(1, round(cycle p_n)) rounds, inactive =
    max(1, cycle - active) rounds; starts inactive with a uniform remaining count in
    {0..inactive-1}. ``probs`` = active / (active + inactive) (rounding with numpy's
    round-half-to-even).

    >>> c = Cyclic([0.1, 0.5], cycle=100)
    >>> c.active.tolist(), c.inactive.tolist(), c.probs.tolist()
    ([10, 50], [90, 50], [0.1, 0.5])
    """

    p: np.ndarray = field(repr=False)
    cycle: int = 100

    def __post_init__(self):
        object.__setattr__(self, "p", _probs(self.p, np.size(self.p)))
        object.__setattr__(self, "cycle", check_int("cycle", self.cycle, lo=2))

    @property
    def n_clients(self) -> int:
        return len(self.p)

    @property
    def active(self) -> np.ndarray:
        return np.maximum(1, np.round(self.cycle * self.p)).astype(int)

    @property
    def inactive(self) -> np.ndarray:
        return np.maximum(1, self.cycle - self.active)

    @property
    def probs(self) -> np.ndarray:
        return self.active / (self.active + self.inactive)

    def init(self, rng):
        remaining = np.floor(rng.random(self.n_clients) * self.inactive).astype(int)
        return np.zeros(self.n_clients, dtype=bool), remaining

    def step(self, state, rng):
        on, r = state
        flip = r == 0
        on = np.where(flip, ~on, on)
        r = np.where(flip, np.where(on, self.active, self.inactive), r) - 1
        return (on, r), on.copy()


@dataclass(frozen=True)
class Anchored:
    """The clients in ``fixed`` every round plus ``m`` drawn uniformly from the others.

    DKR's toy protocol is ``Anchored(M, fixed=(M - 1,), m=1)``: the outlier and one regular
    client per round.

    >>> a = Anchored(5, fixed=(4,), m=1)
    >>> a.probs.tolist()
    [0.25, 0.25, 0.25, 0.25, 1.0]
    """

    n_clients: int
    fixed: tuple = ()
    m: int = 1

    def __post_init__(self):
        n = check_int("n_clients", self.n_clients, lo=1)
        fixed = tuple(sorted({check_int("fixed", f, lo=0, hi=n - 1) for f in self.fixed}))
        object.__setattr__(self, "n_clients", n)
        object.__setattr__(self, "fixed", fixed)
        object.__setattr__(self, "m", check_int("m", self.m, lo=0, hi=n - len(fixed)))

    @property
    def _others(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.n_clients), self.fixed)

    @property
    def probs(self) -> np.ndarray:
        out = np.full(self.n_clients, self.m / max(1, self.n_clients - len(self.fixed)))
        out[list(self.fixed)] = 1.0
        return out

    def init(self, rng):
        return None

    def step(self, state, rng):
        mask = np.zeros(self.n_clients, dtype=bool)
        mask[list(self.fixed)] = True
        if self.m:
            mask[rng.choice(self._others, size=self.m, replace=False)] = True
        return state, mask


def sample(process, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """Participation masks of ``rounds`` consecutive rounds, (rounds, N) bool.

    >>> import numpy as np
    >>> sample(Uniform(4, 1), 3, np.random.default_rng(0)).sum(axis=1).tolist()
    [1, 1, 1]
    """
    T = check_int("rounds", rounds, lo=0)
    out = np.zeros((T, process.n_clients), dtype=bool)
    state = process.init(rng)
    for t in range(T):
        state, out[t] = process.step(state, rng)
    return out


_FACTORIES = {
    "full": "every client every round",
    "uniform": "m of N clients uniformly without replacement (option m)",
    "bernoulli": "independent Bernoulli(p_n) (option p: scalar or per-client array)",
    "markov": "two-state Markov chain with stationary p_n (options p, rate=0.05)",
    "cyclic": "active round(cycle*p_n) rounds per cycle (options p, cycle=100)",
    "anchored": "fixed clients always plus m uniform others (options fixed, m)",
}


def names() -> dict:
    """Process names with a one-line description.

    >>> sorted(names())[:3]
    ['anchored', 'bernoulli', 'cyclic']
    """
    return dict(_FACTORIES)


def make(name: str, n_clients: int, **opts):
    """Build a process by name (see :func:`names`).

    >>> make("cyclic", 3, p=0.25, cycle=8).probs.tolist()
    [0.25, 0.25, 0.25]
    """
    if name not in _FACTORIES:
        raise UnknownNameError("participation process", name, list(_FACTORIES))
    n = check_int("n_clients", n_clients, lo=1)
    allowed = {"full": (), "uniform": ("m",), "bernoulli": ("p",), "markov": ("p", "rate"),
               "cyclic": ("p", "cycle"), "anchored": ("fixed", "m")}[name]
    for k in opts:
        if k not in allowed:
            raise UnknownNameError(f"option of participation process {name!r}", k, allowed)
    if name == "full":
        return Full(n)
    if name == "uniform":
        if "m" not in opts:
            raise MissingParameterError("participation 'uniform'", ["m"])
        return Uniform(n, opts["m"])
    if name == "anchored":
        fixed = opts.get("fixed", (n - 1,))
        return Anchored(n, tuple(np.atleast_1d(fixed).tolist()), opts.get("m", 1))
    if "p" not in opts:
        raise MissingParameterError(f"participation {name!r}", ["p"])
    p = _probs(opts["p"], n)
    if name == "bernoulli":
        return Bernoulli(p)
    if name == "markov":
        return Markov(p, opts.get("rate", 0.05))
    return Cyclic(p, opts.get("cycle", 100))


class FedAUProbs(NamedTuple):
    """Result of :func:`fedau_probs`: ``probs`` (N,), the class mixes ``kappa`` (N, C), the
    shared multipliers ``q`` (C,), and ``n_clipped`` (how many p_n were clipped to 1)."""

    probs: np.ndarray
    kappa: np.ndarray
    q: np.ndarray
    n_clipped: int


def fedau_probs(rng: np.random.Generator, n_clients: int | None = None, n_classes: int = 10,
                class_hist=None, alpha_d: float = 0.1, alpha_p: float = 0.1, mean: float = 0.1,
                p_min: float = 0.02) -> FedAUProbs:
    """FedAU's participation probabilities (spec seeds-002-003 §5.1.4).

    kappa_n ~ Dir(alpha_d 1_C) per client (or the given normalised label histograms
    ``class_hist`` (N, C), e.g. :func:`toys.problems.partitions.class_histograms` of a Dirichlet
    split),
    one shared q ~ Dir(alpha_p 1_C), and p_n = max(p_min, C * mean * <kappa_n, q>), clipped to 1
    (``n_clipped`` reports how many were; neither the paper nor its code clips).

    >>> import numpy as np
    >>> out = fedau_probs(np.random.default_rng(0), n_clients=250)
    >>> out.probs.shape, bool(out.probs.min() >= 0.02), bool(out.probs.max() <= 1.0)
    ((250,), True, True)
    """
    a_d = check_float("alpha_d", alpha_d, lo=0.0, lo_open=True)
    a_p = check_float("alpha_p", alpha_p, lo=0.0, lo_open=True)
    mu = check_float("mean", mean, lo=0.0, hi=1.0, lo_open=True)
    pm = check_float("p_min", p_min, lo=0.0, hi=1.0)
    if class_hist is None:
        if n_clients is None:
            raise MissingParameterError("fedau_probs", ["n_clients"])
        C = check_int("n_classes", n_classes, lo=1)
        kappa = rng.dirichlet(np.full(C, a_d), size=check_int("n_clients", n_clients, lo=1))
    else:
        kappa = np.asarray(class_hist, dtype=float)
        if kappa.ndim != 2 or np.any(kappa < 0) or not np.allclose(kappa.sum(axis=1), 1.0):
            raise DomainError("class_hist", class_hist, "(N, C) rows of class proportions")
        C = kappa.shape[1]
    q = rng.dirichlet(np.full(C, a_p))
    raw = np.maximum(pm, C * mu * (kappa @ q))
    return FedAUProbs(np.minimum(raw, 1.0), kappa, q, int(np.sum(raw > 1.0)))


@dataclass(frozen=True)
class Fixed:
    """An explicit (rounds, N) boolean participation matrix; ``probs`` = empirical frequencies.

    >>> import numpy as np
    >>> Fixed(np.array([[True, False], [True, True]])).probs.tolist()
    [1.0, 0.5]
    """

    matrix: np.ndarray

    @property
    def probs(self) -> np.ndarray:
        return self.matrix.mean(axis=0)

    def init(self, rng):
        return 0

    def step(self, state, rng):
        return state + 1, self.matrix[state]


def parse(text: str) -> tuple[str, dict]:
    """``"name"`` or ``"name:key=value,..."`` -> (name, options); every value must be a number.

    >>> parse("bernoulli:p=0.2")
    ('bernoulli', {'p': 0.2})
    >>> parse("bernoulli:p=abc")
    Traceback (most recent call last):
    ...
    boundlab.errors.DomainError: participation option p = 'abc' is outside its domain: a number
    """
    name, _, rest = str(text).partition(":")
    opts: dict = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, v = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise DomainError("participation", text, "'name' or 'name:key=value,...'")
        if key in opts:
            raise DomainError("participation", text, "each option at most once",
                              f"{key!r} is given twice")
        try:
            opts[key] = int(v)
        except ValueError:
            try:
                opts[key] = float(v)
            except ValueError:
                raise DomainError(f"participation option {key}", v.strip(), "a number") from None
    return name.strip(), opts


def resolve(spec, n_clients: int, rounds: int):
    """A participation process from what :func:`toys.run` accepts: ``"full"`` (default), a
    process name with optional ``"name:key=value,..."`` options, ``(name, options)``, a
    process object (``init(rng)``, ``step(state, rng) -> (state, mask)``, ``probs``), or an
    explicit (rounds, N) boolean matrix.

    >>> resolve("uniform:m=2", 4, 3).m
    2
    """
    if spec is None or (isinstance(spec, str) and spec == "full"):
        return Full(n_clients)
    if isinstance(spec, str) or (isinstance(spec, tuple) and len(spec) == 2
                                 and isinstance(spec[0], str)):
        name, opts = parse(spec) if isinstance(spec, str) else (spec[0], dict(spec[1]))
        return Full(n_clients) if name == "full" and not opts else make(name, n_clients, **opts)
    if hasattr(spec, "init") and hasattr(spec, "step"):
        probs = getattr(spec, "probs", None)
        if probs is not None and np.shape(probs) != (n_clients,):
            raise DomainError("participation", spec, f"a process for N = {n_clients} clients")
        return spec
    M = np.asarray(spec)
    if M.shape != (rounds, n_clients) or M.dtype != bool:
        raise DomainError("participation", spec, f"'full', a process name, a process object, or "
                                                 f"a bool matrix of shape ({rounds}, {n_clients})")
    return Fixed(M)


def describe(spec) -> str:
    """A short text for ``Trace.info["participation"]``.

    >>> describe("full"), describe(("bernoulli", {"p": 0.5}))
    ('full', "bernoulli:{'p': 0.5}")
    """
    if isinstance(spec, str):
        return spec
    if isinstance(spec, tuple):
        return f"{spec[0]}:{spec[1]}"
    if isinstance(spec, np.ndarray):
        return f"matrix{spec.shape}"
    return type(spec).__name__
