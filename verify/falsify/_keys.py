"""The run quantities a search reads, by name (no toys import: the CLI's light paths load this).

The state arrays (one value per round boundary, ``toys.Trace.state``) and the round arrays (one
value per round, ``toys.Trace.per_round``) that :func:`verify.falsify.population.quantities`
returns.

>>> STATE_KEYS[0], ROUND_KEYS[0]
('gap', 'shadow_gap')
"""

STATE_KEYS = ("gap", "dist2", "grad_norm2", "loss")
#: the left-hand sides judged as exact expectations over FedAU's participation paths
#: (:mod:`verify.falsify.weight_error_search`), never by a planned run
WEIGHT_ERROR_LHS = ("avg_weight_error", "round_weight_error")
ROUND_KEYS = ("shadow_gap", "g2_max", "drift_max", "drift_sum", "disc_max", "lr")
#: the run arrays FedAU's path search gives besides those (:mod:`verify.falsify.fedau_lhs`):
#: ||grad h(x_t)||^2 of Theorem B.4.1's h and the per-state arrays of Lemmas B.5.1 / B.3.2
FEDAU_PATH_KEYS = ("grad_norm2_h", "descent_t", "descent_grad_norm2", "descent_q_t",
                   "descent_werr_t", "local_drift_t", "local_drift_grad_norm2")
