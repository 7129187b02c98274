"""FedAU's participation probabilities (spec seeds-002-003 §5.1.4): :func:`fedau_probs`."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from boundlab.errors import DomainError, MissingParameterError

from ..validation import check_float, check_int

__all__ = ["FedAUProbs", "fedau_probs"]


class FedAUProbs(NamedTuple):
    """Result of :func:`fedau_probs`: ``probs`` (N,), the class mixes ``kappa`` (N, C), the
    shared multipliers ``q`` (C,), and ``n_clipped`` (how many p_n were clipped to 1)."""

    probs: np.ndarray
    kappa: np.ndarray
    q: np.ndarray
    n_clipped: int


def fedau_probs(rng: np.random.Generator, n_clients: int | None = None, n_classes: int = 10,
                class_hist=None, alpha_d: float = 0.1, alpha_p: float = 0.1, mean: float = 0.1,
                p_min: float = 0.02) -> FedAUProbs:
    """FedAU's participation probabilities (spec seeds-002-003 §5.1.4).

    kappa_n ~ Dir(alpha_d 1_C) per client (or the given normalised label histograms
    ``class_hist`` (N, C), e.g. :func:`toys.problems.partitions.class_histograms` of a Dirichlet
    split),
    one shared q ~ Dir(alpha_p 1_C), and p_n = max(p_min, C * mean * <kappa_n, q>), clipped to 1
    (``n_clipped`` reports how many were; neither the paper nor its code clips).

    >>> import numpy as np
    >>> out = fedau_probs(np.random.default_rng(0), n_clients=250)
    >>> out.probs.shape, bool(out.probs.min() >= 0.02), bool(out.probs.max() <= 1.0)
    ((250,), True, True)
    """
    a_d = check_float("alpha_d", alpha_d, lo=0.0, lo_open=True)
    a_p = check_float("alpha_p", alpha_p, lo=0.0, lo_open=True)
    mu = check_float("mean", mean, lo=0.0, hi=1.0, lo_open=True)
    pm = check_float("p_min", p_min, lo=0.0, hi=1.0)
    if class_hist is None:
        if n_clients is None:
            raise MissingParameterError("fedau_probs", ["n_clients"])
        C = check_int("n_classes", n_classes, lo=1)
        kappa = rng.dirichlet(np.full(C, a_d), size=check_int("n_clients", n_clients, lo=1))
    else:
        kappa = np.asarray(class_hist, dtype=float)
        if kappa.ndim != 2 or np.any(kappa < 0) or not np.allclose(kappa.sum(axis=1), 1.0):
            raise DomainError("class_hist", class_hist, "(N, C) rows of class proportions")
        C = kappa.shape[1]
    q = rng.dirichlet(np.full(C, a_p))
    raw = np.maximum(pm, C * mu * (kappa @ q))
    return FedAUProbs(np.minimum(raw, 1.0), kappa, q, int(np.sum(raw > 1.0)))

