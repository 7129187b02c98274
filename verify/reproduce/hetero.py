"""Shared pieces of the heterogeneity items (group ``alg``: the algorithms' own papers, not
the project's seeds): SCAFFOLD vs FedAvg (:mod:`.hetero_scaffold`), FedNova vs FedAvg under
heterogeneous local work (:mod:`.hetero_fednova`) and Power-of-Choice vs FedMax(k)
(:mod:`.hetero_poc`).

The runs are quadratics (``toys.quadratic``: every optimum in closed form) run as one
population per arm (:func:`toys.run_many`: the seeds on the engine's batch axis, numpy,
full-batch local steps: deterministic given the problem, so the seed draws the problem and,
for Power-of-Choice, the candidates), and for SCAFFOLD also ``toys.logistic_synthetic``
(its exact optimum by Newton's method) run seed by seed. The claims compare per-seed values in
decades (log10) through :func:`~.stats.decide`, paired by seed (the arms of a seed share its
problem).

Example
-------
>>> import numpy as np
>>> log10([1e-3, 0.0]).tolist()
[-3.0, -300.0]
>>> d = in_decades([-3.0, -3.2, -2.9], [-1.0, -1.1, -0.9], "<", 1.0)
>>> d.outcome, d.unit
('matches', ' dec')
"""

from __future__ import annotations

import numpy as np

from .stats import as_claim, decide

__all__ = ["GROUP", "PAPERS_QUOTED", "claim", "in_decades", "log10", "median_band",
           "quadratics", "run_pop"]

GROUP = "alg"
#: what every section says about its quotation
PAPERS_QUOTED = ("the paper is not in the project's seeds: its claim is quoted from memory of "
                 "the paper (section / theorem numbers as we recall them)")
#: the smallest positive value a log10 shows (a gap that rounds to 0 or below)
FLOOR = 1e-300


def log10(x) -> np.ndarray:
    """log10 of ``x`` with values <= 0 (a gap rounded to zero) shown at 1e-300."""
    return np.log10(np.maximum(np.asarray(x, dtype=float), FLOOR))


def in_decades(a, b, expect: str, resolution: float):
    """The paired decision of ``a expect b`` for per-seed values in decades (log10)."""
    return decide(a, b, expect=expect, resolution=resolution, paired=True, unit=" dec")


def claim(what: str, paper: str, d, rule: str, ours: str = ""):
    """A claim decided by the decision ``d`` (its interval shown after ``ours``)."""
    return as_claim(what, paper, (ours + "; " if ours else "") + d.fmt(), rule, d.outcome,
                    d.how)


def quadratics(seeds, **kw) -> list:
    """One ``toys.quadratic`` per seed (``kw``: n_clients, dim, L, mu, heterogeneity).

    >>> [p.n_clients for p in quadratics([0, 1], n_clients=3, dim=2)]
    [3, 3]
    """
    import toys

    return [toys.quadratic(seed=int(s), **kw) for s in seeds]


def run_pop(probs, algo: str, seeds, rounds: int, **hyper):
    """The population run of ``algo`` on ``probs`` (seed i on problem i; numpy, every state
    metric recorded)."""
    import toys
    from toys._array import one_cpu_thread

    with one_cpu_thread():  # small products: a second BLAS thread only spins
        return toys.run_many(probs, algo, rounds=rounds, seeds=[int(s) for s in seeds],
                             record="state", **hyper)


def median_band(ax, curves, label: str, start: int = 0, **kw) -> None:
    """The median over seeds of ``curves`` (seeds, rounds + 1) with its interquartile band,
    at x = start, start + 1, ... (``start=1``: round + 1, for a log axis)."""
    c = np.asarray(curves, dtype=float)
    r = np.arange(c.shape[1]) + start
    q1, med, q3 = np.nanpercentile(c, [25, 50, 75], axis=0)
    (line,) = ax.plot(r, med, label=label, **kw)
    ax.fill_between(r, q1, q3, color=line.get_color(), alpha=0.2, lw=0)
