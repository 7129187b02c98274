"""The built-in algorithms: each name is a composition of pieces (no branch of the round loop).

==========================  ===============  ==========================  ==================
name                        client           weights                     server
==========================  ===============  ==========================  ==================
fedavg                      LocalSteps       FedAvgWeights               WeightedStep
fedprox, fedprox-bc         LocalSteps(prox  FedAvgWeights               WeightedStep
                            required)
fedmax, fedmax-k,           LocalSteps       LossWeighted(rule)          WeightedStep
fedsoftmax, fedbetter,
fedbetter-k, fedsoftbetter
hybrid                      LocalSteps       Hybrid                      WeightedStep
anneal                      LocalSteps       Anneal                      WeightedStep
fedau                       LocalSteps       FedAUWeights                WeightedStep
fedau-known                 LocalSteps       FixedOmega("known")         WeightedStep
average-participating       LocalSteps       FedAvgWeights               WeightedStep
average-all                 LocalSteps       FixedOmega(None)            WeightedStep
mifa                        LocalSteps       MaskedP                     MIFAStep
fedvarp                     LocalSteps       ScaledParticipating         FedVarpStep
beta                        BetaPerturbed    FedAvgWeights(graph=True)   WeightedStep
==========================  ===============  ==========================  ==================

Example
-------
>>> get("fedsoftmax").weights.name
'fedsoftmax'
>>> sorted(ALGORITHMS)[:3]
['anneal', 'average-all', 'average-participating']
"""

from __future__ import annotations

from boundlab.errors import UnknownNameError

from .base import Algorithm
from .client import BetaPerturbed, LocalSteps
from .fedau import FedAUWeights, FixedOmega
from .server import FedVarpStep, MIFAStep, WeightedStep
from .weights import Anneal, FedAvgWeights, Hybrid, LossWeighted, MaskedP, ScaledParticipating

__all__ = ["ALGORITHMS", "get", "names"]

_BM = "(BM)"
_DESCRIPTIONS = {
    "fedavg": ("FedAvg: tau local (S)GD steps, weights p renormalised over participants "
               "(DKR Alg. 1 with shadow sequence; BM generalised FedAvg)"),
    "fedprox": ("FedProx: local steps on F_i(x) + prox/2 ||x - x_t||^2 (DKR eq. (4)), "
                "weights p"),
    "fedmax": f"FedMax = FedWorse: all weight on the client(s) of largest excess loss {_BM}",
    "fedmax-k": f"FedMax(k) = FedWorse(k): weight 1/k on the k largest excess losses {_BM}",
    "fedsoftmax": ("FedSoftMax = FedSoftWorse: alpha ∝ p exp(excess loss / temperature) "
                   f"{_BM}"),
    "fedbetter": "FedBetter: all weight on the client(s) of smallest excess loss (BM-B)",
    "fedbetter-k": "FedBetter(k): weight 1/k on the k smallest excess losses (BM-B)",
    "fedsoftbetter": "FedSoftBetter: alpha ∝ p exp(-excess loss / temperature) (BM-B)",
    "hybrid": "BM-B hybrid: switch between rules at fixed rounds (e.g. FedSoftBetterAvg)",
    "anneal": "BM-B 'simulated annealing': temperature schedule or mixing towards FedAvg",
    "fedau": "FedAU (seed 002 Alg. 1 + 2): omega = online cutoff-interval estimate of 1/p_n",
    "fedau-known": ("seed 002 baseline: omega = 1/p_n with the true participation "
                    "probabilities"),
    "average-participating": "seed 002 baseline: average of the participants' updates",
    "average-all": "seed 002 baseline: omega = 1 (sum of updates / N)",
    "fedvarp": "FedVarp: SAGA-style server memory of every client's latest update (seed 002)",
    "mifa": "MIFA: average of every client's latest update, stale ones reused (seed 002)",
    "beta": ("seed 003 beta-perturbed local SGD: gradient at beta w + (1-beta) u_i, "
             "graph weights from data principal components"),
    "fedprox-bc": "seed 003 FedProx baseline (same update as fedprox: prox = alpha; alias)",
}

ALGORITHMS = dict(_DESCRIPTIONS)
"""name -> one-line description of every built-in algorithm."""


def _pieces(name: str):
    plain, step = LocalSteps(), WeightedStep()
    loss_rules = ("fedmax", "fedmax-k", "fedsoftmax", "fedbetter", "fedbetter-k",
                  "fedsoftbetter")
    if name in loss_rules:
        return plain, LossWeighted(name), step
    table = {
        "fedavg": (plain, FedAvgWeights(), step),
        "fedprox": (LocalSteps(prox=None), FedAvgWeights(), step),
        "fedprox-bc": (LocalSteps(prox=None), FedAvgWeights(), step),
        "hybrid": (plain, Hybrid(), step),
        "anneal": (plain, Anneal(), step),
        "fedau": (plain, FedAUWeights(), step),
        "fedau-known": (plain, FixedOmega("known"), step),
        "average-participating": (plain, FedAvgWeights(), step),
        "average-all": (plain, FixedOmega(None), step),
        "mifa": (plain, MaskedP(), MIFAStep()),
        "fedvarp": (plain, ScaledParticipating(), FedVarpStep()),
        "beta": (BetaPerturbed(), FedAvgWeights(graph=True), step),
    }
    return table[name]


def get(name: str) -> Algorithm:
    """The built-in algorithm ``name`` as an :class:`~toys.algorithms.Algorithm` (unbound
    pieces: the hyper-parameters come with ``toys.run``).

    >>> get("fedvarp").server
    FedVarpStep(server_lr=1.0)
    >>> get("fedsgd")
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown algorithm 'fedsgd'; valid: anneal, average-all, \
average-participating, beta, fedau, fedau-known, fedavg, fedbetter, fedbetter-k, fedmax, \
fedmax-k, fedprox, fedprox-bc, fedsoftbetter, fedsoftmax, fedvarp, hybrid, mifa
    """
    if not isinstance(name, str) or name not in ALGORITHMS:
        raise UnknownNameError("algorithm", name, sorted(ALGORITHMS))
    client, weights, server = _pieces(name)
    return Algorithm(name, client, weights, server, ALGORITHMS[name])


def names() -> list[str]:
    """The built-in algorithm names, sorted.

    >>> names()[:2]
    ['anneal', 'average-all']
    """
    return sorted(ALGORITHMS)
