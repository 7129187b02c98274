"""Loss-weighted aggregation bounds (seeds 000 and 001, Ben Mansour et al.): the weighting skew.

Setting (BM §2): N clients, full participation, minibatch SGD with step eta_t, aggregation every E
iterations with weights alpha_t (sum 1) fixed within a round; each F_i L-smooth and mu-strongly
convex; E||g_i - grad F_i||^2 <= sigma^2; E||g_i||^2 <= G^2 (along the trajectory, BM-21);
Gamma = F* - sum_i p_i F_i*; the weighting skew
rho(t, w) = sum_i alpha_t^i (F_i(w) - F_i*) / (F(w) - sum_i p_i F_i*);
rho_bar = min over *all* iterations of rho(t, w_t) (virtual average, BM-13) and rho_tilde = max of
rho(t, w*). The corollary's T is the final SGD **iteration** (rounds x E). ``D0 = ||w^0 - w*||``
(the spec's Delta0 is D0^2); ``Delta`` = E||w_t - w*||^2.

Corrections encoded (see :mod:`boundlab.errata`): tau -> E (BM-1); gamma = max(4L/mu, 1 + 3
rho_bar/8, E - 1) and the error term clipped at 0 (BM-5, BM-8); eta_t <= 1/(4L) (BM-14).

Example
-------
>>> import boundlab
>>> b = boundlab.get("skew.corollary")
>>> sorted(b.terms)
['error', 'speed']
"""

from __future__ import annotations

import sympy as sp

from .core import Bound, Precondition, make_params
from .symbols import INT_GE1, Domain, sym

__all__ = ["BOUNDS", "gamma_corrected"]

_A, _B = "seed 000", "seed 001"
Delta, eta, mu, L, E, G, sigma, Gamma = (sym(n) for n in "Delta eta mu L E G sigma Gamma".split())
rho_bar, rho_tilde, T, D0 = sym("rho_bar"), sym("rho_tilde"), sym("T"), sym("D0")
N = sym("N")
gamma = sym("gamma")
pi_, Pi_ = sym("pi"), sym("Pi")  # min / max of kappa = alpha/p (pi is not sympy.pi)
p_min = sym("p_min")
f_w, f_star = sym("f_w"), sym("f_star")

_R = sp.Rational
ETA_LE = Precondition(eta, "<=", 1 / (4 * L), "eta <= 1/(4*L)",
                      "gives 3/8 = min over 0 < L eta <= 1/4 of (1 - 2L eta)(1 - L eta) (BM-14)")
MU_LE_L = Precondition(mu, "<=", L, "mu <= L", "strong convexity cannot exceed smoothness")


def gamma_corrected(L, mu, rho_bar, E):
    """The corrected step-size shift gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1) (BM-5, BM-8).

    Works on sympy symbols or numbers.

    >>> gamma_corrected(1.0, 1.0, 20.0, 2)
    8.5
    """
    if any(isinstance(v, sp.Basic) for v in (L, mu, rho_bar, E)):
        return sp.Max(4 * L / mu, 1 + _R(3, 8) * rho_bar, E - 1)
    return max(4 * L / mu, 1 + 3 * rho_bar / 8, E - 1)


_gc = gamma_corrected(L, mu, rho_bar, E)
_C_sq = 32 * E**2 * G**2 + sigma**2


def _V(g):
    return 4 * L * _C_sq / (3 * mu**2 * rho_bar) + 8 * L**2 * Gamma / mu**2 + L * g * D0**2 / 2


_err = 8 * L * Gamma / (3 * mu) * (rho_tilde / rho_bar - 1)
_P_COR = ("T", "L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "rho_tilde", "D0")
_PARAM_DOCS = {
    "E": (INT_GE1, "local SGD iterations between aggregations (the corollary's tau, BM-1)"),
    "T": (INT_GE1, "final SGD iteration index (= rounds x E)"),
    "Delta": (Domain(0.0, float("inf"), lo_open=False), "E||w_t - w*||^2 at iteration t"),
}

# --------------------------------------------------------------------------- Theorem 3 / 1
_contr = (1 - eta * mu * (1 + _R(3, 8) * rho_bar)) * Delta
_noise = eta**2 * (32 * E**2 * G**2 + 6 * rho_bar * L * Gamma + sigma**2)
_bias = 2 * eta * Gamma * (rho_tilde - rho_bar)
recursion = Bound(
    id="skew.recursion",
    source=f"{_A}, Theorem 3 (eq. (9)) = {_B}, Theorem 1 (eq. (8))",
    expr=_contr + _noise + _bias,
    params=make_params("Delta", "eta", "mu", "L", "E", "G", "sigma", "Gamma", "rho_bar",
                       "rho_tilde", **_PARAM_DOCS),
    kind="upper",
    lhs="next_sq_dist",
    description=(
        "E||w_{t+1} - w*||^2 <= (1 - eta_t mu (1 + 3 rho_bar/8)) Delta + eta_t^2 (32 E^2 G^2 + "
        "6 rho_bar L Gamma + sigma^2) + 2 eta_t Gamma (rho_tilde - rho_bar), with Delta = "
        "E||w_t - w*||^2 and eta = eta_t. Needs eta_t <= 1/(4L) (BM-14), eta_{t0} <= 2 eta_t "
        "inside a round (BM-8), the round's alpha fixed with w_t the alpha-weighted virtual "
        "average (BM-12) and rho_bar, rho_tilde taken over every iteration (BM-13). The "
        "contraction factor may be negative; the inequality still holds."
    ),
    preconditions=(ETA_LE, MU_LE_L),
    terms={"contraction": _contr, "noise": _noise, "skew_bias": _bias},
    errata=("BM-6", "BM-7", "BM-12", "BM-13", "BM-14", "BM-18", "BM-19"),
)

_rec_ef = _contr + eta**2 * _C_sq
error_free_recursion = Bound(
    id="skew.error_free_recursion",
    source=f"{_A}, eq. (13) (corrected) = {_B}, eq. (11)",
    expr=_rec_ef,
    params=make_params("Delta", "eta", "mu", "E", "G", "sigma", "rho_bar", **_PARAM_DOCS),
    extra_params=make_params("L"),
    kind="upper",
    lhs="next_sq_dist",
    description=("Theorem recursion at Gamma = 0: (1 - eta mu (1 + 3 rho_bar/8)) Delta + eta^2 "
                 "(32 E^2 G^2 + sigma^2). Seed 000 prints 1 + 3/(8 rho_bar) (BM-2)."),
    preconditions=(ETA_LE, MU_LE_L),
    terms={"contraction": _contr, "noise": eta**2 * _C_sq},
    errata=("BM-2",),
)

error_free_recursion_printed = Bound(
    id="skew.error_free_recursion.printed",
    source=f"{_A}, eq. (13) as printed",
    expr=(1 - eta * mu * (1 + 3 / (8 * rho_bar))) * Delta + eta**2 * _C_sq,
    params=make_params("Delta", "eta", "mu", "E", "G", "sigma", "rho_bar", **_PARAM_DOCS),
    extra_params=make_params("L"),
    kind="upper",
    lhs="next_sq_dist",
    description="As printed in seed 000 eq. (13), factor 1 + 3/(8 rho_bar) (BM-2).",
    preconditions=(ETA_LE, MU_LE_L),
    errata=("BM-2",),
    printed=True,
)

# --------------------------------------------------------------------------- Corollary 4 / 1
_speed = _V(_gc) / (T + _gc)
_error = sp.Max(0, _err)
corollary = Bound(
    id="skew.corollary",
    source=f"{_A}, Corollary 4 (eq. (10)) = {_B}, Corollary 1 (eq. (9)), corrected",
    expr=_speed + _error,
    params=make_params(*_P_COR, **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "E[F(w_T)] - F* <= V/(T + gamma) + max(0, E-term) with eta_t = 1/(mu (t + gamma)), "
        "gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1), V = 4L(32 E^2 G^2 + sigma^2)/(3 mu^2 "
        "rho_bar) + 8 L^2 Gamma/mu^2 + L gamma D0^2/2 and E-term = (8 L Gamma/(3 mu)) (rho_tilde/"
        "rho_bar - 1). Corrections: tau read as E (BM-1); gamma also >= 1 + 3 rho_bar/8 and "
        ">= E - 1, error term clipped at 0 (BM-5, BM-8). The run must use this gamma in its "
        "step sizes (see skew.corollary_gamma for a given gamma)."
    ),
    preconditions=(MU_LE_L,),
    terms={"speed": _speed, "error": _error},
    errata=("BM-1", "BM-4", "BM-5", "BM-8", "BM-10", "BM-11", "BM-13"),
)

corollary_gamma = Bound(
    id="skew.corollary_gamma",
    source=f"{_A}, Corollary 4 = {_B}, Corollary 1, corrected, for the gamma the run used",
    expr=_V(gamma) / (T + gamma) + _error,
    params=make_params(*_P_COR, "gamma", **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "skew.corollary with the step-size shift gamma given (the one the run used): valid when "
        "gamma >= 4L/mu (eta_0 <= 1/(4L)), gamma >= 1 + 3 rho_bar/8 (non-negative contraction, "
        "BM-5) and gamma >= E - 1 (Lemma 2, BM-8)."
    ),
    preconditions=(
        MU_LE_L,
        Precondition(gamma, ">=", 4 * L / mu, "gamma >= 4*L/mu", "eta_0 <= 1/(4L) (BM-14)"),
        Precondition(gamma, ">=", 1 + _R(3, 8) * rho_bar, "gamma >= 1 + 3*rho_bar/8", "BM-5"),
        Precondition(gamma, ">=", E - 1, "gamma >= E - 1", "eta_{t0} <= 2 eta_t (BM-8)"),
    ),
    terms={"speed": _V(gamma) / (T + gamma), "error": _error},
    errata=("BM-1", "BM-5", "BM-8"),
)

_g4 = 4 * L / mu
corollary_printed = Bound(
    id="skew.corollary.printed",
    source=f"{_A}, Corollary 4 (eq. (10)) = {_B}, Corollary 1 (eq. (9)), as printed (tau := E)",
    expr=_V(_g4) / (T + _g4) + _err,
    params=make_params(*_P_COR, **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "As printed, with gamma = 4L/mu and the error term unclipped (tau read as E). It does "
        "not follow from the theorem when 1 + 3 rho_bar/8 > 4L/mu, E - 1 > 4L/mu or "
        "rho_tilde < rho_bar (BM-5, BM-8): those are its preconditions here, so a check reports "
        "not-applicable instead of a false verdict."
    ),
    preconditions=(
        MU_LE_L,
        Precondition(1 + _R(3, 8) * rho_bar, "<=", 4 * L / mu, "1 + 3*rho_bar/8 <= 4*L/mu", "BM-5"),
        Precondition(E - 1, "<=", 4 * L / mu, "E - 1 <= 4*L/mu", "BM-8"),
        Precondition(rho_tilde, ">=", rho_bar, "rho_tilde >= rho_bar", "BM-5 (D >= 0)"),
    ),
    terms={"speed": _V(_g4) / (T + _g4), "error": _err},
    errata=("BM-1", "BM-5", "BM-8"),
    printed=True,
)

speed = Bound(
    id="skew.speed",
    source=f"{_A}, Corollary 4, speed term V(rho_bar, rho_tilde), corrected gamma",
    expr=_V(_gc),
    params=make_params("L", "mu", "E", "G", "sigma", "Gamma", "rho_bar", "D0", **_PARAM_DOCS),
    kind="identity",
    lhs="speed_constant",
    description=("V = 4L(32 E^2 G^2 + sigma^2)/(3 mu^2 rho_bar) + 8 L^2 Gamma/mu^2 + L gamma "
                 "D0^2/2 with the corrected gamma (BM-1, BM-5); decreasing in rho_bar at fixed "
                 "gamma."),
    preconditions=(MU_LE_L,),
    terms={"variance": 4 * L * _C_sq / (3 * mu**2 * rho_bar),
           "heterogeneity": 8 * L**2 * Gamma / mu**2, "init": L * _gc * D0**2 / 2},
    errata=("BM-1", "BM-5"),
)

error = Bound(
    id="skew.error",
    source=f"{_A}, Corollary 4, learning-error term E(rho_bar, rho_tilde), clipped at 0",
    expr=_error,
    params=make_params("L", "mu", "Gamma", "rho_bar", "rho_tilde"),
    kind="identity",
    lhs="error_constant",
    description=("max(0, (8 L Gamma/(3 mu)) (rho_tilde/rho_bar - 1)): zero for alpha = p or "
                 "Gamma = 0; the unclipped printed form can be negative (BM-5)."),
    preconditions=(MU_LE_L,),
    errata=("BM-5", "BM-17"),
)

error_printed = Bound(
    id="skew.error.printed",
    source=f"{_A}, Corollary 4, learning-error term as printed (unclipped)",
    expr=_err,
    params=make_params("L", "mu", "Gamma", "rho_bar", "rho_tilde"),
    kind="identity",
    lhs="error_constant",
    description="(8 L Gamma/(3 mu)) (rho_tilde/rho_bar - 1), negative when rho_tilde < rho_bar.",
    preconditions=(MU_LE_L,),
    errata=("BM-5",),
    printed=True,
)

_vmin_init = L * _g4 * D0**2 / 2
vmin = Bound(
    id="skew.vmin",
    source=f"{_A}, Remark 6 (eq. (12)) = {_B}, Remark 5",
    expr=8 * L**2 * Gamma / mu**2 + _vmin_init,
    params=make_params("L", "mu", "Gamma", "D0"),
    kind="identity",
    lhs="speed_constant",
    description=(
        "V_min = 8 L^2 Gamma/mu^2 + L gamma D0^2/2 = lim_{rho_bar -> inf} V at the printed gamma "
        "= 4L/mu. Unattainable: rho_bar <= 1/min_i p_i, so 'rho_bar may be arbitrarily large' is "
        "false (BM-15)."
    ),
    preconditions=(MU_LE_L,),
    terms={"heterogeneity": 8 * L**2 * Gamma / mu**2, "init": _vmin_init},
    errata=("BM-15",),
)

_ef_speed = (4 * L * _C_sq / (3 * mu**2 * rho_bar) + L * _gc * D0**2 / 2) / (T + _gc)
error_free = Bound(
    id="skew.error_free",
    source=f"{_A}, eq. (14) = {_B}, eq. (12) (Gamma = 0), corrected gamma",
    expr=_ef_speed,
    params=make_params("T", "L", "mu", "E", "G", "sigma", "rho_bar", "D0", **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "Gamma = 0 (w* minimises every F_i): E[F(w_T)] - F* <= [4L(32 E^2 G^2 + sigma^2)/(3 mu^2 "
        "rho_bar) + L gamma D0^2/2]/(T + gamma), gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1); "
        "optimal weights: FedMax (eq. (15))."
    ),
    preconditions=(MU_LE_L,),
    errata=("BM-1", "BM-2", "BM-5"),
)

# --------------------------------------------------------------------------- general bounds
_lambda1 = 4 * L * _C_sq / (3 * mu**2)
_lambda2 = 8 * L * Gamma / (3 * mu)


def _general(g, kappa_term, err):
    C0 = 8 * L**2 * Gamma / mu**2 + L * g * D0**2 / 2
    return (C0 + _lambda1 / kappa_term) / (T + g), _lambda2 * err


_P_GEN = ("T", "L", "mu", "E", "G", "sigma", "Gamma", "D0", "pi")
_g17 = sp.Max(4 * L / mu, 1 + _R(3, 8) * Pi_, E - 1)
_s17, _e17 = _general(_g17, pi_, (Pi_ - pi_) / pi_)
pi_bound = Bound(
    id="skew.pi_bound",
    source=f"{_A}, eq. (17) = {_B}, eq. (13)",
    expr=_s17 + _e17,
    params=make_params(*_P_GEN, "Pi", **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "With alpha_t^i = kappa_t^i p_i, pi = min kappa, Pi = max kappa: E[F(w_T)] - F* <= "
        "(C0 + lambda1/pi)/(T + gamma) + lambda2 (Pi - pi)/pi, C0 = V_min, lambda1 = 4L(32 E^2 G^2 "
        "+ sigma^2)/(3 mu^2), lambda2 = 8 L Gamma/(3 mu) (identified by substitution). gamma = "
        "max(4L/mu, 1 + 3 Pi/8, E - 1) since rho_bar <= Pi (derived from BM-5)."
    ),
    preconditions=(MU_LE_L, Precondition(pi_, "<=", Pi_, "pi <= Pi", "min <= max")),
    terms={"speed": _s17, "error": _e17},
    errata=("BM-16", "BM-17"),
)

_Pi_up = (1 - (N - 1) * pi_ * p_min) / p_min
Pi_upper = Bound(
    id="skew.Pi_upper",
    source=f"{_A}, eq. (18) = {_B}, eq. (16)",
    expr=_Pi_up,
    params=make_params("pi", "p_min", "N"),
    kind="upper",
    lhs="Pi",
    description="Pi <= (1 - (N - 1) pi p_min)/p_min for weights summing to one.",
    preconditions=(Precondition(p_min, "<=", 1 / N, "p_min <= 1/N", "the smallest of N weights"),),
    errata=("BM-16",),
)

_g19 = sp.Max(4 * L / mu, 1 + _R(3, 8) * _Pi_up, E - 1)
_s19, _e19 = _general(_g19, pi_, 1 / (pi_ * p_min) - N)
pi_bound_pmin = Bound(
    id="skew.pi_bound_pmin",
    source=f"{_A}, eq. (19) = {_B}, eq. (17)",
    expr=_s19 + _e19,
    params=make_params(*_P_GEN, "p_min", "N", **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description=(
        "(C0 + lambda1/pi)/(T + gamma) + lambda2 (1/(pi p_min) - N); the text's 'E <= 1/(pi "
        "min p_i) - N' omits lambda2 (BM-16). gamma uses the bound (18) on Pi."
    ),
    preconditions=(MU_LE_L,
                   Precondition(p_min, "<=", 1 / N, "p_min <= 1/N", "the smallest of N weights")),
    terms={"speed": _s19, "error": _e19},
    errata=("BM-16",),
)

_g15 = sp.Max(4 * L / mu, 1 + _R(3, 8) * (N - (N - 1) * pi_), E - 1)
_s15, _e15 = _general(_g15, pi_, N / pi_ - N)
pi_bound_uniform = Bound(
    id="skew.pi_bound_uniform",
    source=f"{_B}, eqs. (14)-(15) (uniform p_i = 1/N)",
    expr=_s15 + _e15,
    params=make_params(*_P_GEN, "N", **_PARAM_DOCS),
    kind="upper",
    lhs="final_gap",
    description="Uniform p: Pi <= N - (N - 1) pi and the error term is lambda2 (N/pi - N).",
    preconditions=(MU_LE_L,),
    terms={"speed": _s15, "error": _e15},
    errata=("BM-16",),
)

# --------------------------------------------------------------------------- FedAvg speed
_gfa = sp.Max(4 * L / mu, E - 1)
fedavg_speed = Bound(
    id="skew.fedavg_speed",
    source=f"{_A}, eq. (20) = {_B}, eq. (18), corrected",
    expr=8 * L**2 * Gamma / mu**2 + L * _gfa * D0**2 / 2 + 4 * L * _C_sq / (3 * mu**2),
    params=make_params("L", "mu", "E", "G", "sigma", "Gamma", "D0", **_PARAM_DOCS),
    kind="identity",
    lhs="speed_constant",
    description=(
        "alpha = p gives rho_bar = rho_tilde = 1: V_FedAvg = V_min + 4L(32 E^2 G^2 + sigma^2)/"
        "(3 mu^2), error term 0; gamma = max(4L/mu, E - 1) (1 + 3/8 < 4 <= 4L/mu). Printed as "
        "V_min + (4L - 32 tau^2 G^2 + sigma^2)/(3 mu^2) (BM-3)."
    ),
    preconditions=(MU_LE_L,),
    errata=("BM-1", "BM-3"),
)

fedavg_speed_printed = Bound(
    id="skew.fedavg_speed.printed",
    source=f"{_A}, eq. (20) = {_B}, eq. (18), as printed (tau := E)",
    expr=8 * L**2 * Gamma / mu**2 + L * _g4 * D0**2 / 2
    + (4 * L - 32 * E**2 * G**2 + sigma**2) / (3 * mu**2),
    params=make_params("L", "mu", "E", "G", "sigma", "Gamma", "D0", **_PARAM_DOCS),
    kind="identity",
    lhs="speed_constant",
    description="As printed: garbled product 4L(...) typeset as 4L - ... (BM-3).",
    preconditions=(MU_LE_L,),
    errata=("BM-3",),
    printed=True,
)

# --------------------------------------------------------------------------- lemmas, remarks
lemma1 = Bound(
    id="skew.lemma1",
    source=f"{_A}, Lemma 1 (eq. (6)) = {_B}, Lemma 1 (eq. (4))",
    expr=2 * L * (f_w - f_star),
    params=make_params("L", "f_w", "f_star"),
    kind="upper",
    lhs="grad_norm_sq",
    description=("||grad f(w)||^2 <= 2L (f(w) - f(w*)) for L-smooth f with global minimiser w*; "
                 "convexity is not needed (BM-22)."),
    preconditions=(Precondition(f_w, ">=", f_star, "f_w >= f_star", "w* is a global minimiser"),),
    errata=("BM-22",),
)

lemma2 = Bound(
    id="skew.lemma2",
    source=f"{_B}, Lemma 2 (eq. (5)) (seed 000 eq. (7) names w_i* instead of w_t^i)",
    expr=16 * eta**2 * E**2 * G**2,
    params=make_params("eta", "E", "G", **_PARAM_DOCS),
    extra_params=make_params("gamma"),
    kind="upper",
    lhs="client_discrepancy",
    description=(
        "E[sum_i alpha_t^i ||w_t - w_t^i||^2] <= 16 eta_t^2 E^2 G^2 for the round's virtual "
        "average w_t; needs eta_{t0} <= 2 eta_t in the round: for eta_t = 1/(mu (t + gamma)) that "
        "is gamma >= E - 1 (BM-8). Seed 000 prints w_i* (false, BM-9)."
    ),
    preconditions=(Precondition(gamma, ">=", E - 1, "gamma >= E - 1", "BM-8"),),
    errata=("BM-8", "BM-9", "BM-12"),
)

rho_range = Bound(
    id="skew.rho_range",
    source=f"{_A}/{_B}, definition of rho (eq. (8) / (6)); derived in the spec (§3.1)",
    expr=1 / p_min,
    params=make_params("p_min"),
    kind="upper",
    lhs="rho",
    description=("pi_t <= rho(t, w) <= Pi_t <= 1/min_i p_i: rho is a weighted mean of kappa; "
                 "alpha = p gives rho = 1 (BM-15)."),
    errata=("BM-15",),
)

rate_order = Bound(
    id="skew.rate_order",
    source=f"{_A}, Remark 5 (eq. (11)) = {_B}, Remark 3 (eq. (10))",
    expr=1 / T,
    params=make_params("T", **_PARAM_DOCS),
    kind="order",
    lhs="final_gap",
    description=("E[F(w_T)] - F* = O(1/T): true only when the error term is 0 (alpha = p or "
                 "Gamma = 0); otherwise O(1/T) + E-term (BM-20). Hidden constants set to 1."),
    errata=("BM-20",),
)

BOUNDS = [
    recursion,
    corollary,
    corollary_gamma,
    corollary_printed,
    speed,
    error,
    error_printed,
    vmin,
    error_free,
    error_free_recursion,
    error_free_recursion_printed,
    pi_bound,
    pi_bound_pmin,
    pi_bound_uniform,
    Pi_upper,
    fedavg_speed,
    fedavg_speed_printed,
    lemma1,
    lemma2,
    rho_range,
    rate_order,
]

from .skew_softmax import BOUNDS as _SOFTMAX  # noqa: E402

BOUNDS = BOUNDS + list(_SOFTMAX)
