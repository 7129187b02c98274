"""FedProx (alpha) vs the beta-perturbed algorithm: contraction and rates (seed 003, Buttaci &
Calafiore).

Setting: C clients, full participation, aggregation weights p_i (node degrees of the similarity
graph) with S = sum_i p_i^2, E local SGD steps per round. FedProx adds alpha (w - wbar) to the
local gradient; the beta algorithm evaluates the local gradient at the perturbed iterate
w~ = beta w + (1 - beta) u_i, u_i a neighbour average of the previous round's local models.
alpha = 0 and beta = 1 are FedAvg. Strongly convex bounds (Theorems 1, 3) speak about the gap
E f(wbar_{t,0}) - f_star; nonconvex bounds (Theorems 2, 4) about E||grad f(w_hat_T)||^2 with
w_hat_T uniform over all (t, k) iterates. The appendix lemmas are in
:mod:`boundlab.contraction_lemmas` and belong to this family.

Note (BC-B8): at beta = 1 Theorem 3 is looser than Theorem 1 at alpha = 0 by 6 E^2 G^2/mu,
although both describe FedAvg with the same step size; the tighter strongly convex FedAvg bound
is ``contraction.fedprox_sc`` at alpha = 0.

Example
-------
>>> import boundlab
>>> round(boundlab.get("contraction.beta_factor").evaluate(mu=0.2, L=1.0, beta=0.5), 4)
0.92
>>> b = boundlab.get("contraction.fedprox_sc")
>>> round(b.evaluate(t=10, L=1.0, mu=0.2, alpha=0.0, Delta=1.0, S=0.1, sigma=0.1,
...                  Gamma=0.0, E=1, G=1.0), 4)
12.5093
"""

from __future__ import annotations

import sympy as sp

from .contraction_lemmas import A_BETA, MU_LE_L, bc_params
from .contraction_lemmas import BOUNDS as _LEMMAS
from .core import Bound, Precondition
from .symbols import POSITIVE, sym

__all__ = ["BOUNDS"]

_SRC = "seed 003"
R_ = sp.Rational
_NAMES = ("alpha", "beta", "mu", "L", "E", "T", "G", "S", "sigma", "Gamma", "Delta", "gamma",
          "t", "eps")
(alpha, beta, mu, L, E, T, G, S, sigma, Gamma, Delta, gamma, t, eps) = (sym(n) for n in _NAMES)
La = L + alpha

# --------------------------------------------------------------- contraction factors, eq. (9)
_c_avg = 1 - mu / (3 * L)
_c_fp = 1 - mu / (3 * La)
_c_beta = 1 - mu / ((beta + 2) * L)

fedavg_factor = Bound(
    id="contraction.fedavg_factor",
    source=f"{_SRC}, eq. (9) (FedAvg: Theorem 1 at alpha = 0 = Theorem 3 at beta = 1)",
    expr=_c_avg,
    params=bc_params("mu", "L"),
    kind="upper",
    lhs="contraction_factor",
    description=(
        "Per-round contraction factor of FedAvg's strongly convex bound: 1 - mu/(3L). Upper "
        "bound on the lemma's exact kappa = (1 - mu gamma)^E at gamma = 1/(2LE)."
    ),
    preconditions=(MU_LE_L,),
)

fedprox_factor = Bound(
    id="contraction.fedprox_factor",
    source=f"{_SRC}, eq. (9) and Theorem 1, chain (54)-(57)",
    expr=_c_fp,
    params=bc_params("mu", "L", "alpha"),
    kind="upper",
    lhs="contraction_factor",
    description=(
        "FedProx contraction factor 1 - mu/(3(L + alpha)) >= FedAvg's: the proximal term slows "
        "contraction. Bounds the exact kappa of Lemma A.3 at gamma = 1/(2E(L + alpha)) via "
        "kappa <= 1 - mu/(3 alpha + 2L + mu) <= 1 - mu/(3(alpha + L))."
    ),
    preconditions=(MU_LE_L,),
)

beta_factor = Bound(
    id="contraction.beta_factor",
    source=f"{_SRC}, eq. (9) and Theorem 3, chain (187)-(191)",
    expr=_c_beta,
    params=bc_params("mu", "L", "beta"),
    kind="upper",
    lhs="contraction_factor",
    description=(
        "Beta algorithm's contraction factor 1 - mu/((beta + 2)L) <= FedAvg's, strictly for "
        "beta < 1. Bounds the exact kappa of Lemma B.3 at gamma = 1/(2LE); note the exact kappa "
        "equals FedAvg's when E = 1 (beta has no effect on the contraction then)."
    ),
    preconditions=(MU_LE_L,),
)


def _step_eq(value, text):
    """Two preconditions that together say gamma == value (the theorem fixes the step size)."""
    return (Precondition(gamma, "<=", value, f"gamma <= {text}", "the theorem's step size"),
            Precondition(gamma, ">=", value, f"gamma >= {text}", "the theorem's step size"))


# --------------------------------------------------------------- Theorems 1 and 3 (strongly convex)
_floor_fp = {
    "noise": L / La * S * sigma**2 / (4 * mu),
    "heterogeneity": L / La * 3 * L * Gamma / (2 * mu),
    "drift": L / La * 2 * E**2 * G**2 / mu,
}
_t1 = {"init": L * Delta / mu * _c_fp**t, **_floor_fp}
_SC = ("t", "L", "mu", "alpha", "Delta", "S", "sigma", "Gamma", "E", "G")
fedprox_sc = Bound(
    id="contraction.fedprox_sc",
    source=f"{_SRC}, Theorem 1, eq. (7)",
    expr=L * Delta / mu * _c_fp**t
    + L / La * (S * sigma**2 / (4 * mu) + 3 * L * Gamma / (2 * mu) + 2 * E**2 * G**2 / mu),
    params=bc_params(*_SC),
    extra_params=bc_params("gamma"),
    kind="upper",
    lhs="gap_t",
    description=(
        "FedProx, strongly convex, gamma = 1/(2E(L + alpha)): E f(wbar_{t,0}) - f_star <= "
        "(L Delta/mu)(1 - mu/(3(L + alpha)))^t + (L/(L + alpha))[S sigma^2/(4 mu) + 3 L Gamma/"
        "(2 mu) + 2 E^2 G^2/mu]. The floor is L A/(2 gamma mu) with A of Lemma A.3. alpha = 0 "
        "(FedAvg) is admitted; it gives the tightest strongly convex FedAvg bound (BC-B8)."
    ),
    preconditions=(MU_LE_L, *_step_eq(1 / (2 * E * La), "1/(2*E*(L+alpha))")),
    terms=_t1,
    errata=("BC-B8",),
)

_t3 = {
    "init": L * Delta / mu * _c_beta**t,
    "noise": S * sigma**2 / (4 * mu),
    "heterogeneity": 3 * L * Gamma / (2 * mu),
    "drift": 2 * A_BETA * E**2 * G**2 / mu,
    "perturbation": beta * (1 - beta) * E * G**2 / (8 * L),
}
beta_sc = Bound(
    id="contraction.beta_sc",
    source=f"{_SRC}, Theorem 3, eq. (8)",
    expr=sum(_t3.values()),
    params=bc_params("t", "L", "mu", "beta", "Delta", "S", "sigma", "Gamma", "E", "G"),
    extra_params=bc_params("gamma"),
    kind="upper",
    lhs="gap_t",
    description=(
        "Beta algorithm, strongly convex, gamma = 1/(2LE): E f(wbar_{t,0}) - f_star <= (L Delta/"
        "mu)(1 - mu/((beta + 2)L))^t + S sigma^2/(4 mu) + 3 L Gamma/(2 mu) + 2 A(beta) E^2 G^2/mu "
        "+ beta (1 - beta) E G^2/(8L), A(beta) = 4 + (1 - beta)^2 + 8 (1 - 1/beta)^2. Lemma B.3 "
        "needs strong convexity (Assumptions 1-5, BC-B10). At beta = 1 the floor exceeds Theorem "
        "1's alpha = 0 floor by 6 E^2 G^2/mu (BC-B8)."
    ),
    preconditions=(MU_LE_L, *_step_eq(1 / (2 * L * E), "1/(2*L*E)")),
    terms=_t3,
    errata=("BC-B8", "BC-B10"),
)


# --------------------------------------------------------------- Theorems 2 and 4 (nonconvex)
def _thm2(c_noise, c_last):
    return {
        "init": 8 * La * Delta / sp.sqrt(T * E),
        "noise": c_noise * L * S * sigma**2 / (La * sp.sqrt(T * E)),
        "prox": alpha * E ** R_(3, 2) * G**2 / (La * sp.sqrt(T)),
        "drift": 2 * L**2 * E * G**2 / (La**2 * T),
        "prox_drift": c_last * alpha**2 * L * sp.sqrt(E) * G**2 / (La**3 * T ** R_(3, 2)),
    }


_NC_FP = ("T", "E", "L", "alpha", "Delta", "S", "sigma", "G")
_STEP_NC_FP = _step_eq(1 / (2 * La * sp.sqrt(T * E)), "1/(2*(L+alpha)*sqrt(T*E))")
_t2 = _thm2(2, R_(1, 2))
fedprox_nc = Bound(
    id="contraction.fedprox_nc",
    source=f"{_SRC}, Theorem 2, corrected (BC-B9)",
    expr=sum(_t2.values()),
    params=bc_params(*_NC_FP, nonconvex=True),
    extra_params=bc_params("gamma"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "FedProx, nonconvex, gamma = 1/(2(L + alpha) sqrt(T E)): E||grad f(w_hat_T)||^2 <= "
        "(1/sqrt T)[8 L_a Delta/sqrt E + 2 L S sigma^2/(L_a sqrt E) + alpha E^(3/2) G^2/L_a] + "
        "2 L^2 E G^2/(L_a^2 T) + alpha^2 L sqrt(E) G^2/(2 L_a^3 T^(3/2)), L_a = L + alpha, "
        "Delta = f(wbar_{0,0}) - f_inf. Corrected from the printed statement (sigma^2 term "
        "doubled, last term x8) because step (76) of Lemma A.4's proof is invalid (BC-B9); the "
        "printed form is contraction.fedprox_nc.printed. At alpha = 0 it reads 8 L Delta/"
        "sqrt(TE) + 2 S sigma^2/sqrt(TE) + 2 E G^2/T (not the spec's §7 item 45, BC-P45)."
    ),
    preconditions=_STEP_NC_FP,
    terms=_t2,
    errata=("BC-B9", "BC-P45"),
)

_t2p = _thm2(1, R_(1, 16))
fedprox_nc_printed = Bound(
    id="contraction.fedprox_nc.printed",
    source=f"{_SRC}, Theorem 2 as printed",
    expr=sum(_t2p.values()),
    params=bc_params(*_NC_FP, nonconvex=True),
    extra_params=bc_params("gamma"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "As printed: L S sigma^2/(L_a sqrt(T E)) and alpha^2 L sqrt(E) G^2/(16 L_a^3 T^(3/2)); "
        "derived through the invalid inequality (76) (BC-B9)."
    ),
    preconditions=_STEP_NC_FP,
    terms=_t2p,
    errata=("BC-B9",),
    printed=True,
)

_t4 = {
    "init": 4 * L * Delta / sp.sqrt(T * E),
    "noise": S * sigma**2 / (2 * sp.sqrt(T * E)),
    "drift": E * G**2 * A_BETA / T,
}
beta_nc = Bound(
    id="contraction.beta_nc",
    source=f"{_SRC}, Theorem 4",
    expr=sum(_t4.values()),
    params=bc_params("T", "E", "L", "beta", "Delta", "S", "sigma", "G", nonconvex=True),
    extra_params=bc_params("gamma"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "Beta algorithm, nonconvex, gamma = 1/(2L sqrt(T E)): E||grad f(w_hat_T)||^2 <= "
        "(1/sqrt T)[4 L Delta/sqrt E + S sigma^2/(2 sqrt E)] + E G^2 A(beta)/T, Delta = "
        "f(wbar_{0,0}) - f_inf. At beta = 1 it differs from Theorem 2 at alpha = 0 (half the "
        "1/sqrt(T) terms, twice the G^2/T term; BC-B8)."
    ),
    preconditions=_step_eq(1 / (2 * L * sp.sqrt(T * E)), "1/(2*L*sqrt(T*E))"),
    terms=_t4,
    errata=("BC-B8",),
)

# --------------------------------------------------------------- Corollary 1 (choice of E)
_Ac = 4 * L * Delta + S * sigma**2 / 2
_Bc = G**2 * A_BETA
_E_opt = (_Ac / (2 * _Bc)) ** R_(2, 3) * T ** R_(1, 3)
_COR1 = ("L", "Delta", "S", "sigma", "G", "beta", "T")
corollary1_e_opt = Bound(
    id="contraction.corollary1_e_opt",
    source=f"{_SRC}, Corollary 1 (proof)",
    expr=_E_opt,
    params=bc_params(*_COR1, nonconvex=True),
    kind="identity",
    lhs="e_opt",
    description=(
        "Minimizer over real E > 0 of Theorem 4's r(E) = A_c/sqrt(T E) + B_c E/T, A_c = 4 L Delta "
        "+ S sigma^2/2, B_c = G^2 A(beta): E_opt = (A_c/(2 B_c))^(2/3) T^(1/3). A run needs an "
        "integer E (and gamma changes with E)."
    ),
)

corollary1 = Bound(
    id="contraction.corollary1",
    source=f"{_SRC}, Corollary 1",
    expr=3 / 2 ** R_(2, 3) * _Ac ** R_(2, 3) * _Bc ** R_(1, 3) * T ** R_(-2, 3),
    params=bc_params(*_COR1, nonconvex=True),
    extra_params=bc_params("E", "gamma", E=POSITIVE),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "Theorem 4 at E = E_opt (and its step gamma = 1/(2L sqrt(T E))): "
        "E||grad f(w_hat_T)||^2 <= 3 2^(-2/3) A_c^(2/3) B_c^(1/3) "
        "T^(-2/3), i.e. E = O(T^(1/3)) gives O(T^(-2/3)). Valid as a bound only for a run with "
        "E = E_opt (checked when E is given; E may be real here, the relaxation); for an integer "
        "E != E_opt use contraction.beta_nc, "
        "which is then larger."
    ),
    preconditions=(Precondition(E, "<=", _E_opt, "E <= E_opt", "bound is Theorem 4 at E_opt"),
                   Precondition(E, ">=", _E_opt, "E >= E_opt", "bound is Theorem 4 at E_opt"),
                   *_step_eq(1 / (2 * L * sp.sqrt(T * E)), "1/(2*L*sqrt(T*E))")),
)

# --------------------------------------------------------------- iteration complexity (§5)
_cx_fp = {
    "init": 64 * La**2 * Delta**2 / (E * eps**2),
    "noise": L**2 * S**2 * sigma**4 / (La**2 * E * eps**2),
    "prox": alpha**2 * E**3 * G**4 / (La**2 * eps**2),
    "drift": 2 * L**2 * E * G**2 / (La**2 * eps),
    "prox_drift": alpha ** R_(4, 3) * L ** R_(2, 3) * E ** R_(1, 3) * G ** R_(4, 3)
    / (16 ** R_(2, 3) * La**2 * eps ** R_(2, 3)),
}
complexity_fedprox = Bound(
    id="contraction.complexity_fedprox",
    source=f"{_SRC}, §5, iteration complexity of FedProx (from Theorem 2)",
    expr=sum(_cx_fp.values()),
    params=bc_params("L", "alpha", "Delta", "E", "eps", "S", "sigma", "G", nonconvex=True),
    kind="order",
    lhs="rounds_to_eps",
    description=(
        "T_eps = O(64 L_a^2 Delta^2/(E eps^2)) + O(L^2 S^2 sigma^4/(L_a^2 E eps^2)) + "
        "O(alpha^2 E^3 G^4/(L_a^2 eps^2) + 2 L^2 E G^2/(L_a^2 eps) + alpha^(4/3) L^(2/3) E^(1/3) "
        "G^(4/3)/(16^(2/3) L_a^2 eps^(2/3))), each piece of Theorem 2 <= eps; the factor 3 of "
        "(a + b + c)^2 <= 3(a^2 + b^2 + c^2) is absorbed (BC-B15). Built from the printed "
        "Theorem 2; the correction BC-B9 changes constants only. Exact form: "
        "contraction.t_eps_fedprox."
    ),
    terms=_cx_fp,
    errata=("BC-B15", "BC-B9"),
)

_cx_b = {
    "init": 16 * L**2 * Delta**2 / (E * eps**2),
    "noise": S**2 * sigma**4 / (4 * E * eps**2),
    "drift": E * G**2 / eps * A_BETA,
}
complexity_beta = Bound(
    id="contraction.complexity_beta",
    source=f"{_SRC}, §5, iteration complexity of the beta algorithm (from Theorem 4)",
    expr=sum(_cx_b.values()),
    params=bc_params("L", "Delta", "E", "eps", "S", "sigma", "G", "beta", nonconvex=True),
    kind="order",
    lhs="rounds_to_eps",
    description=(
        "T_eps = O(16 L^2 Delta^2/(E eps^2)) + O(S^2 sigma^4/(4 E eps^2)) + O(E G^2 A(beta)/eps); "
        "the last term is O(G^2/(beta^2 eps)) as beta -> 0. Exact form: contraction.t_eps_beta."
    ),
    terms=_cx_b,
    errata=("BC-B15",),
)

# a, b, c of a/sqrt(T) + b/T + c/T^(3/2): each term is (its coefficient)/T^power, so the
# coefficient is the term at T = 1
_a_fp = sum(_t2[k].subs(T, 1) for k in ("init", "noise", "prox"))
_b_fp = _t2["drift"].subs(T, 1)
_c_fp3 = _t2["prox_drift"].subs(T, 1)
t_eps_fedprox = Bound(
    id="contraction.t_eps_fedprox",
    source=f"{_SRC}, §5 exact form (derived in the spec from corrected Theorem 2)",
    expr=sp.Max(9 * _a_fp**2 / eps**2, 3 * _b_fp / eps, (3 * _c_fp3 / eps) ** R_(2, 3)),
    params=bc_params("L", "alpha", "Delta", "E", "eps", "S", "sigma", "G", nonconvex=True),
    kind="upper",
    lhs="rounds_to_eps",
    description=(
        "Writing corrected Theorem 2 as a/sqrt T + b/T + c/T^(3/2), every T >= max{9 a^2/eps^2, "
        "3 b/eps, (3 c/eps)^(2/3)} (each piece <= eps/3) gives E||grad f(w_hat_T)||^2 <= eps "
        "with gamma = 1/(2(L + alpha) sqrt(T E)). Not ceiled: any integer T >= the value works."
    ),
    errata=("BC-B9", "BC-B15"),
)

_a_b = sum(_t4[k].subs(T, 1) for k in ("init", "noise"))
_b_b = _t4["drift"].subs(T, 1)
t_eps_beta = Bound(
    id="contraction.t_eps_beta",
    source=f"{_SRC}, §5 exact form (derived from Theorem 4)",
    expr=sp.Max(4 * _a_b**2 / eps**2, 2 * _b_b / eps),
    params=bc_params("L", "Delta", "E", "eps", "S", "sigma", "G", "beta", nonconvex=True),
    kind="upper",
    lhs="rounds_to_eps",
    description=(
        "Writing Theorem 4 as a/sqrt T + b/T, every T >= max{4 a^2/eps^2, 2 b/eps} (each piece "
        "<= eps/2) gives E||grad f(w_hat_T)||^2 <= eps with gamma = 1/(2L sqrt(T E)), a = 4 L "
        "Delta/sqrt E + S sigma^2/(2 sqrt E), b = E G^2 A(beta)."
    ),
    errata=("BC-B15",),
)

BOUNDS = [
    fedavg_factor,
    fedprox_factor,
    beta_factor,
    fedprox_sc,
    beta_sc,
    fedprox_nc,
    fedprox_nc_printed,
    beta_nc,
    corollary1_e_opt,
    corollary1,
    complexity_fedprox,
    complexity_beta,
    t_eps_fedprox,
    t_eps_beta,
    *_LEMMAS,
]
