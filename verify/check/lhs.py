"""What :func:`verify.check` measures: the left-hand sides (``bound.lhs``) of the one registry
:mod:`verify.measures`, read from a per-round log (:data:`LHS`, live: a quantity added with
:func:`verify.measures.register` is checkable at once), those no run gives and why
(:data:`NOT_MEASURABLE` = :data:`verify.measures.NOT_MEASURED`), and the lookup.

Private to :mod:`verify.check` (which re-exports both tables); the definitions live in
:mod:`verify.measures`, shared with :func:`verify.falsify` and :func:`verify.sweep`.

>>> LHS["final_gap"].doc, LHS["gap_t"].per_round
('F(x_T) - F* of the last server model', True)
>>> _quantity(boundlab.get("contraction.beta_nc")).record  # BC: the virtual iterates
'step'
>>> _quantity(boundlab.get("weight_error.theorem2")).columns  # FedAU: the server models
('grad_norm2',)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import boundlab
from boundlab.errors import UnknownNameError

from .. import measures
from ..measures import NOT_MEASURED as NOT_MEASURABLE
from ..measures import PAPER_LHS

__all__ = ["Quantity", "LHS", "NOT_MEASURABLE", "PAPER_LHS", "measured_name"]


@dataclass(frozen=True)
class Quantity:
    """A left-hand side measured from one seed's per-round log: its columns and how;
    ``record``: the ``toys.run`` record mode whose log has the columns (:func:`verify.check`
    runs with it). ``fn`` / ``measured`` take the log's columns (name -> array over the rows
    r = 0..R) and apply the registry's measure (:func:`verify.measures.from_log`)."""

    doc: str
    columns: tuple
    per_round: bool
    fn: object  # (log columns dict of arrays over rounds 0..R) -> array (per round) or float
    measured: object = None  # per-round parameters, same signature -> {name: array}
    record: str = "round"


def _last(a):
    return a[:-1]  # round events: rows r = 0..R-1 (the last row is the final state only)


def _of(m: measures.Measure) -> Quantity:
    def fn(cols):
        v = measures.measure(m.name, measures.from_log(cols))[0][0]
        return v if m.per_round else float(v[0])

    def params(cols):
        return {k: v[0] for k, v in measures.measure(m.name, measures.from_log(cols))[1].items()}

    return Quantity(m.doc, m.needs, m.per_round, fn, params if m.params else None, m.record)


class _Live(Mapping):
    """lhs name -> :class:`Quantity`, following the registry as it is now."""

    def __getitem__(self, name):
        try:
            return _of(measures.get(name))
        except UnknownNameError:
            raise KeyError(name) from None

    def __iter__(self):
        return iter(measures.names())

    def __len__(self):
        return len(measures.names())


#: the measured left-hand sides (:mod:`verify.measures`), as Quantities of a per-round log
LHS = _Live()


def _bound(bound):
    """The bound judged: by id, or the object itself (its own expression; a Bound that
    carries another bound's id is refused, :func:`boundlab.registry.resolve`)."""
    return boundlab.registry.resolve(bound)


def measured_name(lhs: str, bound_id: str) -> str:
    """The quantity measured for left-hand side ``lhs`` of bound ``bound_id``: ``lhs``, or
    what :data:`PAPER_LHS` maps it to under the bound's registered algorithm (an id that is not
    registered keeps ``lhs``).

    >>> measured_name("avg_grad_norm2", "contraction.beta_nc")
    'avg_grad_norm2_virtual'
    """
    try:
        algo = boundlab.registry.meta(bound_id).get("algorithm")
    except UnknownNameError:  # a Bound object that is not registered
        algo = None
    return measures.paper_name(lhs, algo)


def _quantity(bound) -> Quantity:
    if bound.lhs in LHS:
        return LHS[measured_name(bound.lhs, bound.id)]
    raise UnknownNameError(f"measurable left-hand side ({bound.id}: {bound.lhs!r} is not: "
                           f"{measures.reason(bound.lhs)})", bound.lhs, sorted(LHS))
