"""Seed 000's error-free recursion (Gamma = 0), corrected and as printed, at every iteration.

``skew.error_free_recursion`` is Theorem 3's recursion when every client shares the optimum
(Gamma = 0); ``skew.error_free_recursion.printed`` is seed 000's eq. (13) with the factor
1 + 3/(8 rho_bar) instead of 1 + 3 rho_bar/8 (erratum BM-2). Both are judged like
``skew.recursion`` in :mod:`verify.checks.skew` (same rules, step sizes and measured rho_bar,
G^2), on a quadratic whose clients have different Hessians but one common centre, so that
Gamma = 0 holds exactly while the loss-weighted rules still skew the weights (rho != 1); the
rules of :data:`LOW_RULES` (FedBetter, FedSoftBetter) add rho_bar < 1, where the printed form is
the smaller of the two.
Delta is the measured ||w_t - w*||^2 of the virtual sequence before each SGD iteration and the
left-hand side the one after it; the row shows the iteration of the largest ratio.

Example
-------
>>> from verify.suite import Context
>>> rs = skew_error_free_recursion(Context(quick=True))
>>> sorted({r.bound_id for r in rs})
['skew.error_free_recursion', 'skew.error_free_recursion.printed']
"""

from __future__ import annotations

import functools

import numpy as np

import boundlab
import toys

from ._common import judge, trace_diverged
from ._registry import register
from .skew import RULES, E, _consts_record, _gamma, _label, _params

#: rules that favour low-loss clients (rho_bar < 1), where the printed factor 1 + 3/(8 rho_bar)
#: exceeds the corrected 1 + 3 rho_bar/8: the printed recursion is the tighter, riskier one
LOW_RULES = (("fedbetter", {}), ("fedsoftbetter", {"temperature": 1.0}))
_PROBLEM = "quadratic N=5, d=2, L=4, mu=1, one common centre (Gamma = 0)"


@functools.lru_cache(maxsize=None)
def _problem():
    prob = toys.quadratic(n_clients=5, dim=2, L=4.0, mu=1.0, heterogeneity=0.0, seed=0)
    return prob, toys.constants(prob)


def _trace(name, hyper, rounds, gamma, ctx):

    prob, consts = _problem()
    mu = consts.mu.value
    extra = {} if ctx.backend == "numpy" else {"backend": ctx.backend, "device": ctx.device}
    return toys.run(prob, name, rounds=rounds, seed=0, local_steps=E, record="step",
                    lr=lambda t: 1.0 / (mu * (t + gamma)), **hyper, **extra)


@register("skew", "skew.error_free_recursion", "skew.error_free_recursion.printed")
def skew_error_free_recursion(ctx):
    """Theorem 3's recursion at Gamma = 0, corrected and printed, at every SGD iteration."""

    prob, consts = _problem()
    rounds = ctx.pick(200, 40)
    gamma = _gamma(consts.L.value, consts.mu.value, prob.p.min(), E)
    out = []
    for name, hyper in RULES + LOW_RULES:
        tr = _trace(name, dict(hyper), rounds, gamma, ctx)
        before = np.concatenate([tr.dist2[:-1, None], tr.steps["dist2"][:, :-1]], axis=1).ravel()
        after, eta = tr.steps["dist2"].ravel(), tr.steps["lr"].ravel()
        prm = _params(tr, consts, gamma, rounds * E)
        for bid in ("skew.error_free_recursion", "skew.error_free_recursion.printed"):
            bound = boundlab.get(bid)
            ratio = after / bound.evaluate_from(prm, Delta=before, eta=eta)
            worst = int(np.nanargmax(ratio))
            at = {**prm, "Delta": float(before[worst]), "eta": float(eta[worst])}
            out.append(judge(
                bound, [after[worst]], at, check="skew_error_free_recursion",
                case=_label(name, hyper), problem=_PROBLEM, seeds=[0], deterministic=True,
                diverged=trace_diverged(tr), setting={"rule": name, **hyper, "gamma": gamma},
                note=f"checked at all {after.size} iterations; worst iteration {worst} shown "
                     f"(max LHS/RHS = {ratio[worst]:.3g}); iterations violated: "
                     f"{int(np.sum(ratio > 1 + 1e-9))}; rho_bar = {tr.rho_bar:.4g}",
                constants=_consts_record(consts, tr, prm)))
    return out
