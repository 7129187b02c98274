"""verify.tightness — how loose each published bound is against the exact worst case (PEP).

A published bound ``B`` covers every problem satisfying the paper's assumptions; a toy run
shows one. Performance estimation (Drori & Teboulle 2014; Taylor, Hendrickx, Glineur 2017)
computes the exact worst case of a method over a function class as a small SDP; PEPit
(Goujaud et al.) builds it from code that reads like the algorithm. This package reports every
catalogue upper bound it can match as a bracket

    measured_toy  <=  LB  <=  W  <=  UB  <=  B        bracket [LB/B, UB/B] (<= 1: holds)

with ``UB`` the PEP's dual value and ``LB`` its primal value (a worst-case instance). Related
work: PESTO (Taylor, Hendrickx, Glineur, CDC 2017); Colla & Hendrickx, automatic PEP for
decentralized optimization (IEEE TAC 2023); Glasgow, Yuan, Ma, sharp bounds for FedAvg
(AISTATS 2022).

Public API
----------
* worst-case models: :func:`wc_gradient_descent`, :func:`wc_fedavg_round`,
  :func:`wc_fedprox_round`, :func:`wc_beta_round` (distance metric);
  :func:`wc_fedavg_avg_gap`, :func:`wc_fedavg_plateau` (DKR's averaged gap, convex clients);
  :func:`wc_fedprox_gap`, :func:`wc_beta_gap` (BC Theorems 1/3), :func:`wc_skew_step`
  (BM Theorem 3) -- each returns a :class:`PEPRecord`;
* :func:`fixed_point_floor` -- the asymptotic floor of a one-round map;
* :func:`bracket` -- a catalogue bound against its worst case (what ``boundlab tightness``
  prints); :data:`SUPPORTED` lists the ids; :func:`bracket_grid`, :func:`plot_brackets`;
* :func:`fedavg_round_gram_sdp` -- an independent hand-written Gram SDP (cross-check);
* :class:`PEPCache` -- the JSON disk cache (``$BOUNDLAB_CACHE/pep`` or
  ``~/.cache/boundlab/pep``).

PEPit and the solvers are imported when a model is solved, not on import.

Example
-------
>>> from verify.tightness import wc_fedavg_round
>>> r = wc_fedavg_round(L=1.0, mu=0.1, eta=0.1, tau=2, zeta=0.0, cache=False)
>>> abs(r.value - r.theoretical) < 1e-7
True
"""

from ._solve import TOL, PEPRecord
from .brackets import NOT_MATCHED, SUPPORTED, bracket
from .cache import PEPCache, default_cache_dir
from .floors import fixed_point_floor
from .gram_sdp import fedavg_round_gram_sdp
from .pep_convex import quadratic_instance_gap, wc_fedavg_avg_gap, wc_fedavg_plateau
from .pep_gap import wc_beta_gap, wc_fedprox_gap, wc_skew_step
from .pep_models import wc_beta_round, wc_fedavg_round, wc_fedprox_round, wc_gradient_descent
from .plots import bracket_grid, plot_brackets

__all__ = [
    "NOT_MATCHED",
    "SUPPORTED",
    "TOL",
    "PEPCache",
    "PEPRecord",
    "bracket",
    "bracket_grid",
    "default_cache_dir",
    "fedavg_round_gram_sdp",
    "fixed_point_floor",
    "plot_brackets",
    "quadratic_instance_gap",
    "wc_beta_gap",
    "wc_beta_round",
    "wc_fedavg_avg_gap",
    "wc_fedavg_plateau",
    "wc_fedavg_round",
    "wc_fedprox_gap",
    "wc_fedprox_round",
    "wc_gradient_descent",
    "wc_skew_step",
]
