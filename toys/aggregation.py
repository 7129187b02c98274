"""Loss-weighted aggregation rules of seeds 000/001 (Ben Mansour et al., "BM"), as pure functions.

Every rule maps the clients' excess losses ``x_i = F_i(w_r) - F_i*`` (spec §5.0), the client
weights ``p`` and the participation mask of the round to aggregation weights ``alpha`` on the
simplex of the participating clients (zero elsewhere; spec §5.1: renormalised over I_r):

==================  =============================================================  ===========
name (aliases)      alpha                                                          spec
==================  =============================================================  ===========
fedavg              p (generalised FedAvg)                                         §5.3
fedmax (fedworse)   1/|J| on J = argmax_i x_i (ties split equally, A(21))           §5.3
fedmax-k            1/k on the k largest x_i (stable order: ties keep lower index)  §5.3
fedsoftmax          softmax(log p_i + x_i / temperature)  (or x_i * inv_temperature) §5.3, BM-25
fedbetter           1/|J| on J = argmin_i x_i                                        §5.3
fedbetter-k         1/k on the k smallest x_i                                        §5.3
fedsoftbetter       softmax(log p_i - x_i / temperature)                            §5.3
==================  =============================================================  ===========

plus the two hybrid families of BM-B §3.2 (spec §5.4): :func:`hybrid` (rule j for rounds in
``[switch_j-1, switch_j)``) and :func:`anneal` (temperature schedule or convex mixing with p).
The weights of round r are chosen at the round start from F_i(w_r) and kept for the whole round
(corrected virtual sequence, BM-12). :func:`rho` is the weighting skew rho(t, w) of spec §3.1.

Example
-------
>>> import numpy as np
>>> from toys._xp import NUMPY as ops
>>> x = np.array([0.5, 2.0, 1.0]); p = np.full(3, 1 / 3); m = np.ones(3, bool)
>>> fedmax(ops, x, p, m).tolist(), fedbetter(ops, x, p, m).tolist()
([0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "ALIASES",
    "RULES",
    "anneal",
    "fedavg",
    "fedbetter",
    "fedbetter_k",
    "fedmax",
    "fedmax_k",
    "fedsoftbetter",
    "fedsoftmax",
    "hybrid",
    "make_rule",
    "resolve_k",
    "rho",
]

_NEG_INF = -math.inf


def _normalise(ops, a):
    s = ops.sum(a)
    return ops.where(s > 0, a / ops.where(s > 0, s, 1.0), 0.0 * a)


def fedavg(ops, x, p, mask, **_):
    """alpha = p renormalised over the participants (BM-B "FedAvg-generalized").

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> fedavg(ops, None, np.array([0.5, 0.25, 0.25]), np.array([True, False, True])).tolist()
    [0.6666666666666666, 0.0, 0.3333333333333333]
    """
    return _normalise(ops, ops.where(mask, p, 0.0))


def _argmax_split(ops, s, mask):
    s = ops.where(mask, s, _NEG_INF)
    J = (s == ops.amax(s)) & mask
    return _normalise(ops, ops.as_float(J))


def fedmax(ops, x, p, mask, **_):
    """FedMax = FedWorse: weight 1/|J| on the clients of largest excess loss (BM-A (21),(22)).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> fedmax(ops, np.array([1.0, 3.0, 3.0]), np.full(3, 1 / 3), np.ones(3, bool)).tolist()
    [0.0, 0.5, 0.5]
    """
    if not ops.any(mask):
        return ops.zeros_like(p)
    return _argmax_split(ops, x, mask)


def fedbetter(ops, x, p, mask, **_):
    """FedBetter: weight 1/|J| on the clients of smallest excess loss (BM-B §3.1).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> fedbetter(ops, np.array([1.0, 3.0, 0.0]), np.full(3, 1 / 3), np.ones(3, bool)).tolist()
    [0.0, 0.0, 1.0]
    """
    if not ops.any(mask):
        return ops.zeros_like(p)
    return _argmax_split(ops, -x, mask)


def _top_k(ops, s, mask, k):
    k_eff = min(int(k), ops.count(mask))
    out = ops.zeros_like(s)
    if k_eff == 0:
        return out
    order = ops.argsort_desc(ops.where(mask, s, _NEG_INF))
    out[order[:k_eff]] = 1.0 / k_eff
    return out


def fedmax_k(ops, x, p, mask, k=1, **_):
    """FedMax(k) = FedWorse(k): 1/k on the k largest excess losses among the participants
    (k is clipped to the number of participants; ties keep the lower client index).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> fedmax_k(ops, np.array([1.0, 3.0, 2.0]), np.full(3, 1 / 3), np.ones(3, bool), k=2).tolist()
    [0.0, 0.5, 0.5]
    """
    return _top_k(ops, x, mask, k)


def fedbetter_k(ops, x, p, mask, k=1, **_):
    """FedBetter(k): 1/k on the k smallest excess losses among the participants.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> x, p = np.array([1.0, 3.0, 2.0]), np.full(3, 1 / 3)
    >>> fedbetter_k(ops, x, p, np.ones(3, bool), k=2).tolist()
    [0.5, 0.0, 0.5]
    """
    return _top_k(ops, -x, mask, k)


def _soft(ops, x, p, mask, sign, inv_t):
    z = ops.log(ops.where(mask, p, 1.0)) + (sign * inv_t) * x
    z = ops.where(mask, z, _NEG_INF)
    if not ops.any(mask):
        return ops.zeros_like(p)
    e = ops.where(mask, ops.exp(z - ops.amax(z)), 0.0)
    return e / ops.sum(e)


def fedsoftmax(ops, x, p, mask, inv_temperature=1.0, **_):
    """FedSoftMax = FedSoftWorse: alpha ∝ p_i exp(x_i * inv_temperature) over the participants
    (max-subtracted softmax; inv_temperature = 1/temperature, BM-25).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> a = fedsoftmax(ops, np.array([0.0, np.log(3.0)]), np.full(2, 0.5), np.ones(2, bool))
    >>> np.round(a, 12).tolist()
    [0.25, 0.75]
    """
    return _soft(ops, x, p, mask, 1.0, inv_temperature)


def fedsoftbetter(ops, x, p, mask, inv_temperature=1.0, **_):
    """FedSoftBetter: alpha ∝ p_i exp(-x_i * inv_temperature) over the participants.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> a = fedsoftbetter(ops, np.array([0.0, np.log(3.0)]), np.full(2, 0.5), np.ones(2, bool))
    >>> np.round(a, 12).tolist()
    [0.75, 0.25]
    """
    return _soft(ops, x, p, mask, -1.0, inv_temperature)


RULES = {
    "fedavg": fedavg, "fedmax": fedmax, "fedmax-k": fedmax_k, "fedsoftmax": fedsoftmax,
    "fedbetter": fedbetter, "fedbetter-k": fedbetter_k, "fedsoftbetter": fedsoftbetter,
}
ALIASES = {"fedworse": "fedmax", "fedworse-k": "fedmax-k", "fedsoftworse": "fedsoftmax",
           "fedavg-generalized": "fedavg"}
SOFT_RULES = ("fedsoftmax", "fedsoftbetter")


def resolve_k(k, n_clients: int) -> int:
    """The number of kept clients: an integer k, or a fraction in (0, 1) read as
    max(1, int(k * N)) (BM-B's 10 %, 20 %; [repo] logic).

    >>> resolve_k(0.1, 50), resolve_k(3, 50)
    (5, 3)
    """
    if float(k) == int(k):
        return int(k)
    return max(1, int(float(k) * n_clients))


def make_rule(name: str, inv_temperature: float = 1.0, k: int = 1):
    """Bind a rule's parameters: ``rule(ops, x, p, mask, r) -> alpha``.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> rule = make_rule("fedworse")
    >>> rule(ops, np.array([1.0, 2.0]), np.full(2, 0.5), np.ones(2, bool), 0).tolist()
    [0.0, 1.0]
    """
    fn = RULES[ALIASES.get(name, name)]

    def rule(ops, x, p, mask, r):
        return fn(ops, x, p, mask, inv_temperature=inv_temperature, k=k)

    rule.needs_scores = ALIASES.get(name, name) != "fedavg"
    return rule


def hybrid(rules, switch_rounds):
    """Discrete switch (BM-B §3.2): ``rules[j]`` for rounds r in [switch_{j-1}, switch_j).

    ``rules`` are bound rules (:func:`make_rule`), ``switch_rounds`` increasing round indices
    (one fewer than rules). FedSoftBetterAvg = hybrid([softbetter, avg], [20]).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> h = hybrid([make_rule("fedmax"), make_rule("fedavg")], [2])
    >>> x, p, m = np.array([1.0, 2.0]), np.array([0.5, 0.5]), np.ones(2, bool)
    >>> h(ops, x, p, m, 1).tolist(), h(ops, x, p, m, 2).tolist()
    ([0.0, 1.0], [0.5, 0.5])
    """
    bounds = list(switch_rounds)

    def rule(ops, x, p, mask, r):
        j = int(np.searchsorted(bounds, r, side="right"))
        return rules[j](ops, x, p, mask, r)

    rule.needs_scores = any(getattr(f, "needs_scores", True) for f in rules)
    return rule


def anneal(name: str, schedule: str, inv_temperature: float = 1.0, k: int = 1,
           decay: float = 0.9, mix_rounds: int = 10):
    """"Simulated annealing" (BM-B §3.2; no formula in the paper — both readings are
    assumptions, spec §5.4):

    * ``schedule="temperature"``: a soft rule with inv_temperature_r = inv_temperature * decay^r
      (temperature T_r = T_0 / decay^r -> inf, so the rule tends to FedAvg);
    * ``schedule="mix"``: alpha_r = (1 - lam_r) alpha_rule + lam_r alpha_fedavg with
      lam_r = min(1, r / mix_rounds).

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> a = anneal("fedmax", "mix", mix_rounds=2)
    >>> a(ops, np.array([1.0, 2.0]), np.array([0.5, 0.5]), np.ones(2, bool), 1).tolist()
    [0.25, 0.75]
    """
    base = RULES[ALIASES.get(name, name)]
    if schedule == "temperature":
        def rule(ops, x, p, mask, r):
            return base(ops, x, p, mask, inv_temperature=inv_temperature * decay ** r, k=k)
    else:
        def rule(ops, x, p, mask, r):
            lam = min(1.0, r / mix_rounds)
            a = base(ops, x, p, mask, inv_temperature=inv_temperature, k=k)
            return (1.0 - lam) * a + lam * fedavg(ops, x, p, mask)
    rule.needs_scores = True
    return rule


def rho(ops, alpha, excess, p, scale=1.0):
    """Weighting skew rho(t, w) = sum_i alpha_i x_i / sum_i p_i x_i with x_i = F_i(w) - F_i*
    (BM-A (8) / BM-B (6)); NaN where the denominator is <= 1e-12 * scale (undefined: only
    possible when Gamma = 0 and w = w*; the engine passes scale = max(1, |F(w)|)). Returns a
    backend 0-d array.

    >>> import numpy as np
    >>> from toys._xp import NUMPY as ops
    >>> float(rho(ops, np.array([1.0, 0.0]), np.array([2.0, 1.0]), np.array([0.5, 0.5])))
    1.3333333333333333
    """
    num = ops.sum(alpha * excess)
    den = ops.sum(p * excess)
    ok = den > 1e-12 * scale
    return ops.where(ok, num / ops.where(ok, den, 1.0), math.nan)
