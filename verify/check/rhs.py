"""The right-hand side's parameters of :func:`verify.check`: which run setting, constant or
measured value each symbol of a bound takes (:data:`HYPER`, :data:`ALGORITHM_SYMBOLS`,
:func:`symbols`), and :func:`rhs_params`, which collects them.

Private to :mod:`verify.check`, which documents the priority of the sources and re-exports
these names.
"""

from __future__ import annotations

import numpy as np

import boundlab
from boundlab.errors import UnknownNameError

from .lhs import _bound, _last

__all__ = ["HYPER", "ALGORITHM_SYMBOLS", "symbols", "rhs_params"]

#: bound symbol <- run setting, per family (``"default"`` for any other family)
HYPER = {
    "default": {"eta": "lr", "tau": "local_steps", "E": "local_steps", "I": "local_steps",
                "T": "rounds", "M": "n_clients", "N": "n_clients", "alpha": "prox",
                "beta": "beta", "K": "K"},
    "skew": {"T": "rounds*local_steps"},  # BM's T counts SGD iterations
    "contraction": {"gamma": "lr", "eta": None},  # BC's local step is gamma
    "weight_error": {"gamma": "lr", "eta": "server_lr"},  # FedAU: gamma local, eta global
}
_DEFAULTS = {"local_steps": 1, "server_lr": 1.0, "prox": 0.0}
_BC = {"gamma": "lr", "Delta": "gap_0"}  # BC (seed 003): the local step is gamma
_FEDAU = {"gamma": "lr", "eta": "server_lr", "F": "gap_0"}  # FedAU: gamma local, eta global
#: symbol table of a registered bound that declares its algorithm but no symbols
ALGORITHM_SYMBOLS = {"fedprox": _BC, "fedprox-bc": _BC, "beta": _BC, "fedau": _FEDAU,
                     "fedau-known": _FEDAU}
_LEGACY = {"contraction": {**HYPER["contraction"], "Delta": "gap_0"},
           "weight_error": {**HYPER["weight_error"], "F": "gap_0"}, "skew": HYPER["skew"]}


def symbols(bound) -> dict:
    """Bound symbol <- run setting, constant or ``"gap_0"`` (see :mod:`verify.check`).

    >>> import boundlab
    >>> symbols(boundlab.get("contraction.fedprox_sc"))["gamma"]
    'lr'
    >>> symbols(boundlab.get("drift.plateau"))["eta"]
    'lr'
    """
    table = dict(HYPER["default"])
    try:
        meta = boundlab.registry.meta(bound.id)
    except UnknownNameError:  # a Bound object that is not registered
        meta = {}
    if meta.get("symbols"):
        table.update(meta["symbols"])
    elif meta.get("algorithm") in ALGORITHM_SYMBOLS:
        table.update(ALGORITHM_SYMBOLS[meta["algorithm"]])
    elif bound.family in _LEGACY and boundlab.registry.is_registered(bound.id):
        table.update(_LEGACY[bound.family])
    return table


def rhs_params(bound, setting: dict, consts: dict | None = None, log=None) -> dict:
    """Scalar right-hand-side parameters of ``bound`` from a run ``setting`` (``lr``,
    ``local_steps``, ``rounds``, ``n_clients``, ``prox``, ...), constants and a per-round log.

    >>> import boundlab
    >>> sorted(rhs_params(boundlab.get("drift.plateau"), {"lr": 0.2, "local_steps": 10},
    ...                   {"L": 0.19, "zeta": 0.4}).items())
    [('L', 0.19), ('eta', 0.2), ('tau', 10), ('zeta', 0.4)]
    """
    bound = _bound(bound)
    names = {**bound.params, **bound.extra_params}
    table = symbols(bound)
    s = {**_DEFAULTS, **setting}
    out = dict(consts or {})
    if "D" in out:
        out.setdefault("D0", out["D"])
    for sym, src in table.items():
        if src is None or src == "gap_0":
            continue
        if src == "rounds*local_steps":
            v = s["rounds"] * s["local_steps"] if "rounds" in s else None
        else:
            v = s.get(src, (consts or {}).get(src))
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            out[sym] = v
    if log is not None:
        out.update(_measured_scalars(table, log))
    if "p" in s and s["p"] is not None:
        p = np.asarray(s["p"], dtype=float)
        out.update(p_min=float(p.min()), S=float(np.sum(p**2)))
    return {k: v for k, v in out.items() if k in names}


def _measured_scalars(table, c) -> dict:
    out = {}
    for name, col, agg in (("rho_bar", "rho_min", np.min), ("rho_tilde", "rho_star", np.max),
                           ("pi", "kappa_min", np.min), ("Pi", "kappa_max", np.max)):
        if col in c and np.any(np.isfinite(_last(c[col]))):
            out[name] = float(agg(_last(c[col])[np.isfinite(_last(c[col]))]))
    if "gap" in c:
        out.update({sym: float(c["gap"][0]) for sym, src in table.items() if src == "gap_0"})
    return out
