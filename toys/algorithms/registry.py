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
poc                         LocalSteps       PowerOfChoice               WeightedStep
fedavg-hetero               HeteroSteps      FedAvgWeights               WeightedStep
scaffold                    ScaffoldSteps    FedAvgWeights               WeightedStep
fednova                     HeteroSteps      FedAvgWeights               FedNovaStep
fedadagrad, fedadam,        LocalSteps       FedAvgWeights               AdaptiveStep(kind)
fedyogi
==========================  ===============  ==========================  ==================

The last seven (:data:`COMPARISONS`) are the baselines researchers run beside the papers:
Power-of-Choice (:mod:`~toys.algorithms.selection`), per-client local work and stragglers
(:mod:`~toys.algorithms.local_work`; ``client_steps``, ``min_steps``, ``straggler_prob`` also
for scaffold and fednova), SCAFFOLD (:mod:`~toys.algorithms.scaffold`), FedNova
(:mod:`~toys.algorithms.fednova`) and the adaptive server optimisers
(:mod:`~toys.algorithms.adaptive`). 25 names in all.

Example
-------
>>> get("fedsoftmax").weights.name
'fedsoftmax'
>>> sorted(ALGORITHMS)[:3]
['anneal', 'average-all', 'average-participating']
"""

from __future__ import annotations

from boundlab.errors import DomainError, UnknownNameError

from .adaptive import AdaptiveStep
from .base import Algorithm
from .client import BetaPerturbed, LocalSteps
from .fedau import FedAUWeights, FixedOmega
from .fednova import FedNovaStep
from .local_work import HeteroSteps
from .scaffold import ScaffoldSteps
from .selection import PowerOfChoice
from .server import FedVarpStep, MIFAStep, WeightedStep
from .weights import Anneal, FedAvgWeights, Hybrid, LossWeighted, MaskedP, ScaledParticipating

__all__ = ["ALGORITHMS", "COMPARISONS", "get", "names", "register", "unregister"]

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
    "poc": ("Power-of-Choice (Cho et al. 2020): d candidates drawn ∝ p, weight 1/m on the m "
            "of largest loss (k = m, candidates = d)"),
    "fedavg-hetero": ("FedAvg with per-client local work: client_steps tau_i, min_steps "
                      "draws, stragglers (straggler_prob)"),
    "scaffold": ("SCAFFOLD (Karimireddy et al. 2020): control variates c, c_i (option II), "
                 "server_lr = eta_g"),
    "fednova": ("FedNova (Wang et al. 2020): normalized averaging by each client's local "
                "work, tau_eff = sum_i w_i tau_i"),
    "fedadagrad": "FedAdagrad (Reddi et al. 2021): Adagrad server step on -avg Delta",
    "fedadam": "FedAdam (Reddi et al. 2021): Adam server step on -avg Delta (beta1, beta2, eps)",
    "fedyogi": "FedYogi (Reddi et al. 2021): Yogi server step on -avg Delta (beta1, beta2, eps)",
}

COMPARISONS = ("poc", "fedavg-hetero", "scaffold", "fednova", "fedadagrad", "fedadam",
               "fedyogi")
"""The comparison algorithms (not from the seed papers; each tested against its own
per-client reference in tests/toys/algorithms)."""

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
        "poc": (plain, PowerOfChoice(), step),
        "fedavg-hetero": (HeteroSteps(), FedAvgWeights(), step),
        "scaffold": (ScaffoldSteps(), FedAvgWeights(), step),
        "fednova": (HeteroSteps(), FedAvgWeights(), FedNovaStep()),
        "fedadagrad": (plain, FedAvgWeights(), AdaptiveStep("adagrad")),
        "fedadam": (plain, FedAvgWeights(), AdaptiveStep("adam")),
        "fedyogi": (plain, FedAvgWeights(), AdaptiveStep("yogi")),
    }
    return table[name]


_USER: dict = {}
"""name -> a user's composed :class:`~toys.algorithms.Algorithm` (:func:`register`)."""


def register(algorithm: Algorithm) -> Algorithm:
    """File a composed algorithm under its ``name`` so that everything that takes an
    algorithm name (``toys.run``, ``toys.run_many``, a bound registered with
    ``boundlab.register(b, algorithm=name)`` and searched by ``verify.falsify``) runs it. A
    built-in name, or a name filed for another algorithm, is refused.

    >>> import dataclasses
    >>> mine = register(dataclasses.replace(get("fedavg"), name="mine-fedavg"))
    >>> get("mine-fedavg") is mine, "mine-fedavg" in names()
    (True, True)
    >>> unregister("mine-fedavg")
    """
    from .base import bind_check

    if not isinstance(algorithm, Algorithm):
        raise DomainError("algorithm", algorithm, "a toys.Algorithm (name, client, weights, "
                                                  "server)")
    name = algorithm.name
    if not isinstance(name, str) or not name or name in ALGORITHMS:
        raise DomainError("algorithm.name", name, "a new name (not a built-in algorithm's)")
    if _USER.get(name, algorithm) is not algorithm:
        raise DomainError("algorithm.name", name, "a name not filed for another algorithm "
                                                  "(unregister it first)")
    bind_check(algorithm)
    _USER[name] = algorithm
    return algorithm


def unregister(name: str) -> None:
    """Remove a user's algorithm filed by :func:`register` (built-ins stay)."""
    if name not in _USER:
        raise UnknownNameError("registered algorithm", name, sorted(_USER))
    del _USER[name]


def get(name: str) -> Algorithm:
    """The built-in algorithm ``name`` as an :class:`~toys.algorithms.Algorithm` (unbound
    pieces: the hyper-parameters come with ``toys.run``).

    >>> get("fedvarp").server
    FedVarpStep(server_lr=1.0)
    >>> get("fedsgd")
    Traceback (most recent call last):
    ...
    boundlab.errors.UnknownNameError: unknown algorithm 'fedsgd'; valid: anneal, average-all, \
average-participating, beta, fedadagrad, fedadam, fedau, fedau-known, fedavg, fedavg-hetero, \
fedbetter, fedbetter-k, fedmax, fedmax-k, fednova, fedprox, fedprox-bc, fedsoftbetter, \
fedsoftmax, fedvarp, fedyogi, hybrid, mifa, poc, scaffold
    """
    if isinstance(name, str) and name in _USER:
        return _USER[name]
    if not isinstance(name, str) or name not in ALGORITHMS:
        raise UnknownNameError("algorithm", name, sorted(ALGORITHMS) + sorted(_USER))
    client, weights, server = _pieces(name)
    return Algorithm(name, client, weights, server, ALGORITHMS[name])


def names() -> list[str]:
    """The built-in algorithm names, sorted.

    >>> names()[:2]
    ['anneal', 'average-all']
    """
    return sorted(ALGORITHMS) + sorted(_USER)
