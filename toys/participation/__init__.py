"""Client participation processes, optax style: small objects with pure ``init`` / ``step``.

``state = process.init(rng)``; ``state, mask = process.step(state, rng)`` gives the boolean
participation vector (N,) of one round. All randomness comes from the explicit
``numpy.random.Generator``; the same generator state gives the same masks. Every process exposes
``probs``, its stationary (long-run) participation probability per client.

Processes (spec seeds-002-003 §5.1.4, generators of FedAU's code):

* :class:`Full` -- every client, every round;
* :class:`Uniform` -- m of N clients without replacement;
* :class:`Bernoulli` -- client n independently with probability p_n (FedAU's A4);
* :class:`Markov` -- a two-state chain per client: P(0->1) = a, P(1->0) = b = a (1/p_n - 1)
  (if b > 1: a <- a/b, b <- 1), stationary probability p_n; initial state ~ Bernoulli(p_n);
  each round the state transitions, then is reported;
* :class:`Cyclic` -- active for round(cycle p_n) rounds, inactive for the rest of the cycle,
  with a random offset in the first inactive phase;
* :class:`Anchored` -- a fixed set of clients every round plus m uniformly drawn from the
  others (DKR's toy protocol: the outlier plus one regular client).

:func:`fedau_probs` draws the p_n of FedAU's experiments (two Dirichlet draws, a floor p_min).

Modules: :mod:`.processes` (the processes, :func:`make`, :func:`sample`), :mod:`.fedau`
(:func:`fedau_probs`), :mod:`.spec` (what :func:`toys.run` accepts: :func:`parse`,
:func:`resolve`, :func:`describe`, :class:`Fixed`).

Example
-------
>>> import numpy as np
>>> from toys import participation
>>> proc = participation.make("bernoulli", 4, p=[0.1, 0.5, 0.9, 1.0])
>>> masks = participation.sample(proc, 2000, np.random.default_rng(0))
>>> masks.shape, bool(abs(masks[:, 1].mean() - 0.5) < 0.05), bool(masks[:, 3].all())
((2000, 4), True, True)
"""

from .fedau import FedAUProbs, fedau_probs
from .processes import Anchored, Bernoulli, Cyclic, Full, Markov, Uniform, make, names, sample
from .spec import Fixed, describe, parse, resolve

__all__ = [
    "describe",
    "parse",
    "resolve",
    "Anchored",
    "Bernoulli",
    "Cyclic",
    "FedAUProbs",
    "Fixed",
    "Full",
    "Markov",
    "Uniform",
    "fedau_probs",
    "make",
    "names",
    "sample",
]
