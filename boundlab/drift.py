"""Heterogeneity-drift bounds of FedAvg with tau local steps (seed 004, Dhasade, Kremer, Renard).

Setting (DKR appendix §2.1): M clients, full participation, uniform weights 1/M, each F_i convex
and L-smooth, unbiased stochastic gradients with variance <= sigma^2, gradient dissimilarity
max_i sup_x ||grad F_i(x) - grad F(x)|| <= zeta, constant step eta <= 1/(4L), exactly tau local
steps per round. ``D = ||x^(0) - x*||`` (unsquared).

Example
-------
>>> import boundlab
>>> b = boundlab.get("drift.fedavg_convex")
>>> round(b.evaluate(D=2.0, eta=0.2, tau=10, T=50, sigma=0.0, M=20, L=0.19, zeta=0.407), 4)
2.2861
"""

from __future__ import annotations

from .core import Bound, Precondition, make_params
from .symbols import sym

__all__ = ["BOUNDS"]

_SRC = "seed 004"
D, eta, tau, T, sigma, M, L, zeta = (sym(n) for n in "D eta tau T sigma M L zeta".split())
k, d_k = sym("k"), sym("d_k")
dist0, dist_tau, drift_sum = sym("dist0"), sym("dist_tau"), sym("drift_sum")

ETA_LE = Precondition(eta, "<=", 1 / (4 * L), "eta <= 1/(4*L)",
                      "used as 2*eta/L >= 8*eta^2 (Lemma 2.3) and L - 1/(4*eta) <= 0 (Lemma 2.2)")

_init = D**2 / (2 * eta * tau * T)
_noise = eta * sigma**2 / M
_drift_noise = 4 * tau * eta**2 * L * sigma**2
_drift_het = 18 * tau**2 * eta**2 * L * zeta**2

fedavg_convex = Bound(
    id="drift.fedavg_convex",
    source=f"{_SRC}, Theorem 2.1 (main-text eq. (1) = appendix eq. (4))",
    expr=_init + _noise + _drift_noise + _drift_het,
    params=make_params("D", "eta", "tau", "T", "sigma", "M", "L", "zeta"),
    kind="upper",
    lhs="avg_shadow_gap",
    description=(
        "E[(1/(tau T)) sum_{t<T} sum_{k=1..tau} F(xbar^(t,k)) - F(x*)] <= D^2/(2 eta tau T) + "
        "eta sigma^2/M + 4 tau eta^2 L sigma^2 + 18 tau^2 eta^2 L zeta^2. The left side is the "
        "time average of the shadow sequence's training gap. The printed '= O(1/(tau T))' is "
        "dropped: the right side tends to eta sigma^2/M + 4 tau eta^2 L sigma^2 + "
        "18 tau^2 eta^2 L zeta^2 (DKR-6). L must bound every client (DKR-16)."
    ),
    preconditions=(ETA_LE,),
    terms={"init": _init, "noise": _noise, "drift_noise": _drift_noise, "drift_het": _drift_het},
    errata=("DKR-5", "DKR-6", "DKR-12", "DKR-16", "DKR-17"),
)

plateau = Bound(
    id="drift.plateau",
    source=f"{_SRC}, main text eq. (2) (limit T -> inf of Theorem 2.1 at sigma = 0)",
    expr=_drift_het,
    params=make_params("eta", "tau", "L", "zeta"),
    kind="upper",
    lhs="plateau_gap",
    description=(
        "lim_{T->inf} of the time-averaged shadow training gap <= 18 tau^2 eta^2 L zeta^2 "
        "(full-batch gradients, sigma = 0)."
    ),
    preconditions=(ETA_LE,),
    terms={"drift_het": _drift_het},
    errata=("DKR-17",),
)

plateau_finite = Bound(
    id="drift.plateau_finite",
    source=f"{_SRC}, §4.1 (finite-T bound at sigma = 0)",
    expr=_init + _drift_het,
    params=make_params("D", "eta", "tau", "T", "L", "zeta"),
    kind="upper",
    lhs="avg_shadow_gap",
    description="Theorem 2.1 at sigma = 0: D^2/(2 eta tau T) + 18 tau^2 eta^2 L zeta^2 (DKR-1).",
    preconditions=(ETA_LE,),
    terms={"init": _init, "drift_het": _drift_het},
    errata=("DKR-1",),
)

plateau_finite_printed = Bound(
    id="drift.plateau_finite.printed",
    source=f"{_SRC}, §4.1 as printed: 'D^2/(2 eta tau T) + 18 tau^2 + eta^2 L zeta^2'",
    expr=_init + 18 * tau**2 + eta**2 * L * zeta**2,
    params=make_params("D", "eta", "tau", "T", "L", "zeta"),
    kind="upper",
    lhs="avg_shadow_gap",
    description="As printed (typo '+' for a product, DKR-1); kept to show the difference.",
    preconditions=(ETA_LE,),
    errata=("DKR-1",),
    printed=True,
)

_progress = (dist0 - dist_tau) / (2 * eta * tau)
round_progress = Bound(
    id="drift.round_progress",
    source=f"{_SRC}, Lemma 2.2 (appendix eq. (5)), corrected",
    expr=_progress + eta * sigma**2 / M + L / (M * tau) * drift_sum,
    params=make_params("dist0", "dist_tau", "eta", "tau", "sigma", "M", "L", "drift_sum"),
    kind="upper",
    lhs="round_avg_gap",
    description=(
        "E[(1/tau) sum_{k=1..tau} F(xbar^(t,k)) - F(x*) | F^(t,0)] <= (dist0 - dist_tau)/(2 eta "
        "tau) + eta sigma^2/M + (L/(M tau)) sum_i sum_{k=1..tau-1} E||x_i^(t,k) - xbar^(t,k)||^2, "
        "with dist0 = ||xbar^(t,0) - x*||^2, dist_tau = E||xbar^(t,tau) - x*||^2. The factor L on "
        "the drift term is missing in print (DKR-5)."
    ),
    preconditions=(ETA_LE,),
    terms={"progress": _progress, "noise": eta * sigma**2 / M,
           "drift": L / (M * tau) * drift_sum},
    errata=("DKR-5",),
)

round_progress_printed = Bound(
    id="drift.round_progress.printed",
    source=f"{_SRC}, Lemma 2.2 as printed (appendix eq. (5))",
    expr=_progress + eta * sigma**2 / M + drift_sum / (M * tau),
    params=make_params("dist0", "dist_tau", "eta", "tau", "sigma", "M", "drift_sum"),
    extra_params=make_params("L"),
    kind="upper",
    lhs="round_avg_gap",
    description="As printed, without the factor L on the drift term (DKR-5).",
    preconditions=(ETA_LE,),
    errata=("DKR-5",),
    printed=True,
)

_c_het = 18 * tau**2 * eta**2 * zeta**2
_c_noise = 4 * tau * eta**2 * sigma**2
client_drift = Bound(
    id="drift.client_drift",
    source=f"{_SRC}, Lemma 2.3 (appendix eq. (6))",
    expr=_c_het + _c_noise,
    params=make_params("eta", "tau", "zeta", "sigma"),
    extra_params=make_params("L"),
    kind="upper",
    lhs="max_client_drift",
    description=(
        "E[||x_i^(t,k) - xbar^(t,k)||^2 | F^(t,0)] <= 18 tau^2 eta^2 zeta^2 + 4 tau eta^2 sigma^2 "
        "for 0 <= k <= tau. The constants are 10(e-1) = 17.18 <= 18 and 2(e-1) = 3.44 <= 4 from "
        "the geometric sum of (1 + 1/tau)^j (DKR-4). The precondition needs L (optional param)."
    ),
    preconditions=(ETA_LE,),
    terms={"het": _c_het, "noise": _c_noise},
    errata=("DKR-2", "DKR-3", "DKR-4"),
)

_step_c = 10 * eta**2 * tau * zeta**2 + 2 * eta**2 * sigma**2
drift_recursion = Bound(
    id="drift.drift_recursion",
    source=f"{_SRC}, proof of Lemma 2.3 (per-step pairwise recursion), corrected",
    expr=(1 + 1 / tau) * d_k + _step_c,
    params=make_params("d_k", "eta", "tau", "zeta", "sigma"),
    extra_params=make_params("L"),
    kind="upper",
    lhs="pairwise_drift_next",
    description=(
        "d_{k+1} <= (1 + 1/tau) d_k + 10 eta^2 tau zeta^2 + 2 eta^2 sigma^2 for the pairwise "
        "distance d_k = E||x_1^(t,k) - x_2^(t,k)||^2 (corrected signs, squares and the 6 zeta^2 "
        "term, DKR-2/DKR-3)."
    ),
    preconditions=(ETA_LE,),
    terms={"carry": (1 + 1 / tau) * d_k, "step": _step_c},
    errata=("DKR-2", "DKR-3"),
)

client_drift_exact = Bound(
    id="drift.client_drift_exact",
    source=f"{_SRC}, Lemma 2.3 unrolled exactly (derived, tighter than the printed constant)",
    expr=_step_c * tau * ((1 + 1 / tau) ** k - 1),
    params=make_params("eta", "tau", "zeta", "sigma", "k"),
    extra_params=make_params("L"),
    kind="upper",
    lhs="pairwise_drift",
    description=(
        "Unrolling the corrected recursion from d_0 = 0: d_k <= (10 eta^2 tau zeta^2 + 2 eta^2 "
        "sigma^2) tau ((1 + 1/tau)^k - 1); <= Lemma 2.3's constant for 0 <= k <= tau, fails at "
        "k = tau + 1 for tau = 1 (DKR-4)."
    ),
    preconditions=(ETA_LE, Precondition(k, "<=", tau, "k <= tau", "exactly tau local steps")),
    errata=("DKR-4",),
)

BOUNDS = [
    fedavg_convex,
    client_drift,
    plateau,
    round_progress,
    round_progress_printed,
    plateau_finite,
    plateau_finite_printed,
    drift_recursion,
    client_drift_exact,
]

from .drift_properties import BOUNDS as _PROPERTIES  # noqa: E402

BOUNDS = BOUNDS + list(_PROPERTIES)

