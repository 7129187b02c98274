"""FedNova (Wang, Liu, Liang, Joshi, Poor 2020): normalized averaging, as a server step.

Client i runs tau_i local (S)GD steps, so Delta_i = -eta sum_k a_ik g_ik with the vector a_i
of its local solver (vanilla SGD: a_i = (1, ..., 1), ||a_i||_1 = tau_i). FedNova averages the
normalised updates d_i = -Delta_i / (eta ||a_i||_1) and rescales by the effective number of
steps tau_eff = sum_i w_i ||a_i||_1::

    x <- x + server_lr * tau_eff * sum_i w_i Delta_i / ||a_i||_1

with w the round's weights (FedAvg's: p renormalised over the participants). For vanilla SGD
with a constant step size that is x + tau_eff sum_i w_i Delta_i / tau_i, tau_eff = sum_i w_i
tau_i; equal tau_i give FedAvg. FedAvg with unequal tau_i instead optimises a surrogate
objective weighted by w_i tau_i (the paper's objective inconsistency).

:class:`FedNovaStep` recomputes the tau_i(r) of the round from the same
:class:`~toys.algorithms.local_work.LocalWork` as the client update (seeded by the run: the
same values) and ||a_i||_1 from the round's step sizes in step-size units
(:func:`~toys.algorithms.local_work.work_sums`, which also covers FedProx's local solver:
a_ik = prod_{j > k} (1 - eta mu)). It assumes the client update is
:class:`~toys.algorithms.local_work.HeteroSteps` (or LocalSteps) with the same
hyper-parameters, as in the registry's ``fednova``. ``Trace.alpha`` records w; the
coefficient applied to Delta_i is tau_eff w_i / ||a_i||_1. On a population
(:func:`toys.run_many`) tau_i(r) and tau_eff are each instance's own.

Example
-------
>>> import toys
>>> prob = toys.quadratic(n_clients=4, dim=3, seed=0)
>>> kw = dict(rounds=40, seed=0, lr=0.05, client_steps=(1, 2, 4, 8))
>>> nova = toys.run(prob, "fednova", **kw)
>>> avg = toys.run(prob, "fedavg-hetero", **kw)
>>> bool(nova.gap[-1] < avg.gap[-1])   # FedAvg drifts to a surrogate objective's minimiser
True
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from array_api_compat import device

from boundlab.errors import MissingParameterError

from .._array import array_namespace, per_instance, wdot, wsum
from ..local import lr_schedule
from ._hyper import value
from .local_work import WORK_NAMES, LocalWork, bind_work, work_sums

__all__ = ["FedNovaStep"]


@dataclass(frozen=True)
class FedNovaStep:
    """x + server_lr * (weights @ s) * ((weights / s) @ deltas), s_i = ||a_i||_1 of the round
    (in step-size units; ``work``, ``lrs`` and ``prox`` as the client update's)."""

    server_lr: float = 1.0
    work: LocalWork | None = None
    lrs: object = None
    prox: float = 0.0
    hyper_names = ("server_lr", "lr", "local_steps", "prox") + WORK_NAMES
    batched = True

    def bind(self, hyper, setup):
        """server_lr, and the client's lr, local work and prox (to normalise by)."""
        if hyper.get("lr") is None:
            raise MissingParameterError(setup.name, ["lr"],
                                        {"lr": "positive number, array or callable"})
        work = bind_work(hyper, setup)
        return replace(self, server_lr=value(hyper, "server_lr", self.server_lr), work=work,
                       lrs=lr_schedule(hyper["lr"], setup.rounds, work.local_steps),
                       prox=value(hyper, "prox", self.prox))

    def init(self, x, n_clients):
        return ()

    def update(self, state, *, x, deltas, weights, mask, p, round):
        xp = array_namespace(x)
        tau = self.work.local_steps
        steps = self.work.steps(round, deltas.shape[-2])
        s = work_sums(self.lrs[..., round * tau:(round + 1) * tau], steps, self.prox)
        s = xp.asarray(s, dtype=x.dtype, device=device(x))
        tau_eff = wdot(weights, s)
        return x + (self.server_lr * per_instance(tau_eff, x)) * wsum(weights / s, deltas), \
            state
