"""Errata of seeds 000/001 (Ben Mansour et al., family ``skew``) and 004 (Dhasade, Kremer,
Renard, family ``drift``): spec ``seeds-000-001-004.md`` §4, plus the findings of boundlab's own
property tests (verdict ``FINDING``, ids ``BM-P<n>`` / ``DKR-P<n>``).

``bounds`` lists the non-printed catalogue ids whose ``errata=`` field names the erratum (a
``.printed`` twin is found through its base id by :func:`boundlab.errata.for_bound`); a test checks
that both directions agree. Proof-only and experiment-only errata list no bound.

Example
-------
>>> from boundlab._errata_000_001_004 import ERRATA
>>> [e.id for e in ERRATA][:3]
['BM-1', 'BM-2', 'BM-3']
"""

from __future__ import annotations

from ._erratum import Erratum

__all__ = ["ERRATA"]

_S = "tests/derivations/test_skew.py::"
_G = "tests/derivations/test_skew_general.py::"
_B = "tests/derivations/test_errata_bm.py::"
_D = "tests/derivations/test_drift.py::"
_K = "tests/derivations/test_errata_dkr.py::"
_P = "tests/properties/test_skew_props.py::"
_Q = "tests/properties/test_skew_general_props.py::"

_COR = ("skew.corollary", "skew.corollary_gamma")


def _record(*fields) -> Erratum:
    """One erratum from its fields, in :class:`boundlab.errata.Erratum` order."""
    return Erratum(*fields)


ERRATA: tuple[Erratum, ...] = (
    # ------------------------------------------------------------------ BM: theorem, corollary
    _record("BM-1", "seed 000/001, Cor. 4 (A(10)), A(14), A(20) = Cor. 1 (B(9)), B(12), B(18)",
            "V(rho_bar, rho_tilde) = 4L(32 tau^2 G^2 + sigma^2)/(3 mu^2 rho_bar) + ...",
            "tau -> E (tau is Cho et al.'s symbol; only E is defined; the theorem has 32E^2G^2)",
            "CONFIRMED", _COR + ("skew.speed", "skew.error_free", "skew.fedavg_speed"),
            _S + "test_e3_corollary_constants_by_induction"),
    _record("BM-2", "seed 000, eq. (13)",
            "(1 - eta_t mu (1 + 3/(8 rho_bar)))",
            "(1 - eta_t mu (1 + (3/8) rho_bar)), as in the theorem and seed 001 eq. (11)",
            "CONFIRMED", ("skew.error_free", "skew.error_free_recursion"),
            _S + "test_e1_eq13_factor",
            "difference 3 eta mu (1 - rho_bar^2)/(8 rho_bar): the two agree only at rho_bar = 1"),
    _record("BM-3", "seed 000/001, eq. (20) of seed 000 = eq. (18) of seed 001 (FedAvg speed)",
            "V = V_min + (4L - 32 tau^2 G^2 + sigma^2)/(3 mu^2)",
            "V_FedAvg = V_min + 4L(32 E^2 G^2 + sigma^2)/(3 mu^2) (rho_bar = rho_tilde = 1)",
            "CONFIRMED", ("skew.fedavg_speed",), _S + "test_e6_fedavg_speed"),
    _record("BM-4", "seed 000, appendix (A_5 bound, final display, definition of D)",
            "A_5 <= eta_t^2(16E^2G^2 + 6 rho_bar L Gamma) - (3/8) eta_t mu rho_bar E||w_t - w*||^2"
            " + 2 eta_t Gamma(rho_bar - rho_bar); D = 2 Gamma(rho_bar - rho_bar)",
            "rho_tilde - rho_bar (seed 001 has it right); the printed term is identically 0",
            "CONFIRMED-minor", ("skew.corollary",), _S + "test_bm4_error_term_needs_rho_tilde"),
    _record("BM-5", "seed 000/001, proof of Corollary 4 (seed 000) = Corollary 1 (seed 001)",
            "Let psi be the max{gamma ||w0 - w*||^2, (beta^2 C + D beta (t + gamma))/(beta mu B"
            " - 1)}, where beta > 1/(mu B), gamma > 0. ... for all t, Delta_t <= psi/(t + gamma).",
            "psi depends on t (needs D >= 0, i.e. rho_tilde >= rho_bar, else clip the error term at"
            " 0); 1 - eta_t mu B >= 0 needs gamma >= 1 + 3 rho_bar/8; constants need beta = 1/mu."
            " Corrected: gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1), error term max(0, .)",
            "GAP", _COR + ("skew.speed", "skew.error", "skew.error_free"),
            _S + "test_v2_worst_case_recursion_vs_corollary",
            "spec verdict 'CONFIRMED (GAP)'; see also test_e4_*, test_e5_* in the same file"),
    _record("BM-6", "seed 001, appendix, bound on A_5 (A_7 step)",
            "A_5 <= 16 eta^2 E^2 G^2 + (3/8) eta_t mu rho_bar E[||w_t - w*||^2] - 2 eta_t rho_bar"
            " Gamma + ...",
            "- (3/8) eta_t mu rho_bar E||w_t - w*||^2 (3/8 = min over 0 < L eta <= 1/4 of"
            " (1 - 2L eta)(1 - L eta))",
            "CONFIRMED-minor", ("skew.recursion",), _S + "test_e9_three_eighths_constant"),
    _record("BM-7", "seed 000, appendix, bound on A_1",
            "<= eta_t^2 E^2 G^2 - eta_t mu sum alpha ||w_t^i - w*||^2 + ...",
            "16 eta_t^2 E^2 G^2 (Lemma 2); 16 (A_1) + 16 (A_5) = 32 in the theorem",
            "CONFIRMED-minor", ("skew.recursion",), _S + "test_e14_g_squared_coefficient"),
    _record("BM-8", "seed 000/001, Lemma 2 (A(7) = B(5)), proof in seed 001",
            "<= 4 eta_{t0}^2 E^2 G^2 sum alpha alpha ... <= 16 eta_t^2 E^2 G^2",
            "needs eta_{t0} <= 2 eta_t; for eta_t = 1/(mu (t + gamma)) that is gamma >= E - 1",
            "GAP", _COR + ("skew.lemma2",), _S + "test_e10_lemma2_step_ratio",
            "spec verdict 'CONFIRMED (GAP)'"),
    _record("BM-9", "seed 000, Lemma 2 (eq. (7))",
            "the expected average discrepancy between w_t and w_i^* ... E[sum alpha_t^i ||w_t -"
            " w_i^*||^2] <= 16 eta_t^2 E^2 G^2",
            "||w_t - w_t^i||^2 (seed 001 eq. (5)); the printed statement is false",
            "CONFIRMED", ("skew.lemma2",), _B + "test_bm9_lemma2_printed_point_is_false"),
    _record("BM-10", "seed 000/001, §2.1 / §2.2 (definitions of F*, F_i*)",
            "We define F^* as F(w^*), F_i^* as F(w_i^*)",
            "F_i* = F_i(w_i*); with the printed definition Gamma <= 0 always",
            "CONFIRMED", ("skew.corollary",),
            _B + "test_bm10_printed_f_i_star_makes_gamma_nonpositive"),
    _record("BM-11", "seed 000, eq. (2) vs Algorithm 1",
            "w_{t+1}^i = sum_j alpha_t^j (w_t^j - eta_t g_j(w_t^j)) if E | t",
            "aggregate after the step at t when (t + 1) mod E = 0 (global models w_0, w_E, ...)",
            "CONFIRMED-minor", ("skew.corollary",), _B + "test_bm11_synchronisation_indices"),
    _record("BM-12", "seed 000/001, eq. (4) of seed 000 = eq. (2) of seed 001 (virtual sequence)",
            "w_{t+1} := w_t - eta_t sum alpha_t^i g_i(w_t^i) where alpha_t^i = p_i",
            "alpha fixed within a round (chosen at its start), w_t := sum_i alpha_{t0}^i w_t^i",
            "CONFIRMED", ("skew.recursion", "skew.lemma2"),
            _B + "test_e16_virtual_sequence_inconsistent"),
    _record("BM-13", "seed 000/001, definition of rho_bar, rho_tilde (A(8) / B(6),(7)); A_5 step",
            "rho_bar = min_{t = 0 mod E} rho(t, w_t); rho_tilde = max_{t = 0 mod E} rho(t, w*)",
            "rho_bar := min over every iteration t of rho(t, w_t) (round's alpha, virtual w_t)",
            "GAP", ("skew.recursion", "skew.corollary"),
            _B + "test_bm13_rho_bar_over_all_iterations",
            "quadratics, FedSoftMax T = 1, E = 5: rho_bar(sync) = 1.563, rho_bar(all t) = 0.544"),
    _record("BM-14", "seed 000/001, Theorem 3 (A(9)) = Theorem 1 (B(8)); condition only in A_6",
            "Let's suppose eta_t <= 1/(4L) (inside the proof; not in the statement)",
            "eta_t <= 1/(4L) is a hypothesis of the theorem",
            "GAP", ("skew.recursion",), _S + "test_bm14_step_size_condition"),
    _record("BM-15", "seed 000, Remark 6 = seed 001, Remark 5",
            "rho_bar may be arbitrarily large",
            "rho(t, w) <= 1/min_i p_i, so V_min is an unattainable infimum",
            "CONFIRMED", ("skew.vmin", "skew.rho_range"),
            _G + "test_e12_general_bound_inequalities"),
    _record("BM-16", "seed 000/001, general bounds A(16)-(19) = B(13)-(17)",
            "E <= 1/(pi min p_i) - N; constant C in (17)",
            "E <= lambda2 (1/(pi min p_i) - N), lambda2 = 8 L Gamma/(3 mu); C0 = V_min, lambda1 ="
            " 4L(32E^2G^2 + sigma^2)/(3 mu^2); chains (18), (19) correct",
            "CONFIRMED-minor", ("skew.pi_bound", "skew.pi_bound_pmin", "skew.pi_bound_uniform",
                                "skew.Pi_upper"),
            _G + "test_e12_uniform_identity_and_lambda2"),
    _record("BM-17",
            "seed 000/001, Remark 7 (A), general-bounds text (A, B), §1 (B), footnote 2 (A)",
            "minimizing E(rho_bar, rho_bar) ... amounts to minimize rho_bar/rho - 1; rho_bar/rho <="
            " Pi/pi, 1/rho_bar <= 1/pi; rho_tilde/rho_tilde <= Pi/pi, 1/rho_tilde <= 1/pi; Pi ="
            " max_t Pi^t; rho_bar well defined as long as F(w_t) != F(w*)",
            "E(rho_bar, rho_tilde), rho_tilde/rho_bar - 1, rho_tilde/rho_bar <= Pi/pi, 1/rho_bar <="
            " 1/pi, Pi = max_t Pi_t; well defined iff F(w_t) != sum_i p_i F_i*",
            "CONFIRMED-minor", ("skew.error", "skew.pi_bound"),
            _G + "test_e12_general_bound_inequalities"),
    _record("BM-18", "seed 001, appendix, A_6 strong-convexity step",
            "<= 2 eta_t (1 - 2L eta_t) sum alpha [<grad F_i(w_t), w_t^i - w_t> + (mu/2)||w_t^i -"
            " w_t||^2]; (1 - 2L eta_t)(1/(2 eta_t) - mu/2) sum alpha ||.||^2 <= sum alpha ||.||^2",
            "<grad F_i(w_t), w_t - w_t^i> - (mu/2)||.||^2 and coefficient (1 - 2L eta_t)(1 - eta_t"
            " mu) <= 1",
            "CONFIRMED", ("skew.recursion",), _B + "test_bm18_strong_convexity_step"),
    _record("BM-19", "seed 001, appendix (A_2, A_4, Lemma 2 proof, A_7)",
            "A_2 = 2 eta <w_t - w* - eta sum alpha grad F_i, sum alpha grad F_i>; A_4 ||grad"
            " F_i(w_t^i) - sum_{i in I} g_i(w_t^i)||^2; sum_{i in I}(E[F_i(w_t)] - F* + F* - p_i"
            " F_i*)",
            "missing '- sum alpha g_i' in A_2; no inner sum in A_4 (A_4 <= eta^2 sum alpha_i^2"
            " sigma^2 <= eta^2 sigma^2); p-weighted sum in A_7",
            "CONFIRMED-minor", ("skew.recursion",), _B + "test_bm19_noise_term_a4"),
    _record("BM-20", "seed 000, Remark 5 (eq. (11)) = seed 001, Remark 3 (eq. (10))",
            "E[F(w_T) - F*] = O(1/T)",
            "O(1/T) only when the error term is 0 (alpha = p or Gamma = 0); else O(1/T) + E",
            "CONFIRMED", ("skew.rate_order",),
            _S + "test_bm20_rate_is_order_one_over_t_only_without_error"),
    _record("BM-21", "seed 000/001, Assumption 4 together with Assumption 2",
            "E||g_i(w)||^2 <= G^2 (for all w)",
            "impossible under mu-strong convexity on R^d; read G^2 along the trajectory",
            "CONFIRMED", (), _B + "test_bm21_bounded_gradient_vs_strong_convexity"),
    _record("BM-22", "seed 000/001, proof of Lemma 1 (A(6) = B(4))",
            "proof by co-coercivity (needs convexity)",
            "the statement ||grad f||^2 <= 2L(f - f*) holds for any L-smooth f with a global"
            " minimiser; proof remark only",
            "REFUTED", ("skew.lemma1",), _B + "test_e13_lemma1_nonconvex"),
    _record("BM-23", "seed 001, Remark 1",
            "Assumption 3 and Assumption 4 can be merged into a unique assumption of the form"
            " E||grad F_i(w_i)||^2 < A^2",
            "Assumption 4 already implies Assumption 3 with sigma^2 <= G^2 (E||g - grad||^2 ="
            " E||g||^2 - ||grad||^2)",
            "CONFIRMED-minor", (), _B + "test_bm23_assumption4_implies_assumption3"),
    # ------------------------------------------------------------------ BM: experiments
    _record("BM-24", "seed 000, Table 2",
            "N number of clients 50; N size of each client's dataset in non-IID fr. 200; shards"
            " of 60",
            "two meanings of N; 200/60 is not an integer (unbalanced shard split, spec §6.1)",
            "CONFIRMED", (), _B + "test_bm24_table2_shards"),
    _record("BM-25", "seed 000/001, seed 000 §3.2, Fig. 5, RQ4; seed 001 Fig. 1 ('T=0.2')",
            "an higher temperature entails an higher convergence speed; increasing further T^-1"
            " increases the speed",
            "with alpha ~ p exp(T^-1 x), larger T means closer to FedAvg (smaller rho, slower);"
            " implement temperature and inv_temperature",
            "CONFIRMED", (), _B + "test_bm25_temperature_direction", "ambiguity"),
    _record("BM-26", "seed 000, §3.2 (stability sentence) vs Table 4",
            "The results in this case show a more pronounced tendency toward instability than"
            " FedSoftMax",
            "FedSoftMax shows a more pronounced tendency toward instability than FedAvg",
            "CONFIRMED-minor", (), _B + "test_bm26_table4_stability"),
    _record("BM-27", "seed 000/001, seed 000 §2.3 (FedMax(k)) = seed 001 §3.1 (FedWorse(k))",
            "This strategy boils down to the client selection strategy Power-of-Choice",
            "coincide only for d = N, m = k and F_i* = const (Power-of-Choice ranks raw losses of"
            " a random candidate set)",
            "CONFIRMED-minor", (), _B + "test_bm27_fedmax_k_is_not_power_of_choice"),
    # ------------------------------------------------------------------ DKR
    _record("DKR-1", "seed 004, §4.1 (finite-T bound)",
            "the bound is given as a function of T by : D^2/(2 eta tau T) + 18 tau^2 + eta^2 L"
            " zeta^2",
            "D^2/(2 eta tau T) + 18 tau^2 eta^2 L zeta^2",
            "CONFIRMED", ("drift.plateau_finite",), _D + "test_d1_finite_t_plateau"),
    _record("DKR-2", "seed 004, appendix, proof of Lemma 2.3 (per-step drift recursion)",
            "<= ||x_1^(t,k) + x_2^(t,k)||^2 - (2 eta/L) ...; + 6 eta^2 zeta + 2 eta^2 sigma^2;"
            " + (1/(2 eta tau))||x_1^(t,k) - x_2^(t,k)|| + 2 eta tau zeta^2 by AM-GM",
            "d_{k+1} <= (1 + 1/tau) d_k + 4 eta^2 tau zeta^2 + 6 eta^2 zeta^2 + 2 eta^2 sigma^2 <="
            " (1 + 1/tau) d_k + 10 eta^2 tau zeta^2 + 2 eta^2 sigma^2 (tau >= 1; norm squared)",
            "CONFIRMED", ("drift.client_drift", "drift.drift_recursion"),
            _D + "test_d3_d4_drift_recursion_slips"),
    _record("DKR-3", "seed 004, appendix, proof of Lemma 2.3 (the triangle term)",
            "we can easily bound ||grad F_1(x_1) - grad F_2(x_2)||^2 <= zeta^2; ... <= ||a||^2 +"
            " ||b||^2 + ||c||^2",
            "||a + b - c||^2 <= 3(||a||^2 + ||b||^2 + ||c||^2) <= 3||a||^2 + 6 zeta^2",
            "CONFIRMED", ("drift.client_drift", "drift.drift_recursion"),
            _D + "test_d5_triangle_term_needs_factor_three"),
    _record("DKR-4", "seed 004, appendix, proof of Lemma 2.3 (geometric series)",
            "(10 eta^2 tau zeta^2 + 2 eta^2 sigma^2)(k + sum_{t=2}^{k}(1 + 1/tau)^k) <= 18 eta^2"
            " tau^2 zeta^2 + 4 eta^2 tau sigma^2",
            "d_k <= c sum_{j<k}(1 + 1/tau)^j = c tau((1 + 1/tau)^k - 1) <= (e - 1) tau c for k <="
            " tau: 10(e - 1) = 17.18 <= 18, 2(e - 1) = 3.44 <= 4",
            "CONFIRMED", ("drift.client_drift", "drift.client_drift_exact"),
            _D + "test_d2_geometric_sum_gives_18"),
    _record("DKR-5", "seed 004, Lemma 2.2 (appendix eq. (5)) and the (dagger) bound",
            "+ eta sigma^2/M + (1/(M tau)) sum_i sum_{k=1}^{tau-1} E[||x_i^(t,k) - xbar^(t,k)||^2"
            " | F^(0,t)]; (dagger) <= 18 tau^2 eta^2 zeta^2 + 4 tau eta^2 sigma^2",
            "L/(M tau) on the drift term; (dagger) <= L (tau - 1)/tau (18 tau^2 eta^2 zeta^2 + 4"
            " tau eta^2 sigma^2)",
            "CONFIRMED", ("drift.fedavg_convex", "drift.round_progress"),
            _D + "test_d9_lemma22_carries_l"),
    _record("DKR-6", "seed 004, Theorem 2.1 (appendix eq. (4))",
            "<= D^2/(2 eta tau T) + eta sigma^2/M + 4 tau eta^2 L sigma^2 + 18 tau^2 eta^2 L"
            " zeta^2 = O(1/(tau T))",
            "for fixed eta the right side tends to eta sigma^2/M + 4 tau eta^2 L sigma^2 + 18 tau^2"
            " eta^2 L zeta^2 as T -> inf",
            "CONFIRMED", ("drift.fedavg_convex",),
            _D + "test_d10_limit_is_not_order_one_over_tau_t"),
    _record("DKR-7", "seed 004, appendix, proof of Lemma 2.2 (the box term)",
            "(L/2)||xbar^(t,k+1) - x_i^(t,k)||^2 <= (L/2)||xbar^(t,k+1) - xbar^(t,k)||^2 + (L/2)"
            "||xbar^(t,k) - x_i^(t,k)||^2 <= L||...||^2 + L||...||^2",
            "the middle inequality is false; ||a + b||^2 <= 2||a||^2 + 2||b||^2 (the last line) is"
            " the correct step and cannot be tightened by 'keeping the factor two'",
            "CONFIRMED", (), _D + "test_d6_squared_triangle_inequality",
            "proof-only: the corrected statement of Lemma 2.2 is unchanged"),
    _record("DKR-8", "seed 004, appendix, proof of Lemma 2.2 (Young's inequality)",
            "(1/M^2) E[((sqrt2 eta)^2/2) sum ||grad F_i - g_i||^2] + E[(1/(2 (sqrt2 eta)^2))"
            "||...||^2] = (eta/M^2) E[...] + (1/(4 eta)) E[...]",
            "Young's parameter lambda = sqrt(2 eta): lambda^2/2 = eta, 1/(2 lambda^2) = 1/(4 eta)",
            "CONFIRMED-minor", (), _D + "test_d8_young_parameter",
            "proof-only: the corrected statement of Lemma 2.2 is unchanged"),
    _record("DKR-9", "seed 004, appendix, Property 2.4 (polarization identity)",
            "<a,b> = 1/2||a+b||^2 - ||a||^2 - ||b||^2 = 1/2||a||^2 + ||b||^2 - ||a-b||^2",
            "<a,b> = 1/2(||a+b||^2 - ||a||^2 - ||b||^2) = 1/2(||a||^2 + ||b||^2 - ||a-b||^2)",
            "CONFIRMED-minor", (), _D + "test_d11_polarization_identity",
            "used correctly in the proof"),
    _record("DKR-10", "seed 004, appendix (notation slips in the proofs)",
            "grad F_i(x) = g_i(x) + (F_i(x) - g_i(x)); -2 eta <g_1(x_1) - g_2(x_2)>; 'Telescoping"
            " the per-step drift over one round gives us:' repeats the previous display",
            "grad F_i(x) = g_i(x) + (grad F_i(x) - g_i(x)); -2 eta <g_1(x_1) - g_2(x_2), x_1 -"
            " x_2>",
            "CONFIRMED-minor", (), _D + "test_dkr10_one_step_expansion"),
    _record("DKR-11", "seed 004, appendix Algorithm 1, assumption 3, main text §2",
            "for k in {0,...,tau}; g_i(x^(t,k)); Return x^(t); i in {0,1,...,M}; xhat^(t,k);"
            " F^(0,t); k in [0, tau)",
            "exactly tau local steps k = 0..tau-1, g_i(x_i^(t,k)), server update after the loop,"
            " Return x^(T), i in {1..M}, xbar, F^(t,0), sums over post-step iterates k = 1..tau",
            "CONFIRMED-minor", (), _D + "test_d2_tau_plus_one_steps_breaks_constant",
            "with tau + 1 local steps Lemma 2.3's constant fails (tau = 1: factor 3 > e - 1)"),
    _record("DKR-12", "seed 004, appendix eq. (3) and main-text eq. (3) (definition of zeta)",
            "max_i Sigma_x ||grad F_i(x) - grad F(x)|| <= zeta; max_i sup_x ||grad F_i(x_i^(t,k))"
            " - grad F(x_i^(t,k))||",
            "max_i sup_x ||grad F_i(x) - grad F(x)|| <= zeta",
            "CONFIRMED-minor", ("drift.fedavg_convex",), _K + "test_dkr12_zeta_is_a_sup"),
    _record("DKR-13", "seed 004, §4.1 (reported toy constants)",
            "L = max||grad^2 F||_2 ~ 0.190; zeta ~ 0.407; ||xbar^(0,0) - x*|| ~ 2",
            "L and zeta reproduced (0.1889, 0.4271 on the repo data); D = |b0 - b*| = 3.04, not 2",
            "CONFIRMED", (), _K + "test_dkr13_toy_constants", "data discrepancy"),
    _record("DKR-14", "seed 004, §3 (synthetic data)",
            "variance (1/4, 1/4)",
            "standard deviation 0.25 (numpy scale); only this reproduces L ~ 0.190",
            "CONFIRMED", (), _K + "test_dkr14_std_not_variance", "ambiguity"),
    _record("DKR-15", "seed 004, §3-4 (toy protocol) vs Theorem 2.1 assumption 4",
            "two clients per round, one from the first M-1 clients while the other always being"
            " the outlier",
            "outside the theorem (not full participation, weights 1/2): the algorithm targets"
            " 1/2(Fbar_reg + F_out), minimiser b*_eff != b*",
            "CONFIRMED", (), _K + "test_dkr15_two_client_protocol_changes_minimiser",
            "methodological"),
    _record("DKR-16", "seed 004, §4.1 (L of F) vs assumption 5 (every F_i L-smooth)",
            "L = max||grad^2 F||_2 ~ 0.190",
            "L = max_i sup ||grad^2 F_i|| (0.2010 vs 0.1889 on the repo data)",
            "CONFIRMED-minor", ("drift.fedavg_convex",),
            _K + "test_dkr16_global_vs_client_smoothness"),
    _record("DKR-17", "seed 004, §4.1 and Fig. 5 (plotted vs bounded quantity)",
            "loss over the communication rounds on the test data; the bound as a function of the"
            " round for the tau = 1 case",
            "the theorem bounds the time average (over t and k) of the shadow sequence's training"
            " gap; tau = 1 is not in the grid {10, 50, 300, 1000}",
            "CONFIRMED", ("drift.fedavg_convex", "drift.plateau"),
            _K + "test_dkr17_bounded_vs_plotted_quantity", "ambiguity"),
    # ------------------------------------------------------------------ boundlab findings
    _record("BM-P1", "seed 000/001, Remark 6/7 (A) = Remark 5 (B); spec §7.3.1, against the"
            " corrected Corollary (skew.speed, skew.corollary)",
            "V decreasing in rho_bar; V -> V_min as rho_bar -> inf (spec §7.3.1, gamma = 4L/mu)",
            "true at a fixed gamma (skew.corollary_gamma, skew.corollary.printed); with the"
            " corrected gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1), V grows with rho_bar once"
            " 1 + 3 rho_bar/8 is the maximum and D0 > 0, V -> inf, and V/(T + gamma) -> L D0^2/2",
            "FINDING", (), _P + "test_finding_bm_p1_speed_not_decreasing_in_rho_bar",
            "Remark 7's 'maximise rho_bar for speed' does not follow from the corrected corollary"),
    _record("BM-P2", "seed 000/001, eq. (17) of seed 000 = eq. (13) of seed 001; spec §7.4.1,"
            " against skew.pi_bound",
            "(17) RHS increasing in Pi (spec §7.4.1)",
            "skew.pi_bound uses gamma = max(4L/mu, 1 + 3 Pi/8, E - 1); where the Pi branch is"
            " active the speed term V(gamma)/(T + gamma) can decrease faster than the error term"
            " grows, so the RHS can decrease in Pi (also with Gamma > 0)",
            "FINDING", (), _Q + "test_finding_bm_p2_pi_bound_not_increasing_in_Pi"),
    _record("BM-P3", "seed 000/001, eq. (19) of seed 000 = eq. (17) of seed 001; spec §7.4.2,"
            " against skew.pi_bound_pmin",
            "(19) RHS decreasing in p_min (spec §7.4.2)",
            "gamma of skew.pi_bound_pmin depends on p_min through (18); the RHS can increase"
            " with p_min when the 1 + 3 Pi_up/8 branch is active",
            "FINDING", (), _Q + "test_finding_bm_p3_pi_bound_pmin_not_decreasing_in_p_min"),
    _record("BM-P4", "seed 000/001, eqs. (17), (19) of seed 000; spec §7.4.2, against"
            " skew.pi_bound_pmin vs skew.pi_bound",
            "(19) >= (17) whenever Pi <= (1 - (N - 1) pi p_min)/p_min (spec §7.4.2)",
            "true at a common gamma; the catalogue's (19) uses a larger gamma than (17) and the"
            " speed term is not monotone in gamma, so (19) < (17) happens",
            "FINDING", (), _Q + "test_finding_bm_p4_pi_bound_pmin_below_pi_bound"),
)
