"""The participation processes (:class:`Full`, :class:`Uniform`, :class:`Bernoulli`,
:class:`Markov`, :class:`Cyclic`, :class:`Anchored`), built by name with :func:`make` and
sampled with :func:`sample`; see :mod:`toys.participation`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from ..validation import check_float, check_int

__all__ = ["Anchored", "Bernoulli", "Cyclic", "Full", "Markov", "Uniform", "make", "names",
           "sample"]


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
