"""The catalogue registry: every bound of the five papers, by stable id, plus your own bounds.

Each family module (``drift``, ``skew``, ``weight_error``, ``contraction``) defines a list
``BOUNDS``; this module collects them once, on first use. :func:`register` adds a user
:class:`~boundlab.core.Bound` for the process (any family name); installed plug-ins register
through the entry-point group ``boundlab.bounds`` (:data:`ENTRY_POINT_GROUP`), loaded on first
use of the catalogue. An entry point names a ``Bound``, a list of them, or a callable returning
either; an item may also be a pair ``(bound, {"algorithm": ..., "function_class": ...,
"run": {...}})`` carrying the keyword arguments of :func:`register`.

Example
-------
>>> import boundlab
>>> boundlab.get("drift.plateau").source
'seed 004, main text eq. (2) (limit T -> inf of Theorem 2.1 at sigma = 0)'
>>> "skew.corollary" in [b.id for b in boundlab.catalogue()]
True
>>> import dataclasses
>>> mine = dataclasses.replace(boundlab.get("drift.plateau"), id="mine.plateau_half",
...                            expr=boundlab.get("drift.plateau").expr / 2, terms={})
>>> boundlab.register(mine).id in boundlab.ids("mine")
True
>>> boundlab.unregister("mine.plateau_half").id
'mine.plateau_half'
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from ._plugins import PLUGIN_TIMEOUT, Hung, describe, in_worker, plugin_timeout, why
from ._registry_checks import (
    FUNCTION_CLASSES,
    RegistrationError,
    check_bound,
    check_meta,
    check_symbols,
)
from .errors import UnknownNameError

__all__ = ["get", "catalogue", "FAMILIES", "ids", "families", "register", "unregister",
           "registration", "meta", "is_registered", "registered_ids", "load_plugins",
           "resolve",
           "RegistrationError", "ENTRY_POINT_GROUP", "FUNCTION_CLASSES", "PLUGIN_TIMEOUT",
           "plugin_timeout"]

FAMILIES = ("drift", "skew", "weight_error", "contraction")  # the built-in families
ENTRY_POINT_GROUP = "boundlab.bounds"

_REGISTRY: dict[str, dict] = {}  # family -> {id: Bound}, filled family by family on first use
_USER: dict[str, object] = {}  # id -> Bound registered in this process, in order
_META: dict[str, dict] = {}  # id -> {"algorithm", "function_class", "run", "plugin"}
_PLUGINS = {"state": "new"}  # new | loading | done


def _family(fam: str) -> dict:
    if fam not in _REGISTRY:
        mod = importlib.import_module(f"boundlab.{fam}")
        reg = {}
        for b in mod.BOUNDS:
            if b.id in reg or b.family != fam:
                raise RuntimeError(f"duplicate or misplaced bound id {b.id}")
            reg[b.id] = b
        _REGISTRY[fam] = reg
    return _REGISTRY[fam]


def _builtin() -> dict:
    out: dict = {}
    for fam in FAMILIES:
        out.update(_family(fam))
    return out


def _load() -> dict:
    load_plugins()
    return {**_builtin(), **_USER}


def get(bound_id: str):
    """The :class:`~boundlab.core.Bound` with this id (builds only its family on first use).

    >>> import boundlab
    >>> boundlab.get("contraction.fedavg_factor").kind
    'upper'
    """
    if isinstance(bound_id, str) and bound_id in _USER:
        return _USER[bound_id]
    fam = bound_id.split(".", 1)[0] if isinstance(bound_id, str) else ""
    reg = _family(fam) if fam in FAMILIES else {}
    if bound_id in reg:
        return reg[bound_id]
    load_plugins()
    if bound_id in _USER:
        return _USER[bound_id]
    raise UnknownNameError("bound id", bound_id, list(_load()))


def resolve(bound):
    """The Bound a caller judges: ``boundlab.get(bound)`` for an id, the object itself for a
    Bound, which is always judged by its own expression. A Bound object that carries the id of
    a catalogue or registered bound but states something else (its expression, preconditions,
    lhs or kind) is refused by name with a :class:`RegistrationError`: results are filed by id,
    and two statements under one id would be confused.

    >>> import dataclasses, boundlab
    >>> b = boundlab.get("drift.plateau")
    >>> resolve(b) is b
    True
    >>> resolve(dataclasses.replace(b, expr=b.expr / 100))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.registry.RegistrationError: drift.plateau: this Bound object states another expr ...
    """
    if isinstance(bound, str):
        return get(bound)
    bid = getattr(bound, "id", None)
    try:
        known = get(bid) if isinstance(bid, str) else None
    except UnknownNameError:
        return bound
    if known is None or known is bound:
        return bound
    differ = [k for k in ("expr", "preconditions", "lhs", "kind")
              if getattr(known, k, None) != getattr(bound, k, None)]
    if differ:
        what = "a registered" if bid in _USER else "the catalogue"
        raise RegistrationError(
            f"{bid}: this Bound object states another {', '.join(differ)} than {what} bound "
            f"{bid}; it would be filed under that bound's id: give it its own id, e.g. "
            f"dataclasses.replace(b, id='mine.{bid.split('.', 1)[-1]}')")
    return bound


def families() -> tuple[str, ...]:
    """The built-in families, then the families of registered bounds (any name).

    >>> families()[:2]
    ('drift', 'skew')
    """
    load_plugins()
    user = [b.family for b in _USER.values() if b.family not in FAMILIES]
    return FAMILIES + tuple(dict.fromkeys(user))


def catalogue(family: str | None = None) -> list:
    """All bounds (optionally of one family), in catalogue order; registered bounds last.

    >>> import boundlab
    >>> {b.family for b in boundlab.catalogue()} >= set(boundlab.FAMILIES)
    True
    """
    reg = _load()
    if family is not None and family not in families():
        raise UnknownNameError("bound family", family, families())
    return [b for b in reg.values() if family is None or b.family == family]


def ids(family: str | None = None) -> list[str]:
    """Ids of :func:`catalogue`.

    >>> import boundlab
    >>> boundlab.ids("drift")[0]
    'drift.fedavg_convex'
    """
    return [b.id for b in catalogue(family)]


# ------------------------------------------------------------------------------ registration
def register(bound, *, algorithm: str | None = None, function_class: str | None = None,
             run: Mapping | None = None, symbols: Mapping | None = None):
    """Add ``bound`` to the catalogue for this process; returns it.

    Parameters
    ----------
    bound : Bound
        Built with :class:`boundlab.Bound`, :class:`boundlab.Precondition` and
        :func:`boundlab.sym` (or ``dataclasses.replace`` of a catalogue bound). Any family name
        (the part of the id before the first dot) is allowed.
    algorithm : str, optional
        The algorithm the bound speaks about (a ``toys.ALGORITHMS`` name such as ``"fedavg"``,
        ``"fedprox"``, ``"beta"``); with ``function_class`` it lets ``boundlab tightness`` match
        a PEP model.
    function_class : str, optional
        One of :data:`FUNCTION_CLASSES`.
    run : dict, optional
        The run ``boundlab verify --only ID`` checks the bound on: ``problem`` (a ``toys.make``
        name, or ``{"name": ..., **options}``), ``algorithm`` (default: ``algorithm``),
        ``rounds``, ``seeds`` (a count or a list), ``hyper`` (``toys.run`` keywords) and
        ``params`` (bound values not measured); see :func:`verify.check`.
    symbols : dict, optional
        What a symbol of the bound means on a run when its name alone would mislead: symbol
        -> a run setting (``{"gamma": "lr"}``), ``"rounds*local_steps"`` (a T counting SGD
        iterations) or ``"lr_shift"`` (gamma of the step schedule eta_t = 1/(mu (t + gamma)),
        BM's corollaries: not a step size), or None (no run setting). Names and values are
        identifiers (data, never code).

    Raises :class:`RegistrationError` for a duplicate id or a malformed bound (naming what is
    wrong).

    >>> import boundlab
    >>> from boundlab import Bound, Precondition, make_params, sym
    >>> eta, L = sym("eta"), sym("L")
    >>> b = Bound(id="mine.demo", source="my note", expr=eta * L, params=make_params("eta", "L"),
    ...           kind="upper", lhs="final_gap",
    ...           preconditions=(Precondition(eta, "<=", 1 / L, "eta <= 1/L"),))
    >>> boundlab.register(b).family
    'mine'
    >>> boundlab.register(b)
    Traceback (most recent call last):
    ...
    boundlab.registry.RegistrationError: mine.demo: duplicate bound id (already registered)
    >>> _ = boundlab.unregister("mine.demo")
    """
    check_bound(bound)
    meta = check_meta(bound.id, algorithm, function_class, run)
    meta["symbols"] = check_symbols(bound, symbols)
    load_plugins()
    if bound.id in _USER:
        raise RegistrationError(f"{bound.id}: duplicate bound id (already registered)")
    if bound.id in _builtin():
        raise RegistrationError(f"{bound.id}: duplicate bound id (a catalogue bound; register "
                                "a copy under a new id, e.g. dataclasses.replace(b, id=...))")
    _USER[bound.id] = bound
    _META[bound.id] = meta
    return bound


def unregister(bound_id: str):
    """Remove a registered bound (catalogue bounds cannot be removed); returns it.

    >>> import boundlab
    >>> boundlab.unregister("drift.plateau")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown registered bound id 'drift.plateau'; valid: ...
    """
    if bound_id not in _USER:
        raise UnknownNameError("registered bound id", bound_id, list(_USER) or ["(none)"])
    _META.pop(bound_id, None)
    return _USER.pop(bound_id)


def registered_ids() -> list[str]:
    """Ids of the bounds added by :func:`register` or plug-ins, in registration order.

    >>> registered_ids()
    []
    """
    load_plugins()
    return list(_USER)


def is_registered(bound_id: str) -> bool:
    """True for a bound added by :func:`register` or a plug-in (not a built-in one).

    >>> is_registered("drift.plateau")
    False
    """
    load_plugins()
    return bound_id in _USER


def registration(bound_id: str) -> dict:
    """What was registered with a user bound: ``algorithm``, ``function_class``, ``run``,
    ``plugin`` (the entry point's name, or None). Empty for a catalogue bound.

    >>> registration("drift.plateau")
    {}
    """
    get(bound_id)
    return dict(_META.get(bound_id, {}))


def meta(bound_id: str) -> dict:
    """What a bound speaks about, for catalogue and registered bounds alike: ``algorithm``,
    ``function_class``, ``run`` (the fixed instance ``boundlab verify`` judges it on, or
    None), ``symbols`` (the paper's meaning of clashing symbols, see
    :mod:`boundlab._catalogue_meta`; a registered bound's from :func:`register`) and
    ``plugin``.

    A catalogue bound's entry comes from its paper (:data:`boundlab._catalogue_meta.META`);
    a registered bound's from :func:`register`. Copies: editing the result changes nothing.

    >>> m = meta("drift.plateau")
    >>> m["algorithm"], m["function_class"], m["run"] is None
    ('fedavg', 'smooth-convex', True)
    """
    import copy

    get(bound_id)
    if bound_id in _USER:
        return {"symbols": {}, **copy.deepcopy(_META.get(bound_id, {}))}
    from ._catalogue_meta import META

    entry = META.get(bound_id, {})
    return {"algorithm": entry.get("algorithm"), "function_class": entry.get("function_class"),
            "run": copy.deepcopy(entry.get("run")), "symbols": dict(entry.get("symbols") or {}),
            "plugin": None}


# ------------------------------------------------------------------------------ plug-ins
def load_plugins(force: bool = False) -> None:
    """Register the bounds of every installed plug-in (entry-point group ``boundlab.bounds``).

    Runs once per process (``force=True`` reloads: plug-in bounds registered before are
    replaced). A plug-in that fails to load or registers a malformed or duplicate bound raises
    :class:`RegistrationError` naming the entry point (and its distribution); nothing of that
    plug-in stays registered.

    Plug-ins cannot fake success: a plug-in that raises, calls ``sys.exit`` (``SystemExit`` is
    caught: it cannot end the process), or does not finish loading within
    :func:`plugin_timeout` seconds (``$BOUNDLAB_PLUGIN_TIMEOUT``, default 60) fails the command
    that needed the catalogue: :class:`RegistrationError`, which the command line prints as
    one ``error:`` line with exit status 2. The command does not go on without the plug-in: its
    output would silently lack bounds the user installed. Each plug-in loads in a worker
    thread, so a hang is reported, but the hung thread cannot be stopped (it is a daemon
    thread: it ends with the process). A ``KeyboardInterrupt`` of the user passes through.

    >>> load_plugins()
    """
    if _PLUGINS["state"] == "loading" or (_PLUGINS["state"] == "done" and not force):
        return
    from importlib.metadata import entry_points

    if force:
        for bid in [i for i, m in _META.items() if m.get("plugin")]:
            unregister(bid)
    _PLUGINS["state"] = "loading"
    try:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            _load_one(ep)
    except BaseException:
        _PLUGINS["state"] = "new"
        raise
    _PLUGINS["state"] = "done"


def _items(ep) -> list:
    """What the entry point names: loaded, called when callable, as a list of items."""
    from .core import Bound

    obj = ep.load()
    if callable(obj) and not isinstance(obj, Bound):
        obj = obj()
    return [obj] if isinstance(obj, (Bound, tuple)) else list(obj or ())


def _load_one(ep) -> None:
    added = []
    seconds = plugin_timeout()
    try:
        for item in in_worker(lambda: _items(ep), seconds):
            bound, kw = (item if isinstance(item, tuple) and len(item) == 2 else (item, {}))
            register(bound, **dict(kw))
            _META[bound.id]["plugin"] = ep.name
            added.append(bound.id)
    except Hung:
        raise RegistrationError(f"{describe(ep, ENTRY_POINT_GROUP)}: did not finish loading "
                                f"within {seconds:g} s (it may hang; $BOUNDLAB_PLUGIN_TIMEOUT "
                                "sets the limit)") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: reported with its name
        for bid in added:
            unregister(bid)
        raise RegistrationError(f"{describe(ep, ENTRY_POINT_GROUP)}: {why(exc)}") from exc
