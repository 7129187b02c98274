"""Seed 004 (DKR) Lemma 2.3's pairwise drift, judged step by step on the seed-004 toy.

DKR's d_k = E||x_1^(t,k) - x_2^(t,k)||^2 is the squared distance between two clients' local
iterates k steps into a round (both start at the server model, so d_0 = 0). It is measured
exactly on DKR's paper protocol: each round one regular client and the outlier take part with
weights 1/2, so the virtual average is their midpoint and ``d_k = 4 ||x_i^(t,k) - xbar^(t,k)||^2``
(``Trace.steps["drift_max"]`` of a ``record="step"`` run: the two distances are equal). The
pair is the most heterogeneous one the toy has; zeta, L are the 20-client problem's constants
(Lemma 2.3 bounds every pair through ||grad F_i - grad F_j|| <= 2 zeta). Full gradients:
sigma = 0 and the runs are deterministic.

* ``drift.client_drift_exact``: d_k vs the unrolled recursion at k = 1, tau/2, tau (the largest
  d_k over the rounds);
* ``drift.drift_recursion``: d_{k+1} vs (1 + 1/tau) d_k + 10 eta^2 tau zeta^2 + 2 eta^2 sigma^2
  at every step of every round; the row reports the step and round of the largest ratio.

Example
-------
>>> from verify.suite import Context
>>> rs = drift_pairwise(Context(quick=True))
>>> sorted({r.verdict for r in rs}), sorted({r.bound_id for r in rs})
(['holds'], ['drift.client_drift_exact', 'drift.drift_recursion'])
"""

from __future__ import annotations

import numpy as np

import boundlab
import toys

from ._common import constants_record, judge
from ._registry import register
from .drift import ETA, _paper_participation, _params, _rounds, _taus, _toy

_PROBLEM = "seed004-toy, paper protocol (1 regular client + the outlier, weights 1/2)"


def pairwise_drift(tau: int, rounds: int, seed: int = 1, backend: str = "numpy",
                   device=None) -> np.ndarray:
    """(rounds, tau + 1) d_k, k = 0..tau, of the two participants of each round."""

    prob, _ = _toy()
    chi = _paper_participation(prob.n_clients, rounds, seed=seed)
    tr = toys.run(prob, "fedavg", rounds=rounds, seed=0, participation=chi, lr=ETA,
                  local_steps=tau, record="step", backend=backend, device=device)
    d = 4.0 * np.asarray(tr.steps["drift_max"], dtype=float)
    return np.concatenate([np.zeros((rounds, 1)), d], axis=1)


@register("drift", "drift.client_drift_exact", "drift.drift_recursion")
def drift_pairwise(ctx):
    """Lemma 2.3: the two participants' squared distance d_k, step by step, vs its recursion
    and the unrolled form."""

    prob, consts = _toy()
    T = _rounds(ctx)
    out = []
    for tau in _taus(ctx):
        d = pairwise_drift(tau, T, backend=ctx.backend, device=ctx.device)
        prm = _params(consts, tau, T, prob.n_clients)
        kw = dict(problem=_PROBLEM, seeds=[1], deterministic=True,
                  constants=constants_record(consts, ("L", "zeta")))
        exact = boundlab.get("drift.client_drift_exact")
        for k in sorted({1, max(tau // 2, 1), tau}):
            out.append(judge(exact, [float(np.max(d[:, k]))], {**prm, "k": k},
                             check="drift_pairwise", case=f"tau={tau}, k={k}",
                             note=f"max over {T} rounds of d_k = ||x_1 - x_2||^2 after k local "
                                  "steps", **kw))
        out.append(_recursion_row(d, prm, tau, T, kw))
    return out


def _recursion_row(d, prm, tau, T, kw):
    rec = boundlab.get("drift.drift_recursion")
    args = {k: v for k, v in prm.items() if k in rec.params and k != "d_k"}
    rhs = np.asarray(rec.evaluate(**args, d_k=d[:, :-1]), dtype=float)  # (T, tau)
    ratio = d[:, 1:] / rhs
    r, k = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    return judge(rec, [float(d[r, k + 1])], {**prm, "d_k": float(d[r, k])},
                 check="drift_pairwise", case=f"tau={tau}, worst step",
                 note=f"every step k = 0..{tau - 1} of {T} rounds judged; the largest ratio "
                      f"d_(k+1) / rhs is at round {r}, k = {k}", **kw)
