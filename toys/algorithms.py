"""The algorithm registry: name -> composition of pieces, and hyper-parameter validation.

Every algorithm is the same round (:mod:`toys.engine`): clients run :func:`toys.local.local_update`
(plain, FedProx or beta-perturbed steps), then a server rule combines the updates. They differ
only in the pieces plugged in:

* ``server="simplex"`` — x + server_lr * sum_i alpha_i Delta_i with alpha on the simplex of the
  participants, chosen at the round start (loss-weighted rules of :mod:`toys.aggregation`,
  average-participating, and the graph weights of :mod:`toys.beta`);
* ``server="fedau"`` — x + server_lr * sum_n p_n omega_n chi_n Delta_n (:mod:`toys.fedau`);
* ``server="mifa"`` / ``"fedvarp"`` — server memory of the latest update of every client.

Hyper-parameters have one name across all algorithms (paper symbols in brackets):

=================  ==========================================================================
``lr``             local step size [DKR eta, BM eta_t, FedAU gamma, BC gamma]: number, array
                   (per round or per iteration) or callable of the global iteration index t
                   (see :func:`toys.local.lr_schedule`). Required.
``local_steps``    local steps per round [DKR tau, BM E, FedAU I, BC E]; default 1.
``server_lr``      global step [FedAU eta]; default 1.
``batch_size``     minibatch size b per local step (None = full batch, the default).
``prox``           proximal coefficient [DKR mu (FedProx), BC alpha]; default 0 (required > 0
                   for fedprox / fedprox-bc).
``beta``           perturbation parameter of seed 003, in (0, 1] (1 = FedAvg).
``K``              FedAU cutoff interval length, integer >= 1 or ``math.inf`` (default).
``temperature``    soft rules: alpha ∝ p exp(x / temperature); ``inv_temperature`` multiplies
                   instead (BM-25). At most one of the two; default temperature = 1.
``k``              clients kept by the (k) rules: integer in [1, N], or a fraction in (0, 1).
``switch_round``   hybrid: round(s) at which the next rule takes over (default 20).
``rules``          hybrid: the rules in time order (default ``("fedsoftbetter", "fedavg")``).
``rule``, ``schedule``, ``decay``, ``mix_rounds``   anneal (spec §5.4): base rule (default
                   fedsoftmax), ``"temperature"`` (inv_temperature * decay^r) or ``"mix"``
                   ((1 - min(1, r/mix_rounds)) alpha_rule + min(1, r/mix_rounds) p).
``loss_offset``    scores x_i = F_i(w) - offset_i: ``"exact"`` (F_i*), ``"zero"``,
                   ``"running_min"`` (smallest F_i seen so far), ``"auto"`` (exact if known,
                   else zero; default). Loss-weighted rules only (spec §5.0).
``score_point``    ``"global"`` (F_i at the broadcast model, default) or ``"local_end"``
                   (F_i at the client's model at the end of the previous round).
``messages``       beta: explicit unit messages (N, D) instead of the principal components.
=================  ==========================================================================

Example
-------
>>> sorted(ALGORITHMS)[:3]
['anneal', 'average-all', 'average-participating']
>>> plan = validate("fedmax-k", {"lr": 0.1, "k": 2, "local_steps": 3}, n_clients=5, rounds=4)
>>> plan.local_steps, plan.lrs.shape
(3, (12,))
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from . import aggregation as agg
from .local import lr_schedule

__all__ = ["ALGORITHMS", "Plan", "hyper_names", "validate"]

# name -> (one-line description, server, rule, omega, extra hyper-parameters)
_TABLE = {
    "fedavg": (("FedAvg: tau local (S)GD steps, weights p renormalised over participants "
                "(DKR Alg. 1 with shadow sequence; BM generalised FedAvg)"),
               "simplex", "fedavg", None, ()),
    "fedprox": (("FedProx: local steps on F_i(x) + prox/2 ||x - x_t||^2 (DKR eq. (4)), "
                 "weights p"), "simplex", "fedavg", None, ()),
    "fedmax": ("FedMax = FedWorse: all weight on the client(s) of largest excess loss (BM)",
               "simplex", "fedmax", None, ("loss_offset", "score_point")),
    "fedmax-k": ("FedMax(k) = FedWorse(k): weight 1/k on the k largest excess losses (BM)",
                 "simplex", "fedmax-k", None, ("k", "loss_offset", "score_point")),
    "fedsoftmax": ("FedSoftMax = FedSoftWorse: alpha ∝ p exp(excess loss / temperature) (BM)",
                   "simplex", "fedsoftmax", None,
                   ("temperature", "inv_temperature", "loss_offset", "score_point")),
    "fedbetter": ("FedBetter: all weight on the client(s) of smallest excess loss (BM-B)",
                  "simplex", "fedbetter", None, ("loss_offset", "score_point")),
    "fedbetter-k": ("FedBetter(k): weight 1/k on the k smallest excess losses (BM-B)",
                    "simplex", "fedbetter-k", None, ("k", "loss_offset", "score_point")),
    "fedsoftbetter": ("FedSoftBetter: alpha ∝ p exp(-excess loss / temperature) (BM-B)",
                      "simplex", "fedsoftbetter", None,
                      ("temperature", "inv_temperature", "loss_offset", "score_point")),
    "hybrid": ("BM-B hybrid: switch between rules at fixed rounds (e.g. FedSoftBetterAvg)",
               "simplex", "hybrid", None,
               ("rules", "switch_round", "temperature", "inv_temperature", "k",
                "loss_offset", "score_point")),
    "anneal": ("BM-B 'simulated annealing': temperature schedule or mixing towards FedAvg",
               "simplex", "anneal", None,
               ("rule", "schedule", "decay", "mix_rounds", "temperature", "inv_temperature",
                "k", "loss_offset", "score_point")),
    "fedau": ("FedAU (seed 002 Alg. 1 + 2): omega = online cutoff-interval estimate of 1/p_n",
              "fedau", None, "fedau", ("K",)),
    "fedau-known": (("seed 002 baseline: omega = 1/p_n with the true participation "
                     "probabilities"), "fedau", None, "known", ()),
    "average-participating": ("seed 002 baseline: average of the participants' updates",
                              "simplex", "participating", None, ()),
    "average-all": ("seed 002 baseline: omega = 1 (sum of updates / N)", "fedau", None, "one",
                    ()),
    "fedvarp": ("FedVarp: SAGA-style server memory of every client's latest update (seed 002)",
                "fedvarp", None, None, ()),
    "mifa": ("MIFA: average of every client's latest update, stale ones reused (seed 002)",
             "mifa", None, None, ()),
    "beta": (("seed 003 beta-perturbed local SGD: gradient at beta w + (1-beta) u_i, "
              "graph weights from data principal components"), "simplex", "graph", None,
             ("beta", "messages")),
    "fedprox-bc": ("seed 003 FedProx baseline (same update as fedprox: prox = alpha; alias)",
                   "simplex", "fedavg", None, ()),
}

ALGORITHMS = {name: row[0] for name, row in _TABLE.items()}

_COMMON = ("lr", "local_steps", "server_lr", "batch_size", "prox")

# paper symbols that are not hyper-parameter names here -> the name to use
_SYMBOLS = {
    "tau": "local_steps", "E": "local_steps", "I": "local_steps", "epochs": "local_steps",
    "eta": "lr (local step) or server_lr (FedAU's global step)", "gamma": "lr",
    "eta_t": "lr (callable of t)", "step_size": "lr", "mu": "prox", "mu_prox": "prox",
    "alpha": "prox (FedProx) ", "T": "temperature (BM) or rounds", "b": "batch_size",
    "m": "k", "C": "participation='uniform'", "tau_switch": "switch_round",
}


def hyper_names(name: str) -> tuple[str, ...]:
    """The valid hyper-parameter names of an algorithm.

    >>> hyper_names("fedau")
    ('lr', 'local_steps', 'server_lr', 'batch_size', 'prox', 'K')
    """
    return _COMMON + _TABLE[_check_name(name)][4]


def _check_name(name: str) -> str:
    if name not in _TABLE:
        raise UnknownNameError("algorithm", name, sorted(_TABLE))
    return name


@dataclass
class Plan:
    """A validated algorithm configuration (what the engine runs).

    >>> validate("fedavg", {"lr": 0.5}, n_clients=2, rounds=1).server
    'simplex'
    """

    name: str
    server: str
    local_steps: int
    lrs: np.ndarray
    server_lr: float = 1.0
    batch_size: int | None = None
    prox: float = 0.0
    beta: float | None = None
    K: float = math.inf
    omega: str | None = None
    rule: object = None
    rule_name: str | None = None
    needs_scores: bool = False
    loss_offset: str = "auto"
    score_point: str = "global"
    messages: np.ndarray | None = None
    hyper: dict = field(default_factory=dict)


def _pos(name, v, integer=False, lo=0.0, lo_open=True, hi=None, hi_open=False):
    dom = ("integer" if integer else "real") + f" in {'(' if lo_open else '['}{lo}, " + (
        f"{hi}{')' if hi_open else ']'}" if hi is not None else "inf)")
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise DomainError(name, v, dom)
    v = float(v)
    if not math.isfinite(v) or v < lo or (lo_open and v == lo):
        raise DomainError(name, v, dom)
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise DomainError(name, v, dom)
    if integer:
        if v != int(v):
            raise DomainError(name, v, dom)
        return int(v)
    return v


def _choice(name, v, choices):
    if v not in choices:
        raise UnknownNameError(f"value of {name}", v, choices)
    return v


def _rule_name(name, v):
    v = str(v).lower()
    full = agg.ALIASES.get(v, v)
    if full not in agg.RULES:
        raise UnknownNameError(f"rule in {name}", v, sorted(agg.RULES) + sorted(agg.ALIASES))
    return full


def validate(name: str, hyper: dict, n_clients: int, rounds: int) -> Plan:
    """Check every hyper-parameter of algorithm ``name`` before any work; returns a :class:`Plan`.

    Raises :class:`~boundlab.errors.UnknownNameError` (unknown algorithm, hyper-parameter or
    choice; paper symbols get a hint), :class:`~boundlab.errors.MissingParameterError` and
    :class:`~boundlab.errors.DomainError` (value outside its domain: lr <= 0, local_steps < 1,
    beta outside (0, 1], K < 1, temperature <= 0, k > N, ...).

    >>> validate("fedau", {"lr": 0.1, "tau": 5}, n_clients=3, rounds=2)
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown hyper-parameter of fedau (paper symbol 'tau' is \
local_steps) 'tau'; valid: lr, local_steps, server_lr, batch_size, prox, K
    """
    _check_name(name)
    _, server, rule_name, omega, _ = _TABLE[name]
    valid = hyper_names(name)
    for key in hyper:
        if key not in valid:
            what = f"hyper-parameter of {name}"
            if key in _SYMBOLS:
                what += f" (paper symbol {key!r} is {_SYMBOLS[key].strip()})"
            raise UnknownNameError(what, key, valid)
    h = dict(hyper)
    if "lr" not in h or h["lr"] is None:
        raise MissingParameterError(name, ["lr"], {"lr": "positive number, array or callable"})
    rounds = _pos("rounds", rounds, integer=True, lo=1, lo_open=False)
    tau = _pos("local_steps", h.get("local_steps", 1), integer=True, lo=1, lo_open=False)
    plan = Plan(name=name, server=server, local_steps=tau, lrs=lr_schedule(h["lr"], rounds, tau),
                omega=omega, rule_name=rule_name)
    plan.server_lr = _pos("server_lr", h.get("server_lr", 1.0))
    bs = h.get("batch_size")
    plan.batch_size = None if bs is None else _pos("batch_size", bs, integer=True, lo=1,
                                                   lo_open=False)
    if name in ("fedprox", "fedprox-bc"):
        if h.get("prox") is None:
            raise MissingParameterError(name, ["prox"], {"prox": "real in (0, inf)"})
        plan.prox = _pos("prox", h["prox"])
    else:
        plan.prox = _pos("prox", h.get("prox", 0.0), lo_open=False)
    if name == "fedau":
        K = h.get("K", math.inf)
        if K is None or (isinstance(K, numbers.Real) and not isinstance(K, bool)
                         and math.isinf(K) and K > 0):
            plan.K = math.inf
        else:
            plan.K = float(_pos("K", K, integer=True, lo=1, lo_open=False))
    if name == "beta":
        if h.get("beta") is None:
            raise MissingParameterError(name, ["beta"], {"beta": "real in (0, 1]"})
        plan.beta = _pos("beta", h["beta"], hi=1.0)
        if h.get("messages") is not None:
            msg = np.asarray(h["messages"], dtype=float)
            if msg.ndim != 2 or msg.shape[0] != n_clients or not np.all(np.isfinite(msg)) \
                    or np.any(np.linalg.norm(msg, axis=1) == 0):
                raise DomainError("messages", h["messages"],
                                  f"finite array of shape ({n_clients}, D) with nonzero rows")
            plan.messages = msg
    _bind_rule(plan, h, n_clients)
    plan.hyper = {k: v for k, v in h.items() if k != "messages"}
    return plan


def _inv_temperature(h) -> float:
    if h.get("temperature") is not None and h.get("inv_temperature") is not None:
        raise DomainError("temperature", h["temperature"],
                          "unset when inv_temperature is given (give one of the two)")
    if h.get("inv_temperature") is not None:
        return _pos("inv_temperature", h["inv_temperature"])
    return 1.0 / _pos("temperature", h.get("temperature", 1.0))


def _k(h, n_clients, needed):
    if h.get("k") is None:
        if needed:
            raise MissingParameterError("k rule", ["k"], {"k": f"integer in [1, {n_clients}] "
                                                               "or fraction in (0, 1)"})
        return 1
    k = h["k"]
    dom = f"integer in [1, {n_clients}] or fraction in (0, 1)"
    if isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k) or k <= 0:
        raise DomainError("k", k, dom)
    if float(k) != int(k) and not 0 < k < 1:
        raise DomainError("k", k, dom)
    kk = agg.resolve_k(k, n_clients)
    if kk > n_clients:
        raise DomainError("k", k, dom, f"only N = {n_clients} clients")
    return kk


def _bind_rule(plan: Plan, h: dict, n_clients: int) -> None:
    r = plan.rule_name
    if r in (None, "participating", "graph"):
        return
    if r == "fedavg":
        plan.rule = agg.make_rule("fedavg")
        return
    plan.loss_offset = _choice("loss_offset", h.get("loss_offset", "auto"),
                               ("auto", "exact", "zero", "running_min"))
    plan.score_point = _choice("score_point", h.get("score_point", "global"),
                               ("global", "local_end"))
    inv_t = _inv_temperature(h)
    if r == "hybrid":
        rules = h.get("rules", ("fedsoftbetter", "fedavg"))
        rules = [s for s in rules.split(",")] if isinstance(rules, str) else list(rules)
        rules = [_rule_name("rules", s.strip() if isinstance(s, str) else s) for s in rules]
        if len(rules) < 2:
            raise DomainError("rules", rules, "at least two rule names, in time order")
        sw = h.get("switch_round", 20)
        sw = [sw] if isinstance(sw, numbers.Real) else list(sw)
        sw = [_pos("switch_round", s, integer=True, lo=1, lo_open=False) for s in sw]
        if len(sw) != len(rules) - 1 or any(b <= a for a, b in itertools.pairwise(sw)):
            raise DomainError("switch_round", sw,
                              f"{len(rules) - 1} increasing round indices (one per switch)")
        kk = _k(h, n_clients, any(s.endswith("-k") for s in rules))
        plan.rule = agg.hybrid([agg.make_rule(s, inv_t, kk) for s in rules], sw)
        h["rules"], h["switch_round"] = tuple(rules), tuple(sw)
    elif r == "anneal":
        base = _rule_name("rule", h.get("rule", "fedsoftmax"))
        sched = _choice("schedule", h.get("schedule", "temperature"), ("temperature", "mix"))
        if sched == "temperature" and base not in agg.SOFT_RULES:
            raise DomainError("rule", base, "a soft rule (fedsoftmax, fedsoftbetter) for "
                                            "schedule='temperature'")
        decay = _pos("decay", h.get("decay", 0.9), hi=1.0)
        mix = _pos("mix_rounds", h.get("mix_rounds", 10), integer=True, lo=1, lo_open=False)
        kk = _k(h, n_clients, base.endswith("-k"))
        plan.rule = agg.anneal(base, sched, inv_t, kk, decay, mix)
    else:
        kk = _k(h, n_clients, r.endswith("-k"))
        plan.rule = agg.make_rule(r, inv_t, kk)
    plan.needs_scores = plan.rule.needs_scores
