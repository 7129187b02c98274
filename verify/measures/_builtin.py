"""The built-in measures of :mod:`verify.measures`: the run arrays, how each left-hand side the
catalogue names is computed from them (:data:`BUILTIN`), and the names no run gives
(:data:`NOT_MEASURED`, with the reason and the route that judges them).

numpy only, like the registry that serves them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the arrays with one value per server model x_0..x_T (P, T + 1)
STATE_ARRAYS = ("gap", "dist2", "grad_norm2", "loss",
                "grad_norm2_h")  # ||grad h(x_t)||^2, FedAU's h (verify.falsify.fedau_lhs)
#: the arrays with one value per round r < T (P, T); kappa = alpha_i / p_i's extremes, and
#: from a ``record="step"`` run ``grad_norm2_virtual`` and ``rho_max`` (the largest skew
#: rho(t, w_t) over the round's iterations, ``toys.Trace.rho_max``)
ROUND_ARRAYS = ("shadow_gap", "g2_max", "drift_max", "drift_sum", "disc_max", "lr",
                "kappa_min", "kappa_max", "grad_norm2_virtual", "rho_max",
                "weight_error",  # E[(p omega_t - 1)^2] (verify.falsify.weight_error_exact)
                # FedAU's per-state arrays (P, K), one value per state (round t, participation
                # path) of verify.falsify.fedau_lhs: E_t f(x_{t+1}) - f(x_t) and the state's
                # ||grad f(x_t)||^2, q_t, werr_t; the local drift and ||grad f(x_t)||^2
                "descent_t", "descent_grad_norm2", "descent_q_t", "descent_werr_t",
                "local_drift_t", "local_drift_grad_norm2")
#: the arrays with one value per SGD iteration (P, T * tau) of a ``record="step"`` run: column
#: r * tau + k - 1 after local step k of round r (``toys.Trace.steps``): ||xbar - x*||^2 of the
#: virtual / shadow sequence and the step size used, and (``toys.run(extra_steps=...)``) max
#: over pairs of participants ||x_i - x_j||^2 and max over participants ||x_i - x_r||^2, and
#: the beta algorithm's max over participants ||wbar - w~_i||^2 at the perturbed point of step
#: k (column k - 1) and max over pairs of clients ||u_i - u_j||^2; no per-round log has them
STEP_ARRAYS = ("step_dist2", "step_lr", "step_pairwise_drift", "step_local_deviation",
               "step_perturbed_divergence", "step_neighbour_avg_deviation")
#: the quantity BC's non-convex theorems bound (seed 003: the virtual averages)
VIRTUAL = "avg_grad_norm2_virtual"


@dataclass(frozen=True)
class Measure:
    """How one left-hand side is measured: ``fn(q) -> (P, K)`` values, ``params(q) ->
    {name: (P, K)}`` the per-round parameters it gives the bound (None: none), ``needs`` the
    run arrays it reads, ``per_round`` whether K runs over rounds (else K = 1), ``record`` the
    ``toys.run`` record mode whose trace has ``needs``, ``signed`` whether the value may be
    negative (a descent): then a bound below 0 is judged too (:func:`verify.falsify.judge.ratios`:
    1 + (measured - bound) / |bound|), where an unsigned quantity at or below 0 always holds."""

    name: str
    doc: str
    needs: tuple
    fn: object
    per_round: bool = False
    params: object = None
    record: str = "round"
    gives: tuple = ()  # the names ``params`` may give
    signed: bool = False


def _mean(key, drop_last=False):
    def fn(q):
        v = q[key][:, :-1] if drop_last else q[key]
        return np.mean(v, axis=1, keepdims=True)
    return fn


def _max(key):
    return lambda q: np.max(q[key], axis=1, keepdims=True)


def _nanmax(key):
    """The largest recorded value over the rounds (NaN only where none is recorded)."""
    def fn(q):
        v = np.asarray(q[key], dtype=float)
        seen = np.isfinite(v).any(axis=1, keepdims=True)
        return np.where(seen, np.max(np.where(np.isnan(v), -np.inf, v), axis=1, keepdims=True),
                        np.nan)
    return fn


def _next_sq_dist_params(q):
    """Delta = ||w_t - w*||^2 before each iteration (the server model x_r at k = 0) and eta =
    its step, both (P, T * tau) like ``step_dist2``."""
    after, start = q["step_dist2"], q["dist2"][:, :-1]
    P, T = start.shape
    steps = np.reshape(after, (P, T, np.shape(after)[1] // T))
    before = np.concatenate([np.reshape(start, (P, T, 1)), steps[:, :, :-1]], axis=2)
    return {"Delta": np.reshape(before, np.shape(after)), "eta": q["step_lr"]}


def _by_step(q, key):
    """The step array ``q[key]`` (P, T * tau) as (P, T, tau) (T: the rounds of ``lr``)."""
    v = np.asarray(q[key])
    P, T = np.shape(q["lr"])
    return np.reshape(v, (P, T, v.shape[1] // T))


def _pair_k_params(q):
    """k = 1..tau, the local step after which each column of ``step_pairwise_drift`` is."""
    steps = _by_step(q, "step_pairwise_drift")
    k = np.broadcast_to(np.arange(1, steps.shape[2] + 1, dtype=float), steps.shape)
    return {"k": np.reshape(k, np.shape(q["step_pairwise_drift"]))}


def _pair_next_params(q):
    """d_k = the pairwise drift before each step (0 at k = 0: every client starts at x_r)."""
    steps = _by_step(q, "step_pairwise_drift")
    before = np.concatenate([np.zeros_like(steps[:, :, :1]), steps[:, :, :-1]], axis=2)
    return {"d_k": np.reshape(before, np.shape(q["step_pairwise_drift"]))}


def _round_max_deviation(q):
    """max over the round's steps k = 1..tau of ``step_local_deviation`` (P, T)."""
    return np.max(_by_step(q, "step_local_deviation"), axis=2)


def _round_max(key):
    """max over the round's columns of the step array ``key`` (P, T)."""
    return lambda q: np.max(_by_step(q, key), axis=2)


def _gamma_prev(q) -> dict:
    """``gamma_prev`` of round t (the step of round t - 1, 0 at t = 0: seed 003's encoding of
    t = 0) when the run's ``lr`` is among the arrays (else nothing)."""
    if "lr" not in q:
        return {}
    lr = np.asarray(q["lr"], dtype=float)
    return {"gamma_prev": np.concatenate([np.zeros((lr.shape[0], 1)), lr[:, :-1]], axis=1)}


def _round_grad_params(q):
    """decrease = F(x_t) - F(x_{t+1}) (seed 003's f(wbar_{t,0}) - f(wbar_{t+1,0})) and
    gamma_prev, per round t < T."""
    loss = np.asarray(q["loss"], dtype=float)
    return {"decrease": loss[:, :-1] - loss[:, 1:], **_gamma_prev(q)}


def _gap_t_params(q):
    return {"t": np.broadcast_to(np.arange(q["gap"].shape[1], dtype=float), q["gap"].shape)}


def _dist_next_params(q):
    """dist_t; and ``gamma_prev`` of round t (the step of round t - 1, 0 at t = 0: seed 003's
    encoding of t = 0) when the run's ``lr`` is among the arrays."""
    return {"dist_t": q["dist2"][:, :-1], **_gamma_prev(q)}


BUILTIN = (
    Measure("final_gap", "F(x_T) - F* of the last server model", ("gap",),
            lambda q: q["gap"][:, -1:]),
    Measure("gap_t", "F(x_t) - F*, t = 0..T (parameter t: the round)", ("gap",),
            lambda q: q["gap"], True, _gap_t_params, gives=("t",)),
    Measure("dist_next", "||x_{t+1} - x*||^2, t < T (parameters dist_t = ||x_t - x*||^2 and, "
            "from the run's steps, gamma_prev = the step of round t - 1, 0 at t = 0)",
            ("dist2",), lambda q: q["dist2"][:, 1:], True, _dist_next_params,
            gives=("dist_t", "gamma_prev")),
    Measure("avg_shadow_gap", "(1/T) sum_{t<T} (1/tau) sum_{k=1..tau} F(xbar^(t,k)) - F*",
            ("shadow_gap",), _mean("shadow_gap")),
    Measure("avg_grad_norm2", "(1/T) sum_{t<T} ||grad F(x_t)||^2 at the server models (BC's "
            "FedProx and beta theorems: avg_grad_norm2_virtual, PAPER_LHS)", ("grad_norm2",),
            _mean("grad_norm2", drop_last=True)),
    Measure(VIRTUAL, "(1/(T tau)) sum_{t<T} sum_{k<tau} ||grad F(xbar^(t,k))||^2 at the "
            "virtual averages (xbar^(t,0) = x_t; a record='step' run)", ("grad_norm2_virtual",),
            _mean("grad_norm2_virtual"), record="step"),
    Measure("round_avg_grad_norm2", "(1/tau) sum_{k<tau} ||grad F(xbar^(t,k))||^2 per round t < "
            "T at the virtual averages (xbar^(t,0) = x_t; a record='step' run; parameters "
            "decrease = F(x_t) - F(x_{t+1}) and gamma_prev = the step of round t - 1, 0 at t = 0)",
            ("grad_norm2_virtual", "loss"), lambda q: q["grad_norm2_virtual"], True,
            _round_grad_params, record="step", gives=("decrease", "gamma_prev")),
    Measure("grad_norm_sq", "||grad F(x_t)||^2, t = 0..T (parameters f_w = F(x_t), f_star = F*)",
            ("grad_norm2", "loss", "gap"), lambda q: q["grad_norm2"], True,
            lambda q: {"f_w": q["loss"], "f_star": q["loss"] - q["gap"]},
            gives=("f_w", "f_star")),
    Measure("max_client_drift", "max_{r,i,k} ||x_i^(r,k) - xbar^(r,k)||^2, k = 1..tau",
            ("drift_max",), _max("drift_max")),
    Measure("client_discrepancy", "max_k sum_i p_i ||xbar^(r,k) - x_i^(r,k)||^2 per round r < T "
            "(parameter eta = the step of the round's first iteration, the largest of the round "
            "under a decreasing schedule: a bound in eta_t judged at it is the weaker claim)",
            ("disc_max", "lr"), lambda q: q["disc_max"], True, lambda q: {"eta": q["lr"]},
            gives=("eta",)),
    Measure("round_avg_gap", "(1/tau) sum_{k=1..tau} F(xbar^(r,k)) - F* per round r < T "
            "(parameters dist0, dist_tau, drift_sum = sum_i sum_{k=1..tau-1} ||x_i - xbar||^2)",
            ("shadow_gap", "dist2", "drift_sum"), lambda q: q["shadow_gap"], True,
            lambda q: {"dist0": q["dist2"][:, :-1], "dist_tau": q["dist2"][:, 1:],
                       "drift_sum": q["drift_sum"]}, gives=("dist0", "dist_tau", "drift_sum")),
    Measure("Pi", "max over the rounds and clients of kappa = alpha_i / p_i (BM's Pi)",
            ("kappa_max",), _max("kappa_max")),
    Measure("rho", "max over every iteration t of the skew rho(t, w_t) = sum_i alpha_i "
            "(F_i(w_t) - F_i*) / sum_i p_i (F_i(w_t) - F_i*) at the virtual average w_t (BM; a "
            "record='step' run of a problem with known client minima)", ("rho_max",),
            _nanmax("rho_max"), record="step"),
    Measure("next_sq_dist", "||w_{t+1} - w*||^2 at every SGD iteration t = r tau + k, k < tau, "
            "of the virtual sequence (parameters Delta = ||w_t - w*||^2, w at k = 0 the server "
            "model x_r, and eta = the step of iteration t; a record='step' run)",
            ("step_dist2", "step_lr", "dist2"), lambda q: q["step_dist2"], True,
            _next_sq_dist_params, record="step", gives=("Delta", "eta")),
    Measure("pairwise_drift", "d_k = max over pairs of participants of ||x_i^(t,k) - "
            "x_j^(t,k)||^2 after every local step k = 1..tau of every round t (DKR; parameter "
            "k; a record='step' run with extra_steps=('pairwise_drift',))",
            ("step_pairwise_drift", "lr"), lambda q: q["step_pairwise_drift"], True,
            _pair_k_params, record="step", gives=("k",)),
    Measure("pairwise_drift_next", "d_{k+1}, the pairwise drift after local step k + 1, k < "
            "tau (parameter d_k, 0 at k = 0: every client starts at x_t)",
            ("step_pairwise_drift", "lr"), lambda q: q["step_pairwise_drift"], True,
            _pair_next_params, record="step", gives=("d_k",)),
    Measure("local_deviation", "max over participants i and local steps k <= tau of ||x_i^(t,k)"
            " - x_t||^2 per round t < T (BC's distance to the round's start model; a "
            "record='step' run with extra_steps=('local_deviation',))",
            ("step_local_deviation", "lr"), _round_max_deviation, True, record="step"),
    Measure("perturbed_divergence", "max over participants i and local steps k = 0..tau-1 of "
            "||wbar_{t,k} - w~^i_{t,k}||^2, w~ = beta w + (1 - beta) u_i the point where step "
            "k + 1 takes its gradient, per round t < T (BC's Lemma B.2; parameter gamma_prev = "
            "the step of round t - 1, 0 at t = 0; a record='step' run of the beta algorithm "
            "with extra_steps=('perturbed_divergence',))",
            ("step_perturbed_divergence", "lr"), _round_max("step_perturbed_divergence"), True,
            _gamma_prev, record="step", gives=("gamma_prev",)),
    Measure("neighbour_avg_deviation", "max over pairs of clients i, j of ||u^i_t - u^j_t||^2, "
            "the beta algorithm's neighbour averages of round t < T (BC's Lemma B.1; u^i_0 = "
            "x_0; parameter gamma_prev as perturbed_divergence; a record='step' run with "
            "extra_steps=('neighbour_avg_deviation',))",
            ("step_neighbour_avg_deviation", "lr"), _round_max("step_neighbour_avg_deviation"),
            True, _gamma_prev, record="step", gives=("gamma_prev",)),
    Measure("local_divergence", "max over participants i and local steps k = 1..tau of "
            "||xbar^(t,k) - x_i^(t,k)||^2 per round t < T (BC's ||wbar_{t,k} - w^i_{t,k}||^2: "
            "the round's drift_max)", ("drift_max",), lambda q: q["drift_max"], True),
    Measure("avg_weight_error", "(1/T) sum_{t<T} E[(p omega_t - 1)^2]: FedAU's weight error of "
            "one client, the exact expectation over its participation paths (the array "
            "weight_error, verify.falsify.weight_error_exact)", ("weight_error",),
            _mean("weight_error")),
    Measure("round_weight_error", "E[(p omega_t - 1)^2] per round t < T (parameter t; exact "
            "expectation, as avg_weight_error)", ("weight_error",),
            lambda q: q["weight_error"], True,
            lambda q: {"t": np.broadcast_to(np.arange(np.shape(q["weight_error"])[1],
                                                      dtype=float), np.shape(q["weight_error"]))},
            gives=("t",)),
    Measure("avg_grad_norm2_h", "(1/T) sum_{t<T} E||grad h(x_t)||^2, h = (1/P) sum_n omega_n "
            "p_n F_n FedAU's reweighted objective under time-constant weights omega_n "
            "(Theorem B.4.1; the array grad_norm2_h, exact expectation over the participation "
            "paths: verify.falsify.fedau_lhs)", ("grad_norm2_h",),
            _mean("grad_norm2_h", drop_last=True)),
    Measure("one_round_descent", "E_t f(x_{t+1}) - f(x_t) at every state (x_t, omega_t) of "
            "FedAU, the exact conditional expectation over round t's participation (Lemma "
            "B.5.1; parameters grad_norm2 = ||grad f(x_t)||^2, q_t = (1/N) sum_n p_n "
            "(omega_t^n)^2, werr_t = (1/N) sum_n (p_n omega_t^n - 1)^2 of the state; "
            "verify.falsify.fedau_lhs)",
            ("descent_t", "descent_grad_norm2", "descent_q_t", "descent_werr_t"),
            lambda q: q["descent_t"], True,
            lambda q: {"grad_norm2": q["descent_grad_norm2"], "q_t": q["descent_q_t"],
                       "werr_t": q["descent_werr_t"]}, gives=("grad_norm2", "q_t", "werr_t"),
            signed=True),
    Measure("local_drift", "max over participants n and local steps i of ||y^n_{t,i} - "
            "x_t||^2 at every state (round t, participation path) of FedAU (Lemma B.3.2 with "
            "exact gradients: E_t is the value; parameter grad_norm2 = ||grad f(x_t)||^2; "
            "verify.falsify.fedau_lhs)", ("local_drift_t", "local_drift_grad_norm2"),
            lambda q: q["local_drift_t"], True,
            lambda q: {"grad_norm2": q["local_drift_grad_norm2"]}, gives=("grad_norm2",)),
)

_CONSTANT = "a constant or an exact identity of the theory, not a run quantity"
#: a constant of BM's Corollary 4 (V and E): no run gives it, the corollary's induction on
#: skew.recursion does (verify.checks.skew_constants), and verify.falsify judges it so
_DEFINED = ("a constant of BM's Corollary 4 (V, V_min, V_FedAvg, the E-term), not a value of a "
            "run: rebuilt from skew.recursion by the corollary's induction "
            "(verify.checks.skew_constants; judged by verify.falsify.constants_route at "
            "searched points, mpmath)")
_POINTS = ("a property of a client objective at chosen points (verify.checks.drift_properties; "
           "judged by verify.falsify.points_route at searched points)")
#: left-hand sides no run gives, and why (the checks of verify.checks judge most of them)
NOT_MEASURED = {
    "plateau_gap": "a limit T -> inf, not a value of a finite run (judged by "
                   "verify.falsify.plateau_route: the exact limit round of FedAvg on quadratic "
                   "clients, one linear solve; drift.plateau_finite checks avg_shadow_gap)",
    "contraction_factor": "a factor of a theorem at its own step size, an upper bound on the "
                          "lemma's kappa, not a value of a general run (the distance ratio of "
                          "heterogeneous clients tends to 1 near the floor); verify.falsify."
                          "kappa_route measures kappa on identical clients at the theorem's "
                          "step, verify.checks.contraction fits the gap's per-round rate",
    "rounds_to_eps": "an iteration complexity (the T whose own step-size recipe reaches eps), "
                     "not a quantity of one run (judged by verify.falsify.complexity_route: "
                     "the theorem's quantity at T = ceil(T_eps) against the smallest eps the "
                     "claim covers)",
    "inv_pi": "FedSoftMax's scores x_i are not recorded (verify.checks.skew_softmax rebuilds "
              "them round by round; judged by verify.falsify.softmax_route on searched runs)",
    "reweighted_divergence_sq": "a supremum over x of gradient differences, not a run quantity "
                                "(verify.checks.weight_error_reweighted computes it exactly; "
                                "judged by verify.falsify.reweighted_route at searched "
                                "quadratics)",
    "f_combination": _POINTS, "tangent_value": _POINTS, "f_at_y": _POINTS,
    "inner_product": "a property of vectors (verify.checks.drift_properties; judged by "
                     "verify.falsify.points_route at searched vectors)",
    **{n: _DEFINED for n in ("speed_constant", "error_constant")},
    **{n: _CONSTANT + " (judged by verify.falsify.argmin_route: the root or minimiser of the "
       "theorem's own expression, in mpmath)" for n in ("e_opt", "cutoff")},
    "lemma_kappa": _CONSTANT + " (judged by verify.falsify.kappa_route: the exact coefficient "
                   "measured by one round of toys.run on identical quadratic clients)",
    **{n: _CONSTANT + " (judged by verify.falsify.interval_route: a moment of FedAU's "
       "participation interval cut at K, an exact finite sum)"
       for n in ("interval_mean", "interval_var", "interval_factorial_moment",
                 "interval_second_moment", "interval_bias_sq")},
}

#: a left-hand side that names another quantity in a paper's notation, by the bound's
#: algorithm: BC's (seed 003: FedProx, beta) non-convex theorems bound E||grad f(w_hat_T)||^2
#: with w_hat_T drawn uniformly from the virtual averages wbar_{t,k}, t < T, k < E, where
#: FedAU's (seed 002) average the server models x_t
PAPER_LHS = {("avg_grad_norm2", algo): VIRTUAL for algo in ("fedprox", "fedprox-bc", "beta")}
