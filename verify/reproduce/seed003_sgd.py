"""Seed 003's items with minibatch local steps, as in the paper (Buttaci & Calafiore: "E = 10
local epochs" of minibatch SGD, batch 256): ``003:table1-sgd``, ``003:fig3-sgd`` and
``003:fig12-sgd`` run :func:`~verify.reproduce.seed003.table1_at`,
:func:`~verify.reproduce.seed003_sweeps.fig3_at` and ``fig12_at`` with E epochs of minibatches
of :data:`~verify.reproduce.seed003.SGD_BATCH` (:func:`~verify.reproduce.seed003.sgd_steps`
steps a round) instead of E full-batch steps: the step noise that BC credit for the gains of a
small β (Table 1, Fig. 3) and that a large γ needs to spike (Fig. 12). Everything else (data,
models, seeds, γ, targets, horizon, claims) is the full-batch item's.
"""

from __future__ import annotations

from .registry import Result, register
from .seed003 import SGD_BATCH, STAND_IN, table1_at
from .seed003_sweeps import fig3_at, fig12_at

_SGD = f"; local steps: E epochs of minibatch SGD, batch {SGD_BATCH}"


@register("003:table1-sgd", "BC Table 1 / Fig. 2, minibatch local steps", "beta sweep: FedAvg "
          "vs beta in {0.9, 0.7, 0.5}, convex and MLP, balanced and imbalanced, minibatch SGD",
          STAND_IN + _SGD, "FEMNIST rounds to 75 % (accuracy %): convex imbalanced FedAvg 80 "
          "(80.20), β=.9 79, β=.7 67, β=.5 50 (81.24); MLP imbalanced 94, 87, 80, 80; balanced "
          "convex 28, 27, 24, 23; balanced MLP 44, 43, 41, 39")
def table1_sgd(cfg) -> Result:
    return table1_at(cfg, SGD_BATCH)


@register("003:fig3-sgd", "BC Fig. 3 (App. C.7), minibatch local steps", "local epochs E in "
          "{1, 5, 10, 20}, imbalanced, convex, minibatch SGD", STAND_IN + _SGD,
          "'ours is consistently better than FedAvg' for every E with β in {0.5, 0.7} (curves "
          "only)")
def fig3_sgd(cfg) -> Result:
    return fig3_at(cfg, SGD_BATCH)


@register("003:fig12-sgd", "BC Fig. 12 (App. C.7), minibatch local steps", "step size gamma "
          "in {1e-3, 1e-2, 1e-1}, imbalanced, convex, minibatch SGD", STAND_IN + _SGD,
          "large gamma combined with small β gives spikes (curves only)")
def fig12_sgd(cfg) -> Result:
    return fig12_at(cfg, SGD_BATCH)
