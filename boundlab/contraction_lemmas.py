"""Single-round lemmas of Buttaci & Calafiore (seed 003), appendices A (FedProx) and B (beta).

Part of the ``contraction`` family (collected through :mod:`boundlab.contraction`). The paper's
lemma numbers collide (main Lemma 1, App. A Lemmas 1-4, App. B Lemmas 1-4); ids here follow the
spec: ``lemma_a1`` .. ``lemma_a4`` (FedProx), ``lemma_b1`` .. ``lemma_b4`` (beta algorithm).
Setting: C clients, full participation (A1), aggregation weights p_i with S = sum_i p_i^2, E
local SGD steps with step size gamma (= gamma_t), stochastic gradients with variance sigma^2
(A2) and second moment G^2 along the trajectory (A3), L-smooth (A4), mu-strongly convex (A5).

Example
-------
>>> import boundlab
>>> b = boundlab.get("contraction.lemma_a3")
>>> round(b.evaluate(alpha=0.0, mu=0.5, gamma=0.25, E=1, dist_t=1.0, sigma=0.0, S=1.0,
...                  L=1.0, Gamma=0.0, G=1.0), 4)
1.375
"""

from __future__ import annotations

import sympy as sp

from .core import Bound, Precondition, make_params
from .symbols import UNIT_HALF_OPEN, domain_of, sym

__all__ = ["A_BETA", "BOUNDS", "KAPPA_BETA", "KAPPA_FP", "bc_params"]

_SRC = "seed 003"
_NAMES = ("alpha", "beta", "mu", "L", "E", "G", "S", "sigma", "Gamma", "gamma", "gamma_prev")
(alpha, beta, mu, L, E, G, S, sigma, Gamma, gamma, gp) = (sym(n) for n in _NAMES)
dist_t, dec = sym("dist_t"), sym("decrease")

#: A(beta) = 4 + (1 - beta)^2 + 8 (1 - 1/beta)^2, the paper's "A" of Theorems 3 and 4.
A_BETA = 4 + (1 - beta) ** 2 + 8 * (1 - 1 / beta) ** 2
#: kappa of Lemma A.3 (FedProx single-round contraction coefficient).
KAPPA_FP = (alpha + mu * (1 - gamma * (alpha + mu)) ** E) / (alpha + mu)
#: kappa of Lemma B.3 (beta algorithm single-round contraction coefficient).
KAPPA_BETA = 1 - 1 / beta + (1 / beta) * (1 - beta * mu * gamma) ** E

_DOCS = {
    "alpha": ("FedProx proximal coefficient (BC); alpha = 0 is FedAvg (the paper states "
              "alpha > 0; the proofs also hold at 0)"),
    "beta": ("perturbation weight (BC); beta = 1 is FedAvg (the paper states beta in (0,1); "
             "the proofs also hold at 1)"),
    "mu": "strong-convexity constant of every f_i (BC A5); not FedAU's target participation mean",
    "L": "smoothness constant of every f_i (BC A4)",
    "E": ("local SGD steps per round (BC theory); the experiments' E counts local epochs "
          "(BC-B13); FedAU calls the local steps I"),
    "T": "number of rounds (BC)",
    "t": "round index t >= 0 (BC)",
    "k": "local-step index 0 <= k <= E (BC)",
    "G": "E||g_i||^2 <= G^2 at every local (and perturbed) query point (BC A3, a trajectory bound)",
    "S": "sum_i p_i^2 of the aggregation weights (BC), in [1/C, 1]; not a client count",
    "sigma": "E||g_i - grad f_i||^2 <= sigma^2 at every query point (BC A2)",
    "Gamma": "heterogeneity f_star - sum_i p_i f_i(w^i_star) (BC Def. 3, after Li et al.)",
    "Delta": "f(wbar_{0,0}) - f_star, the initial optimality gap (BC Theorems 1 and 3)",
    "Delta_nc": ("f(wbar_{0,0}) - f_inf with f_inf a lower bound of f (BC Theorems 2 and 4; "
                 "not the optimality gap)"),
    "gamma": "local step size gamma_t of round t (BC)",
    "gamma_prev": "step size gamma_{t-1} of the previous round (BC); 0 encodes t = 0",
    "dist_t": "E||wbar_{t,0} - w_star||^2 at the start of round t (BC)",
    "decrease": "E[f(wbar_{t,0}) - f(wbar_{t+1,0})], one round's expected decrease (BC)",
    "eps": "accuracy target: E||grad f(w_hat)||^2 <= eps (BC)",
}
_BETA_DOM = UNIT_HALF_OPEN


def bc_params(*names, nonconvex=False, **domains):
    """make_params with BC's parameter docs; ``beta`` gets (0, 1] (beta = 1 is FedAvg).

    >>> bc_params("beta", "Delta", nonconvex=True)["Delta"].doc.split(" with ")[0]
    'f(wbar_{0,0}) - f_inf'
    """
    out = {}
    for n in names:
        doc = _DOCS["Delta_nc"] if (n == "Delta" and nonconvex) else _DOCS[n]
        dom = domains.get(n, _BETA_DOM if n == "beta" else domain_of(n))
        out[n] = (dom, doc)
    return make_params(*names, **out)


MU_LE_L = Precondition(mu, "<=", L, "mu <= L", "strong convexity and smoothness of the same f_i")

# --------------------------------------------------------------- Appendix A (FedProx)
_AG = Precondition(alpha * gamma, "<=", 1, "alpha*gamma <= 1 (gamma <= 1/alpha)",
                   "1 - alpha gamma >= 0 in the FedProx local step (11)")
lemma_a1 = Bound(
    id="contraction.lemma_a1",
    source=f"{_SRC}, Lemma A.1 (App. A Lemma 1), eq. (13)",
    expr=gamma**2 * E**2 * G**2,
    params=bc_params("gamma", "E", "G"),
    extra_params=bc_params("alpha"),
    kind="upper",
    lhs="local_deviation",
    description=(
        "FedProx local deviation: E||w^i_{t,k} - wbar_{t,0}||^2 <= gamma^2 E^2 G^2 for "
        "0 <= k <= E (the proof gives gamma^2 k^2 G^2)."
    ),
    preconditions=(_AG,),
)

lemma_a2 = Bound(
    id="contraction.lemma_a2",
    source=f"{_SRC}, Lemma A.2 (App. A Lemma 2), eq. (17)",
    expr=4 * gamma**2 * E**2 * G**2,
    params=bc_params("gamma", "E", "G"),
    extra_params=bc_params("alpha"),
    kind="upper",
    lhs="local_divergence",
    description="FedProx client drift: E||wbar_{t,k} - w^i_{t,k}||^2 <= 4 gamma^2 E^2 G^2.",
    preconditions=(_AG,),
)

_a3 = {
    "contraction": KAPPA_FP * dist_t,
    "noise": gamma**2 * E * sigma**2 * S,
    "heterogeneity": 6 * gamma**2 * L * E * Gamma,
    "drift": 8 * gamma**2 * E**3 * G**2,
}
lemma_a3 = Bound(
    id="contraction.lemma_a3",
    source=f"{_SRC}, Lemma A.3 (App. A Lemma 3), eqs. (23)-(24)",
    expr=sum(_a3.values()),
    params=bc_params("alpha", "mu", "gamma", "E", "dist_t", "sigma", "S", "L", "Gamma", "G"),
    kind="upper",
    lhs="dist_next",
    description=(
        "FedProx, strongly convex: E||wbar_{t+1,0} - w_star||^2 <= kappa E||wbar_{t,0} - "
        "w_star||^2 + gamma^2 E sigma^2 S + 6 gamma^2 L E Gamma + 8 gamma^2 E^3 G^2 with kappa = "
        "(alpha + mu (1 - gamma (alpha + mu))^E)/(alpha + mu) <= 1 - gamma mu."
    ),
    preconditions=(
        Precondition(2 * L * gamma, "<=", 1, "gamma <= 1/(2*L)", "Lemma A.3"),
        Precondition((alpha + mu) * gamma, "<=", 1, "gamma <= 1/(alpha+mu)", "Lemma A.3"),
        MU_LE_L,
    ),
    terms=_a3,
)


def _a4(c_noise, c_prox2):
    return {
        "progress": 4 / (gamma * E) * dec,
        "noise": c_noise * gamma * L * sigma**2 * S,
        "prox": 2 * gamma * alpha * E**2 * G**2,
        "drift": 8 * gamma**2 * L**2 * E**2 * G**2,
        "prox_drift": c_prox2 * gamma**3 * alpha**2 * L * E**2 * G**2,
    }


_A4_PARAMS = ("gamma", "E", "decrease", "L", "sigma", "S", "alpha", "G")
_A2G = Precondition(2 * alpha * gamma, "<=", 1, "gamma <= 1/(2*alpha)",
                    "-gamma (1 - alpha gamma)/2 <= -gamma/4")
_a4c = _a4(4, 4)
lemma_a4 = Bound(
    id="contraction.lemma_a4",
    source=f"{_SRC}, Lemma A.4 (App. A Lemma 4), eq. (59), corrected (BC-B9)",
    expr=sum(_a4c.values()),
    params=bc_params(*_A4_PARAMS),
    kind="upper",
    lhs="round_avg_grad_norm2",
    description=(
        "FedProx, nonconvex: (1/E) sum_{k<E} E||grad f(wbar_{t,k})||^2 <= (4/(gamma E)) "
        "E[f(wbar_{t,0}) - f(wbar_{t+1,0})] + 4 gamma L sigma^2 S + 2 gamma alpha E^2 G^2 + "
        "8 gamma^2 L^2 E^2 G^2 + 4 gamma^3 alpha^2 L E^2 G^2. Corrected: the printed proof's "
        "step (76) is invalid; ||a + b||^2 <= 2||a||^2 + 2||b||^2 doubles the sigma^2 term, "
        "multiplies the last term by 8 and needs gamma <= 1/(2L) instead of 1/L (BC-B9)."
    ),
    preconditions=(Precondition(2 * L * gamma, "<=", 1, "gamma <= 1/(2*L)",
                                "-(gamma/2)(1 - 2 L gamma) <= 0 after the repair of (76)"), _A2G),
    terms=_a4c,
    errata=("BC-B9",),
)

_a4p = _a4(2, sp.Rational(1, 2))
lemma_a4_printed = Bound(
    id="contraction.lemma_a4.printed",
    source=f"{_SRC}, Lemma A.4 as printed, eq. (59)",
    expr=sum(_a4p.values()),
    params=bc_params(*_A4_PARAMS),
    kind="upper",
    lhs="round_avg_grad_norm2",
    description=(
        "As printed: A = 2 gamma L sigma^2 S + 2 gamma alpha E^2 G^2 + 8 gamma^2 L^2 E^2 G^2 + "
        "gamma^3 alpha^2 L E^2 G^2/2 under gamma <= min{1/L, 1/(2 alpha)}; its proof uses the "
        "invalid inequality (76) (BC-B9)."
    ),
    preconditions=(Precondition(L * gamma, "<=", 1, "gamma <= 1/L", "(58)"), _A2G),
    terms=_a4p,
    errata=("BC-B9",),
    printed=True,
)

# --------------------------------------------------------------- Appendix B (beta algorithm)
lemma_b1 = Bound(
    id="contraction.lemma_b1",
    source=f"{_SRC}, Lemma B.1 (App. B Lemma 1), eq. (99)",
    expr=4 * gp**2 * E**2 * G**2,
    params=bc_params("gamma_prev", "E", "G"),
    kind="upper",
    lhs="neighbour_avg_deviation",
    description=(
        "E||u^i_t - u^j_t||^2 <= 1{t >= 1} 4 gamma_{t-1}^2 E^2 G^2 for all clients i, j "
        "(gamma_prev = 0 encodes t = 0, where u^i_0 = wbar_{0,0} for all i)."
    ),
)

_b2 = {
    "local": 4 * gamma**2 * E**2 * G**2 * (4 + (1 - beta) ** 2),
    "neighbours": 32 * gp**2 * E**2 * G**2 * (1 - 1 / beta) ** 2,
}
lemma_b2 = Bound(
    id="contraction.lemma_b2",
    source=f"{_SRC}, Lemma B.2 (App. B Lemma 2), eq. (107)",
    expr=sum(_b2.values()),
    params=bc_params("gamma", "gamma_prev", "E", "G", "beta"),
    kind="upper",
    lhs="perturbed_divergence",
    description=(
        "E||wbar_{t,k} - w~^i_{t,k}||^2 <= 4 gamma_t^2 E^2 G^2 [4 + (1 - beta)^2 + 1{t >= 1} "
        "8 (gamma_{t-1}^2/gamma_t^2)(1 - 1/beta)^2]. At beta = 1 it is 16 gamma^2 E^2 G^2, four "
        "times Lemma A.2: the root of BC-B8."
    ),
    terms=_b2,
    errata=("BC-B8",),
)

_b3 = {
    "contraction": KAPPA_BETA * dist_t,
    "drift": 8 * gamma**2 * E**3 * G**2 * (4 + (1 - beta) ** 2),
    "neighbours": 64 * gp**2 * E**3 * G**2 * (1 - beta) ** 2 / beta**2,
    "perturbation": mu * gamma**3 * beta * (1 - beta) * E**3 * G**2,
    "noise": gamma**2 * E * S * sigma**2,
    "heterogeneity": 6 * gamma**2 * L * E * Gamma,
}
lemma_b3 = Bound(
    id="contraction.lemma_b3",
    source=f"{_SRC}, Lemma B.3 (App. B Lemma 3), eqs. (122)-(123)",
    expr=sum(_b3.values()),
    params=bc_params("beta", "mu", "gamma", "gamma_prev", "E", "dist_t", "sigma", "S", "L",
                     "Gamma", "G"),
    kind="upper",
    lhs="dist_next",
    description=(
        "Beta algorithm, strongly convex: E||wbar_{t+1,0} - w_star||^2 <= kappa E||wbar_{t,0} - "
        "w_star||^2 + A, kappa = 1 - 1/beta + (1/beta)(1 - beta mu gamma)^E = 1 - mu gamma "
        "sum_{j<E} (1 - beta mu gamma)^j <= 1 - mu gamma, A = 8 gamma^2 E^3 G^2 [4 + (1-beta)^2 "
        "+ 1{t>=1} 8 gamma_{t-1}^2 (1-beta)^2/(gamma^2 beta^2)] + mu gamma^3 beta (1-beta) E^3 "
        "G^2 + gamma^2 E S sigma^2 + 6 gamma^2 L E Gamma. Needs Assumptions 1-5 (the paper says "
        "1-4 but uses strong convexity, BC-B10)."
    ),
    preconditions=(
        Precondition(2 * L * gamma, "<=", 1, "gamma <= 1/(2*L)", "Lemma B.3"),
        Precondition(beta * mu * gamma, "<=", 1, "gamma <= 1/(beta*mu)", "Lemma B.3"),
        MU_LE_L,
    ),
    terms=_b3,
    errata=("BC-B10",),
)

_b4 = {
    "progress": 2 / (gamma * E) * dec,
    "noise": gamma * L * sigma**2 * S,
    "drift": 4 * gamma**2 * L**2 * E**2 * G**2 * (4 + (1 - beta) ** 2),
    "neighbours": 32 * gp**2 * L**2 * E**2 * G**2 * (1 - 1 / beta) ** 2,
}
lemma_b4 = Bound(
    id="contraction.lemma_b4",
    source=f"{_SRC}, Lemma B.4 (App. B Lemma 4), eq. (192)",
    expr=sum(_b4.values()),
    params=bc_params("gamma", "gamma_prev", "E", "decrease", "L", "sigma", "S", "G", "beta"),
    kind="upper",
    lhs="round_avg_grad_norm2",
    description=(
        "Beta algorithm, nonconvex: (1/E) sum_k E||grad f(wbar_{t,k})||^2 <= (2/(gamma E)) "
        "E[f(wbar_{t,0}) - f(wbar_{t+1,0})] + gamma L sigma^2 S + 4 gamma^2 L^2 E^2 G^2 [4 + "
        "(1-beta)^2 + 1{t>=1} 8 (gamma_{t-1}^2/gamma^2)(1 - 1/beta)^2]."
    ),
    preconditions=(Precondition(L * gamma, "<=", 1, "gamma <= 1/L", "Lemma B.4"),),
    terms=_b4,
)

fedprox_kappa = Bound(
    id="contraction.fedprox_kappa",
    source=f"{_SRC}, Lemma A.3, kappa of eq. (24)",
    expr=KAPPA_FP,
    params=bc_params("alpha", "mu", "gamma", "E"),
    kind="identity",
    lhs="lemma_kappa",
    description=(
        "kappa = (alpha + mu (1 - gamma (alpha + mu))^E)/(alpha + mu), the exact coefficient of "
        "Lemma A.3's recursion; (1 - gamma mu)^E at alpha = 0, 1 - gamma mu at E = 1."
    ),
)

beta_kappa = Bound(
    id="contraction.beta_kappa",
    source=f"{_SRC}, Lemma B.3, kappa of eq. (123)",
    expr=KAPPA_BETA,
    params=bc_params("beta", "mu", "gamma", "E"),
    kind="identity",
    lhs="lemma_kappa",
    description=(
        "kappa = 1 - 1/beta + (1/beta)(1 - beta mu gamma)^E, the exact coefficient of Lemma B.3's "
        "recursion; (1 - mu gamma)^E at beta = 1, 1 - mu gamma at E = 1 for every beta."
    ),
)

BOUNDS = [
    lemma_a1,
    lemma_a2,
    lemma_a3,
    lemma_a4,
    lemma_a4_printed,
    lemma_b1,
    lemma_b2,
    lemma_b3,
    lemma_b4,
    fedprox_kappa,
    beta_kappa,
]
