"""Parameter domains and the canonical sympy symbols of every bound.

Symbols are built explicitly (never with ``sympify`` on strings: ``E``, ``N``, ``pi``, ``gamma``,
``beta``, ``zeta``, ``S``, ``I`` and ``Q`` are SymPy built-ins). One name maps to one symbol
object with fixed assumptions, so expressions from different bounds compose.

Example
-------
>>> from boundlab.symbols import sym, POSITIVE
>>> sym("zeta").name, sym("zeta").is_nonnegative
('zeta', True)
>>> POSITIVE.describe()
'positive real (0, inf)'
"""

from __future__ import annotations

import math

import sympy as sp

from .domains import (
    INT_GE0,
    INT_GE1,
    NONNEGATIVE,
    POSITIVE,
    REAL,
    UNIT_CLOSED,
    UNIT_HALF_OPEN,
    UNIT_OPEN,
    Domain,
)

__all__ = [
    "Domain",
    "POSITIVE",
    "NONNEGATIVE",
    "UNIT_OPEN",
    "UNIT_HALF_OPEN",
    "UNIT_CLOSED",
    "INT_GE1",
    "INT_GE0",
    "REAL",
    "sym",
    "domain_of",
    "LATEX_NAMES",
]


# name -> (default domain, one-line meaning). Where papers clash the meaning says which applies.
_TABLE: dict[str, tuple[Domain, str]] = {
    # shared smoothness / convexity constants
    "L": (POSITIVE, "smoothness constant of every client objective"),
    "mu": (POSITIVE, "strong-convexity constant (BM, BC); not the FedProx coefficient"),
    "sigma": (NONNEGATIVE,
              "stochastic-gradient standard deviation bound (sigma^2 bounds the variance)"),
    "G": (POSITIVE, "second-moment bound: E||g_i||^2 <= G^2, read along the trajectory"),
    "Gamma": (NONNEGATIVE, "heterogeneity F* - sum_i p_i F_i*"),
    "zeta": (NONNEGATIVE, "gradient dissimilarity max_i sup_x ||grad F_i(x) - grad F(x)||"),
    "D": (NONNEGATIVE, "initial distance ||x0 - x*|| (DKR)"),
    "D0": (NONNEGATIVE, "initial distance ||w0 - w*|| (BM; the spec's Delta0 = D0^2)"),
    "Delta": (NONNEGATIVE, "current squared distance E||w_t - w*||^2 (or gap, as the bound says)"),
    # step sizes, counts
    "eta": (POSITIVE, "(local) step size"),
    "tau": (INT_GE1, "local steps per round (DKR); = E of BM"),
    "E": (INT_GE1, "local steps between aggregations (BM iterations; BC local epochs)"),
    "T": (INT_GE1, "number of rounds (DKR, FedAU, BC) / final SGD iteration (BM corollary)"),
    "t": (INT_GE0, "round / iteration index"),
    "M": (INT_GE1, "number of clients (DKR)"),
    "N": (INT_GE1, "number of clients (BM, FedAU)"),
    "S": (UNIT_HALF_OPEN, "sum_i p_i^2 of the BC aggregation weights (in [1/C, 1]; not a count)"),
    "k": (INT_GE0, "local-step index within a round"),
    # skew (BM)
    "rho_bar": (POSITIVE, "min over iterations of the weighting skew rho(t, w_t)"),
    "rho_tilde": (NONNEGATIVE, "max over iterations of the weighting skew rho(t, w*)"),
    "pi": (UNIT_HALF_OPEN, "min over rounds and clients of kappa = alpha_t^i / p_i (not 3.14...)"),
    "Pi": (Domain(1.0, math.inf, lo_open=False), "max over rounds and clients of alpha_t^i / p_i"),
    "gamma": (POSITIVE, "step-size shift (BM): eta_t = 1/(mu (t + gamma))"),
    "f_w": (REAL, "f(w), value of an L-smooth function at w"),
    "f_star": (REAL, "f(w*), its global minimum"),
    "p_min": (UNIT_HALF_OPEN, "min_i p_i"),
    # DKR lemma quantities
    "dist0": (NONNEGATIVE, "||xbar^(t,0) - x*||^2"),
    "dist_tau": (NONNEGATIVE, "E||xbar^(t,tau) - x*||^2"),
    "drift_sum": (NONNEGATIVE, "sum_i sum_{k=1}^{tau-1} E||x_i^(t,k) - xbar^(t,k)||^2"),
    "d_k": (NONNEGATIVE, "pairwise client distance ||x_1^(t,k) - x_2^(t,k)||^2"),
    # FedAU (seed 002)
    "p": (UNIT_HALF_OPEN, "participation probability of a client"),
    "K": (INT_GE1, "cutoff of the FedAU interval estimator"),
    # BC (seed 003)
    "alpha": (NONNEGATIVE, "FedProx proximal coefficient (BC's alpha; DKR calls it mu)"),
    "beta": (UNIT_OPEN, "perturbation weight of the beta algorithm (BC)"),
    # FedAU (seed 002), convergence theory
    "I": (INT_GE1, "local SGD steps per round (FedAU)"),
    "F": (NONNEGATIVE, "initial gap f(x_0) - f* (FedAU's script F)"),
    "H": (NONNEGATIVE, "initial gap h(x_0) - h* of FedAU's reweighted objective h"),
    "delta": (NONNEGATIVE, "gradient divergence: ||grad F_n(x) - grad f(x)|| <= delta (FedAU A3)"),
    "deltat": (NONNEGATIVE, "divergence bound of a reweighted objective (FedAU B.3.1: 2 delta)"),
    "PsiG": (NONNEGATIVE, "0 under FedAU A5 option 1, G^2 under option 2"),
    "W": (NONNEGATIVE, "weight error (1/(NT)) sum_t sum_n E(p_n omega_t^n - 1)^2 (FedAU)"),
    "Q": (POSITIVE, "max_t (1/N) sum_n p_n (omega_t^n)^2 (FedAU)"),
    "P": (POSITIVE, "sum_n omega_n p_n for time-constant weights (FedAU Theorem 1)"),
    "werr_t": (NONNEGATIVE, "per-round weight error (1/N) sum_n (p_n omega_t^n - 1)^2 (FedAU)"),
    "q_t": (POSITIVE, "(1/N) sum_n p_n (omega_t^n)^2 at round t (FedAU)"),
    "grad_norm2": (NONNEGATIVE, "squared gradient norm at the start of the round"),
    # BC (seed 003), lemma quantities
    "gamma_prev": (NONNEGATIVE, "previous round's step size gamma_{t-1} (BC); 0 encodes t = 0"),
    "dist_t": (NONNEGATIVE, "E||wbar_{t,0} - w*||^2 at the start of round t (BC)"),
    "decrease": (REAL, "E[f(wbar_{t,0}) - f(wbar_{t+1,0})], one round's expected decrease (BC)"),
    "eps": (POSITIVE, "accuracy target (BC: E||grad f(w_hat)||^2 <= eps)"),
    # BM FedSoftMax (derived kappa bound)
    "x_range": (NONNEGATIVE, "max over rounds of max_i x_i - min_i x_i, x_i = F_i(w_t) - F_i* "
                             "the FedSoftMax scores (BM)"),
    "Temp": (POSITIVE, "FedSoftMax temperature (BM's T: alpha_i ~ p_i exp(x_i/T); not rounds)"),
    # DKR textbook properties (seed 004 appendix §2.3)
    "f_x": (REAL, "f(x), value of a client objective at x (DKR Properties 2.1-2.3)"),
    "f_y": (REAL, "f(y), value of a client objective at y (DKR Properties 2.1-2.3)"),
    "lam": (UNIT_CLOSED, "convex-combination weight lambda in [0, 1] (DKR Property 2.1)"),
    "lam_young": (POSITIVE, "Young's parameter lambda > 0 (DKR Property 2.5; lambda = "
                            "sqrt(2 eta) in the proof of Lemma 2.2)"),
    "lin": (REAL, "<grad f(x), y - x>, the first-order change (DKR Properties 2.2, 2.3)"),
    "dist_xy": (NONNEGATIVE, "||y - x||^2 (DKR Property 2.3)"),
    "a_sq": (NONNEGATIVE, "||a||^2 (DKR Property 2.5)"),
    "b_sq": (NONNEGATIVE, "||b||^2 (DKR Property 2.5)"),
    # FedAU App. A.3
    "S_sampled": (INT_GE1, "clients sampled per round, p_n = S/N (FedAU App. A.3's S; not BC's "
                           "S = sum p_i^2)"),
}

LATEX_NAMES = {
    "mu": r"\mu", "sigma": r"\sigma", "Gamma": r"\Gamma", "zeta": r"\zeta", "eta": r"\eta",
    "tau": r"\tau", "rho_bar": r"\bar\rho", "rho_tilde": r"\tilde\rho", "pi": r"\pi", "Pi": r"\Pi",
    "p_min": r"p_{\min}", "D0": r"\|w^0-w^\star\|", "Delta": r"\Delta",
    "alpha": r"\alpha", "beta": r"\beta", "dist0": r"\|\bar x^{(t,0)}-x^\star\|^2",
    "dist_tau": r"\|\bar x^{(t,\tau)}-x^\star\|^2", "drift_sum": r"\Sigma_{\rm drift}",
    "d_k": r"d_k", "gamma": r"\gamma", "eta_t": r"\eta_t", "lambda1": r"\lambda_1",
    "lambda2": r"\lambda_2", "C0": r"C_0", "x_range": r"\Delta x", "Temp": r"T",
    "PsiG": r"\Psi_G", "delta": r"\delta", "deltat": r"\tilde\delta", "F": r"\mathcal{F}",
    "H": r"\mathcal{H}", "gamma_prev": r"\gamma_{t-1}", "dist_t": r"\|\bar w_{t,0}-w_\star\|^2",
    "eps": r"\epsilon", "grad_norm2": r"\|\nabla f(x_t)\|^2", "werr_t": r"e_t", "q_t": r"q_t",
    "decrease": r"\Delta f_t", "f_x": r"f(x)", "f_y": r"f(y)", "lam": r"\lambda",
    "lam_young": r"\lambda", "lin": r"\langle\nabla f(x),y-x\rangle", "dist_xy": r"\|y-x\|^2",
    "a_sq": r"\|a\|^2", "b_sq": r"\|b\|^2", "S_sampled": r"S",
}

_CACHE: dict[tuple, sp.Symbol] = {}


def domain_of(name: str) -> Domain:
    """Default domain of a parameter name (``REAL`` positive if unknown is *not* assumed).

    >>> domain_of("tau").describe()
    'integer >= 1'
    """
    if name not in _TABLE:
        return POSITIVE
    return _TABLE[name][0]


def meaning_of(name: str) -> str:
    """One-line meaning of a parameter name ('' if not in the table).

    >>> meaning_of("zeta").split()[0]
    'gradient'
    """
    return _TABLE.get(name, (None, ""))[1]


def sym(name: str, domain: Domain | None = None) -> sp.Symbol:
    """The canonical symbol of ``name`` with assumptions from its domain.

    >>> sym("beta").is_positive, sym("tau").is_integer
    (True, True)
    """
    dom = domain if domain is not None else domain_of(name)
    key = (name, tuple(sorted(dom.assumptions().items())))
    if key not in _CACHE:
        _CACHE[key] = sp.Symbol(name, **dom.assumptions())
    return _CACHE[key]
