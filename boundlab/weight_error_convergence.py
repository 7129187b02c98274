"""FedAU convergence results that consume the weight error (seed 002, Wang & Ji).

Part of the ``weight_error`` family (collected through :mod:`boundlab.weight_error`).
Algorithm 1: N clients, I local SGD steps with local step size gamma, server step size eta,
update x_{t+1} = x_t + (eta/N) sum_n omega_t^n Delta_t^n. Assumptions A1 (L-smooth), A2
(variance sigma^2), A3 (divergence delta), A4 (Bernoulli participation), A5 (option 1:
per-round weight error <= 1/81, Psi_G = 0; option 2: ||grad f||^2 <= G^2, Psi_G = G^2).
For FedAU's Alg. 2, omega_0 = 1 makes option 1 fail at t = 0 unless almost all p_n >= 0.89, so
runs of Alg. 2 use option 2.

Example
-------
>>> import boundlab
>>> b = boundlab.get("weight_error.theorem2_explicit")
>>> v = b.evaluate(F=1.0, gamma=0.01, eta=1.0, I=5, T=1000, W=0.1, PsiG=1.0, delta=1.0,
...                L=1.0, sigma=1.0, Q=2.0, N=100)
>>> round(v, 4)
17.1867
>>> b.violated_preconditions(F=1.0, gamma=0.01, eta=1.0, I=5, T=1000, W=0.1, PsiG=1.0,
...                          delta=1.0, L=1.0, sigma=1.0, Q=2.0, N=100)
[]
"""

from __future__ import annotations

import sympy as sp

from .core import Bound, Precondition, make_params
from .symbols import UNIT_OPEN, domain_of, sym

__all__ = ["BOUNDS"]

_SRC = "seed 002"
R_ = sp.Rational
_NAMES = ("gamma", "eta", "I", "N", "L", "sigma", "delta", "deltat", "F", "H", "T", "W", "PsiG",
          "Q", "P", "G", "p")
(gamma, eta, I, N, L, sigma, delta, deltat, F, H, T, W, PsiG, Q, P, G, p) = (
    sym(n) for n in _NAMES)
werr_t, q_t, g2 = sym("werr_t"), sym("q_t"), sym("grad_norm2")

_DOCS = {
    "gamma": "local step size (FedAU)",
    "eta": "global (server) step size (FedAU); not the local step size, which is gamma",
    "I": "local SGD steps per round (FedAU; BC calls this E)",
    "N": "number of clients (FedAU)",
    "L": "smoothness constant of every F_n (FedAU A1)",
    "sigma": "E||g_n(x) - grad F_n(x)||^2 <= sigma^2 (FedAU A2)",
    "delta": "||grad F_n(x) - grad f(x)||^2 <= delta^2 for all x, n (FedAU A3)",
    "deltat": ("divergence bound of the reweighted objective: ||grad F_n - grad h||^2 <= "
               "deltat^2; Lemma B.3.1 gives deltat = 2 delta"),
    "F": "f(x_0) - f*, f = (1/N) sum_n F_n (FedAU's script F; not a client objective)",
    "H": "h(x_0) - h*, h = (1/P) sum_n omega_n p_n F_n (FedAU's script H)",
    "T": "number of rounds (t = 0..T-1)",
    "W": ("weight error (1/(NT)) sum_t sum_n E(p_n omega_t^n - 1)^2 (bounded by "
          "weight_error.average / lemma_b71_ceil for Alg. 2)"),
    "PsiG": "0 under A5 option 1 (weights nearly optimal), G^2 under option 2 (FedAU)",
    "Q": ("deterministic bound on max_t (1/N) sum_n p_n (omega_t^n)^2 (FedAU); for Alg. 2, "
          "Q <= K^2 mean_n p_n"),
    "P": "sum_n omega_n p_n for the time-constant weights omega_n (FedAU Theorem 1)",
    "G": "A5 option 2: ||grad f(x)||^2 <= G^2 for all x (FedAU)",
    "p": "min_n p_n (FedAU Corollary 4; R = 1/ln c, c = (1-p)^(-2), needs p < 1)",
    "werr_t": "per-round weight error (1/N) sum_n (p_n omega_t^n - 1)^2 (FedAU)",
    "q_t": "(1/N) sum_n p_n (omega_t^n)^2 at round t (FedAU)",
    "grad_norm2": "||grad f(x_t)||^2 (Lemma B.5.1) or ||grad f~(x_t)||^2 (Lemma B.3.2)",
}


def _params(*names, **domains):
    """make_params with this module's docs (optional domain overrides)."""
    return make_params(*names, **{n: (domains.get(n, domain_of(n)), _DOCS[n]) for n in names})


_GAMMA_LE = Precondition(4 * sp.sqrt(15) * L * I * gamma, "<=", 1, "gamma <= 1/(4*sqrt(15)*L*I)",
                         "bounds the local drift (Lemma B.3.2) and 15 L^2 I^2 gamma^2 <= 1/16")
_GE_LE = Precondition(2 * L * I * gamma * eta, "<=", 1, "gamma*eta <= 1/(2*L*I)",
                      "descent lemma B.3.3")
_GE_Q = Precondition(27 * L * I * Q * gamma * eta, "<=", N, "gamma*eta <= N/(27*L*I*Q)",
                     "makes 27 gamma eta L I Q/(16 N) <= 1/16 in the proof of Theorem 2")

# --------------------------------------------------------------- Lemma B.3.2 (local drift)
_dr_noise, _dr_het, _dr_grad = (5 * I * gamma**2 * sigma**2, 30 * I**2 * gamma**2 * deltat**2,
                                30 * I**2 * gamma**2 * g2)
lemma_b32 = Bound(
    id="weight_error.lemma_b32",
    source=f"{_SRC}, Lemma B.3.2",
    expr=5 * I * gamma**2 * (sigma**2 + 6 * I * deltat**2) + 30 * I**2 * gamma**2 * g2,
    params=_params("I", "gamma", "sigma", "deltat", "grad_norm2"),
    extra_params=_params("L"),
    kind="upper",
    lhs="local_drift",
    description=(
        "E_t||y_{t,i}^n - x_t||^2 <= 5 I gamma^2 (sigma^2 + 6 I deltat^2) + 30 I^2 gamma^2 "
        "||grad f~(x_t)||^2 for every local step i, where f~ = sum_n phi_n F_n is any reweighted "
        "objective with divergence deltat (deltat = delta for f). Uses (sqrt(3) e - 1)(I - 1/2) "
        "<= 5I."
    ),
    preconditions=(Precondition(sp.sqrt(30) * L * I * gamma, "<=", 1,
                                "gamma <= 1/(sqrt(30)*L*I)", "Lemma B.3.2's step-size condition"),),
    terms={"noise": _dr_noise, "heterogeneity": _dr_het, "gradient": _dr_grad},
)

# --------------------------------------------------------------- Lemma B.5.1 (descent for f)
_d_werr = R_(3, 2) * gamma * eta * I * (15 * L**2 * I * gamma**2 * sigma**2
                                        + R_(27, 8) * delta**2) * werr_t
_d_drift = R_(5, 2) * gamma**3 * eta * L**2 * I**2 * (sigma**2 + 6 * I * delta**2)
_d_noise = (gamma**2 * eta**2 * L * I / (2 * N)
            * (R_(17, 16) * sigma**2 + R_(27, 8) * I * delta**2) * q_t)
_d_grad = gamma * eta * I * (R_(81, 16) * werr_t + 15 * L**2 * I**2 * gamma**2
                             + R_(27, 16) * gamma * eta * L * I * q_t / N - R_(1, 4)) * g2
lemma_b51 = Bound(
    id="weight_error.lemma_b51",
    source=f"{_SRC}, Lemma B.5.1 (Lemma B.3.3 with phi_n = 1/N)",
    expr=_d_werr + _d_drift + _d_noise + _d_grad,
    params=_params("gamma", "eta", "I", "L", "sigma", "delta", "werr_t", "q_t", "N",
                   "grad_norm2"),
    kind="upper",
    lhs="one_round_descent",
    description=(
        "E_t f(x_{t+1}) - f(x_t) <= (3 gamma eta I/2)(15 L^2 I gamma^2 sigma^2 + 27 delta^2/8) "
        "e_t + (5 gamma^3 eta L^2 I^2/2)(sigma^2 + 6 I delta^2) + (gamma^2 eta^2 L I/(2N))"
        "(17 sigma^2/16 + 27 I delta^2/8) q_t + gamma eta I [81 e_t/16 + 15 L^2 I^2 gamma^2 + "
        "27 gamma eta L I q_t/(16N) - 1/4] ||grad f(x_t)||^2, with e_t = (1/N) sum_n (p_n "
        "omega_t^n - 1)^2 and q_t = (1/N) sum_n p_n (omega_t^n)^2. The right side may be "
        "negative."
    ),
    preconditions=(_GAMMA_LE, _GE_LE),
    terms={"weight_error": _d_werr, "drift": _d_drift, "noise": _d_noise, "gradient": _d_grad},
)

# --------------------------------------------------------------- Theorem 2
_o_init = F / (gamma * eta * I * T)
_o_werr = (PsiG + delta**2 + gamma**2 * L**2 * I * sigma**2) * W
_o_noise = gamma * eta * L * Q * (I * delta**2 + sigma**2) / N
_o_drift = gamma**2 * L**2 * I * (I * delta**2 + sigma**2)
_T2_PARAMS = ("F", "gamma", "eta", "I", "T", "W", "PsiG", "delta", "L", "sigma", "Q", "N")
theorem2 = Bound(
    id="weight_error.theorem2",
    source=f"{_SRC}, Theorem 2, eq. (6)",
    expr=_o_init + _o_werr + _o_noise + _o_drift,
    params=_params(*_T2_PARAMS),
    kind="order",
    lhs="avg_grad_norm2",
    description=(
        "(1/T) sum_t E||grad f(x_t)||^2 <= O(F/(gamma eta I T) + (Psi_G + delta^2 + gamma^2 L^2 I "
        "sigma^2) W + gamma eta L Q (I delta^2 + sigma^2)/N + gamma^2 L^2 I (I delta^2 + "
        "sigma^2)) for arbitrary given weights. Hidden constants, option 2 | option 1: 8 | 16 "
        "(init), 81/2 | 81 (Psi_G W, delta^2 W), 180 | 360 (gamma^2 L^2 I sigma^2 W), 17/4 | "
        "17/2 and 27/2 | 27 (noise), 20 | 40 and 120 | 240 (drift); "
        "weight_error.theorem2_explicit is the explicit form."
    ),
    preconditions=(_GAMMA_LE, _GE_LE, _GE_Q),
    terms={"init": _o_init, "weight_error": _o_werr, "noise": _o_noise, "drift": _o_drift},
)


def _thm2(c_init, c_w, c_drift, c_noise, psi):
    init = c_init * F / (gamma * eta * I * T)
    werr = c_w * W * (15 * L**2 * I * gamma**2 * sigma**2 + R_(27, 8) * (delta**2 + psi))
    drift = c_drift * gamma**2 * L**2 * I * (sigma**2 + 6 * I * delta**2)
    noise = c_noise * gamma * eta * L * Q / N * (R_(17, 16) * sigma**2 + R_(27, 8) * I * delta**2)
    return {"init": init, "weight_error": werr, "drift": drift, "noise": noise}


_t2e = _thm2(16, 24, 40, 8, PsiG)
theorem2_explicit = Bound(
    id="weight_error.theorem2_explicit",
    source=f"{_SRC}, Theorem 2 explicit (derived from (B.5.3)/(B.5.5) summed over t)",
    expr=sum(_t2e.values()),
    params=_params(*_T2_PARAMS),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "(1/T) sum_t E||grad f(x_t)||^2 <= 16 F/(gamma eta I T) + 24 W (15 L^2 I gamma^2 sigma^2 "
        "+ 27 (delta^2 + Psi_G)/8) + 40 gamma^2 L^2 I (sigma^2 + 6 I delta^2) + (8 gamma eta L Q/N)"
        "(17 sigma^2/16 + 27 I delta^2/8). One expression valid under both A5 options (Psi_G = 0 "
        "or G^2); option 2 admits the halved constants of weight_error.theorem2_opt2."
    ),
    preconditions=(_GAMMA_LE, _GE_LE, _GE_Q),
    terms=_t2e,
)

_t2o = _thm2(8, 12, 20, 4, G**2)
theorem2_opt2 = Bound(
    id="weight_error.theorem2_opt2",
    source=f"{_SRC}, Theorem 2 explicit under A5 option 2 (derived from (B.5.3))",
    expr=sum(_t2o.values()),
    params=_params("F", "gamma", "eta", "I", "T", "W", "G", "delta", "L", "sigma", "Q", "N"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "Under A5 option 2 (||grad f||^2 <= G^2): 8 F/(gamma eta I T) + 12 W (15 L^2 I gamma^2 "
        "sigma^2 + 27 (delta^2 + G^2)/8) + 20 gamma^2 L^2 I (sigma^2 + 6 I delta^2) + (4 gamma "
        "eta L Q/N)(17 sigma^2/16 + 27 I delta^2/8)."
    ),
    preconditions=(_GAMMA_LE, _GE_LE, _GE_Q),
    terms=_t2o,
)

# --------------------------------------------------------------- Corollary 4
_R = -1 / (2 * sp.log(1 - p))
_logT2 = sp.log(T) ** 2


def _cor4(r_factor):
    return {
        "sigma": sigma * sp.sqrt(L * F * Q) / sp.sqrt(N * I * T),
        "delta": delta * sp.sqrt(L * F * Q) / sp.sqrt(N * T),
        "weight_error": (PsiG + delta**2 + sigma**2 / (I * T)) * r_factor * _logT2 / T,
        "init": (L * F * (1 + Q / N) + delta**2 + sigma**2 / I) / T,
    }


_COR4_PARAMS = ("sigma", "L", "F", "Q", "N", "I", "T", "delta", "PsiG", "p")
_T_GE_2 = Precondition(T, ">=", 2, "T >= 2", "Corollary 4 assumes T >= 2 (log T > 0)")
_c4 = _cor4(1 + _R)
corollary4 = Bound(
    id="weight_error.corollary4",
    source=f"{_SRC}, Corollary 4, eq. (8), corrected R -> 1 + R (FedAU-F7)",
    expr=sum(_c4.values()),
    params=_params(*_COR4_PARAMS, p=UNIT_OPEN),
    kind="order",
    lhs="avg_grad_norm2",
    description=(
        "FedAU (K = log_c T, gamma = min{1/(L I sqrt T), 1/(4 sqrt 15 L I)}, gamma eta = "
        "min{sqrt(F N/(Q (I delta^2 + sigma^2) L I T)), 1/(2LI), N/(27 L I Q)}): (1/T) sum_t "
        "E||grad f(x_t)||^2 <= O(sigma sqrt(L F Q)/sqrt(N I T) + delta sqrt(L F Q)/sqrt(N T) + "
        "(Psi_G + delta^2 + sigma^2/(I T)) (1 + R) log^2 T/T + (L F (1 + Q/N) + delta^2 + "
        "sigma^2/I)/T), R = -1/(2 ln(1 - p)), p = min_n p_n. The printed R (not 1 + R) fails as "
        "R -> 0 (FedAU-F7); weight_error.corollary4_explicit is the explicit form."
    ),
    preconditions=(_T_GE_2,),
    terms=_c4,
    errata=("FedAU-F7",),
)

_c4p = _cor4(_R)
corollary4_printed = Bound(
    id="weight_error.corollary4.printed",
    source=f"{_SRC}, Corollary 4 as printed, eq. (8)",
    expr=sum(_c4p.values()),
    params=_params(*_COR4_PARAMS, p=UNIT_OPEN),
    kind="order",
    lhs="avg_grad_norm2",
    description="As printed, with R log^2 T/T in the third term (FedAU-F7).",
    preconditions=(_T_GE_2,),
    terms=_c4p,
    errata=("FedAU-F7",),
    printed=True,
)

_ids = I * delta**2 + sigma**2
_c4e = {
    "leading": 43 * sp.sqrt(L * F * Q * _ids / (N * I * T)),
    "init": 32 * L * F / T + 432 * L * F * Q / (N * T),
    "weight_error": 24 * W * (15 * sigma**2 / (I * T) + R_(27, 8) * (delta**2 + PsiG)),
    "drift": 40 * (sigma**2 + 6 * I * delta**2) / (I * T),
}
_sqFN = sp.sqrt(F * N)
corollary4_explicit = Bound(
    id="weight_error.corollary4_explicit",
    source=f"{_SRC}, Corollary 4 explicit (derived: Corollary 4's steps inserted in Theorem 2)",
    expr=sum(_c4e.values()),
    params=_params("L", "F", "Q", "I", "delta", "sigma", "N", "T", "W", "PsiG"),
    extra_params=_params("gamma", "eta"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "With Corollary 4's step sizes: (1/T) sum_t E||grad f(x_t)||^2 <= 43 sqrt(L F Q (I "
        "delta^2 + sigma^2)/(N I T)) + 32 L F/T + 432 L F Q/(N T) + 24 W (15 sigma^2/(I T) + "
        "27 (delta^2 + Psi_G)/8) + 40 (sigma^2 + 6 I delta^2)/(I T); for Alg. 2 with K = "
        "ceil(log_c T), W <= weight_error.lemma_b71_ceil. gamma may be smaller than Corollary "
        "4's choice; gamma*eta must equal it (the optional gamma, eta are checked)."
    ),
    preconditions=(
        Precondition(gamma * L * I * sp.sqrt(T), "<=", 1, "gamma <= 1/(L*I*sqrt(T))",
                     "used as 15 L^2 I gamma^2 sigma^2 <= 15 sigma^2/(I T)"),
        _GAMMA_LE,
        Precondition(gamma * eta * sp.sqrt(Q * _ids * L * I * T), "<=", _sqFN,
                     "gamma*eta <= sqrt(F*N/(Q*(I*delta^2+sigma^2)*L*I*T))", "first branch"),
        _GE_LE,
        _GE_Q,
        Precondition(gamma * eta * (sp.sqrt(Q * _ids * L * I * T)
                                    + (2 * L * I + 27 * L * I * Q / N) * _sqFN), ">=", _sqFN,
                     "gamma*eta = min of the three branches (1/(gamma*eta) <= sum of reciprocals)",
                     "bounds F/(gamma eta I T)"),
    ),
    terms=_c4e,
)

# --------------------------------------------------------------- Theorem B.4.1 (objective h)
_REQ = Precondition(15 * L**2 * I**2 * gamma**2 + R_(27, 16) * gamma * eta * L * I * Q / P,
                    "<=", R_(1, 8), "15*L^2*I^2*gamma^2 + 27*gamma*eta*L*I*Q/(16*P) <= 1/8",
                    "makes the bracket of Lemma B.3.3 <= -1/8")
_b41_rest = {
    "drift": 20 * gamma**2 * L**2 * I * (sigma**2 + 6 * I * deltat**2),
    "noise": 4 * gamma * eta * L * Q / P * (R_(17, 16) * sigma**2 + R_(27, 8) * I * deltat**2),
}
_B41_PARAMS = ("H", "N", "gamma", "eta", "P", "I", "T", "L", "sigma", "deltat", "Q")
_B41_PRE = (_GAMMA_LE, Precondition(2 * L * I * gamma * eta * P, "<=", N,
                                    "gamma*eta*P/N <= 1/(2*L*I)", "gamma eta~ <= 1/(2LI)"), _REQ)
_b41 = {"init": 8 * H * N / (gamma * eta * P * I * T), **_b41_rest}
_Q_DOC = ("(1/N) sum_n p_n omega_n^2 for the time-constant weights (Q of Theorem 2; "
          "sum_n p_n alpha~_n^2 = N^3 Q/P^2)")
theorem_b41 = Bound(
    id="weight_error.theorem_b41",
    source=f"{_SRC}, Theorem B.4.1, eq. (B.4.4), corrected 4 -> 8 (FedAU-F8)",
    expr=sum(_b41.values()),
    params=make_params(*_B41_PARAMS, **{n: (domain_of(n), _Q_DOC if n == "Q" else _DOCS[n])
                                        for n in _B41_PARAMS}),
    kind="upper",
    lhs="avg_grad_norm2_h",
    description=(
        "Time-constant weights omega_n: (1/T) sum_t E||grad h(x_t)||^2 <= 8 H/(gamma eta~ I T) + "
        "20 gamma^2 L^2 I (sigma^2 + 6 I deltat^2) + (4 gamma eta~ L/N^2)(17 sigma^2/16 + 27 I "
        "deltat^2/8) sum_n p_n alpha~_n^2, written with eta~ = eta P/N and alpha~_n = omega_n N/P "
        "(so the last term is 4 gamma eta L Q/P (...)). The printed first term has 4 instead of "
        "8 (FedAU-F8). h = (1/P) sum_n omega_n p_n F_n, so Alg. 1 with constant weights "
        "minimizes h, not f, unless omega_n is proportional to 1/p_n (Theorem 1)."
    ),
    preconditions=_B41_PRE,
    terms=_b41,
    errata=("FedAU-F8",),
)

_b41p = {"init": 4 * H * N / (gamma * eta * P * I * T), **_b41_rest}
theorem_b41_printed = Bound(
    id="weight_error.theorem_b41.printed",
    source=f"{_SRC}, Theorem B.4.1 as printed, eq. (B.4.4)",
    expr=sum(_b41p.values()),
    params=make_params(*_B41_PARAMS, **{n: (domain_of(n), _Q_DOC if n == "Q" else _DOCS[n])
                                        for n in _B41_PARAMS}),
    kind="upper",
    lhs="avg_grad_norm2_h",
    description="As printed: 4 H/(gamma eta~ I T) in the first term (FedAU-F8: 8 is right).",
    preconditions=_B41_PRE,
    terms=_b41p,
    errata=("FedAU-F8",),
    printed=True,
)

BOUNDS = [
    lemma_b32,
    lemma_b51,
    theorem2,
    theorem2_explicit,
    theorem2_opt2,
    corollary4,
    corollary4_printed,
    corollary4_explicit,
    theorem_b41,
    theorem_b41_printed,
]
