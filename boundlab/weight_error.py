"""Aggregation-weight error of FedAU's cutoff-interval estimator (seed 002, Wang & Ji).

Setting (FedAU §4, App. B.6): client n participates in round t with probability p_n,
independently over rounds (A4, Bernoulli). Algorithm 2 estimates 1/p_n online by the running
mean omega_t^n of the completed participation intervals, each interval cut off at length K; the
interval S_n is then K-cutoff geometric. The weight error of one client is
E[(p_n omega_t^n - 1)^2]; its average over rounds and clients is W, the quantity Theorem 2 needs.
Every bound here speaks about one client with probability ``p`` (average the per-client values
over n for W), except :data:`lemma_b71`, whose ``p`` is min_n p_n.

The convergence results that consume W (Theorem 2, Corollary 4, Theorem B.4.1 and the lemmas
behind them) live in :mod:`boundlab.weight_error_convergence` and are part of this family.

Example
-------
>>> import boundlab
>>> b = boundlab.get("weight_error.average")
>>> round(b.evaluate(p=0.02, K=5, T=2000), 4)
0.8626
>>> round(boundlab.get("weight_error.interval_mean").evaluate(p=0.1, K=5), 4)
4.0951
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p

from .core import Bound, Precondition, make_params
from .symbols import INT_GE1, UNIT_OPEN, domain_of, sym

__all__ = ["BOUNDS", "R_OF_P"]

_SRC = "seed 002"
p, K, t, T = (sym(n) for n in ("p", "K", "t", "T"))
q = 1 - p

_DOCS = {
    "p": "participation probability p_n of one client under Bernoulli participation (FedAU A4)",
    "K": "cutoff interval length of FedAU's Alg. 2 (an interval is closed after K rounds)",
    "t": "round index t >= 1 (omega_t uses participation of rounds 0..t-1 only)",
    "T": "number of rounds (rounds t = 0..T-1)",
}


def _params(*names, **domains):
    """make_params with this module's parameter docs (optional domain overrides)."""
    return make_params(*names, **{n: (domains.get(n, domain_of(n)), _DOCS[n]) for n in names})


# --------------------------------------------------------------- Lemma B.6.1 (the interval S)
_mean = 1 / p - q**K / p
_var = q / p**2 - (2 * K - 1) * q**K / p - q ** (2 * K) / p**2
_fm2 = -2 * (K - 1) * q**K / p - 2 * q**K / p**2 + 2 * q / p**2
_m2 = -(2 * K - 1) * q**K / p - 2 * q**K / p**2 + (2 - p) / p**2

# Stable forms (derived by substituting (1-p)^K = 1 - u, u = -expm1(K log1p(-p)) = 1 - (1-p)^K,
# computed without cancellation; tests/boundlab/test_exact.py checks each equals the closed
# form at 50 digits). The closed forms subtract O(1/p^2) terms to get O(K^2) or O(p K^3) values:
# interval_var at p = 1e-9, K = 50 gave -2858 (true 4.04e-5), interval_mean at p = 1e-17 gave 0.
# Where K p is small the u-forms still cancel (Var ~ p K^3/3 from O(K^2) terms), so below
# K p = 1/100 the Taylor series in p is used (exact binomial coefficients, from expanding
# (1-p)^K; terms shrink like K p, 10 terms leave < 1e-18 relative).
_u = -expm1(K * log1p(-p))
_SERIES_KP = sp.Rational(1, 100)


def _ff(m):
    """K (K-1) ... (K-m+1)."""
    return sp.Mul(*[K - j for j in range(m)])


_var_coeffs = [  # c_n of Var[S] = sum_n c_n(K) p^n, n = 1..9
    _ff(2) * (2 * K - 1) / 6,
    -_ff(2) * (K - 1) * (2 * K - 1) / 6,
    _ff(3) * (2 * K - 1) * (11 * K - 9) / 120,
    -_ff(3) * (2 * K - 1) * (13 * K**2 - 43 * K + 24) / 360,
    _ff(4) * (2 * K - 1) * (57 * K**2 - 193 * K + 100) / 5040,
    -_ff(4) * (K - 3) * (2 * K - 1) * (K**2 - 4 * K + 2) / 336,
    _ff(5) * (2 * K - 1) * (247 * K**3 - 1758 * K**2 + 3581 * K - 1470) / 362880,
    -_ff(5) * (2 * K - 1) * (251 * K**4 - 2942 * K**3 + 11929 * K**2 - 18478 * K + 6720)
    / 1814400,
    _ff(6) * (2 * K - 1) * (1013 * K**4 - 11958 * K**3 + 49051 * K**2 - 77082 * K + 27216)
    / 39916800,
]
_var_series = sp.Add(*[c * p ** (n + 1) for n, c in enumerate(_var_coeffs)])
# E[S(S-1)] = sum_{n>=0} (-1)^n 2 K (K-1) ... (K-n) ((n+1) K - 1) / (n+2)! p^n
_fm2_series = sp.Add(*[(-1) ** n * 2 * _ff(n + 1) * ((n + 1) * K - 1) / sp.factorial(n + 2)
                       * p**n for n in range(10)])
_small = K * p < _SERIES_KP
_mean_stable = _u / p
_big = p > sp.Rational(1, 2)  # there the closed forms do not cancel ((1-p)^K is small)
_var_stable = sp.Piecewise(
    (_var_series, _small), (_var, _big),
    ((2 * (_u - K * p) + _u * ((2 * K - 1) * p - _u)) / p**2, True))
_fm2_stable = sp.Piecewise(
    (_fm2_series, _small), (_fm2, _big), (2 * (_u - K * p) / p**2 + 2 * (K - 1) * _u / p, True))
_m2_stable = _fm2_stable + _mean_stable

interval_mean = Bound(
    id="weight_error.interval_mean",
    source=f"{_SRC}, Lemma B.6.1, eq. (B.6.3)",
    expr=_mean,
    params=_params("p", "K"),
    kind="identity",
    stable=_mean_stable,
    lhs="interval_mean",
    description=(
        "E[S] = 1/p - (1-p)^K/p for the K-cutoff geometric interval S (Pr{S=k} = p(1-p)^(k-1) "
        "for 1 <= k < K, Pr{S=K} = (1-p)^(K-1)). Equals sum_{j<K} (1-p)^j; -> 1/p as K -> inf. "
        "Verified by symbolic summation (FedAU-F1 in the spec)."
    ),
)

interval_var = Bound(
    id="weight_error.interval_var",
    source=f"{_SRC}, Lemma B.6.1, eq. (B.6.6)",
    expr=_var,
    params=_params("p", "K"),
    kind="identity",
    stable=_var_stable,
    lhs="interval_var",
    description=(
        "Var[S] = (1-p)/p^2 - (2K-1)(1-p)^K/p - (1-p)^(2K)/p^2 for the K-cutoff geometric "
        "interval; 0 iff K = 1 or p = 1, <= (1-p)/p^2, -> (1-p)/p^2 as K -> inf."
    ),
)

interval_factorial_moment = Bound(
    id="weight_error.interval_factorial_moment",
    source=f"{_SRC}, proof of Lemma B.6.1, eq. (B.6.4)",
    expr=_fm2,
    params=_params("p", "K"),
    kind="identity",
    stable=_fm2_stable,
    lhs="interval_factorial_moment",
    description="E[S(S-1)] = -2(K-1)(1-p)^K/p - 2(1-p)^K/p^2 + 2(1-p)/p^2 (intermediate step).",
)

interval_second_moment = Bound(
    id="weight_error.interval_second_moment",
    source=f"{_SRC}, proof of Lemma B.6.1, eq. (B.6.5)",
    expr=_m2,
    params=_params("p", "K"),
    kind="identity",
    stable=_m2_stable,
    lhs="interval_second_moment",
    description="E[S^2] = -(2K-1)(1-p)^K/p - 2(1-p)^K/p^2 + (2-p)/p^2 (intermediate step).",
)

interval_bias = Bound(
    id="weight_error.interval_bias",
    source=f"{_SRC}, proof of Theorem 3, step (a) of (B.6.8)",
    expr=q ** (2 * K),
    params=_params("p", "K"),
    kind="identity",
    lhs="interval_bias_sq",
    description=(
        "(p E[S] - 1)^2 = (1-p)^(2K): squared relative bias of 1/p's estimate by the mean "
        "cutoff interval; the floor the weight error tends to as t -> inf."
    ),
)

# --------------------------------------------------------------- Theorem 3, per-round bounds
_T_GE_K = Precondition(t, ">=", K, "t >= K",
                       "from round K on at least one interval is complete (Case 2 of the proof)")
_t_dom = {"t": INT_GE1}
_bias = q ** (2 * K)
_var_round = 2 * K * q / t

round_bound = Bound(
    id="weight_error.round",
    source=f"{_SRC}, proof of Theorem 3, eq. (B.6.8) (final form)",
    expr=_var_round + _bias,
    params=_params("p", "K", "t", **_t_dom),
    kind="upper",
    lhs="round_weight_error",
    description=(
        "E[(p omega_t - 1)^2] <= 2K(1-p)/t + (1-p)^(2K) in rounds with at least one completed "
        "interval, which is every round t >= K (precondition). For 1 <= t < K use "
        "weight_error.round_envelope. The proof's steps (a)-(b) treat omega_t as an unbiased "
        "mean of a fixed number of intervals, which it is not (ratio estimator, biased low); "
        "the stated bound still holds empirically and in exact enumeration (FedAU-F5)."
    ),
    preconditions=(_T_GE_K,),
    terms={"variance": _var_round, "bias": _bias},
    errata=("FedAU-F5",),
)

_var_form = p**2 * _var / sp.Max(sp.floor(t / K), 1)
round_var_form = Bound(
    id="weight_error.round_var_form",
    source=f"{_SRC}, proof of Theorem 3, eq. (B.6.8) (after step (b))",
    expr=_var_form + _bias,
    params=_params("p", "K", "t", **_t_dom),
    kind="upper",
    lhs="round_weight_error",
    description=(
        "Intermediate form of (B.6.8): E[(p omega_t - 1)^2] <= p^2 Var[S]/max(floor(t/K), 1) + "
        "(1-p)^(2K) for t >= K; tighter than weight_error.round. Same proof gap (FedAU-F5); "
        "nearly tight at small K (exact enumeration: worst ratio 1.0 at K = 1)."
    ),
    preconditions=(_T_GE_K,),
    terms={"variance": _var_form, "bias": _bias},
    errata=("FedAU-F5",),
)

_before = sp.Piecewise((1, t < K), (0, True))
round_envelope = Bound(
    id="weight_error.round_envelope",
    source=f"{_SRC}, proof of Theorem 3, (B.6.7) + (B.6.8) combined",
    expr=_before + _var_round + _bias,
    params=_params("p", "K", "t", **_t_dom),
    kind="upper",
    lhs="round_weight_error",
    description=(
        "Per-round envelope valid for every t >= 1: 1 + 2K(1-p)/t + (1-p)^(2K) for t < K (the "
        "round may precede the first completed interval, where omega = 1 and the error is "
        "(1-p)^2 <= 1, (B.6.7)), and 2K(1-p)/t + (1-p)^(2K) for t >= K. At t = 0 the error is "
        "(1-p)^2 <= 1 (omega_0 = 1)."
    ),
    terms={"before_first_interval": _before, "variance": _var_round, "bias": _bias},
    errata=("FedAU-F5",),
)

# --------------------------------------------------------------- Theorem 3, time average
_v = (3 * K + 2 * K * sp.log(T)) / T
average = Bound(
    id="weight_error.average",
    source=f"{_SRC}, proof of Theorem 3, eq. (B.6.9)",
    expr=_v + _bias,
    params=_params("p", "K", "T"),
    kind="upper",
    lhs="avg_weight_error",
    description=(
        "(1/T) sum_{t<T} E[(p omega_t - 1)^2] <= (3K + 2K ln T)/T + (1-p)^(2K) for one client "
        "(natural log). Averaging over clients bounds W. Variance term linear in K, bias term "
        "decreasing exponentially in K (Theorem 3's tradeoff). Follows from (B.6.7)/(B.6.8) and "
        "H_{T-1} <= ln T + 1 (FedAU-F4, verified); inherits the proof gap FedAU-F5."
    ),
    terms={"variance": _v, "bias": _bias},
    errata=("FedAU-F5",),
)

_v_ref = (K + 2 * K * q * (sp.log(T) + 1)) / T
average_refined = Bound(
    id="weight_error.average_refined",
    source=f"{_SRC}, proof of Theorem 3, middle step of (B.6.9)",
    expr=_v_ref + _bias,
    params=_params("p", "K", "T"),
    kind="upper",
    lhs="avg_weight_error",
    description=(
        "(1/T) sum_{t<T} E[(p omega_t - 1)^2] <= (K + 2K(1-p)(ln T + 1))/T + (1-p)^(2K): the "
        "step of (B.6.9) before (1-p) <= 1; tighter than weight_error.average."
    ),
    terms={"variance": _v_ref, "bias": _bias},
    errata=("FedAU-F5",),
)

theorem3 = Bound(
    id="weight_error.theorem3",
    source=f"{_SRC}, Theorem 3, eq. (7)",
    expr=K * sp.log(T) / T + _bias,
    params=_params("p", "K", "T"),
    kind="order",
    lhs="avg_weight_error",
    description=(
        "W <= O(K log T / T + (1/N) sum_n (1-p_n)^(2K)) for T >= 2, here for one client. Hidden "
        "constants: <= 3/ln 2 + 2 = 6.33 on the first term, 1 on the second "
        "(weight_error.average is the explicit form)."
    ),
    preconditions=(Precondition(T, ">=", 2, "T >= 2", "log T > 0 in the O-term"),),
    terms={"variance": K * sp.log(T) / T, "bias": _bias},
)

# --------------------------------------------------------------- Lemma B.7.1 / Corollary 4's K
#: R = 1/ln c with c = (1-p)^(-2), as a function of p = min_n p_n (FedAU Cor. 4).
R_OF_P = -1 / (2 * sp.log(q))
_pmin_doc = "min_n p_n (FedAU Lemma B.7.1 / Corollary 4; c = (1-p)^(-2) needs p < 1)"
_pmin = {"p": (UNIT_OPEN, _pmin_doc), "T": (domain_of("T"), _DOCS["T"])}
_K_cor = sp.log(T) * R_OF_P

cutoff_cor4 = Bound(
    id="weight_error.cutoff_cor4",
    source=f"{_SRC}, Corollary 4 / Lemma B.7.1 (choice K = log_c T)",
    expr=_K_cor,
    params=make_params("p", "T", **_pmin),
    kind="identity",
    lhs="cutoff",
    description=(
        "Corollary 4's cutoff K = log_c T = R ln T with c = (1-p)^(-2), R = 1/ln c = "
        "-1/(2 ln(1-p)). It makes (1-p)^(2K) = 1/T exactly; Alg. 2 needs an integer, so use "
        "ceil (FedAU-F7)."
    ),
    errata=("FedAU-F7",),
)

_lam = -2 * sp.log(q)
_K_opt = sp.Max(1, sp.log(_lam * T / (3 + 2 * sp.log(T))) / _lam)
cutoff_opt = Bound(
    id="weight_error.cutoff_opt",
    source=f"{_SRC}, (B.6.9) minimized over K (derived in the spec, §7 item 9; not in the paper)",
    expr=_K_opt,
    params=make_params("p", "T", p=(UNIT_OPEN, _DOCS["p"]), T=_pmin["T"]),
    kind="identity",
    lhs="cutoff",
    description=(
        "K* = max(1, ln(lambda T/(3 + 2 ln T))/lambda), lambda = -2 ln(1-p): the minimizer over "
        "real K of the (B.6.9) bound (convex in K). Smaller than log_c T whenever lambda < 3 + "
        "2 ln T (p = 0.1, T = 2000: 14.9 vs 36.1)."
    ),
)

_b71_var = (3 * R_OF_P * sp.log(T) + 2 * R_OF_P * sp.log(T) ** 2) / T
_b71 = _b71_var + 1 / T
lemma_b71 = Bound(
    id="weight_error.lemma_b71",
    source=f"{_SRC}, Lemma B.7.1, eq. (B.7.1), corrected (explicit)",
    expr=_b71,
    params=make_params("p", "T", **_pmin),
    kind="upper",
    lhs="avg_weight_error",
    description=(
        "With K = log_c T (real), W <= (3R ln T + 2R ln^2 T + 1)/T = O((1+R) log^2 T / T), "
        "R = -1/(2 ln(1-p)), p = min_n p_n: (B.6.9) with (1-p_n)^(2K) <= (1-p)^(2K) = 1/T. The "
        "printed O(R log^2 T/T) drops the 1/T of the bias, which matters as R -> 0 (p -> 1); "
        "for an integer K use weight_error.lemma_b71_ceil (FedAU-F7)."
    ),
    terms={"variance": _b71_var, "bias": 1 / T},
    errata=("FedAU-F7", "FedAU-F5"),
)

_K_ceil = sp.ceiling(_K_cor)
_b71c_var = (3 * _K_ceil + 2 * _K_ceil * sp.log(T)) / T
_b71c = _b71c_var + 1 / T
lemma_b71_ceil = Bound(
    id="weight_error.lemma_b71_ceil",
    source=f"{_SRC}, Lemma B.7.1 with integer K = ceil(log_c T) (corrected, explicit)",
    expr=_b71c,
    params=make_params("p", "T", **_pmin),
    kind="upper",
    lhs="avg_weight_error",
    description=(
        "With the integer cutoff K = ceil(log_c T) <= R ln T + 1, (1-p)^(2K) <= 1/T and "
        "W <= (3K + 2K ln T + 1)/T (FedAU-F7). p = min_n p_n."
    ),
    terms={"variance": _b71c_var, "bias": 1 / T},
    errata=("FedAU-F7", "FedAU-F5"),
)

lemma_b71_printed = Bound(
    id="weight_error.lemma_b71.printed",
    source=f"{_SRC}, Lemma B.7.1 as printed, eq. (B.7.1)",
    expr=R_OF_P * sp.log(T) ** 2 / T,
    params=make_params("p", "T", **_pmin),
    kind="order",
    lhs="avg_weight_error",
    description=(
        "As printed: W <= O(R log^2 T / T). The proof's last step O(log^2 T/(T ln c) + "
        "log^2 T/T) = O(R log^2 T/T) fails as R -> 0 (p_min -> 1): the bias term 1/T is not "
        "O(R log^2 T/T); the proof yields O((1 + R) log^2 T/T) (FedAU-F7)."
    ),
    errata=("FedAU-F7",),
    printed=True,
)

BOUNDS = [
    interval_mean,
    interval_var,
    interval_factorial_moment,
    interval_second_moment,
    interval_bias,
    round_bound,
    round_var_form,
    round_envelope,
    average,
    average_refined,
    theorem3,
    cutoff_cor4,
    cutoff_opt,
    lemma_b71,
    lemma_b71_ceil,
    lemma_b71_printed,
]

from .weight_error_appendix import BOUNDS as _APPENDIX  # noqa: E402
from .weight_error_convergence import BOUNDS as _CONVERGENCE  # noqa: E402

BOUNDS = BOUNDS + list(_CONVERGENCE) + list(_APPENDIX)
