"""Hyper-parameter domains of the built-in pieces, declared once and checked through
:func:`toys.validation.check` (every error names the parameter, the value and the domain).

=================  ==========================================================================
``lr``             local step size [DKR eta, BM eta_t, FedAU gamma, BC gamma]: number, array
                   (per round or per iteration) or callable of the global iteration index t
                   (:func:`toys.local.lr_schedule`). Required.
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
``candidates``     poc: Power-of-Choice's candidate-set size d, integer in [k, N] or a
                   fraction in (0, 1) of N (required); ``k`` is the m clients kept.
``client_steps``   fedavg-hetero, fednova, scaffold: each client's local steps tau_i, N
                   integers >= 1 (default: every client does ``local_steps``, which defaults to
                   max tau_i and must be >= every tau_i).
``min_steps``      the same: each round, tau_i is drawn uniformly from {min_steps, ..., tau_i}
                   (integer in [1, min tau_i]; default None = no draw).
``straggler_prob`` the same: each round, each client is a straggler with this probability (in
                   [0, 1], default 0) and does ceil(u tau_i) of its steps, u ~ U(0, 1) (>= 1).
``beta1``,         fedadam, fedyogi (beta1, beta2), fedadagrad (beta1): the moment decays of
``beta2``          Reddi et al. (2021), reals in [0, 1); defaults 0.9 and 0.99.
``eps``            the same: the adaptivity tau of Reddi et al. (2021), > 0; default 1e-3.
=================  ==========================================================================

Example
-------
>>> inv_temperature({"temperature": 0.5})
2.0
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from boundlab.domains import (
    INT_GE1,
    NONNEGATIVE,
    POSITIVE,
    UNIT_CLOSED,
    UNIT_HALF_OPEN,
    Domain,
)
from boundlab.errors import DomainError, MissingParameterError, UnknownNameError

from ..validation import check, check_choice

__all__ = ["ALIASES", "DOMAINS", "RULES", "SOFT_RULES", "candidates_of", "client_steps_of",
           "inv_temperature", "k_of", "loss_offset", "required", "rule_name", "rule_names",
           "value"]

# the loss-weighted rules of toys.algorithms.weights (declared here, where their names are
# checked, so that weights imports this module and not the reverse)
RULES = ("fedavg", "fedmax", "fedmax-k", "fedsoftmax", "fedbetter", "fedbetter-k",
         "fedsoftbetter")
ALIASES = {"fedworse": "fedmax", "fedworse-k": "fedmax-k", "fedsoftworse": "fedsoftmax",
           "fedavg-generalized": "fedavg"}
SOFT_RULES = ("fedsoftmax", "fedsoftbetter")


def rule_name(name) -> str | None:
    """The canonical name of a loss-weighted rule (aliases resolved), or None if unknown.

    >>> rule_name("FedWorse"), rule_name("nope")
    ('fedmax', None)
    """
    full = ALIASES.get(str(name).lower(), str(name).lower())
    return full if full in RULES else None


UNIT_LEFT_CLOSED = Domain(0.0, 1.0, lo_open=False, hi_open=True)  # [0, 1)

DOMAINS = {
    "local_steps": INT_GE1, "server_lr": POSITIVE, "batch_size": INT_GE1, "prox": NONNEGATIVE,
    "beta": UNIT_HALF_OPEN, "K": INT_GE1, "temperature": POSITIVE, "inv_temperature": POSITIVE,
    "switch_round": INT_GE1, "decay": UNIT_HALF_OPEN, "mix_rounds": INT_GE1,
    "min_steps": INT_GE1, "straggler_prob": UNIT_CLOSED, "beta1": UNIT_LEFT_CLOSED,
    "beta2": UNIT_LEFT_CLOSED, "eps": POSITIVE,
}
CHOICES = {"loss_offset": ("auto", "exact", "zero", "running_min"),
           "score_point": ("global", "local_end"), "schedule": ("temperature", "mix")}


def value(hyper: dict, name: str, default):
    """``hyper[name]`` (or ``default``) checked against the name's declared domain or choices.

    >>> value({"local_steps": 3.0}, "local_steps", 1), value({}, "server_lr", 1.0)
    (3, 1.0)
    """
    v = hyper.get(name, default)
    if v is None:
        return None
    if name in CHOICES:
        return check_choice(f"value of {name}", v, CHOICES[name])
    return check(name, v, DOMAINS[name])


def required(hyper: dict, name: str, owner: str, domain: Domain):
    """A required hyper-parameter (MissingParameterError when absent or None)."""
    if hyper.get(name) is None:
        raise MissingParameterError(owner, [name], {name: domain.describe()})
    return check(name, hyper[name], domain)


def inv_temperature(hyper: dict) -> float:
    """1/temperature or inv_temperature (at most one of the two; default 1)."""
    if hyper.get("temperature") is not None and hyper.get("inv_temperature") is not None:
        raise DomainError("temperature", hyper["temperature"],
                          "unset when inv_temperature is given (give one of the two)")
    if hyper.get("inv_temperature") is not None:
        return value(hyper, "inv_temperature", None)
    return 1.0 / value(hyper, "temperature", 1.0)


def k_of(hyper: dict, n_clients: int, needed: bool) -> int:
    """The k of the (k) rules: an integer in [1, N] or a fraction in (0, 1) of N.

    >>> k_of({"k": 0.5}, 4, True)
    2
    """
    dom = f"integer in [1, {n_clients}] or fraction in (0, 1)"
    if hyper.get("k") is None:
        if needed:
            raise MissingParameterError("k rule", ["k"], {"k": dom})
        return 1
    k = hyper["k"]
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real) \
            or not math.isfinite(k) or k <= 0 or (float(k) != int(k) and not 0 < k < 1):
        raise DomainError("k", k, dom)
    kk = int(k) if float(k) == int(k) else max(1, int(float(k) * n_clients))
    if kk > n_clients:
        raise DomainError("k", k, dom, f"only N = {n_clients} clients")
    return kk


def candidates_of(hyper: dict, n_clients: int, k: int) -> int:
    """Power-of-Choice's candidate-set size d (required): an integer in [k, N] or a fraction
    in (0, 1) of N (read as max(1, int(d N)), which must be >= k).

    >>> candidates_of({"candidates": 0.5}, 10, 2), candidates_of({"candidates": 4}, 10, 2)
    (5, 4)
    """
    dom = f"integer in [k, N] = [{k}, {n_clients}] or fraction in (0, 1) of N"
    if hyper.get("candidates") is None:
        raise MissingParameterError("poc", ["candidates"], {"candidates": dom})
    d = hyper["candidates"]
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Real) \
            or not math.isfinite(d) or d <= 0 or (float(d) != int(d) and not 0 < d < 1):
        raise DomainError("candidates", d, dom)
    dd = int(d) if float(d) == int(d) else max(1, int(float(d) * n_clients))
    if not k <= dd <= n_clients:
        raise DomainError("candidates", d, dom, f"that is d = {dd} clients")
    return dd


def client_steps_of(hyper: dict, n_clients: int):
    """Each client's local steps tau_i as a tuple of N ints >= 1, or None when not given.

    >>> client_steps_of({"client_steps": [1, 2.0, 3]}, 3)
    (1, 2, 3)
    """
    v = hyper.get("client_steps")
    if v is None:
        return None
    dom = f"{n_clients} integers >= 1 (one per client)"
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise DomainError("client_steps", v, dom) from None
    if arr.shape != (n_clients,) or isinstance(v, (str, bytes)) \
            or np.asarray(v).dtype == bool or bool(np.any(INT_GE1.bad_mask(arr))):
        raise DomainError("client_steps", v, dom)
    return tuple(int(t) for t in arr)


def loss_offset(hyper: dict, problem):
    """(offset name, offsets array or None) for the loss-weighted rules: ``auto`` is
    ``exact`` when the problem has finite client optima F_i*, else ``zero``."""
    off = value(hyper, "loss_offset", "auto")
    F_i = finite_attr(problem, "F_star_i")
    if off == "auto":
        off = "exact" if F_i is not None else "zero"
    elif off == "exact" and F_i is None:
        raise DomainError("loss_offset", "exact", "'zero' or 'running_min' for a problem "
                                                  "without exact client optima F_i*")
    return off, (F_i if off == "exact" else None)


def finite_attr(problem, name):
    """``problem.<name>`` as a float array when it exists and is finite, else None (a problem
    whose optima are not available, or not solved, has none)."""
    try:
        v = getattr(problem, name, None)
    except Exception:  # noqa: BLE001 - an optimum that cannot be solved is "not available"
        return None
    if v is None:
        return None
    v = np.asarray(v, dtype=float)
    return v if np.all(np.isfinite(v)) else None


def rule_names(spec, what: str) -> list[str]:
    """Rule names (aliases resolved) from a tuple or a comma-separated string."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    out = []
    for s in items:
        full = rule_name(s.strip() if isinstance(s, str) else s)
        if full is None:
            raise UnknownNameError(f"rule in {what}", str(s).strip().lower(),
                                   sorted(RULES) + sorted(ALIASES))
        out.append(full)
    return out
