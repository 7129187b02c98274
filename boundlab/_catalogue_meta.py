"""What each catalogue bound speaks about: its algorithm, function class and the run it is
judged on (the same fields a user registration carries, :func:`boundlab.registry.meta`).

Read from the papers (``/work/shared/spec``): the algorithm each theorem analyses and the
assumptions it makes on every client's loss. Entries are listed **per id**; the per-paper
dictionaries below are only a way to write them without repeating the shared fields.

Fields of an entry
------------------
``algorithm``
    A ``toys.ALGORITHMS`` name (``"fedavg"``, ``"fedprox"``, ``"beta"``, ``"fedau"``, ...).
``function_class``
    One of :data:`boundlab.registry.FUNCTION_CLASSES` (what the theorem assumes of each F_i).
``run``
    The fixed instance ``boundlab verify`` judges the bound on (:func:`verify.check`):
    ``problem`` (a ``toys.make`` name or ``{"name": ..., **options}``), ``rounds``,
    ``seeds``, ``hyper`` (``toys.run`` keywords) and ``params`` (values not measured).
    ``None`` where the left-hand side cannot be measured on a run.
``symbols``
    The paper's meaning of symbols that clash between papers: bound symbol <- run setting
    (``"lr"``, ``"server_lr"``, ``"rounds*local_steps"``, ``None`` = not a run setting) or a
    measured start quantity (``"gap_0"`` = F(x_0) - F*). Empty: the default mapping of
    :data:`verify.check.HYPER`.

>>> META["drift.fedavg_convex"]["function_class"]
'smooth-convex'
>>> META["contraction.fedprox_nc"]["algorithm"], META["contraction.fedprox_nc"]["symbols"]["gamma"]
('fedprox', 'lr')
"""

from __future__ import annotations

__all__ = ["META"]

# ---------------------------------------------------------------- seed 004 (DKR): FedAvg, convex
_DKR = {"algorithm": "fedavg", "function_class": "smooth-convex", "symbols": {}}
#: DKR's theory protocol: every client every round, full batch (sigma = 0), eta = 0.2 <= 1/(4L)
_DKR_RUN = {"problem": "seed004-toy", "rounds": 50, "seeds": 1,
            "hyper": {"lr": 0.2, "local_steps": 10}, "params": {"sigma": 0.0}}

# ------------------------------------------------- seeds 000/001 (BM): weighted FedAvg, mu-strongly
# convex clients; BM's T counts SGD iterations (rounds x E)
_BM = {"algorithm": "fedavg", "function_class": "smooth-strongly-convex",
       "symbols": {"T": "rounds*local_steps", "gamma": "lr_shift"}}
_BM_PROBLEM = {"name": "quadratic", "n_clients": 5, "dim": 2, "L": 4.0, "mu": 1.0,
               "heterogeneity": 1.0, "seed": 0}
_BM_E = 2
#: gamma = max(4L/mu, 1 + 3 rho_bar/8, E - 1) = 16 for L/mu = 4 (rho_bar <= 1/p_min = 5 here)
_BM_GAMMA = 16.0


def _bm_step(t, mu=1.0, gamma=_BM_GAMMA):
    """BM's decaying step eta_t = 1 / (mu (t + gamma)) of the corollaries (t = SGD iteration)."""
    return 1.0 / (mu * (t + gamma))


def _bm_run(algorithm="fedavg", **hyper):
    return {"problem": _BM_PROBLEM, "algorithm": algorithm, "rounds": 30, "seeds": 1,
            "hyper": {"lr": _bm_step, "local_steps": _BM_E, **hyper},
            "params": {"sigma": 0.0, "gamma": _BM_GAMMA}}


#: Lemma 2 at a constant step (its precondition gamma >= E - 1 stands for eta_{t0} <= 2 eta_t
#: inside a round, which a constant step meets; gamma is given so that it can be checked)
_BM_LEMMA2_RUN = {"problem": _BM_PROBLEM, "algorithm": "fedsoftmax", "rounds": 30, "seeds": 1,
                  "hyper": {"lr": 0.05, "local_steps": 5, "temperature": 1.0},
                  "params": {"sigma": 0.0, "gamma": _BM_GAMMA}}

#: Lemma 1 holds for any L-smooth function with a global minimiser (no convexity needed)
_BM_LEMMA1 = {**_BM, "function_class": "smooth-nonconvex",
              "run": {"problem": "logistic-synthetic", "algorithm": "fedavg", "rounds": 20,
                      "seeds": 1, "hyper": {"lr": 0.5, "local_steps": 2}}}

# --------------------------------------------------------- seed 002 (FedAU): non-convex, FedAU
_FEDAU = {"algorithm": "fedau", "function_class": "smooth-nonconvex",
          "symbols": {"gamma": "lr", "eta": "server_lr", "F": "gap_0", "delta": "zeta"}}

# ------------------------------------------ seed 003 (BC): FedProx and the beta algorithm
_BC_SYMBOLS = {"gamma": "lr", "eta": None, "Delta": "gap_0"}
_BC_PROBLEM = {"name": "quadratic", "n_clients": 8, "dim": 3, "L": 2.0, "mu": 0.5,
               "heterogeneity": 1.0, "seed": 2}
_BC_E = 5


def _bc(algorithm, function_class, run=None):
    return {"algorithm": algorithm, "function_class": function_class,
            "symbols": _BC_SYMBOLS, "run": run}


def _bc_sc_run(algorithm, **hyper):
    """Theorems 1/3 (strongly convex) and Lemmas A.3/B.3: gamma <= 1/(2L), full participation."""
    L, alpha = _BC_PROBLEM["L"], hyper.get("prox", 0.0)
    gamma = 1.0 / (2 * _BC_E * (L + alpha))
    return {"problem": _BC_PROBLEM, "algorithm": algorithm, "rounds": 30, "seeds": 1,
            "hyper": {"lr": gamma, "local_steps": _BC_E, **hyper},
            "params": {"sigma": 0.0, "gamma_prev": gamma}}


def _bc_nc_run(algorithm, **hyper):
    """Theorems 2/4 (L-smooth, non-convex) at their step gamma = 1/(2 (L + alpha) sqrt(T E))
    (alpha = 0 for beta), on the quadratic toy: an L-smooth function is in the class whether
    or not it is convex, and its L, F* and Delta are exact (G is measured a posteriori)."""
    L, alpha, T = _BC_PROBLEM["L"], hyper.get("prox", 0.0), 30
    gamma = 1.0 / (2 * (L + alpha) * (T * _BC_E) ** 0.5)
    return {"problem": _BC_PROBLEM, "algorithm": algorithm, "rounds": T, "seeds": 1,
            "hyper": {"lr": gamma, "local_steps": _BC_E, **hyper}, "params": {"sigma": 0.0}}


#: FedAU Theorem 2 / Corollary 4 with the known participation probabilities (``fedau-known``:
#: omega = 1/p_n exactly, so the weight error W = 0 and Q = (1/N) sum_n 1/p_n = 1/p), Bernoulli
#: participation p = 1/2, full-batch gradients (sigma = 0), uniform client weights (so the
#: divergence delta of A3 is the toy's zeta), gamma and gamma eta inside the preconditions
_FEDAU_P = 0.5
_FEDAU_RUN = {"problem": {"name": "quadratic", "n_clients": 5, "dim": 2, "L": 1.0, "mu": 0.2,
                          "heterogeneity": 1.0, "seed": 1},
              "algorithm": "fedau-known", "rounds": 40, "seeds": 3,
              "hyper": {"lr": 0.01, "server_lr": 1.0, "local_steps": 2,
                        "participation": f"bernoulli:p={_FEDAU_P}"},
              "params": {"sigma": 0.0, "W": 0.0, "Q": 1.0 / _FEDAU_P, "PsiG": 0.0, "p": _FEDAU_P}}


#: FedAU App. A.3: known probabilities with every client at p_n = S/N (A4's Bernoulli, S = 2 of
#: N = 5 per round on average), omega = 1/p_n (W = 0, Q = N/S); Corollary 4's steps: gamma =
#: 0.01 <= 1/(4 sqrt(15) L I), gamma eta = S/(27 L I), its third branch (the smallest here)
_A3_S, _A3_I = 2, 2
_FEDAU_A3_RUN = {"problem": _FEDAU_RUN["problem"], "algorithm": "fedau-known", "rounds": 40,
                 "seeds": 3,
                 "hyper": {"lr": 0.01, "server_lr": _A3_S / (27 * _A3_I * 0.01),
                           "local_steps": _A3_I, "participation": f"bernoulli:p={_A3_S / 5}"},
                 "params": {"sigma": 0.0, "S_sampled": _A3_S}}


def _entries() -> dict:
    none = {"run": None}
    meta = {}
    for bid in ("drift.fedavg_convex", "drift.client_drift", "drift.plateau_finite",
                "drift.plateau_finite.printed", "drift.round_progress",
                "drift.round_progress.printed"):
        meta[bid] = {**_DKR, "run": _DKR_RUN}
    for bid in ("drift.plateau", "drift.drift_recursion", "drift.client_drift_exact",
                "drift.convexity", "drift.first_order_convexity", "drift.smoothness",
                "drift.young"):
        meta[bid] = {**_DKR, **none}
    for bid in ("skew.corollary", "skew.corollary_gamma", "skew.corollary.printed",
                "skew.error_free", "skew.rate_order"):
        meta[bid] = {**_BM, "run": _bm_run()}
    meta["skew.lemma2"] = {**_BM, "run": _BM_LEMMA2_RUN}
    for bid in ("skew.pi_bound", "skew.pi_bound_pmin", "skew.pi_bound_uniform",
                "skew.Pi_upper"):  # a rule with alpha != p, so that pi < 1 < Pi
        meta[bid] = {**_BM, "algorithm": "fedsoftmax",
                     "run": _bm_run("fedsoftmax", temperature=1.0)}
    meta["skew.lemma1"] = _BM_LEMMA1
    meta["skew.softmax_kappa_min"] = {**_BM, "algorithm": "fedsoftmax", **none}
    for bid in ("skew.recursion", "skew.speed", "skew.error", "skew.error.printed",
                "skew.vmin", "skew.error_free_recursion", "skew.error_free_recursion.printed",
                "skew.fedavg_speed", "skew.fedavg_speed.printed", "skew.rho_range"):
        meta[bid] = {**_BM, **none}
    for bid in ("weight_error.interval_mean", "weight_error.interval_var",
                "weight_error.interval_factorial_moment", "weight_error.interval_second_moment",
                "weight_error.interval_bias", "weight_error.round", "weight_error.round_var_form",
                "weight_error.round_envelope", "weight_error.average",
                "weight_error.average_refined", "weight_error.theorem3",
                "weight_error.cutoff_cor4", "weight_error.cutoff_opt", "weight_error.lemma_b71",
                "weight_error.lemma_b71_ceil", "weight_error.lemma_b71.printed",
                "weight_error.lemma_b32", "weight_error.lemma_b51", "weight_error.theorem_b41",
                "weight_error.theorem_b41.printed", "weight_error.lemma_b31"):
        meta[bid] = {**_FEDAU, **none}
    for bid in ("weight_error.theorem2", "weight_error.theorem2_explicit",
                "weight_error.theorem2_opt2", "weight_error.corollary4",
                "weight_error.corollary4.printed", "weight_error.corollary4_explicit"):
        meta[bid] = {**_FEDAU, "run": _FEDAU_RUN}
    meta["weight_error.corollary4_equiprobable"] = {**_FEDAU, "run": _FEDAU_A3_RUN}
    meta["contraction.fedavg_factor"] = _bc("fedavg", "smooth-strongly-convex")
    for bid in ("contraction.fedprox_factor", "contraction.fedprox_kappa"):
        meta[bid] = _bc("fedprox", "smooth-strongly-convex")
    for bid in ("contraction.beta_factor", "contraction.beta_kappa"):
        meta[bid] = _bc("beta", "smooth-strongly-convex")
    for bid in ("contraction.fedprox_sc", "contraction.lemma_a3"):
        meta[bid] = _bc("fedprox", "smooth-strongly-convex", _bc_sc_run("fedprox", prox=0.5))
    for bid in ("contraction.beta_sc", "contraction.lemma_b3"):
        meta[bid] = _bc("beta", "smooth-strongly-convex", _bc_sc_run("beta", beta=0.5))
    for bid in ("contraction.fedprox_nc", "contraction.fedprox_nc.printed"):
        meta[bid] = _bc("fedprox", "smooth-nonconvex", _bc_nc_run("fedprox", prox=0.5))
    for bid in ("contraction.beta_nc", "contraction.corollary1"):
        meta[bid] = _bc("beta", "smooth-nonconvex", _bc_nc_run("beta", beta=0.5))
    for bid in ("contraction.complexity_fedprox", "contraction.t_eps_fedprox",
                "contraction.lemma_a1", "contraction.lemma_a2", "contraction.lemma_a4",
                "contraction.lemma_a4.printed"):
        meta[bid] = _bc("fedprox", "smooth-nonconvex")
    for bid in ("contraction.corollary1_e_opt",
                "contraction.complexity_beta", "contraction.t_eps_beta", "contraction.lemma_b1",
                "contraction.lemma_b2", "contraction.lemma_b4"):
        meta[bid] = _bc("beta", "smooth-nonconvex")
    return meta


META = _entries()
