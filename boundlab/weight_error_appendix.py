"""FedAU (seed 002, Wang & Ji): Lemma B.3.1 and the known-participation case of Appendix A.3.

Part of the ``weight_error`` family (collected through :mod:`boundlab.weight_error`).

* **Lemma B.3.1.** For any simplex weights phi (phi_n >= 0, sum_n phi_n = 1) and the reweighted
  objective f~ = sum_n phi_n F_n (Definition B.3.1), Assumption 3 (||grad F_n(x) - grad f(x)||^2
  <= delta^2 for all x, n, f = (1/N) sum_n F_n) gives ||grad F_n(x) - grad f~(x)||^2 <=
  deltat^2 with deltat := 2 delta. Proof: ||u + v||^2 <= 2||u||^2 + 2||v||^2 with u = grad F_n
  - grad f and v = grad f - grad f~ = sum_m phi_m (grad f - grad F_m), then Jensen on v: each
  part is at most 2 delta^2. The constant is attained (N = 2 clients with gradients f +- d and
  phi = (0, 1)).
* **Appendix A.3.** With known participation probabilities and omega_t^n = 1/p_n the weight
  error is W = 0 and Q = (1/N) sum_n 1/p_n; equiprobable participation p_n = S/N gives Q = N/S,
  and Corollary 4 becomes O(1/sqrt(S T)) (linear speedup in the clients per round S). Encoded
  as the explicit Corollary 4 (``weight_error.corollary4_explicit``) at W = 0, Psi_G = 0 (A5
  option 1 holds: the per-round weight error is 0) and Q = N/S, where N cancels: every Q appears
  as Q/N = 1/S. FedAU's A4 is independent Bernoulli participation, so "S of N" means each client
  with probability S/N (S per round on average); the paper's comparison with sampling exactly S
  clients without replacement is informal (outside A4).

Example
-------
>>> import boundlab
>>> float(boundlab.get("weight_error.lemma_b31").evaluate(delta=0.5))  # (2 delta)^2
1.0
"""

from __future__ import annotations

import sympy as sp

from .core import Bound, Precondition, make_params
from .symbols import domain_of, sym

__all__ = ["BOUNDS"]

_SRC = "seed 002"
R_ = sp.Rational
(delta, L, F, I, sigma, T, S, N, gamma, eta) = (
    sym(n) for n in ("delta", "L", "F", "I", "sigma", "T", "S_sampled", "N", "gamma", "eta"))

_DOCS = {
    "delta": ("||grad F_n(x) - grad f(x)||^2 <= delta^2 for all x, n, f = (1/N) sum_n F_n "
              "(FedAU A3)"),
    "L": "smoothness constant of every F_n (FedAU A1)",
    "F": "f(x_0) - f*, f = (1/N) sum_n F_n (FedAU's script F; not a client objective)",
    "I": "local SGD steps per round (FedAU; BC calls this E)",
    "sigma": "E||g_n(x) - grad F_n(x)||^2 <= sigma^2 (FedAU A2)",
    "T": "number of rounds (t = 0..T-1)",
    "S_sampled": ("clients per round: every client participates with probability p_n = S/N "
                  "(FedAU App. A.3's S; BC's S is another quantity)"),
    "N": "number of clients (FedAU); only a precondition S <= N uses it",
    "gamma": "local step size (FedAU)",
    "eta": "global (server) step size (FedAU); not the local step size, which is gamma",
}


def _params(*names):
    return make_params(*names, **{n: (domain_of(n), _DOCS[n]) for n in names})


# --------------------------------------------------------------- Lemma B.3.1
_half = 2 * delta**2
lemma_b31 = Bound(
    id="weight_error.lemma_b31",
    source=f"{_SRC}, Lemma B.3.1 (eq. (B.3.2)), deltat := 2 delta",
    expr=(2 * delta) ** 2,
    params=_params("delta"),
    kind="upper",
    lhs="reweighted_divergence_sq",
    description=(
        "max_n sup_x ||grad F_n(x) - grad f~(x)||^2 <= deltat^2 = 4 delta^2 for f~ = sum_n phi_n "
        "F_n with any simplex weights phi (Definition B.3.1), under A3 with divergence delta "
        "from f = (1/N) sum_n F_n. Terms: 2||grad F_n - grad f||^2 <= 2 delta^2 and "
        "2||grad f - grad f~||^2 <= 2 delta^2 (Jensen). Attained: deltat = 2 delta is the best "
        "constant. phi = 1/N gives f~ = f and the bound delta^2 of A3 itself (Lemma B.5.1)."
    ),
    terms={"own": _half, "reweighting": _half},
)

# --------------------------------------------------------------- Appendix A.3
_ids = I * delta**2 + sigma**2
_sqFS = sp.sqrt(F * S)
_a3 = {
    "leading": 43 * sp.sqrt(L * F * _ids / (S * I * T)),
    "init": 32 * L * F / T + 432 * L * F / (S * T),
    "drift": 40 * (sigma**2 + 6 * I * delta**2) / (I * T),
}
corollary4_equiprobable = Bound(
    id="weight_error.corollary4_equiprobable",
    source=(f"{_SRC}, Appendix A.3 (omega = 1/p_n, p_n = S/N: Q = N/S, O(1/sqrt(S T))) in "
            "Corollary 4 explicit"),
    expr=sum(_a3.values()),
    params=_params("L", "F", "I", "delta", "sigma", "S_sampled", "T"),
    extra_params=_params("gamma", "eta", "N"),
    kind="upper",
    lhs="avg_grad_norm2",
    description=(
        "Known participation probabilities p_n = S/N and omega_t^n = 1/p_n (W = 0, Q = N/S, "
        "Psi_G = 0), Corollary 4's step sizes: (1/T) sum_t E||grad f(x_t)||^2 <= 43 sqrt(L F "
        "(I delta^2 + sigma^2)/(S I T)) + 32 L F/T + 432 L F/(S T) + 40 (sigma^2 + 6 I "
        "delta^2)/(I T), i.e. weight_error.corollary4_explicit at W = 0, Q = N/S: O(1/sqrt(S T)) "
        "for large T, independent of N. gamma may be smaller than Corollary 4's choice; gamma*eta "
        "must equal it (the optional gamma, eta are checked)."
    ),
    preconditions=(
        Precondition(S, "<=", N, "S_sampled <= N", "p_n = S/N is a probability"),
        Precondition(gamma * L * I * sp.sqrt(T), "<=", 1, "gamma <= 1/(L*I*sqrt(T))",
                     "used as 15 L^2 I gamma^2 sigma^2 <= 15 sigma^2/(I T)"),
        Precondition(4 * sp.sqrt(15) * L * I * gamma, "<=", 1, "gamma <= 1/(4*sqrt(15)*L*I)",
                     "bounds the local drift (Lemma B.3.2) and 15 L^2 I^2 gamma^2 <= 1/16"),
        Precondition(gamma * eta * sp.sqrt(_ids * L * I * T), "<=", _sqFS,
                     "gamma*eta <= sqrt(F*S/((I*delta^2+sigma^2)*L*I*T))",
                     "first branch (Q/N = 1/S)"),
        Precondition(2 * L * I * gamma * eta, "<=", 1, "gamma*eta <= 1/(2*L*I)",
                     "descent lemma B.3.3"),
        Precondition(27 * L * I * gamma * eta, "<=", S, "gamma*eta <= S/(27*L*I)",
                     "N/(27 L I Q) at Q = N/S"),
        Precondition(gamma * eta * (sp.sqrt(_ids * L * I * T) + (2 * L * I + 27 * L * I / S)
                                    * _sqFS), ">=", _sqFS,
                     "gamma*eta = min of the three branches (1/(gamma*eta) <= sum of reciprocals)",
                     "bounds F/(gamma eta I T)"),
    ),
    terms=_a3,
)

BOUNDS = [lemma_b31, corollary4_equiprobable]
