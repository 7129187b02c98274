"""What :func:`verify.check` can measure: the left-hand sides (``bound.lhs``) a per-round log
gives (:data:`LHS`), those it cannot and why (:data:`NOT_MEASURABLE`), and the lookup.

Private to :mod:`verify.check` (which documents every quantity and re-exports both tables);
split out so that each module stays one subject.

>>> LHS["final_gap"].doc, LHS["gap_t"].per_round
('gap_T = F(x_T) - F*', True)
>>> _quantity(boundlab.get("contraction.beta_nc")).record  # BC: the virtual iterates
'step'
>>> _quantity(boundlab.get("weight_error.theorem2")).columns  # FedAU: the server models
('grad_norm2',)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import boundlab
from boundlab.errors import UnknownNameError

__all__ = ["Quantity", "LHS", "NOT_MEASURABLE", "PAPER_LHS", "measured_name"]


@dataclass(frozen=True)
class Quantity:
    """A left-hand side measured from a per-round log: its columns and how; ``record``: the
    ``toys.run`` record mode whose log has the columns (:func:`verify.check` runs with it)."""

    doc: str
    columns: tuple
    per_round: bool
    fn: object  # (log columns dict of arrays over rounds 0..R) -> array (per round) or float
    measured: object = None  # per-round parameters, same signature -> {name: array}
    record: str = "round"


def _last(a):
    return a[:-1]  # round events: rows r = 0..R-1 (the last row is the final state only)


LHS = {
    "avg_shadow_gap": Quantity("(1/T) sum_{r<T} shadow_gap_r", ("shadow_gap",), False,
                               lambda c: float(np.mean(_last(c["shadow_gap"])))),
    "final_gap": Quantity("gap_T = F(x_T) - F*", ("gap",), False, lambda c: float(c["gap"][-1])),
    "max_client_drift": Quantity("max_r drift_max_r", ("drift_max",), False,
                                 lambda c: float(np.max(_last(c["drift_max"])))),
    "avg_grad_norm2": Quantity("(1/T) sum_{t<T} ||grad F(x_t)||^2 (the server models)",
                               ("grad_norm2",), False,
                               lambda c: float(np.mean(_last(c["grad_norm2"])))),
    "avg_grad_norm2_virtual": Quantity(
        "(1/(T E)) sum_{t<T} sum_{k=0}^{E-1} ||grad F(wbar_{t,k})||^2 (the virtual averages "
        "after k local steps, wbar_{t,0} = x_t; a record='step' run's grad_norm2_virtual)",
        ("grad_norm2_virtual",), False,
        lambda c: float(np.mean(_last(c["grad_norm2_virtual"]))), record="step"),
    "Pi": Quantity("max_r kappa_max_r (alpha_i / p_i over participants)", ("kappa_max",), False,
                   lambda c: float(np.max(_last(c["kappa_max"])))),
    "gap_t": Quantity("gap_t, t = 0..T", ("gap",), True, lambda c: c["gap"],
                      lambda c: {"t": c["round"]}),
    "round_avg_gap": Quantity("shadow_gap_r, r < T", ("shadow_gap", "dist2", "drift_sum"), True,
                              lambda c: _last(c["shadow_gap"]),
                              lambda c: {"dist0": c["dist2"][:-1], "dist_tau": c["dist2"][1:],
                                         "drift_sum": _last(c["drift_sum"])}),
    "dist_next": Quantity("dist2_{r+1}, r < T", ("dist2",), True, lambda c: c["dist2"][1:],
                          lambda c: {"dist_t": c["dist2"][:-1]}),
    "grad_norm_sq": Quantity("grad_norm2_r, r = 0..T", ("grad_norm2", "loss", "gap"), True,
                             lambda c: c["grad_norm2"],
                             lambda c: {"f_w": c["loss"], "f_star": c["loss"] - c["gap"]}),
    "client_discrepancy": Quantity("disc_max_r, r < T", ("disc_max",), True,
                                   lambda c: _last(c["disc_max"])),
}

NOT_MEASURABLE = {
    "plateau_gap": "a limit T -> inf; check drift.plateau_finite (avg_shadow_gap) instead",
    "pairwise_drift": "pairwise client distances are not recorded",
    "pairwise_drift_next": "pairwise client distances are not recorded",
    "next_sq_dist": "a per-iteration quantity inside rounds (see the skew checks)",
    "round_avg_grad_norm2": "a per-round lemma, judged by verify.checks.contraction_local",
    "avg_grad_norm2_h": "the gradient of FedAU's reweighted objective h is not recorded "
                        "(verify.checks.weight_error_descent judges it on runs)",
    "local_deviation": "distances to the round's start model are not recorded",
    "local_divergence": "local divergences are not recorded",
    "neighbour_avg_deviation": "the beta algorithm's neighbour averages are not recorded",
    "perturbed_divergence": "the beta algorithm's perturbed points are not recorded",
    "local_drift": "FedAU's local drift is not recorded",
    "one_round_descent": "an expected one-round descent (conditional expectation; "
                         "verify.checks.weight_error_descent judges it from fixed states)",
    "round_weight_error": "needs the clients' participation probabilities",
    "avg_weight_error": "needs the clients' participation probabilities",
    "contraction_factor": "a factor of the bound, not a measured quantity",
    "rounds_to_eps": "an iteration complexity, not a quantity of one run",
    "rho": "the skew at every iterate is recorded only with record='step'",
    "inv_pi": "FedSoftMax's scores x_i are not recorded (verify.checks.skew_softmax rebuilds "
              "them round by round)",
    "reweighted_divergence_sq": "a supremum over x of gradient differences, not a run quantity "
                                "(verify.checks.weight_error_reweighted computes it exactly)",
    "f_combination": "a property of a client objective at chosen points "
                     "(verify.checks.drift_properties)",
    "tangent_value": "a property of a client objective at chosen points "
                     "(verify.checks.drift_properties)",
    "f_at_y": "a property of a client objective at chosen points "
              "(verify.checks.drift_properties)",
    "inner_product": "a property of vectors (verify.checks.drift_properties)",
}
for _name in ("speed_constant", "error_constant", "e_opt", "cutoff", "lemma_kappa",
              "interval_mean", "interval_var", "interval_factorial_moment",
              "interval_second_moment", "interval_bias_sq"):
    NOT_MEASURABLE[_name] = "a constant or an exact identity of the theory, not a run quantity"


def _bound(bound):
    """The bound judged: by id, or the object itself (its own expression; a Bound that
    carries another bound's id is refused, :func:`boundlab.registry.resolve`)."""
    return boundlab.registry.resolve(bound)


#: a left-hand side that names another quantity in a paper's notation, by the algorithm of the
#: bound's metadata (:func:`boundlab.registry.meta`): BC's (seed 003: FedProx, beta) non-convex
#: theorems bound E||grad f(w_hat_T)||^2 with w_hat_T drawn uniformly from the virtual averages
#: wbar_{t,k}, t < T, k < E, where FedAU's (seed 002) average the server models x_t
PAPER_LHS = {("avg_grad_norm2", algo): "avg_grad_norm2_virtual"
             for algo in ("fedprox", "fedprox-bc", "beta")}


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
    return PAPER_LHS.get((lhs, algo), lhs)


def _quantity(bound) -> Quantity:
    if bound.lhs in LHS:
        return LHS[measured_name(bound.lhs, bound.id)]
    why = NOT_MEASURABLE.get(bound.lhs, "not a quantity this module knows")
    raise UnknownNameError(f"measurable left-hand side ({bound.id}: {bound.lhs!r} is not: "
                           f"{why})", bound.lhs, sorted(LHS))
